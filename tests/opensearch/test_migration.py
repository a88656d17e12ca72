"""From the per-profile layout of earlier releases (an alias and a versioned index per profile and entity,
template v2) to the shared one (issue 26): a new release starts on a cluster that holds only the old layout,
builds the shared indices from the canonical store and answers from them (no outbox row lost, searches
answered meanwhile); `memory check` and `memory opensearch check` name the old indices, and `memory reindex`
removes them -- only them: another deployment's objects and the shared indices stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opensearchpy import OpenSearch
from typer.testing import CliRunner

from service.cli.main import app
from service.container import Services
from service.search.opensearch.backend import OpenSearchBackend
from tests.opensearch import corpus
from tests.opensearch.conftest import settle
from tests.support.clusters import Cluster

LEGACY_MAPPING = {"dynamic": "strict", "_meta": {"template_version": 2, "entity": "fact"},
                  "properties": {"uid": {"type": "keyword"}, "profile": {"type": "keyword"},
                                 "status": {"type": "keyword"}, "title": {"type": "text"}}}


def legacy_layout(client: OpenSearch, prefix: str, profile: str, docs: dict[str, str]) -> list[str]:
    """What an earlier release left for one profile: `<prefix>-facts-<profile>.v1` (and queries) behind aliases."""
    made = []
    for entity in ("facts", "queries"):
        alias = f"{prefix}-{entity}-{profile}"
        index = f"{alias}.v1"
        client.indices.create(index=index, body={"mappings": LEGACY_MAPPING,
                                                 "aliases": {alias: {"is_write_index": True}}})
        made.append(index)
    for uid, title in docs.items():
        client.index(index=f"{prefix}-facts-{profile}", id=uid,
                     body={"uid": uid, "profile": profile, "status": "active", "title": title}, refresh=True)
    return made


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [*args, "--json"])
    body = json.loads(result.output.strip().splitlines()[-1])
    body.pop("embedder", None)  # `memory check` names the embedder (tests/embedding/test_int8.py)
    return result.exit_code, body


@pytest.fixture
def env(tmp_path: Path, database_url: str, os_cluster: Cluster, os_prefix: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    values = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "none",
              "MEMORY_SEARCH": "opensearch", **os_cluster.env(os_prefix)}
    for key, value in values.items():
        monkeypatch.setenv(key, value)


def test_a_new_release_moves_the_per_profile_layout_to_the_shared_indices(
        env: None, os_services: Services, os_client: OpenSearch, os_prefix: str) -> None:
    backend = os_services.backend
    assert isinstance(backend, OpenSearchBackend)
    alpha, beta = os_services.profiles.create("alpha"), os_services.profiles.create("beta")
    uids = corpus.load(os_services, alpha)  # the canonical store holds everything
    corpus.load(os_services, beta)
    # The cluster as the earlier release left it: per-profile indices (only some of the facts), no shared ones.
    for name, index in ((f"{os_prefix}-facts", f"{os_prefix}-facts.v1"), (f"{os_prefix}-queries", f"{os_prefix}-queries.v1")):
        os_client.indices.delete(index=index)
        os_client.indices.delete_index_template(name=name)
    backend.upkeep.unprepare()
    legacy = legacy_layout(os_client, os_prefix, "alpha", {uids["Prefers pytest"]: "Prefers pytest"})
    legacy += legacy_layout(os_client, os_prefix, "beta", {})

    found = os_services.search.search(alpha, "deploy kubernetes cluster")  # the new release answers at once
    assert (found.matched_count, found.mode) == (1, "lexical")
    settle(os_services)
    assert sorted(os_client.indices.get(index=f"{os_prefix}-*")) == sorted(
        [f"{os_prefix}-facts.v1", f"{os_prefix}-queries.v1", *legacy])
    code, out = run("opensearch", "check")
    assert code == 1 and "per-profile layout" in out["problems"][0] and "memory reindex" in out["problems"][0]
    assert run("check", "alpha") == (1, {"ok": False, "differences": {"cluster": out["problems"]}})

    code, out = run("reindex")
    assert code == 0 and sorted(out["mirror"]["legacy_removed"]) == sorted(legacy)
    assert sorted(os_client.indices.get(index=f"{os_prefix}-*")) == [f"{os_prefix}-facts.v2", f"{os_prefix}-queries.v2"]
    assert run("check") == (0, {"ok": True, "differences": {}})
    assert os_services.search.search(beta, "deploy kubernetes cluster").matched_count == 1
