"""`memory profile rename` in opensearch mode (issue 24): the per-profile indices are named after the profile,
so the mirror follows the rename -- at once when the command can reach the cluster, otherwise through the
outbox (a "rename" row) when the running service next syncs. Either way the old name's indices are dropped
(a new profile of that name starts empty) and `memory check` is clean under the new name."""

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

DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port


@pytest.fixture
def env(tmp_path: Path, database_url: str, os_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    values = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "none",
              "MEMORY_SEARCH": "opensearch", "MEMORY_OPENSEARCH_URL": os_url, "MEMORY_OPENSEARCH_TIMEOUT": "2"}
    for key, value in values.items():
        monkeypatch.setenv(key, value)


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.output.strip().splitlines()[-1])


def indices(client: OpenSearch, profile: str) -> list[str]:
    found = client.indices.get(index=f"memory-*-{profile}.v*", allow_no_indices=True, ignore_unavailable=True)
    return sorted(found)


def grown(services: Services) -> tuple[int, list[str]]:
    alpha = services.profiles.create("alpha")
    corpus.load(services, alpha)
    found = services.search.search(alpha, "deploy kubernetes")
    services.search.search(alpha, "zqxv wpfk")
    settle(services)
    return found.matched_count or 0, [f.fact.uid for f in found.facts]


def assert_moved(services: Services, client: OpenSearch, matched: int, uids: list[str]) -> None:
    assert indices(client, "alpha") == []
    assert indices(client, "beta") == ["memory-facts-beta.v1", "memory-queries-beta.v1"]
    assert run("check", "beta") == (0, {"ok": True, "differences": {}})
    beta = services.profiles.get("beta")
    found = services.search.search(beta, "deploy kubernetes")  # the service that was running all along
    assert (found.matched_count, found.mode, [f.fact.uid for f in found.facts]) == (matched, "lexical", uids)
    # A new profile under the old name starts empty: nothing of beta's is left under "alpha".
    alpha = services.profiles.create("alpha")
    assert services.search.search(alpha, "deploy kubernetes").matched_count == 0
    settle(services)
    assert run("check") == (0, {"ok": True, "differences": {}})


def test_the_command_moves_the_mirror_at_once(env: None, os_services: Services, os_client: OpenSearch) -> None:
    matched, uids = grown(os_services)
    assert matched >= 1 and indices(os_client, "alpha") == ["memory-facts-alpha.v1", "memory-queries-alpha.v1"]
    code, out = run("profile", "rename", "alpha", "beta")
    assert code == 0, out
    assert out["mirror"]["facts"] == len(corpus.FACTS) + len(corpus.SUPERSEDE) and out["mirror"]["queries"] == 2
    assert os_services.backend.status()["outbox"]["pending"] == 0  # the rename row was delivered by the command
    assert_moved(os_services, os_client, matched, uids)


def test_without_the_cluster_the_running_service_moves_it_from_the_outbox(
        env: None, os_url: str, os_services: Services, os_client: OpenSearch, monkeypatch: pytest.MonkeyPatch) -> None:
    matched, uids = grown(os_services)
    monkeypatch.setenv("MEMORY_OPENSEARCH_URL", DEAD)
    code, out = run("profile", "rename", "alpha", "beta")
    assert code == 0, out  # the rename stands
    monkeypatch.setenv("MEMORY_OPENSEARCH_URL", os_url)
    assert out["mirror"].startswith("not moved yet") and "memory reindex beta" in out["mirror"]
    assert indices(os_client, "alpha") != []  # untouched so far
    backend = os_services.backend
    assert isinstance(backend, OpenSearchBackend)
    assert backend.canonical.pending_renames() != [] and backend.status()["outbox"]["pending"] == 1

    settle(os_services)  # the worker's next cycle
    assert backend.canonical.pending_renames() == []
    assert_moved(os_services, os_client, matched, uids)


def test_a_rename_not_followed_yet_is_settled_by_reindex(
        env: None, os_url: str, os_services: Services, os_client: OpenSearch, monkeypatch: pytest.MonkeyPatch) -> None:
    grown(os_services)
    monkeypatch.setenv("MEMORY_OPENSEARCH_URL", DEAD)
    assert run("profile", "rename", "alpha", "beta")[0] == 0
    monkeypatch.setenv("MEMORY_OPENSEARCH_URL", os_url)
    code, out = run("reindex", "beta")  # what the command told the user to run
    assert code == 0, out
    assert out["reindexed"]["beta"]["mirror"]["indices"] == ["memory-facts-beta.v1", "memory-queries-beta.v1"]
    assert indices(os_client, "alpha") == []
    assert run("check", "beta") == (0, {"ok": True, "differences": {}})
