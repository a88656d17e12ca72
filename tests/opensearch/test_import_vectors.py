"""`memory import` embeds as it goes (issue 26): the document's facts are embedded in batches before anything
is written, so the import stores each fact with its vector, a search right after the command is hybrid with an
exact count, and the search mirror receives each imported fact once -- with its vector -- instead of a
vector-less copy first and a second one later."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from service.cli.main import app
from service.config import Settings
from service.container import build_services
from service.domain import portability
from service.search.opensearch.mirror import Mirror
from tests.support.clusters import Cluster

pytestmark = pytest.mark.model

FACTS = 150  # more than two batches


def _document(tmp_path: Path) -> Path:
    with build_services(Settings(data_dir=tmp_path / "src", embedder="none")) as source:
        profile = source.profiles.create("alpha")
        for n in range(FACTS):
            source.facts.write(profile, title=f"Runbook {n}", text=f"Service {n} deploys with Argo CD on Fridays.",
                               kind="project", tags=["deploy"])
        document = portability.export_profile(source.store, profile)
    path = tmp_path / "alpha.json"
    path.write_text(json.dumps(document))
    return path


def test_import_stores_each_fact_with_its_vector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    document = _document(tmp_path)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "dst"))
    monkeypatch.setenv("MEMORY_EMBEDDER", "minilm")
    with build_services(Settings()) as services:
        services.profiles.create("alpha")
    result = CliRunner().invoke(app, ["import", "alpha", str(document), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output.strip().splitlines()[-1])
    assert (out["imported"], out["embedded"]) == (FACTS, FACTS)
    with build_services(Settings()) as services:
        services.embedder.start()
        found = services.search.search(services.profiles.get("alpha"), "how does service 7 get deployed?")
        assert found.mode == "hybrid" and found.matched_count is not None  # no fact waits for a vector
        assert services.readiness()["checks"]["search"].get("facts_without_vector", 0) == 0


def test_the_mirror_receives_each_imported_fact_once_with_its_vector(
        tmp_path: Path, database_url: str, os_cluster: Cluster, os_prefix: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    document = _document(tmp_path)
    for key, value in {"MEMORY_DATA_DIR": str(tmp_path / "dst"), "MEMORY_DATABASE_URL": database_url,
                       "MEMORY_EMBEDDER": "minilm", "MEMORY_SEARCH": "opensearch",
                       **os_cluster.env(os_prefix)}.items():
        monkeypatch.setenv(key, value)
    with build_services(Settings(opensearch_sync_interval=3600)) as services:  # no worker cycle in between
        services.profiles.create("alpha")
    sent: Counter[str] = Counter()
    original = Mirror.bulk

    def counting(self: Mirror, actions: Any, **options: Any) -> Any:
        actions = list(actions)
        sent.update(a["_id"] for a in actions if a["_index"] == f"{os_prefix}-facts")
        assert all(a["_source"].get("has_vector") for a in actions if a["_index"] == f"{os_prefix}-facts")
        return original(self, actions, **options)

    monkeypatch.setattr(Mirror, "bulk", counting)
    result = CliRunner().invoke(app, ["import", "alpha", str(document), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output.strip().splitlines()[-1])
    assert out["mirror"]["delivered"] == FACTS and out["mirror"]["sent_without_vector"] == 0
    assert len(sent) == FACTS and set(sent.values()) == {1}  # each fact once, with its vector
