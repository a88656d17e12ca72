"""LoCoMo (github.com/snap-research/locomo, data/locomo10.json) as memory: its conversations, the facts a
memory would hold of each, and its questions with the facts that answer them.

The data is never part of this repository: fetch it from its repository and pass its path (the runs print its
sha256). Either form the repository has served reads the same: `data/locomo10.json` (a list of conversations),
or the older `data/locomo10.zip` (one file per conversation, its sessions, observations and questions side by
side at the top level; the same 10 conversations, 1,986 questions and 2,541 observations). Two ways to fill a
profile with a conversation, one fact each:
- "observations": LoCoMo's per-session observations about each speaker (curated facts, ~250 a conversation);
- "turns": every chat turn as it was said (a chat-like store, ~600 a conversation, full of small talk);
- "turns-named": the same turns written as a chat log often is, the speaker's name leading the text ("Caroline:
  ...") and no tag; "turns-bare": the turns alone, the speaker named nowhere. Checks that nothing fitted leans on
  how "turns" writes the speaker (neither is fitted on by default).
A fact's title is its first 80 characters, its kind `user`, its one tag the speaker's name (lower-cased, a run
of other characters as "-"). A question's relevant facts are those whose evidence turn ids meet the question's.
Categories 1-4 are answerable (multi-hop, temporal, open-domain, single-hop); 5 (adversarial) is left out.
Conversations at even positions are the half anything is fitted on, odd ones the half reported.

REALTALK (github.com/danny911kr/REALTALK, its data/ directory: real chats, see realtalk()) reads the same way
into the three turn stores; nothing is ever fitted on it: it is the check on chats the weights never saw.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STORES = ("observations", "turns", "turns-named", "turns-bare")
FITTED_STORES = ("observations", "turns", "turns-bare")  # what bench/fit_ranking.py fits on by default
RANKER_STORES = ("observations", "turns")  # of those, what its ranker is fitted on (the gate: all of them)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
REALTALK_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "commonsense"}
OFFTOPIC = Path(__file__).resolve().parents[1] / "data" / "conversational" / "offtopic.jsonl"
_DIA = re.compile(r"D:?(\d+):(\d+)")
_RANGE = re.compile(r"D:?(\d+):(\d+)\s*-\s*D:?(\d+):(\d+)")


@dataclass
class Conversation:
    index: int
    sample_id: str
    facts: list[dict[str, Any]]  # title, text, kind, tags, evidence (turn ids)
    questions: list[dict[str, Any]]  # question, category, evidence (turn ids)

    @property
    def half(self) -> str:
        return "fit" if self.index % 2 == 0 else "report"


@dataclass
class Question:
    text: str
    category: int | str  # 1-4, or "offtopic" / "nonsense"
    relevant: set[str] = field(default_factory=set)  # uids

    @property
    def answerable(self) -> bool:
        return isinstance(self.category, int)


def turn_ids(values: Any) -> set[str]:
    """Turn ids in LoCoMo's several spellings ("D1:3", "D:11:26", "D8:6; D9:17", lists of them), and REALTALK's
    ranges ("D12:3-D12:5": every turn from the first to the last)."""
    if isinstance(values, str):
        values = [values]
    ids = set()
    for value in values or []:
        text = str(value)
        for a, first, b, last in _RANGE.findall(text):
            if a == b:
                ids.update(f"D{a}:{n}" for n in range(int(first), int(last) + 1))
        ids.update(f"D{a}:{b}" for a, b in _DIA.findall(text))
    return ids


def sha256(path: Path) -> str:
    """The file's sha256; a directory's (REALTALK's chats): that of its chats' names and contents in order."""
    if not path.is_dir():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    for chat in sorted(path.glob("Chat_*.json")):
        digest.update(chat.name.encode() + b"\0" + chat.read_bytes())
    return digest.hexdigest()


def categories(path: Path) -> dict[int, str]:
    """The answerable categories' names of the data at `path` (LoCoMo's, or REALTALK's for a directory)."""
    return REALTALK_CATEGORIES if path.is_dir() else CATEGORIES


def load(path: Path, store: str) -> list[Conversation]:
    if store not in STORES:
        raise ValueError(f"store must be one of {STORES}")
    raw = read(path)
    return [Conversation(i, str(c.get("sample_id", i)), list(_facts(c, store)), list(c.get("qa", [])))
            for i, c in enumerate(raw)]


def read(path: Path) -> list[dict[str, Any]]:
    """The conversations in data/locomo10.json's form, from that file, from the older data/locomo10.zip, or from
    a directory of REALTALK's chats (see realtalk())."""
    if path.is_dir():
        return realtalk(path)
    if not zipfile.is_zipfile(path):
        return list(json.loads(path.read_text(encoding="utf-8")))
    with zipfile.ZipFile(path) as archive:
        named = [(int(found.group(1)), name) for name in archive.namelist()
                 if (found := re.search(r"(\d+)\.json$", name))]
        if not named:
            raise ValueError(f"{path}: no conversation files (NN.json) in this zip")
        return [_nested(number, json.loads(archive.read(name))) for number, name in sorted(named)]


def realtalk(directory: Path) -> list[dict[str, Any]]:
    """REALTALK (github.com/danny911kr/REALTALK, data/Chat_N_A_B.json: LoCoMo's authors, real chats between two
    people over three weeks) in locomo10.json's form: each turn's text is its `clean_text`; its questions (1
    multi-hop, 2 temporal, 3 commonsense) keep their numbers. It has no observations, so only the turn stores
    read it; it is never fitted on (a check that the fitted weights carry to chats they did not see)."""
    named = [(int(found.group(1)), path) for path in directory.glob("Chat_*.json")
             if (found := re.match(r"Chat_(\d+)_", path.name))]
    if not named:
        raise ValueError(f"{directory}: no REALTALK chats (Chat_N_A_B.json) in this directory")
    out = []
    for number, path in sorted(named):
        flat = json.loads(path.read_text(encoding="utf-8"))
        talk: dict[str, Any] = {key: [{**turn, "text": turn.get("clean_text", "")} for turn in value]
                                for key, value in flat.items() if re.fullmatch(r"session_\d+", key)}
        out.append({"sample_id": f"chat-{number}", "conversation": talk, "observation": {}, "qa": flat.get("qa", [])})
    return out


def _nested(number: int, flat: dict[str, Any]) -> dict[str, Any]:
    """One conversation of the zip (everything at its top level) as locomo10.json holds it."""
    talk = {k: v for k, v in flat.items()
            if k in ("speaker_a", "speaker_b") or re.fullmatch(r"session_\d+(_date_time)?", k)}
    observation = {k: v for k, v in flat.items() if re.fullmatch(r"session_\d+_observation", k)}
    return {"sample_id": f"conv-{number}", "conversation": talk, "observation": observation, "qa": flat.get("qa", [])}


def _fact(text: str, speaker: str, evidence: set[str], *, store: str) -> dict[str, Any]:
    """One fact; the speaker as its tag, or ("turns-named") leading its text, or ("turns-bare") nowhere."""
    text = " ".join(text.split()) or "(empty)"
    if store == "turns-named":
        text = f"{speaker}: {text}"
    tag = re.sub(r"[^a-z0-9]+", "-", speaker.lower()).strip("-")  # "Fahim Khan" -> fahim-khan (a tag has no spaces)
    tags = [tag] if store in ("observations", "turns") and tag else []
    return {"title": text[:80], "text": text, "kind": "user", "tags": tags, "evidence": evidence}


def _facts(conversation: dict[str, Any], store: str) -> Iterator[dict[str, Any]]:
    if store == "observations":
        for session in sorted(conversation["observation"], key=_session_number):
            for speaker, items in conversation["observation"][session].items():
                for text, evidence in items:
                    yield _fact(text, speaker, turn_ids(evidence), store=store)
        return
    talk = conversation["conversation"]
    for session in sorted((k for k in talk if re.fullmatch(r"session_\d+", k)), key=_session_number):
        for turn in talk[session]:
            yield _fact(str(turn.get("text", "")), str(turn["speaker"]), turn_ids(turn.get("dia_id")), store=store)


def _session_number(key: str) -> int:
    found = re.search(r"\d+", key)
    return int(found.group()) if found else 0


def questions(conversation: Conversation, uids: list[str]) -> list[Question]:
    """The answerable questions (categories 1-4) with at least one relevant fact; `uids` are the written facts'
    uids, in the conversation's fact order."""
    by_turn: dict[str, set[str]] = defaultdict(set)
    for fact, uid in zip(conversation.facts, uids):
        for turn in fact["evidence"]:
            by_turn[turn].add(uid)
    out = []
    for qa in conversation.questions:
        if qa.get("category") not in CATEGORIES:
            continue
        relevant = set().union(*(by_turn.get(t, set()) for t in turn_ids(qa.get("evidence"))))
        if relevant:
            out.append(Question(str(qa["question"]), int(qa["category"]), relevant))
    return out


def offtopic(half: str | None = None) -> list[Question]:
    """This repository's own questions no conversation answers (off-topic) or nobody could mean (nonsense);
    `half`: those at even ("fit") or odd ("report") positions."""
    rows = [json.loads(line) for line in OFFTOPIC.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Question(r["query"], r["style"]) for i, r in enumerate(rows)
            if half is None or (i % 2 == 0) == (half == "fit")]
