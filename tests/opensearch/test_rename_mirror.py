"""`memory profile rename` in opensearch mode (issue 24): the mirror's documents carry the profile's id, not its
name, so a rename changes nothing in the cluster -- the same documents answer under the new name at once, a
new profile under the old name starts empty, and `memory check` is clean. The rename's outbox row is marked
followed by the command, or by the running service's next sync when something else renamed it."""

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


@pytest.fixture
def env(tmp_path: Path, database_url: str, os_cluster: Cluster, os_prefix: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    values = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "none",
              "MEMORY_SEARCH": "opensearch", "MEMORY_OPENSEARCH_TIMEOUT": "2", **os_cluster.env(os_prefix)}
    for key, value in values.items():
        monkeypatch.setenv(key, value)


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [*args, "--json"])
    body = json.loads(result.output.strip().splitlines()[-1])
    body.pop("embedder", None)  # `memory check` names the embedder (tests/embedding/test_int8.py)
    return result.exit_code, body


def backend(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def snapshot(client: OpenSearch, services: Services) -> tuple[list[str], int]:
    """The deployment's indices and how many documents they hold."""
    names = backend(services).names
    client.indices.refresh(index=f"{names.facts},{names.queries}")
    indices = sorted(client.indices.get(index=f"{names.prefix}-*"))
    return indices, int(client.count(index=f"{names.facts},{names.queries}")["count"])


def grown(services: Services) -> tuple[int, list[str]]:
    alpha = services.profiles.create("alpha")
    corpus.load(services, alpha)
    found = services.search.search(alpha, "deploy kubernetes")
    services.search.search(alpha, "zqxv wpfk")
    settle(services)
    return found.matched_count or 0, [f.fact.uid for f in found.facts]


def assert_renamed(services: Services, matched: int, uids: list[str]) -> None:
    assert run("check", "beta") == (0, {"ok": True, "differences": {}})
    beta = services.profiles.get("beta")
    found = services.search.search(beta, "deploy kubernetes")  # the service that was running all along
    assert (found.matched_count, found.mode, [f.fact.uid for f in found.facts]) == (matched, "lexical", uids)
    # A new profile under the old name starts empty: nothing of beta's answers under "alpha".
    alpha = services.profiles.create("alpha")
    assert services.search.search(alpha, "deploy kubernetes").matched_count == 0
    settle(services)
    assert run("check") == (0, {"ok": True, "differences": {}})


def test_a_rename_changes_nothing_in_the_cluster(env: None, os_services: Services, os_client: OpenSearch) -> None:
    matched, uids = grown(os_services)
    before = snapshot(os_client, os_services)
    code, out = run("profile", "rename", "alpha", "beta")
    assert code == 0, out
    assert out["mirror"] == {"renames_followed": 1, "documents": "unchanged (keyed by profile id)"}
    assert os_services.backend.status()["outbox"]["pending"] == 0  # the rename row was marked by the command
    assert snapshot(os_client, os_services) == before
    assert_renamed(os_services, matched, uids)


def test_a_rename_row_left_pending_is_followed_by_the_worker(env: None, os_services: Services,
                                                             os_client: OpenSearch) -> None:
    matched, uids = grown(os_services)
    before = snapshot(os_client, os_services)
    os_services.profiles.rename("alpha", "beta")  # as another process would, without the command's follow-up
    assert backend(os_services).canonical.pending_renames() != []
    settle(os_services)  # the worker's next cycle
    assert backend(os_services).canonical.pending_renames() == []
    assert snapshot(os_client, os_services) == before
    assert_renamed(os_services, matched, uids)
