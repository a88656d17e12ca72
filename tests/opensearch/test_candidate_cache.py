"""The candidates' facts and vectors kept by document version (service.search.opensearch.candidates): a fact
ranked before is not read from the canonical store again, and a changed fact is (its document has a new
version), so a search never shows a state older than the cluster's. The first tests need no cluster."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.late import Embedding, TokenVectors
from service.domain.models import Fact
from service.domain.redaction import RedactionService
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch.candidates import CandidateCache, entry_bytes
from tests.opensearch import corpus
from tests.opensearch.conftest import mirrored_settings, settle
from tests.opensearch.fakes import FakeEmbedder
from tests.support.clusters import Cluster

NOW = datetime(2026, 12, 5, tzinfo=timezone.utc)


def fact(fact_id: int, text: str = "some words") -> Fact:
    return Fact(uid=f"f{fact_id}", title=f"title {fact_id}", text=text, kind="project", tags=["a"], status="active",
                created_at=NOW, updated_at=NOW, retired_at=None, retire_reason=None, supersedes=None,
                superseded_by=None)


def made(tokens: int = 3) -> Embedding:
    rng = np.random.default_rng(tokens)
    return Embedding(np.ones(8, dtype=np.float32) / np.sqrt(8), TokenVectors.of(rng.normal(size=(tokens, 8))))


class Canonical:
    """The canonical store's read, counted: which fact ids each call asked for; and its redaction records."""

    def __init__(self, vectorless: frozenset[int] = frozenset(), absent: frozenset[int] = frozenset()) -> None:
        self.asked: list[list[int]] = []
        self.vectorless, self.absent = vectorless, absent
        self.texts: dict[int, str] = {}
        self.redactions: list[tuple[int, int]] = []  # (record id, fact id)
        self.redactions_asked: list[int] = []

    def redactions_after(self, after_id: int) -> list[tuple[int, int]]:
        self.redactions_asked.append(after_id)
        return [r for r in self.redactions if r[0] > after_id]

    def __call__(self, profile_id: int, fact_ids: list[int]) -> dict[int, tuple[Fact, Embedding | None]]:
        self.asked.append(list(fact_ids))
        return {i: (fact(i, self.texts.get(i, "some words")), None if i in self.vectorless else made())
                for i in fact_ids if i not in self.absent}


def test_a_fact_at_the_same_version_is_read_once_and_a_new_version_again() -> None:
    canonical = Canonical()
    cache = CandidateCache(canonical, canonical.redactions_after, max_bytes=1 << 20)
    first = cache.facts_with_vectors(1, [(1, 10), (2, 11)])
    assert canonical.asked == [[1, 2]] and set(first) == {1, 2}
    again = cache.facts_with_vectors(1, [(2, 11), (1, 10), (3, 12)])
    assert canonical.asked == [[1, 2], [3]]  # only the fact not seen before
    assert again[1] == first[1] and again[2] == first[2] and set(again) == {1, 2, 3}
    canonical.texts[1] = "amended"
    changed = cache.facts_with_vectors(1, [(1, 13)])  # the document's new version: read again, never the old state
    assert canonical.asked[-1] == [1] and changed[1][0].text == "amended"
    assert cache.facts_with_vectors(1, [(1, 13)])[1][0].text == "amended" and len(canonical.asked) == 3
    assert cache.report()["hits"] == 3 and cache.report()["misses"] == 4


def test_facts_without_a_vector_or_missing_from_the_store_are_never_kept() -> None:
    canonical = Canonical(vectorless=frozenset({2}), absent=frozenset({3}))
    cache = CandidateCache(canonical, canonical.redactions_after, max_bytes=1 << 20)
    found = cache.facts_with_vectors(1, [(1, 1), (2, 2), (3, 3)])
    assert set(found) == {1, 2} and found[2][1] is None  # as the canonical read answers
    cache.facts_with_vectors(1, [(1, 1), (2, 2), (3, 3)])
    assert canonical.asked == [[1, 2, 3], [2, 3]]  # its vector may arrive; the store may have it by now


