"""Every permission of the service's role tried up front (issue 37), on the secured node, each case as a user
holding the role `memory opensearch role` prints with something taken away (or made for another prefix):
`memory opensearch check` exits 1 naming it, `memory check` gives no advice that cannot help, and /readyz lists
it under the search check's problems and says `degraded` (503 with MEMORY_READY_WHEN_DEGRADED=false)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from service.cli.main import app
from service.container import Services, build_services
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch.permissions import denials, problems
from service.search.opensearch.role import role
from service.search.opensearch.templates import Names
from tests.opensearch.conftest import mirrored_settings
from tests.support.clusters import Cluster

pytestmark = [pytest.mark.opensearch, pytest.mark.secured]


def without(body: dict[str, Any], permission: str) -> dict[str, Any]:
    body = copy.deepcopy(body)
    body["cluster_permissions"] = [p for p in body["cluster_permissions"] if p != permission]
    for entry in body["index_permissions"]:
        entry["allowed_actions"] = [a for a in entry["allowed_actions"] if a != permission]
    return body


def services_for(tmp_path: Path, cluster: Cluster, prefix: str, **extra: object) -> Services:
    return build_services(mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", cluster, prefix, **extra))


def deployed(real_opensearch: Cluster, tmp_path: Path, prefix: str) -> None:
    """The deployment's indices made (and one fact mirrored) with the admin's credentials, as a team's cluster
    already has them: the creating and writing probes then run too."""
    admin = Cluster(real_opensearch.url, *real_opensearch.admin, real_opensearch.ca_file)  # type: ignore[misc]
    services = services_for(tmp_path / "admin", admin, prefix)
    try:
        alpha = services.profiles.create("alpha")
        services.facts.write(alpha, title="Deploys", text="Deploy with Argo CD.", kind="project", tags=[])
        services.backend.sync_now()  # type: ignore[attr-defined]
    finally:
        services.close()


def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cluster: Cluster, prefix: str, *args: str) -> Any:
    env = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": f"sqlite:///{tmp_path}/memory.db",
           "MEMORY_EMBEDDER": "none", "MEMORY_SEARCH": "opensearch", **cluster.env(prefix)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return CliRunner().invoke(app, list(args))


def test_the_printed_role_is_granted_in_full(tmp_path: Path, real_opensearch: Cluster, prefix: str,
                                             as_user: Any) -> None:
    deployed(real_opensearch, tmp_path, prefix)
    cluster = as_user(f"full-{prefix}", role(Names(prefix), install="auto"))
    client = cluster.client()
    try:
        found = denials(client, Names(prefix))
    finally:
        client.close()
    assert found.denied == [] and found.tried_cluster >= 7
    assert {"indices:admin/create", "indices:data/write/index", "indices:data/write/bulk*",
            "indices:data/read/search*", "indices:admin/delete", "indices:admin/aliases"} <= found.tried_index
    # and nothing was made or written by the probes
    admin = real_opensearch.client(admin=True)
    try:
        assert sorted(admin.indices.get(index=f"{prefix}-*")) == [f"{prefix}-facts.v1", f"{prefix}-queries.v1"]
        admin.indices.refresh(index=f"{prefix}-facts")
        assert admin.count(index=f"{prefix}-facts")["count"] == 1
    finally:
        admin.close()


def test_a_user_without_msearch_is_named_by_check_and_readyz(tmp_path: Path, real_opensearch: Cluster, prefix: str,
                                                             as_user: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    deployed(real_opensearch, tmp_path, prefix)
    cluster = as_user(f"nomsearch-{prefix}", without(role(Names(prefix), install="auto"), "indices:data/read/msearch"))

    result = cli(monkeypatch, tmp_path / "cli", cluster, prefix, "opensearch", "check")
    assert result.exit_code == 1, result.output
    assert "lacks the cluster permission [indices:data/read/msearch]" in result.output
    assert "the cluster (OpenSearch" not in result.output  # not "can serve this release"
    result = cli(monkeypatch, tmp_path / "cli", cluster, prefix, "check")
    assert result.exit_code == 1 and "indices:data/read/msearch" in result.output
    assert "memory reindex" not in result.output  # it could not help
    assert not result.output.lstrip().startswith("{")  # plain lines without --json

    for ready_when_degraded, status in ((True, True), (False, False)):
        services = services_for(tmp_path / str(ready_when_degraded), cluster, prefix,
                                ready_when_degraded=ready_when_degraded)
        try:
            alpha = services.profiles.create("alpha")
            assert services.search.search(alpha, "deploy argo").matched_count is None  # degraded, as before
            report = services.readiness()
            search = report["checks"]["search"]
            assert search["state"] == "degraded"
            assert any("[indices:data/read/msearch]" in p for p in search["problems"]), search["problems"]
            assert report["degraded"] is True and report["ready"] is status
            assert any("indices:data/read/msearch" in r for r in report["degraded_reasons"])
        finally:
            services.close()


def test_a_missing_index_permission_names_the_pattern(tmp_path: Path, real_opensearch: Cluster, prefix: str,
                                                      as_user: Any) -> None:
    deployed(real_opensearch, tmp_path, prefix)
    cluster = as_user(f"nobulk-{prefix}", without(role(Names(prefix), install="auto"), "indices:data/write/bulk*"))
    services = services_for(tmp_path, cluster, prefix)
    try:
        backend = services.backend
        assert isinstance(backend, OpenSearchBackend)
        backend.upkeep.prepare()
        lines = backend.status()["problems"]
        assert any(f"lacks [indices:data/write/bulk*] on {prefix}-facts" in line for line in lines), lines
        assert any("MEMORY_OPENSEARCH_PREFIX" in line and "memory opensearch role --prefix" in line for line in lines)
    finally:
        services.close()


def test_a_role_made_for_another_prefix_is_named_as_such(tmp_path: Path, real_opensearch: Cluster, prefix: str,
                                                         as_user: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    deployed(real_opensearch, tmp_path, prefix)
    cluster = as_user(f"other-{prefix}", role(Names(f"nc{prefix[3:]}"), install="auto"))
    client = cluster.client()
    try:
        lines = problems(denials(client, Names(prefix)), Names(prefix))
    finally:
        client.close()
    assert len(lines) == 1 and "made for another prefix" in lines[0] and f"{prefix!r}" in lines[0], lines
    result = cli(monkeypatch, tmp_path, cluster, prefix, "opensearch", "check", "--json")
    report = json.loads(result.output)
    assert result.exit_code == 1 and report["ok"] is False
    assert any("MEMORY_OPENSEARCH_PREFIX" in p for p in report["problems"])
    assert not any("memory reindex" in p for p in report["problems"])
