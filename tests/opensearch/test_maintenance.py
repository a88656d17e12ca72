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
from service.container import Services, build_services
from service.domain import portability
from service.search.opensearch.maintenance import MirrorMaintenance
from service.search.opensearch.mirror import Mirror
from tests.opensearch import corpus


@pytest.fixture
def env(tmp_path: Path, database_url: str, os_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    values = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "none",
              "MEMORY_SEARCH": "opensearch", "MEMORY_OPENSEARCH_URL": os_url}
    for key, value in values.items():
        monkeypatch.setenv(key, value)


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.output.strip().splitlines()[-1])


def test_reindex_swaps_the_alias_and_check_finds_differences(env: None, os_services: Services,
                                                             os_client: OpenSearch) -> None:
    alpha = os_services.profiles.create("alpha")
    uids = corpus.load(os_services, alpha)
    os_services.search.search(alpha, "deploy kubernetes")
    assert run("check", "alpha") == (0, {"ok": True, "differences": {}})

    code, out = run("reindex", "alpha")
    assert code == 0
    report = out["reindexed"]["alpha"]["mirror"]
    assert report["indices"] == ["memory-facts-alpha.v2", "memory-queries-alpha.v2"]
    assert sorted(report["replaced"]) == ["memory-facts-alpha.v1", "memory-queries-alpha.v1"]
    assert (report["facts"], report["queries"]) == (len(corpus.FACTS) + len(corpus.SUPERSEDE), 1)
    assert list(os_client.indices.get_alias(name="memory-facts-alpha")) == ["memory-facts-alpha.v2"]
    assert not os_client.indices.exists(index="memory-facts-alpha.v1")
    assert run("check")[0] == 0
    assert os_services.backend.search  # the running service keeps working through the alias
    assert os_services.search.search(alpha, "deploy kubernetes").matched_count == 1

    # Differences: a lost document, a foreign one, a stale one (older state at the same version).
    os_client.delete(index="memory-facts-alpha", id=uids["Prefers pytest"], refresh=True)
    os_client.index(index="memory-facts-alpha", id="f_foreign", body={"uid": "f_foreign", "status": "active"},
                    refresh=True)
    doc = os_client.get(index="memory-facts-alpha", id=uids["Retired deploy runbook"])
    os_client.index(index="memory-facts-alpha", id=doc["_id"], body={**doc["_source"], "status": "active"},
                    version=doc["_version"], version_type="external_gte", refresh=True)
    code, out = run("check", "alpha")
    assert code == 1 and out["ok"] is False
    facts = out["differences"]["alpha"]["facts"]
    assert facts["missing_ids"] == [uids["Prefers pytest"]] and facts["extra_ids"] == ["f_foreign"]
    assert facts["stale_ids"] == [uids["Retired deploy runbook"]]
    assert facts["stale_example"]["canonical"][1] == "retired" and facts["stale_example"]["mirror"][1] == "active"

    assert run("reindex", "alpha")[0] == 0
    assert run("check", "alpha") == (0, {"ok": True, "differences": {}})
    assert list(os_client.indices.get_alias(name="memory-facts-alpha")) == ["memory-facts-alpha.v3"]


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
    maintenance = MirrorMaintenance(os_services.settings, os_services.db, os_services.embedder)
    try:
        report = maintenance.reindex(alpha)
        assert report["replayed"] >= 2
        assert maintenance.check(alpha) == {}
    finally:
        maintenance.close()
    found = os_services.search.search(alpha, "written rebuild")
    assert [f.fact.uid for f in found.facts] == [during["new"]] and found.matched_count == 1


def test_import_in_opensearch_mode_fills_the_mirror(env: None, os_services: Services, tmp_path: Path) -> None:
    elsewhere = build_services(Settings(data_dir=tmp_path, database_url=f"sqlite:///{tmp_path}/elsewhere.db",
                                        embedder="none", search="embedded"))  # another store
    try:
        corpus.load(elsewhere, elsewhere.profiles.create("alpha"))
        document = portability.export_profile(elsewhere.store, elsewhere.profiles.get("alpha"))
    finally:
        elsewhere.close()
    path = tmp_path / "alpha.json"
    path.write_text(json.dumps(document))
    os_services.profiles.create("beta")
    code, out = run("import", "beta", str(path))
    assert code == 0 and out["imported"] == len(corpus.FACTS) + len(corpus.SUPERSEDE), out
    assert out["mirror"]["facts"] == out["imported"]
    assert run("check", "beta") == (0, {"ok": True, "differences": {}})
