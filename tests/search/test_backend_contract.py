"""One contract for every search backend: the same tests, run against each backend a deployment can use.

    embedded-lexical   the embedded backend with MEMORY_EMBEDDER=none
    embedded-hybrid    the embedded backend with vectors (the deterministic FakeEmbedder)
    osmem-lexical      the OpenSearch mirror on the osmem-server emulator (it has no k-NN, no pipelines:
                       only the lexical contract runs there)
    opensearch-lexical the OpenSearch mirror on a real node, MEMORY_EMBEDDER=none
    opensearch-hybrid  the OpenSearch mirror on a real node with vectors (hybrid query + pipeline)
    container-lexical, container-hybrid  the same on an OpenSearch container (testcontainers; marked `containers`:
                       `make test-containers` runs them)

Every test goes through the service (SearchService, FactService, QueryLog) exactly as the MCP tools do, so
a behaviour difference between backends fails here instead of hiding. Expectations are written once, from
docs/reviewers.md, "How search decides what matched"; none is taken from one backend to judge another.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.profiles import ProfileRef
from tests.opensearch import corpus
from tests.opensearch.fakes import FakeEmbedder
from tests.support.clusters import Cluster, new_prefix, remove_prefix

MIN_SIMILARITY = 0.5  # with FakeEmbedder's axes: a shared concept word is well above, unrelated text below

BACKENDS = [
    pytest.param(("embedded", False), id="embedded-lexical"),
    pytest.param(("embedded", True), id="embedded-hybrid"),
    pytest.param(("osmem", False), id="osmem-lexical", marks=pytest.mark.osmem),
    pytest.param(("opensearch", False), id="opensearch-lexical", marks=pytest.mark.opensearch),
    pytest.param(("opensearch", True), id="opensearch-hybrid", marks=pytest.mark.opensearch),
    pytest.param(("container", False), id="container-lexical", marks=pytest.mark.containers),
    pytest.param(("container", True), id="container-hybrid", marks=pytest.mark.containers),
]


class Backend:
    """The services under test plus what the tests need to know about them."""

    def __init__(self, services: Services, hybrid: bool, mirrored: bool) -> None:
        self.services, self.hybrid, self.mirrored = services, hybrid, mirrored
        self.profile: ProfileRef = services.profiles.create("alpha")

    @property
    def mode(self) -> str:
        return "hybrid" if self.hybrid else "lexical"

    def search(self, query: str, **options: object):  # noqa: ANN201 - SearchOutcome
        return self.services.search.search(self.profile, query, **options)  # type: ignore[arg-type]

    def write(self, title: str, text: str, kind: str = "project", tags: list[str] | None = None) -> str:
        return self.services.facts.write(self.profile, title=title, text=text, kind=kind, tags=tags or []).fact.uid


def _settings(tmp_path: Path, hybrid: bool) -> dict[str, object]:
    return {"data_dir": tmp_path, "database_url": f"sqlite:///{tmp_path / 'memory.db'}",
            "embedder": "minilm" if hybrid else "none", "min_similarity": MIN_SIMILARITY, "similar_threshold": 0.9}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    where, hybrid = request.param
    values = _settings(tmp_path, hybrid)
    if where != "embedded":
        cluster: Cluster = request.getfixturevalue("cluster_" + where)
        values.update(search="opensearch", **cluster.settings(request.getfixturevalue("prefix")),
                      opensearch_sync_interval=60.0, opensearch_timeout=5.0)
    with build_services(Settings(**values),
                        embedder=FakeEmbedder() if hybrid else None) as services:  # type: ignore[arg-type]
        yield Backend(services, hybrid, mirrored=where != "embedded")


@pytest.fixture
def cluster_osmem(osmem) -> Iterator[Cluster]:  # noqa: ANN001 - the session's OsmemServer
    clone = osmem.clone()
    try:
        yield Cluster(clone.url)
    finally:
        clone.close()


@pytest.fixture
def cluster_opensearch(real_opensearch: Cluster) -> Iterator[Cluster]:
    yield real_opensearch


@pytest.fixture
def cluster_container(opensearch_container) -> Iterator[Cluster]:  # noqa: ANN001 - the session's OpenSearchNode
    yield opensearch_container.access


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> Iterator[str]:
    """The test's own deployment prefix on the real cluster (removed after it)."""
    name = new_prefix()
    yield name
    for real in ("cluster_opensearch", "cluster_container"):
        if real in request.fixturenames:
            remove_prefix(request.getfixturevalue(real), name)


# --- what matches ---------------------------------------------------------------------------------------


