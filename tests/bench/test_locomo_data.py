"""bench/lib/locomo.py reads LoCoMo in both forms its repository has served: data/locomo10.json (a list of
conversations) and the older data/locomo10.zip (one file per conversation, everything at its top level). The
real data is never in this repository: both forms are written here from the same two small conversations."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.bench.test_benchmarks_run import ROOT, run, tiny_locomo

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


def tiny_realtalk(directory: Path) -> Path:
    """Two chats in REALTALK's form (data/Chat_N_A_B.json): no `conversation` wrapper, `clean_text`, a speaker of
    two words, turn ids that do not follow the session numbers, and evidence written as a range and with a stray
    full stop, as its files have them."""
    directory.mkdir()
    for number, (a, b) in ((2, ("Fahim Khan", "Akib")), (1, ("Emi", "Elise"))):  # written out of order
        chat = {
            "name": {"speaker_1": a, "speaker_2": b},
            "session_1": [{"clean_text": f"Hey {b}, I went for a  morning run after the rain", "speaker": a,
                           "dia_id": "D1:1", "date_time": "29.12.2023, 00:51:12", "img_file": []},
                          {"clean_text": "Nice, I work as a TA at UCLA now", "speaker": b, "dia_id": "D1:2"}],
            "events_session_1": {"a": "ran"},
            "session_1_date_time": "29.12.2023",
            "session_2": [{"clean_text": "The class starts at 9", "speaker": b, "dia_id": "D1:4"},
                          {"clean_text": "Good luck!", "speaker": a, "dia_id": "D2:1"}],
            "qa": [{"question": f"When did {a} go for a run?", "answer": "29.12.2023", "evidence": ["D1:1."],
                    "category": 2},
                   {"question": f"Where does {b} work?", "answer": "UCLA", "evidence": ["D1:2-D1:4"], "category": 1},
                   {"question": "Why did they cheer?", "answer": "luck", "evidence": "D2:1", "category": 3},
                   {"question": "Why?", "answer": "", "evidence": [""], "category": 3}],  # no evidence: left out
        }
        (directory / f"Chat_{number}_{a.split()[0]}_{b}.json").write_text(json.dumps(chat), encoding="utf-8")
    (directory / "locomo").mkdir()  # the repository's data/ holds LoCoMo split up as well: not read
    return directory


@pytest.mark.parametrize("store", ["turns", "turns-named", "turns-bare"])
def test_realtalk_chats_read_as_turns_with_their_evidence(tmp_path: Path, store: str) -> None:
    chats = locomo.load(tiny_realtalk(tmp_path / "data"), store)
    assert [c.sample_id for c in chats] == ["chat-1", "chat-2"] and [c.half for c in chats] == ["fit", "report"]
    first = chats[1].facts[0]
    text = "Hey Akib, I went for a morning run after the rain"
    assert first["text"] == {"turns": text, "turns-named": f"Fahim Khan: {text}", "turns-bare": text}[store]
    assert first["tags"] == (["fahim-khan"] if store == "turns" else [])  # a valid tag: no spaces
    assert [f["evidence"] for f in chats[1].facts] == [{"D1:1"}, {"D1:2"}, {"D1:4"}, {"D2:1"}]
    asked = locomo.questions(chats[1], ["u1", "u2", "u3", "u4"])
    assert [(q.category, q.relevant) for q in asked] == [(2, {"u1"}), (1, {"u2", "u3"}), (3, {"u4"})]  # a range
    assert locomo.categories(tmp_path / "data") == locomo.REALTALK_CATEGORIES


def test_realtalk_has_no_observations_and_an_empty_directory_is_refused(tmp_path: Path) -> None:
    assert [c.facts for c in locomo.load(tiny_realtalk(tmp_path / "data"), "observations")] == [[], []]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no REALTALK chats"):
        locomo.read(tmp_path / "empty")


def test_a_directory_hashes_its_chats_in_order(tmp_path: Path) -> None:
    data = tiny_realtalk(tmp_path / "data")
    before = locomo.sha256(data)
    (data / "notes.txt").write_text("not a chat", encoding="utf-8")
    assert locomo.sha256(data) == before and len(before) == 64
    chat = next(data.glob("Chat_1_*.json"))
    chat.write_text(chat.read_text(encoding="utf-8") + " ", encoding="utf-8")
    assert locomo.sha256(data) != before


@pytest.mark.model
def test_conversational_runs_on_realtalk_and_fit_ranking_refuses_it(tmp_path: Path) -> None:
    data = tiny_realtalk(tmp_path / "data")
    out = run("bench/conversational.py", "--locomo", str(data), "--store", "turns-bare")
    assert f"REALTALK {data} sha256 {locomo.sha256(data)}" in out and "3 commonsense" in out
    assert "1-4 (headline)" in out and "answerable questions with matched_count >= 1" in out
    for script, args, said in (("bench/conversational.py", ["--store", "observations"], "REALTALK has no observations"),
                               ("bench/fit_ranking.py", [], "nothing is fitted on REALTALK")):
        refused = subprocess.run([sys.executable, script, "--locomo", str(data), *args], cwd=ROOT,
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr


@pytest.mark.model
def test_fit_ranking_reports_unseen_chats_and_fits_nothing_on_them(tmp_path: Path) -> None:
    locomo_file, data = str(tiny_locomo(tmp_path / "locomo10.json")), tiny_realtalk(tmp_path / "data")
    stores = ("--stores", "observations,turns-bare")
    alone = run("bench/fit_ranking.py", "--locomo", locomo_file, *stores)
    both = run("bench/fit_ranking.py", "--locomo", locomo_file, *stores, "--unseen", str(data))
    assert f"REALTALK {data} sha256 {locomo.sha256(data)} (reported, never fitted on)" in both
    assert "fitted, unseen-turns-bare, all conversations" in both and "3 commonsense" in both
    assert "unseen-turns-bare, fit half" not in both and "unseen-observations" not in both  # it has none
    assert "unseen-" not in alone
    fitted = [line for line in both.splitlines() if line.startswith(("ranker (late):", "gate (late):"))]
    assert len(fitted) == 2 and fitted == [line for line in alone.splitlines()
                                           if line.startswith(("ranker (late):", "gate (late):"))]
    refused = subprocess.run([sys.executable, "bench/fit_ranking.py", "--locomo", locomo_file, "--unseen",
                              locomo_file], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "not a directory" in refused.stderr, refused.stderr
