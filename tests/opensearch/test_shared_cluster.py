"""Two deployments on one cluster (issue 25): with different MEMORY_OPENSEARCH_PREFIX values and the same
profile names they neither see nor change each other's objects -- searches, counts, aggregates, templates,
rebuilds (tests/opensearch/test_real_cluster.py adds the pipelines, which osmem lacks). And one deployment holds two indices whatever its number of profiles (issue 26)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from service.container import Services, build_services, open_mirror_maintenance
from service.search.opensearch.backend import OpenSearchBackend
from tests.opensearch.conftest import mirrored_settings, settle
from tests.support.clusters import Cluster, new_prefix, remove_prefix


@pytest.fixture
def second(tmp_path: Path, os_cluster: Cluster) -> Iterator[tuple[Services, str]]:
    """Another deployment (its own canonical store and prefix) on the same cluster."""
    prefix = new_prefix()
    (tmp_path / "b").mkdir()
    services = build_services(mirrored_settings(tmp_path / "b", f"sqlite:///{tmp_path}/b/memory.db", os_cluster,
                                                prefix, lexical_weight=0.3))
    try:
        yield services, prefix
    finally:
        services.close()
        remove_prefix(os_cluster, prefix)


def _backend(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def _objects(client: OpenSearch, prefix: str) -> dict[str, object]:
    """Everything of a deployment on the cluster: indices with their document counts, and templates."""
    client.indices.refresh(index=f"{prefix}-*")
    indices = {name: int(client.count(index=name)["count"]) for name in client.indices.get(index=f"{prefix}-*")}
    templates = {t["name"]: t["index_template"]["_meta"]["fingerprint"]
                 for t in client.indices.get_index_template(name=f"{prefix}-*")["index_templates"]}
    return {"indices": indices, "templates": templates}


def test_two_deployments_with_the_same_profile_names_stay_apart(os_services: Services, os_prefix: str,
                                                                second: tuple[Services, str],
                                                                os_client: OpenSearch) -> None:
    other, other_prefix = second
    a = os_services.profiles.create("alpha")
    b = other.profiles.create("alpha")  # the same name, in the other deployment
    os_services.facts.write(a, title="Deploys", text="Deploys run on Argo CD.", kind="project", tags=["infra"])
    other.facts.write(b, title="Deploys", text="Deploys run on Flux and Kustomize.", kind="project", tags=["infra"])
    other.facts.write(b, title="Editor", text="Vim.", kind="preference", tags=[])
    for services in (os_services, other):
        services.search.search(services.profiles.get("alpha"), "deploys")
        settle(services)

    mine = os_services.search.search(a, "deploys run")
    theirs = other.search.search(b, "deploys run")
    assert [f.fact.text for f in mine.facts] == ["Deploys run on Argo CD."] and mine.matched_count == 1
    assert [f.fact.text for f in theirs.facts] == ["Deploys run on Flux and Kustomize."]
    assert os_services.search.search(a, "vim").matched_count == 0
    stats = os_services.stats.sourced_stats(a, 30)
    assert stats.source == "opensearch" and stats.body["facts"] == 1

    before = _objects(os_client, other_prefix)
    assert set(before["indices"]) == {f"{other_prefix}-facts.v1", f"{other_prefix}-queries.v1"}  # type: ignore[arg-type]
    # Everything the first deployment can do to the cluster leaves the second's objects as they were.
    _backend(os_services).upkeep.install()
    maintenance = open_mirror_maintenance(os_services.settings, os_services.db, os_services.embedder)
    try:
        assert maintenance.rebuild()["indices"] == [f"{os_prefix}-facts.v2", f"{os_prefix}-queries.v2"]
        assert maintenance.check_cluster() == []
    finally:
        maintenance.close()
    assert _objects(os_client, other_prefix) == before
    assert _backend(other).indices.differences() == []  # its own templates, untouched
    assert other.search.search(b, "deploys run").matched_count == 1


def test_profiles_add_no_index(os_services: Services, os_prefix: str, os_client: OpenSearch) -> None:
    for n in range(40):
        profile = os_services.profiles.create(f"p{n}")
        os_services.facts.write(profile, title=f"Fact {n}", text=f"Kept by profile {n} only.", kind="user", tags=[])
    settle(os_services)
    assert sorted(os_client.indices.get(index=f"{os_prefix}-*")) == [f"{os_prefix}-facts.v1", f"{os_prefix}-queries.v1"]
    for n in (0, 17, 39):
        found = os_services.search.search(os_services.profiles.get(f"p{n}"), "kept profile")
        assert [f.fact.title for f in found.facts] == [f"Fact {n}"] and found.matched_count == 1