def test_identifiers_stems_and_diacritics_match_lexically(backend: Backend) -> None:
    uids = corpus.load(backend.services, backend.profile)
    for query, title in [("JIRA-4412", "JIRA-4412 tracks the migration"), ("cafe naive", "Café naïve résumé"),
                         ("snake_case_names", "snake_case_names in Python"), ("v1.2.3", "Release v1.2.3 notes"),
                         ("running deployments", "Deploys run on Kubernetes")]:
        found = backend.search(query)
        assert found.mode == backend.mode, query
        assert uids[title] in [f.fact.uid for f in found.facts], query


@pytest.mark.parametrize("backend", [p for p in BACKENDS if not p.values[0][1]], indirect=True)
def test_one_or_two_terms_must_all_occur_more_need_half(backend: Backend) -> None:
    """The lexical rule alone (with vectors on, facts would also match by meaning)."""
    both = backend.write("Spark tuning", "Executor memory for the nightly Spark jobs.")
    backend.write("Spark intro", "What Spark is.")
    assert [f.fact.uid for f in backend.search("spark executor").facts] == [both]
    assert backend.search("spark executor memory nightly").matched_count == 1  # 4 terms: 2 needed
    assert backend.search("spark zebra").matched_count == 0


def test_filters_kind_and_every_tag(backend: Backend) -> None:
    uids = corpus.load(backend.services, backend.profile)
    found = backend.search("grafana latency", kind="reference")
    assert [f.fact.uid for f in found.facts] == [uids["Grafana dashboard"]]
    assert backend.search("grafana latency", kind="decision").matched_count == 0
    found = backend.search("python", tags=["lang:python", "style"])
    assert [f.fact.uid for f in found.facts] == [uids["snake_case_names in Python"]]
    assert all("lang:python" in f.fact.tags for f in backend.search("python", tags=["lang:python"]).facts)


def test_retired_and_superseded_facts_are_counted_apart_never_returned(backend: Backend) -> None:
    uids = corpus.load(backend.services, backend.profile)
    found = backend.search("jenkins runbook")
    assert (found.matched_count, found.returned_count, found.facts) == (0, 0, [])
    assert backend.services.query_log.listing(backend.profile, 1)[0]["inactive_matched"] == 1
    detail = backend.services.query_log.get(backend.profile, found.query_id)  # a miss says what memory knew
    assert detail["inactive_matches"] == [{"uid": uids["Retired deploy runbook"], "title": "Retired deploy runbook",
                                           "status": "retired"}]
    found = backend.search("nose unittest pytest")
    returned = [f.fact.uid for f in found.facts]
    assert uids["Old testing preference"] in returned  # the successor, under its new uid
    assert all(f.fact.status == "active" for f in found.facts)


def test_returned_count_is_min_of_limit_and_matched(backend: Backend) -> None:
    for i in range(7):
        backend.write(f"Deploy note {i}", f"Deploy step {i} for the cluster.")
    found = backend.search("deploy cluster", limit=3)
    assert found.matched_count == 7 and found.returned_count == 3 and len(found.facts) == 3
    assert backend.search("deploy cluster", limit=50).returned_count == 7


def test_a_query_without_any_known_word_matches_nothing(backend: Backend) -> None:
    backend.write("Deploy with Argo CD", "Deploys to the cluster.")
    for query in ("zqxv wpfk", "??? !!!"):
        found = backend.search(query)
        assert (found.matched_count, found.returned_count, found.mode) == (0, 0, backend.mode), query


# --- ranking and scores ---------------------------------------------------------------------------------


def test_scores_are_fused_in_0_1_best_first_with_their_parts(backend: Backend) -> None:
    corpus.load(backend.services, backend.profile)
    found = backend.search("deploy kubernetes cluster", limit=8)
    assert found.facts, "nothing found"
    scores = [f.score for f in found.facts]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)
    for f in found.facts:
        assert f.lexical is not None or f.vector is not None, f.fact.title
        if f.lexical is not None:
            assert f.lexical > 0
        if backend.hybrid:
            if f.vector is not None:
                assert MIN_SIMILARITY - 1e-6 <= f.vector <= 1.0 + 1e-6
        else:
            assert f.vector is None


def test_the_query_log_detail_keeps_every_hit_with_its_scores(backend: Backend) -> None:
    corpus.load(backend.services, backend.profile)
    found = backend.search("deploy kubernetes cluster", limit=8)
    detail = backend.services.query_log.get(backend.profile, found.query_id)
    assert [r["uid"] for r in detail["results"]] == [f.fact.uid for f in found.facts]
    for row, hit in zip(detail["results"], found.facts, strict=True):
        assert row["score"] == pytest.approx(hit.score, abs=1e-6)
        assert (row["lexical"] is None) == (hit.lexical is None)
        assert (row["vector"] is None) == (hit.vector is None)
    assert any(r["lexical"] is not None for r in detail["results"])
    if backend.hybrid:
        assert any(r["vector"] is not None for r in detail["results"])