def test_the_least_recently_used_go_first_and_the_bound_holds() -> None:
    canonical = Canonical()
    size = entry_bytes(fact(1), made())
    cache = CandidateCache(canonical, canonical.redactions_after, max_bytes=3 * size + size // 2)  # room for three
    cache.facts_with_vectors(1, [(1, 1), (2, 1), (3, 1)])
    cache.facts_with_vectors(1, [(1, 1)])  # used again: 2 is now the least recently used
    cache.facts_with_vectors(1, [(4, 1)])
    assert cache.report()["entries"] == 3 and cache.report()["bytes"] <= cache.max_bytes
    canonical.asked.clear()
    cache.facts_with_vectors(1, [(1, 1), (2, 1), (3, 1), (4, 1)])
    assert canonical.asked == [[2]]


def test_a_redacted_fact_leaves_memory_and_is_never_kept_again() -> None:
    """`memory redact` (any process) records the redaction; the mirror worker's next cycle drops the fact's
    entries, and a search that read it just before the redaction committed cannot put it back."""
    canonical = Canonical()
    cache = CandidateCache(canonical, canonical.redactions_after, max_bytes=1 << 20)
    cache.facts_with_vectors(1, [(1, 1), (2, 1), (3, 1)])
    cache.forget_redacted()  # nothing redacted yet
    assert cache.report()["entries"] == 3
    canonical.redactions = [(7, 2)]
    cache.forget_redacted()
    assert cache.report()["entries"] == 2 and cache.report()["bytes"] == 2 * entry_bytes(fact(1), made())
    canonical.asked.clear()
    cache.facts_with_vectors(1, [(2, 1), (2, 2), (1, 1)])
    cache.facts_with_vectors(1, [(2, 2)])
    assert canonical.asked == [[2], [2]] and cache.report()["entries"] == 2  # read, never kept
    canonical.redactions.append((9, 3))
    cache.forget_redacted()
    assert canonical.redactions_asked[-2:] == [0, 7] and cache.report()["entries"] == 1


def test_size_zero_turns_it_off() -> None:
    canonical = Canonical()
    cache = CandidateCache(canonical, canonical.redactions_after, max_bytes=0)
    cache.facts_with_vectors(1, [(1, 1)])
    cache.facts_with_vectors(1, [(1, 1)])
    assert canonical.asked == [[1], [1]] and cache.report()["entries"] == 0


def test_an_entry_counts_its_words_vector_and_token_codes() -> None:
    small, large = entry_bytes(fact(1), made(tokens=2)), entry_bytes(fact(1, "w" * 1000), made(tokens=40))
    assert large - small == 1000 - len("some words") + 38 * (8 + 4)


@pytest.fixture
def served(tmp_path: Path, real_opensearch: Cluster, prefix: str) -> Iterator[Services]:
    settings: Settings = mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", real_opensearch, prefix,
                                           embedder="minilm", min_similarity=0.5)
    with build_services(settings, embedder=FakeEmbedder()) as services:
        yield services


@pytest.mark.opensearch
def test_a_search_reads_only_facts_it_has_not_ranked_at_their_version(served: Services) -> None:
    """On a real cluster: the second identical search reads nothing from the canonical store; after a fact is
    amended in place (same uid, new tags) the next search reads that fact alone and shows its new tags; a
    forgotten fact is gone from the results at once."""
    backend = served.backend
    assert isinstance(backend, OpenSearchBackend)
    alpha = served.profiles.create("alpha")
    uids = corpus.load(served, alpha)
    settle(served)
    reads: list[list[int]] = []
    canonical_read = backend.candidates.read

    def counted(profile_id: int, fact_ids: list[int]) -> dict[int, tuple[Fact, Embedding | None]]:
        reads.append(list(fact_ids))
        return canonical_read(profile_id, fact_ids)

    backend.candidates.read = counted
    query = "deploy kubernetes cluster"
    first = served.search.search(alpha, query, limit=10)
    assert first.facts and reads and first.mode == "hybrid"
    reads.clear()
    second = served.search.search(alpha, query, limit=10)
    assert reads == [] and [s.fact for s in second.facts] == [s.fact for s in first.facts]
    assert second.matched_count == first.matched_count
    kept = backend.status()["candidate_cache"]  # what /readyz's details show
    assert kept["hits"] >= len(second.facts) and kept["entries"] == kept["misses"] > 0

    target = uids["Deploys run on Kubernetes"]
    served.facts.update(alpha, target, tags=["infra", "k8s", "gke"])
    amended = served.search.search(alpha, query, limit=10)
    shown = {s.fact.uid: s.fact for s in amended.facts}
    assert shown[target].tags == ["infra", "k8s", "gke"]
    assert len(reads) == 1 and len(reads[0]) == 1  # that fact alone, at its new version

    served.facts.forget(alpha, target)
    gone = served.search.search(alpha, query, limit=10)
    assert target not in {s.fact.uid for s in gone.facts}
    assert gone.matched_count == amended.matched_count - 1

    other = "pytest fixtures"
    shown_uid = served.search.search(alpha, other, limit=10).facts[0].fact.uid  # now kept
    kept_before = backend.candidates.report()["entries"]
    RedactionService(served.store).redact(shown_uid, reason="a test", operator="pytest")
    backend.sync_now()  # the worker's cycle: the cache drops the redacted fact first
    assert backend.candidates.report()["entries"] == kept_before - 1
    settle(served)
    assert shown_uid not in {s.fact.uid for s in served.search.search(alpha, other, limit=10).facts}
