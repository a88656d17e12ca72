"""`memory reindex` (fresh versioned index, atomic alias swap, nothing lost meanwhile) and `memory check`
(counts, ids, versions; exit 1 on any difference) in opensearch mode, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opensearchpy import OpenSearch
from typer.testing import CliRunner

from service.cli.main import app
from service.config import Settings
from service.container import Services, build_services, open_mirror_maintenance
from service.domain import portability
from service.search.opensearch.mirror import Mirror
from tests.opensearch import corpus
from tests.opensearch.conftest import settle
from tests.support.clusters import Cluster


@pytest.fixture
def env(tmp_path: Path, database_url: str, os_cluster: Cluster, os_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    values = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "none",
              "MEMORY_SEARCH": "opensearch", **os_cluster.env(os_prefix)}
    for key, value in values.items():
        monkeypatch.setenv(key, value)


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [*args, "--json"])
    body = json.loads(result.output.strip().splitlines()[-1])
    body.pop("embedder", None)  # `memory check` names the embedder (tests/embedding/test_int8.py)
    return result.exit_code, body


def test_reindex_swaps_the_aliases_and_check_finds_differences(env: None, os_services: Services,
                                                               os_client: OpenSearch, os_prefix: str) -> None:
    alpha = os_services.profiles.create("alpha")
    beta = os_services.profiles.create("beta")
    uids = corpus.load(os_services, alpha)
    corpus.load(os_services, beta)
    os_services.search.search(alpha, "deploy kubernetes")
    settle(os_services)  # the search's query-log row goes through the worker
    facts = f"{os_prefix}-facts"
    assert run("check", "alpha") == (0, {"ok": True, "differences": {}})

    code, out = run("reindex")  # the shared indices of every profile
    assert code == 0
    report = out["mirror"]
    assert report["indices"] == [f"{facts}.v2", f"{os_prefix}-queries.v2"]
    assert sorted(report["replaced"]) == [f"{facts}.v1", f"{os_prefix}-queries.v1"]
    assert (report["facts"], report["queries"], report["profiles"]) == (2 * (len(corpus.FACTS) + len(corpus.SUPERSEDE)), 1, 2)
    assert list(os_client.indices.get_alias(name=facts)) == [f"{facts}.v2"]
    assert not os_client.indices.exists(index=f"{facts}.v1")
    assert run("check")[0] == 0
    assert os_services.search.search(alpha, "deploy kubernetes").matched_count == 1  # the running service goes on

    # Differences: a lost document, a foreign one, a stale one (older state at the same version).
    routed = {"routing": str(alpha.id)}
    os_client.delete(index=facts, id=uids["Prefers pytest"], refresh=True, **routed)
    os_client.index(index=facts, id="f_foreign", body={"uid": "f_foreign", "status": "active",
                                                       "profile_id": str(alpha.id)}, refresh=True, **routed)
    doc = os_client.get(index=facts, id=uids["Retired deploy runbook"], **routed)
    os_client.index(index=facts, id=doc["_id"], body={**doc["_source"], "status": "active"},
                    version=doc["_version"], version_type="external_gte", refresh=True, **routed)
    code, out = run("check", "alpha")
    assert code == 1 and out["ok"] is False
    found = out["differences"]["alpha"]["facts"]
    assert found["missing_ids"] == [uids["Prefers pytest"]] and found["extra_ids"] == ["f_foreign"]
    assert found["stale_ids"] == [uids["Retired deploy runbook"]]
    assert found["stale_example"]["canonical"][1] == "retired" and found["stale_example"]["mirror"][1] == "active"
    assert run("check", "beta") == (0, {"ok": True, "differences": {}})  # another profile is not concerned

    assert run("reindex", "alpha")[0] == 0  # one profile: its documents sent again, at their own versions
    code, out = run("check", "alpha")
    assert "stale" not in out["differences"]["alpha"]["facts"] and "extra" in out["differences"]["alpha"]["facts"]
    assert run("reindex")[0] == 0  # a rebuild leaves nothing foreign
    assert run("check") == (0, {"ok": True, "differences": {}})
    assert list(os_client.indices.get_alias(name=facts)) == [f"{facts}.v3"]


def test_changes_during_a_rebuild_reach_the_new_index(os_services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    alpha = os_services.profiles.create("alpha")
    first = os_services.facts.write(alpha, title="Before", text="written before the rebuild", kind="user", tags=[])
    original = Mirror.backfill
    during: dict[str, str] = {}

    def backfill_then_write(self: Mirror, *args: object, **kwargs: object) -> dict[str, int]:
        counts = original(self, *args, **kwargs)  # type: ignore[arg-type]
        if not during:  # the service keeps writing into the live (old) index meanwhile
            during["new"] = os_services.facts.write(alpha, title="During", text="written during the rebuild",
                                                    kind="user", tags=[]).fact.uid
            os_services.facts.forget(alpha, first.fact.uid)
        return counts

    monkeypatch.setattr(Mirror, "backfill", backfill_then_write)
    maintenance = open_mirror_maintenance(os_services.settings, os_services.db, os_services.embedder)
    try:
        report = maintenance.rebuild()
        assert report["replayed"] >= 2
        assert maintenance.check(alpha) == {}
    finally:
        maintenance.close()
    found = os_services.search.search(alpha, "written rebuild")
    assert [f.fact.uid for f in found.facts] == [during["new"]] and found.matched_count == 1


def test_import_in_opensearch_mode_fills_the_mirror(env: None, os_services: Services, tmp_path: Path) -> None:
    with build_services(Settings(data_dir=tmp_path, database_url=f"sqlite:///{tmp_path}/elsewhere.db",
                                 embedder="none", search="embedded")) as elsewhere:  # another store
        corpus.load(elsewhere, elsewhere.profiles.create("alpha"))
        document = portability.export_profile(elsewhere.store, elsewhere.profiles.get("alpha"))
    path = tmp_path / "alpha.json"
    path.write_text(json.dumps(document))
    os_services.profiles.create("beta")
    code, out = run("import", "beta", str(path))
    assert code == 0 and out["imported"] == len(corpus.FACTS) + len(corpus.SUPERSEDE), out
    # Delivered by the command, or a moment before by the running service's worker: nothing failed either way.
    assert out["mirror"]["failed"] == 0 and out["mirror"]["delivered"] <= out["imported"]
    assert run("check", "beta") == (0, {"ok": True, "differences": {}})
