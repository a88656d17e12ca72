"""The grouping rule of the knowledge-gap report (service.domain.gaps), without a database.

Semantic grouping is checked twice: with a small labelled fake embedder (exact cosine values, so the threshold
and the tie rules are pinned), and with the real all-MiniLM-L6-v2 on bench/data/gaps/labelled.jsonl (model mark).
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from service import clock
from service.domain import gaps
from service.domain.gap_report import GapReport, group_id, parse_group_id
from service.embedding.disabled import DisabledEmbedder
from service.errors import InvalidInput

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
LABELLED = Path(__file__).resolve().parents[2] / "bench" / "data" / "gaps" / "labelled.jsonl"


def miss(query: str, count: int = 1, day: int = 0, **extra: object) -> gaps.MissedQuery:
    return gaps.MissedQuery(query=query, count=count, first_seen=T0 + timedelta(days=day),
                            last_seen=T0 + timedelta(days=day, hours=count), **extra)  # type: ignore[arg-type]


def texts(grouping: gaps.Grouping) -> list[list[str]]:
    return [[q.query for q in g.queries] for g in grouping.groups]


def described(grouping: gaps.Grouping, section: str = "zero_match") -> list[dict[str, object]]:
    return [gaps.describe(g, section, clock.isoformat) for g in grouping.groups]


# --- lexical ------------------------------------------------------------------------------------------


def test_lexical_groups_near_identical_and_reworded_queries() -> None:
    items = [
        miss("deploy to staging", 3), miss("Deploying to STAGING?", 1), miss("staging deploy steps", 2),
        miss("how do we deploy to staging", 1),
        miss("python version", 2), miss("which python version do we use", 1),
        miss("node version", 1),
    ]
    grouping = gaps.group_lexical(items)
    assert texts(grouping) == [
        ["deploy to staging", "staging deploy steps", "Deploying to STAGING?", "how do we deploy to staging"],
        ["python version", "which python version do we use"],
        ["node version"],
    ]
    assert [g.count for g in grouping.groups] == [7, 3, 1]
    assert grouping.lexical_tail == 0


def test_lexical_keeps_unrelated_and_look_alike_topics_apart() -> None:
    # {python, version} and {node, version} share one term of three: Jaccard 1/3 < 0.5.
    items = [miss("python version"), miss("node version"), miss("redis ttl"), miss("grafana dashboard url")]
    assert sorted(map(len, texts(gaps.group_lexical(items)))) == [1, 1, 1, 1]


def test_queries_without_informative_terms_group_only_with_the_same_text() -> None:
    items = [miss("what do you know?", 2), miss("What do you   know"), miss("who are you")]
    assert texts(gaps.group_lexical(items)) == [["what do you know?", "What do you   know"], ["who are you"]]


def test_joins_the_most_similar_leader_and_the_earlier_one_on_a_tie() -> None:
    # Leaders {a, b} (count 5) and {c, d} (count 4); {a, b, c, d} is equally close to both (2/4): the earlier.
    items = [miss("alpha beta", 5), miss("gamma delta", 4), miss("alpha beta gamma delta", 1),
             miss("alpha beta gamma", 1)]  # 2/3 to {alpha, beta} vs 1/4 to {gamma, delta}
    assert texts(gaps.group_lexical(items)) == [
        ["alpha beta", "alpha beta gamma", "alpha beta gamma delta"], ["gamma delta"]]


def test_groups_ordered_by_count_then_representative() -> None:
    items = [miss("zeta topic", 2), miss("alpha topic one", 2), miss("beta", 5), miss("alpha one topic", 1)]
    grouping = gaps.group_lexical(items)
    assert [(g.representative, g.count) for g in grouping.groups] == [
        ("beta", 5), ("alpha topic one", 3), ("zeta topic", 2)]


def test_same_log_same_groups_whatever_the_row_order() -> None:
    words = ["deploy", "staging", "python", "version", "redis", "ttl", "backup", "schedule", "oncall", "grafana"]
    rng = random.Random(11)
    items = []
    for i in range(300):
        text = " ".join(rng.sample(words, rng.randint(1, 4)))
        if text not in {m.query for m in items}:
            items.append(miss(text, rng.randint(1, 4), day=rng.randint(0, 20), tags={"ops": 1}))
    expected = described(gaps.group_lexical(items))
    embed = _hash_embedder(dim=16)
    expected_semantic = described(gaps.group_semantic(items, embed, threshold=0.8))
    for seed in range(5):
        shuffled = items[:]
        random.Random(seed).shuffle(shuffled)
        assert described(gaps.group_lexical(shuffled)) == expected
        assert described(gaps.group_semantic(shuffled, embed, threshold=0.8)) == expected_semantic


def test_describe_sums_filters_and_spans_the_group() -> None:
    items = [miss("deploy staging", 2, day=3, kinds={"project": 2}, tags={"ops": 2, "ci": 1}),
             miss("staging deploy", 1, day=1, tags={"ops": 1}),
             miss("deploy staging host", 1, day=5, kinds={"reference": 1}, retired={"f_1": 1, "f_2": 1})]
    [group] = described(gaps.group_lexical(items), "retired_only")
    assert group["representative"] == "deploy staging" and group["count"] == 4
    assert group["queries"] == [{"query": "deploy staging", "count": 2}, {"query": "deploy staging host", "count": 1},
                                {"query": "staging deploy", "count": 1}]
    assert group["first_seen"] == clock.isoformat(T0 + timedelta(days=1))
    assert group["last_seen"] == clock.isoformat(T0 + timedelta(days=5, hours=1))
    assert group["kinds"] == [{"kind": "project", "count": 2}, {"kind": "reference", "count": 1}]
    assert group["tags"] == [{"tag": "ops", "count": 3}, {"tag": "ci", "count": 1}]
    assert group["retired_facts"] == [{"uid": "f_1", "count": 1}, {"uid": "f_2", "count": 1}]
    assert "retired_facts" not in described(gaps.group_lexical(items))[0]


def test_redaction_markers_stay_groups_of_their_own() -> None:
    from service.domain.gap_report import _redacted

    items = [miss("[redacted 1.1]", 3), miss("[redacted 1.2]", 2), miss("[redacted 2.1]"), miss("redacted token"),
             miss("token redacted")]
    expected = [["[redacted 1.1]"], ["[redacted 1.2]"], ["redacted token", "token redacted"], ["[redacted 2.1]"]]
    assert texts(gaps.group_lexical(items, apart=_redacted)) == expected
    embed, calls = _labelled_embedder({"redacted token": (1.0, 0.0)})
    assert texts(gaps.group_semantic(items, embed, threshold=0.0, apart=_redacted)) == expected
    assert calls == [["redacted token"]]  # a marker is never embedded
    assert len(texts(gaps.group_lexical(items))) < len(expected)  # without the rule they would merge


# --- semantic -----------------------------------------------------------------------------------------


def _hash_embedder(dim: int):  # type: ignore[no-untyped-def]
    """Unit vectors from the texts' stemmed terms (a bag of hashed terms): deterministic, no model."""
    def embed(batch: list[str]) -> np.ndarray:
        out = np.zeros((len(batch), dim), dtype=np.float32)
        for row, terms in enumerate(gaps.term_sets(batch)):
            for term in terms:
                out[row, sum(map(ord, term)) % dim] += 1.0
            out[row] = out[row] / (np.linalg.norm(out[row]) or 1.0)
        return out
    return embed


