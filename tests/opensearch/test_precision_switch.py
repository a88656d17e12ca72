"""A mirrored store written with fp32 vectors (the default of earlier releases), opened with the int8 default
(issue 38): the service says at start-up, and in /readyz, that `memory reindex --reembed` is needed, keeps
serving meanwhile, and after the reindex searches are hybrid again on int8 vectors."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from service.api.app import create_app
from service.cli.main import app as cli
from service.container import build_services
from service.embedding.minilm import MODEL_ID
from tests.opensearch.conftest import mirrored_settings
from tests.support.clusters import Cluster

pytestmark = pytest.mark.opensearch
FACTS = ["Deploys go through Argo CD to the staging cluster first.", "The user prefers pytest with plain asserts.",
         "PostgreSQL 16 is the canonical store; OpenSearch mirrors it."]


def test_an_fp32_mirror_keeps_serving_and_names_the_reindex(tmp_path: Path, real_opensearch: Cluster, prefix: str,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    database_url = f"sqlite:///{tmp_path}/memory.db"
    with build_services(mirrored_settings(tmp_path, database_url, real_opensearch, prefix, embedder="minilm",
                                          embedder_precision="fp32")) as services:
        services.embedder.embed_documents(["loaded"])
        work = services.profiles.create("work")
        for n, text in enumerate(FACTS):
            services.facts.write(work, title=f"fact {n}", text=text, kind="project", tags=[])
        services.backend.sync_now()  # type: ignore[attr-defined]

    settings = mirrored_settings(tmp_path, database_url, real_opensearch, prefix, embedder="minilm")  # int8
    assert settings.embedder_precision == "int8"
    with build_services(settings) as services:
        services.embedder.embed_documents(["loaded"])
        with caplog.at_level(logging.WARNING, logger="service"), TestClient(create_app(services=services)):
            pass  # the app's start-up: what `memory serve` says
        assert any("memory reindex --reembed" in r.getMessage() and "OpenSearch mirror keeps serving" in r.getMessage()
                   for r in caplog.records), caplog.text
        # The mirror's worker embeds facts with no vector at all (written while the embedder was loading or
        # failing), never those with a vector of another model: a cycle of it leaves them for the reindex, as
        # the warning says (it re-embedded them in the background once, racing this check).
        services.backend.sync_now()  # type: ignore[attr-defined]
        embedder = services.readiness()["checks"]["embedder"]
        assert embedder["stale_vectors"] == {MODEL_ID: 3} and embedder["fix"] == "memory reindex --reembed"
        found = services.search.search(services.profiles.get("work"), "the canonical store PostgreSQL")
        assert found.facts and found.facts[0].fact.text == FACTS[2]  # still serving, by words at least

    env = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "minilm",
           "MEMORY_SEARCH": "opensearch", **real_opensearch.env(prefix)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(cli, ["reindex", "--reembed", "--json"])
    assert result.exit_code == 0, result.output
    with build_services(settings) as services:
        assert "stale_vectors" not in services.readiness()["checks"]["embedder"]
        found = services.search.search(services.profiles.get("work"), "which database holds the data")
        assert found.mode == "hybrid" and found.facts[0].fact.text == FACTS[2]
    result = CliRunner().invoke(cli, ["check", "--json"])
    assert json.loads(result.output)["embedder"] == {"model": f"{MODEL_ID}+int8", "precision": "int8"}
