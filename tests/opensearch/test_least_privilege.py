"""The two least-privilege modes of the role in docs/operators.md (issue 25), on the secured node, each as a user holding
exactly the role `memory opensearch role` prints for it:
- install=auto: the service puts its templates and pipeline itself; the cluster check finds nothing wrong;
- install=check: the service cannot put them (its role has no put permission); until an administrator runs
  `memory opensearch install`, /readyz and `memory opensearch check` say so and what to do; afterwards it serves.
The whole OpenSearch suite runs as the auto-mode user (tests/support/clusters.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.lib.waiting import until
from service.cli.main import app
from service.container import Services, build_services, open_mirror_maintenance
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch.role import role
from service.search.opensearch.templates import Names
from tests.opensearch.conftest import mirrored_settings
from tests.opensearch.fakes import FakeEmbedder
from tests.support.clusters import Cluster

pytestmark = [pytest.mark.opensearch, pytest.mark.secured]


def _services(tmp_path: Path, cluster: Cluster, prefix: str, *, vectors: bool = True, **extra: object) -> Services:
    return build_services(mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", cluster, prefix,
                                            embedder="minilm" if vectors else "none", **extra),
                          embedder=FakeEmbedder() if vectors else None)


def test_auto_mode_user_is_enough_for_everything(tmp_path: Path, real_opensearch: Cluster, prefix: str,
                                                 as_user: Callable[[str, dict], Cluster]) -> None:
    cluster = as_user(f"auto-{prefix}", role(Names(prefix), install="auto"))
    services = _services(tmp_path, cluster, prefix)
    try:
        alpha = services.profiles.create("alpha")
        services.facts.write(alpha, title="Deploys", text="Deploy with Argo CD.", kind="project", tags=[])
        found = services.search.search(alpha, "deploy argo")
        assert (found.mode, found.matched_count) == ("hybrid", 1)
        backend = services.backend
        assert isinstance(backend, OpenSearchBackend)
        backend.sync_now()
        assert backend.status()["problems"] == []
        maintenance = open_mirror_maintenance(services.settings, services.db, services.embedder)
        try:
            assert maintenance.check_cluster() == []
            assert maintenance.rebuild()["facts"] == 1
            assert maintenance.check(alpha) == {}
        finally:
            maintenance.close()
    finally:
        services.close()


def test_check_mode_waits_for_the_administrator(tmp_path: Path, real_opensearch: Cluster, prefix: str,
                                                as_user: Callable[[str, dict], Cluster],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = as_user(f"check-{prefix}", role(Names(prefix), install="check"))
    services = _services(tmp_path, cluster, prefix, vectors=False, opensearch_install="check",
                         opensearch_sync_interval=2.0)  # the default: the worker cycles as in production
    try:
        alpha = services.profiles.create("alpha")
        services.facts.write(alpha, title="Deploys", text="Deploy with Argo CD.", kind="project", tags=[])
        found = services.search.search(alpha, "deploy argo")
        assert (found.mode, found.matched_count) == ("degraded", None)  # answered from the canonical store
        problems = " ".join(services.backend.status()["problems"])
        assert f"index template {prefix}-facts is missing" in problems
        assert "an administrator runs `memory opensearch install`" in problems

        base = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": f"sqlite:///{tmp_path}/memory.db",
                "MEMORY_EMBEDDER": "none", "MEMORY_SEARCH": "opensearch"}
        for key, value in {**base, **cluster.env(prefix), "MEMORY_OPENSEARCH_INSTALL": "check"}.items():
            monkeypatch.setenv(key, value)
        result = CliRunner().invoke(app, ["opensearch", "check", "--json"])
        assert result.exit_code == 1 and "memory opensearch install" in result.output
        # The service's own user cannot install them: its role has no put permission.
        result = CliRunner().invoke(app, ["opensearch", "install", "--json"])
        assert result.exit_code == 1 and "indices:admin/index_template/put" in result.output

        # The administrator does, with the same settings as the service (but the admin's credentials).
        admin_user, admin_password = real_opensearch.admin  # type: ignore[misc]
        monkeypatch.setenv("MEMORY_OPENSEARCH_USERNAME", admin_user)
        monkeypatch.setenv("MEMORY_OPENSEARCH_PASSWORD", admin_password)
        printed = json.loads(CliRunner().invoke(app, ["opensearch", "install", "--print", "--json"]).output)
        assert [r["path"] for r in printed["requests"]] == [  # no pipeline without vectors
            f"/_index_template/{prefix}-facts", f"/_index_template/{prefix}-queries", f"/{prefix}-facts.v1",
            f"/{prefix}-queries.v1"]
        result = CliRunner().invoke(app, ["opensearch", "install", "--json"])
        assert result.exit_code == 0, result.output

        # The running service notices within 5 s, by itself (its worker asks again every 3 s, without backoff).
        installed = time.monotonic()
        until(lambda: not services.backend.upkeep.unfit, 8, every=0.1,  # type: ignore[attr-defined]
              what="the running service noticing the installed indices")
        noticed = time.monotonic() - installed
        assert noticed <= 5.0, noticed
        found = services.search.search(alpha, "deploy argo")
        assert (found.mode, found.matched_count) == ("lexical", 1)
        services.backend.sync_now()  # type: ignore[attr-defined]
        assert services.backend.status()["problems"] == []
    finally:
        services.close()