def _labelled_embedder(topics: dict[str, tuple[float, float]]):  # type: ignore[no-untyped-def]
    """Each text's vector given outright (2-d, normalised), and a record of every batch asked for."""
    calls: list[list[str]] = []

    def embed(batch: list[str]) -> np.ndarray:
        calls.append(list(batch))
        vectors = np.array([topics[t] for t in batch], dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return embed, calls


def test_semantic_groups_paraphrases_with_no_word_in_common() -> None:
    angle = {"who is on call this week": 0.0, "current oncall engineer": 0.1, "pager rotation": 0.2,
             "grafana dashboard url": 1.4, "where are the metrics dashboards": 1.5}
    embed, calls = _labelled_embedder({t: (np.cos(a), np.sin(a)) for t, a in angle.items()})
    items = [miss("who is on call this week", 3), miss("current oncall engineer", 2), miss("pager rotation", 1),
             miss("grafana dashboard url", 2), miss("where are the metrics dashboards", 1)]
    grouping = gaps.group_semantic(items, embed, threshold=0.9)
    assert texts(grouping) == [["who is on call this week", "current oncall engineer", "pager rotation"],
                               ["grafana dashboard url", "where are the metrics dashboards"]]
    assert calls == [["who is on call this week", "current oncall engineer", "grafana dashboard url",
                      "pager rotation", "where are the metrics dashboards"]]  # one batch, canonical order


def test_semantic_threshold_is_inclusive_and_keeps_unrelated_apart() -> None:
    # cos(a) between the two: exactly at the threshold joins, just under it does not.
    threshold = 0.8
    at = float(np.arccos(threshold))
    embed, _ = _labelled_embedder({"a": (1.0, 0.0), "b": (np.cos(at), np.sin(at)), "c": (np.cos(at + 0.01), -np.sin(at + 0.01))})
    grouping = gaps.group_semantic([miss("a", 2), miss("b"), miss("c")], embed, threshold=threshold)
    assert texts(grouping) == [["a", "b"], ["c"]]


def test_semantic_merges_lexical_groups_within_the_budget() -> None:
    angle = {"deploy staging": 0.0, "push release to staging env": 0.05, "redis ttl": 1.5,
             "ship a build to preprod": 0.02, "backup schedule": 3.0}
    embed, calls = _labelled_embedder({t: (np.cos(a), np.sin(a)) for t, a in angle.items()})
    items = [miss("deploy staging", 5), miss("push release to staging env", 4), miss("redis ttl", 3),
             miss("staging deploy steps", 1), miss("backup schedule", 1), miss("ship a build to preprod", 1)]
    # Lexical groups first: "staging deploy steps" joins "deploy staging" (2/3 of their terms), so only the
    # representatives of the first three lexical groups are embedded; the last two stay lexical groups.
    grouping = gaps.group_semantic(items, embed, threshold=0.9, budget=3)
    assert calls == [["deploy staging", "push release to staging env", "redis ttl"]]
    assert grouping.lexical_tail == 2
    assert texts(grouping) == [["deploy staging", "push release to staging env", "staging deploy steps"],
                               ["redis ttl"], ["backup schedule"], ["ship a build to preprod"]]
    unbounded = gaps.group_semantic(items, embed, threshold=0.9)
    assert unbounded.lexical_tail == 0 and texts(unbounded)[0] == [
        "deploy staging", "push release to staging env", "ship a build to preprod", "staging deploy steps"]


def test_forms_share_one_embedding() -> None:
    embed, calls = _labelled_embedder({"deploy to staging": (1.0, 0.0)})
    grouping = gaps.group_semantic([miss("deploy to staging", 2), miss("Deploying to staging!")], embed)
    assert calls == [["deploy to staging"]] and texts(grouping) == [["deploy to staging", "Deploying to staging!"]]


# --- the report's choice of rule and group ids --------------------------------------------------------


class _Reader:
    store_name = "sqlite"

    def __init__(self, items: list[gaps.MissedQuery]) -> None:
        self.items = items

    def misses(self, profile_id, first, last, section, limit):  # type: ignore[no-untyped-def]
        chosen = self.items if section == "zero_match" else []
        return chosen[:limit], len(chosen), sum(i.count for i in chosen)

    def fact_labels(self, profile_id, uids):  # type: ignore[no-untyped-def]
        return {}

    def searches(self, profile_id, first, last, section, queries, limit):  # type: ignore[no-untyped-def]
        return [], 0


def test_none_embedder_groups_lexically_and_says_so() -> None:
    from service.domain.profiles import ProfileRef

    report = GapReport(_Reader([miss("deploy staging", 2), miss("staging deploy")]), DisabledEmbedder())
    body = report.report(ProfileRef(id=1, name="alpha", created_at=T0), 30)
    assert body["grouping"]["method"] == "lexical" and body["grouping"]["threshold"] == gaps.LEXICAL_THRESHOLD
    assert "MEMORY_EMBEDDER=none" in body["grouping"]["reason"]
    [group] = body["zero_match"]["groups"]
    assert group["count"] == 3 and group["id"] == group_id("zero_match", "deploy staging")
    assert body["retired_only"]["groups"] == [] and body["retired_only"]["searches"] == 0


def test_group_ids_are_stable_and_name_their_section() -> None:
    zid, rid = group_id("zero_match", "deploy staging"), group_id("retired_only", "deploy staging")
    assert zid == group_id("zero_match", "deploy staging") and zid != rid
    assert zid[0] == "z" and rid[0] == "r" and len(zid) == len(rid) == 16
    assert parse_group_id(zid) == "zero_match" and parse_group_id(rid) == "retired_only"
    for bad in ("", "x" + zid[1:], zid[:-1], zid.upper(), zid[:-1] + "g"):
        with pytest.raises(InvalidInput):
            parse_group_id(bad)


# --- the threshold on the labelled set, with the real model ------------------------------------------


def pairwise(grouping: gaps.Grouping, topic: dict[str, str]) -> tuple[float, float]:
    label = {q.query: i for i, g in enumerate(grouping.groups) for q in g.queries}
    tp = fp = fn = 0
    names = sorted(topic)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            same, together = topic[a] == topic[b], label[a] == label[b]
            tp += same and together
            fp += together and not same
            fn += same and not together
    return tp / max(1, tp + fp), tp / max(1, tp + fn)


@pytest.mark.model
def test_semantic_threshold_on_the_labelled_set(tmp_path: Path) -> None:
    from service.config import Settings
    from service.embedding.minilm import MiniLMEmbedder

    rows = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    topic = {r["query"]: r["topic"] for r in rows}
    embedder = MiniLMEmbedder(Settings(embedder="minilm", torch_threads=1, data_dir=tmp_path))
    grouping = gaps.group_semantic([miss(q) for q in topic], embedder.embed_documents)
    precision, recall = pairwise(grouping, topic)
    # docs/benchmarks.md "Knowledge-gap grouping": 1.000 / 0.929 at 0.55. No two labelled topics may merge.
    assert precision == 1.0 and recall >= 0.9, (precision, recall)
    lexical_precision, lexical_recall = pairwise(gaps.group_lexical([miss(q) for q in topic]), topic)
    assert lexical_precision == 1.0 and lexical_recall < recall