@pytest.mark.parametrize("backend", [p for p in BACKENDS if p.values[0][0] != "embedded"], indirect=True)
def test_per_hit_scores_agree_with_the_embedded_backend(backend: Backend, tmp_path: Path) -> None:
    """The same store searched on the embedded backend: per hit, the same facts matched the same way (by
    words, by meaning), with the same cosine similarity, and the same counts. The fused score is compared by
    what it must be everywhere (in (0, 1], best first): its BM25 part is each engine's own."""
    assert backend.mirrored  # the embedded backend is the reference
    (tmp_path / "reference").mkdir()
    with build_services(Settings(**_settings(tmp_path / "reference", backend.hybrid)),  # type: ignore[arg-type]
                        embedder=FakeEmbedder() if backend.hybrid else None) as reference:
        here = Backend(reference, backend.hybrid, mirrored=False)
        titles = {uid: title for title, uid in corpus.load(backend.services, backend.profile).items()}
        reference_titles = {uid: title for title, uid in corpus.load(reference, here.profile).items()}
        for query, kind, tags in corpus.SEARCHES:
            mirrored = backend.search(query, limit=50, kind=kind, tags=list(tags))
            local = here.search(query, limit=50, kind=kind, tags=list(tags))
            assert (mirrored.matched_count, mirrored.mode) == (local.matched_count, local.mode), query

            def parts(found, names):  # noqa: ANN001, ANN202 - SearchOutcome, uid -> title
                return {names[f.fact.uid]: (f.lexical is not None, None if f.vector is None else round(f.vector, 4))
                        for f in found.facts}

            assert parts(mirrored, titles) == parts(local, reference_titles), query
            scores = [f.score for f in mirrored.facts]
            assert scores == sorted(scores, reverse=True) and all(0.0 < s <= 1.0 for s in scores), query


def test_a_title_match_ranks_above_a_text_match(backend: Backend) -> None:
    """By words alone (fusion of BM25, whose title weighs most); a hybrid search's second stage weighs the facts'
    words itself (the same way), among the rest: both are found there, in the same order on every backend."""
    in_text = backend.write("Cluster notes", "We talk about grafana here only in passing, among many other words.")
    in_title = backend.write("Grafana", "Dashboards for the cluster.")
    found = [f.fact.uid for f in backend.search("grafana").facts][:2]
    assert found == [in_title, in_text] if backend.mode == "lexical" else sorted(found) == sorted([in_title, in_text])


# --- lifecycle as search sees it ------------------------------------------------------------------------


def test_equal_scores_come_back_older_fact_first(backend: Backend) -> None:
    """Two facts alike in all a search reads score the same; their order is the facts' (older first) on every
    backend and cluster version, not the index's: the older one is re-indexed last (a change of kind), which puts
    it after the other in Lucene's document order. (Written one after the other, they are also placed alike by the
    second stage: each is the other's neighbour.)"""
    text = "Exports run at midnight to the archive bucket."
    older = backend.write("Nightly exports", text)
    newer = backend.write("Nightly exports", text)
    backend.services.facts.update(backend.profile, older, kind="reference")
    found = backend.search("nightly exports archive")
    assert [f.fact.uid for f in found.facts] == [older, newer]
    assert found.facts[0].score == found.facts[1].score


def test_every_change_is_visible_to_the_next_search(backend: Backend) -> None:
    uid = backend.write("Deploy runbook", "Deploy with Argo CD.")
    assert [f.fact.uid for f in backend.search("deploy runbook").facts] == [uid]
    new = backend.services.facts.update(backend.profile, uid, text="Deploy with Flux now.").fact.uid
    assert [f.fact.uid for f in backend.search("deploy runbook").facts] == [new]
    backend.services.facts.update(backend.profile, new, tags=["infra"])
    assert [f.fact.uid for f in backend.search("deploy runbook", tags=["infra"]).facts] == [new]
    backend.services.facts.forget(backend.profile, new, reason="obsolete")
    found = backend.search("deploy runbook")
    assert (found.matched_count, found.facts) == (0, [])


def test_similar_facts_are_offered_on_write(backend: Backend) -> None:
    first = backend.write("Grafana latency", "Latency on Grafana")
    backend.write("Spark jobs", "Spark", kind="user")
    second = backend.services.facts.write(backend.profile, title="Latency dashboard", text="Grafana shows latency",
                                          kind="reference", tags=[])
    assert [f.uid for f in second.similar] == [first]
