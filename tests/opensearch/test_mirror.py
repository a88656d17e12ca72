"""The mirror (on osmem-server, and on a real OpenSearch when there is one): templates, the deployment's two
shared indices behind their aliases (profiles add none), bulk delivery with external versions and routing, and
BM25 search through the real client counting exactly like the embedded backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from opensearchpy import OpenSearch, helpers
from sqlmodel import select

from service.container import Services, build_services, embedded_search
from service.domain.ports import SearchRequest
from service.embedding.disabled import DisabledEmbedder
from service.search.opensearch import templates as tpl
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch.documents import fact_document, index_action
from service.store import repository as repo
from service.store.tables import OutboxRow
from tests.opensearch import corpus
from tests.opensearch.conftest import mirrored_settings, settle
from tests.opensearch.fakes import FakeEmbedder
from tests.support.clusters import Cluster


def backend(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def doc(client: OpenSearch, services: Services, profile_id: int, uid: str) -> dict:
    """A fact's document, read from the shared index on its profile's shard."""
    return client.get(index=backend(services).names.facts, id=uid, routing=str(profile_id))


def test_templates_and_two_shared_indices_whatever_the_profiles(os_services: Services, os_client: OpenSearch,
                                                                os_prefix: str) -> None:
    backend(os_services).sync_now()
    before = set(os_client.indices.get(index=f"{os_prefix}-*"))
    for name in ("alpha", "beta", "gamma"):
        os_services.profiles.create(name)  # as `memory profile create` does: nothing happens in the cluster
    backend(os_services).sync_now()
    backend(os_services).upkeep.install()  # idempotent
    facts, queries = f"{os_prefix}-facts", f"{os_prefix}-queries"
    assert set(os_client.indices.get(index=f"{os_prefix}-*")) == before == {f"{facts}.v1", f"{queries}.v1"}

    templates = {t["name"]: t["index_template"] for t in os_client.indices.get_index_template()["index_templates"]}
    assert templates[facts]["index_patterns"] == [f"{facts}.v*"]
    assert templates[facts]["_meta"]["template_version"] == tpl.TEMPLATE_VERSION
    assert templates[queries]["index_patterns"] == [f"{queries}.v*"]
    for alias in (facts, queries):
        assert os_client.indices.get_alias(name=alias) == {f"{alias}.v1": {"aliases": {alias: {"is_write_index": True}}}}
    mapping = os_client.indices.get_mapping(index=facts)[f"{facts}.v1"]["mappings"]
    assert mapping["dynamic"] == "strict" and mapping["_routing"] == {"required": True}
    assert mapping["_meta"] == {"template_version": tpl.TEMPLATE_VERSION, "entity": "fact", "embedder": "none",
                                "dimension": 384}
    assert mapping["properties"]["embedding"]["dimension"] == 384
    settings = {name: os_client.indices.get_settings(index=f"{name}.v1")[f"{name}.v1"]["settings"]["index"]
                for name in (facts, queries)}
    assert settings[facts]["sort"] == {"field": ["profile_id", "status"], "order": ["asc", "asc"]}  # template v4
    assert "sort" not in settings[queries]
    assert backend(os_services).indices.differences() == []


def test_changes_are_mirrored_with_external_versions(os_services: Services, os_client: OpenSearch) -> None:
    alpha = os_services.profiles.create("alpha")
    fact = os_services.facts.write(alpha, title="Prefers pytest", text="pytest fixtures", kind="preference",
                                   tags=["testing"]).fact
    os_services.facts.update(alpha, fact.uid, tags=["testing", "python"])
    os_services.facts.forget(alpha, fact.uid, reason="obsolete")
    with os_services.db.read() as session:
        outbox = session.exec(select(OutboxRow).order_by(OutboxRow.id)).all()
        row = repo.fact_row(session, alpha.id, fact.uid)
    assert [o.entity for o in outbox] == ["fact", "fact", "fact"]
    assert all(o.delivered_at is not None for o in outbox)  # pushed at once, marked, never deleted
    found = doc(os_client, os_services, alpha.id, fact.uid)
    assert found["_version"] == outbox[-1].id and found["_routing"] == str(alpha.id)
    assert found["_source"]["status"] == "retired" and found["_source"]["tags"] == ["testing", "python"]
    assert found["_source"]["profile_id"] == str(alpha.id)

    # A stale replay (an older version, older content) is refused with 409 and changes nothing.
    assert row is not None
    row.status, row.tags = "active", ["testing"]
    stale = index_action(backend(os_services).names.facts, fact.uid, outbox[0].id, fact_document(row, None))
    results = backend(os_services).upkeep.mirror.bulk([stale], refresh=True, require_alias=True)
    assert results[0][:2] == (False, 409)
    # Replaying the whole outbox is a no-op too.
    replay = backend(os_services).upkeep.mirror.replay(alpha.id, outbox[0].created_at)
    assert (replay.delivered, replay.stale, replay.failed) == (3, 1, 0)  # 3 rows, one document, stale
    found = doc(os_client, os_services, alpha.id, fact.uid)
    assert found["_version"] == outbox[-1].id and found["_source"]["status"] == "retired"


def test_search_counts_like_the_embedded_backend(os_services: Services) -> None:
    """Both backends count by the same rule: the same searches give the same matched and inactive counts,
    and (with a limit above the count) the same facts."""
    alpha = os_services.profiles.create("alpha")
    corpus.load(os_services, alpha)
    embedded = embedded_search(os_services.db, DisabledEmbedder(), os_services.settings)
    try:
        checked = 0
        for query, kind, tags in corpus.SEARCHES:
            request = SearchRequest(profile_id=alpha.id, profile="alpha", query=query, limit=50, kind=kind, tags=tags)
            mirror, local = os_services.backend.search(request), embedded.search(request)
            assert (mirror.matched_count, mirror.inactive_matched, mirror.mode) == \
                (local.matched_count, local.inactive_matched, local.mode), query
            assert {h.uid for h in mirror.hits} == {h.uid for h in local.hits}, query
            checked += mirror.matched_count or 0
        assert checked > 20  # the corpus does match things
    finally:
        embedded.close()

    outcome = os_services.search.search(alpha, "unittest", limit=1)
    assert (outcome.matched_count, outcome.returned_count, outcome.mode) == (2, 1, "lexical")
    row = os_services.query_log.listing(alpha, 1)[0]
    assert (row["matched_count"], row["returned_count"]) == (2, 1)


def test_similar_without_vectors_matches_the_embedded_rule(os_services: Services) -> None:
    alpha = os_services.profiles.create("alpha")
    first = os_services.facts.write(alpha, title="Deploys use Argo CD", text="Deployments go through Argo CD.",
                                    kind="project", tags=[]).fact
    second = os_services.facts.write(alpha, title="Argo CD deploys", text="Deploys go through Argo CD sync.",
                                     kind="project", tags=[])
    os_services.facts.write(alpha, title="Unrelated", text="The user prefers tea.", kind="user", tags=[])
    assert [f.uid for f in second.similar] == [first.uid]
    embedded = embedded_search(os_services.db, DisabledEmbedder(), os_services.settings)
    try:
        local = embedded.similar(alpha.id, "alpha", second.fact.uid, 3)
    finally:
        embedded.close()
    assert [h.uid for h in local] == [first.uid]


def test_bulk_documents_carry_the_canonical_state(os_services: Services, os_client: OpenSearch) -> None:
    alpha = os_services.profiles.create("alpha")
    uids = corpus.load(os_services, alpha)
    names = backend(os_services).names
    docs = {h["_id"]: h["_source"] for h in helpers.scan(os_client, index=names.facts)}
    assert len(docs) == len(corpus.FACTS) + len(corpus.SUPERSEDE)
    new = docs[uids["Old testing preference"]]
    assert new["supersedes"] and docs[new["supersedes"]]["status"] == "superseded"
    assert docs[new["supersedes"]]["superseded_by"] == uids["Old testing preference"]
    assert new["has_vector"] is False and "embedding" not in new
    assert docs[uids["Retired deploy runbook"]]["retired_at"] is not None
    queries = list(helpers.scan(os_client, index=names.queries))
    assert queries == []
    os_services.search.search(alpha, "kubernetes", tags=["infra"])
    settle(os_services)
    (hit,) = list(helpers.scan(os_client, index=names.queries))
    assert hit["_source"]["query"] == "kubernetes" and hit["_source"]["tags"] == ["infra"]
    assert hit["_source"]["matched_count"] == 1 and hit["_source"]["mode"] == "lexical"


def test_facts_written_without_a_vector_are_embedded_and_sent_again(tmp_path: Path, database_url: str,
                                                                     os_cluster: Cluster, os_prefix: str,
                                                                     os_client: OpenSearch) -> None:
    embedder = FakeEmbedder()
    embedder.loaded = False  # still loading when the facts are written
    with build_services(mirrored_settings(tmp_path, database_url, os_cluster, os_prefix, embedder="minilm"),
                        embedder=embedder) as services:
        alpha = services.profiles.create("alpha")
        fact = services.facts.write(alpha, title="Deploy to Kubernetes", text="Argo CD", kind="project",
                                    tags=[]).fact
        found = doc(os_client, services, alpha.id, fact.uid)
        assert found["_source"]["has_vector"] is False and "embedding" not in found["_source"]

        embedder.loaded = True
        backend(services).sync_now()
        found = doc(os_client, services, alpha.id, fact.uid)
        assert found["_source"]["has_vector"] is True
        assert found["_source"]["embedding"] == pytest.approx(embedder.embed_query("Deploy to Kubernetes\nArgo CD"))
        with services.db.read() as session:
            outbox = session.exec(select(OutboxRow).where(OutboxRow.entity == "fact")).all()
        assert len(outbox) == 2 and found["_version"] == max(o.id for o in outbox)  # enqueued again, later
        assert all(o.delivered_at is not None for o in outbox)


def test_an_unreadable_query_matches_nothing_in_both_backends(tmp_path: Path, database_url: str,
                                                              os_cluster: Cluster, os_prefix: str) -> None:
    """service.search.readable on the mirror: no term is a model word and none occurs in the profile (asked of
    OpenSearch in the search's own _msearch), so the count is an exact 0, as in the embedded backend."""
    from tests.search.test_readable import VOCABULARY

    embedder = FakeEmbedder(vocabulary=VOCABULARY)
    services = build_services(mirrored_settings(tmp_path, database_url, os_cluster, os_prefix, embedder="minilm"),
                              embedder=embedder)
    embedded = embedded_search(services.db, embedder, services.settings)
    try:
        alpha = services.profiles.create("alpha")
        services.facts.write(alpha, title="Deploy with Argo CD", text="Deploys to the cluster.", kind="project",
                             tags=[])
        backend(services).sync_now()
        for query in ("deployxx", "??? !!!"):
            request = SearchRequest(profile_id=alpha.id, profile="alpha", query=query, limit=5,
                                    vector=embedder.embed_query(query))
            mirror, local = services.backend.search(request), embedded.search(request)
            assert (mirror.matched_count, mirror.inactive_matched, mirror.mode, mirror.hits) == (0, 0, "hybrid", [])
            assert (local.matched_count, local.inactive_matched, local.mode, local.hits) == (0, 0, "hybrid", [])
        # A word only memory knows makes the query readable: it goes on to the hybrid query (which osmem
        # cannot run: there the search answers lexically, degraded) -- in any case not as an exact miss.
        request = SearchRequest(profile_id=alpha.id, profile="alpha", query="argo deployxx", limit=5,
                                vector=embedder.embed_query("argo deployxx"))
        assert services.backend.search(request).matched_count != 0
        assert embedded.search(request).matched_count == 1
    finally:
        embedded.close()
        services.close()
