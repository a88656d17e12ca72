"""bench/lib/locomo.py reads LoCoMo in both forms its repository has served: data/locomo10.json (a list of
conversations) and the older data/locomo10.zip (one file per conversation, everything at its top level). The
real data is never in this repository: both forms are written here from the same two small conversations."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

from tests.bench.test_benchmarks_run import ROOT, tiny_locomo

sys.path.insert(0, str(ROOT))

from bench.lib import locomo  # noqa: E402


def as_older_zip(conversations: list[dict], path: Path) -> Path:
    """The conversations as data/locomo10.zip holds them: NN.json each, sessions, observations (one key per
    session) and questions side by side, written in another order than the numbers (the loader sorts them)."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data/multimodal_dialog/locomo10_v2/", "")
        for number, c in reversed(list(enumerate(conversations, start=26))):
            flat = {**c["conversation"], **c["observation"], "qa": c["qa"],
                    "events_session_1": {"date": "1 May 2023"}, "session_1_summary": "They talked."}
            archive.writestr(f"data/multimodal_dialog/locomo10_v2/{number}.json", json.dumps(flat))
    return path


@pytest.mark.parametrize("store", locomo.STORES)
def test_the_older_zip_gives_the_same_conversations_as_the_json(tmp_path: Path, store: str) -> None:
    listed = tiny_locomo(tmp_path / "locomo10.json")
    zipped = as_older_zip(json.loads(listed.read_text()), tmp_path / "locomo10.zip")
    from_json, from_zip = locomo.load(listed, store), locomo.load(zipped, store)
    assert [c.facts for c in from_zip] == [c.facts for c in from_json]
    assert [c.questions for c in from_zip] == [c.questions for c in from_json]
    assert [c.half for c in from_zip] == ["fit", "report"]
    assert [c.sample_id for c in from_zip] == ["conv-26", "conv-27"]
    assert len(from_zip[0].facts) == (2 if store == "observations" else 4)


def test_a_zip_without_conversation_files_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("README.md", "not LoCoMo")
    with pytest.raises(ValueError, match="no conversation files"):
        locomo.read(path)


def test_named_and_bare_turns_write_the_speaker_in_the_text_or_nowhere(tmp_path: Path) -> None:
    """"turns-named": the same turns, the same evidence, the speaker leading the text instead of a tag;
    "turns-bare": the turns alone."""
    listed = tiny_locomo(tmp_path / "locomo10.json")
    tagged, named, bare = (locomo.load(listed, store) for store in ("turns", "turns-named", "turns-bare"))
    for plain, spoken, alone in zip(tagged[0].facts, named[0].facts, bare[0].facts):
        speaker = plain["tags"][0]
        assert spoken["tags"] == alone["tags"] == [] and spoken["evidence"] == alone["evidence"] == plain["evidence"]
        assert spoken["text"].lower() == f"{speaker}: {plain['text']}".lower()
        assert spoken["title"] == spoken["text"][:80]
        assert (alone["title"], alone["text"]) == (plain["title"], plain["text"])
    assert [c.questions for c in named] == [c.questions for c in bare] == [c.questions for c in tagged]
