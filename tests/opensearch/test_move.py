"""Moving up without losing anything: a profile grown in the embedded store (SQLite) is exported and imported
into PostgreSQL + a real OpenSearch; every REST answer a reviewer reads is the same before and after, and so
are the searches. Vectors come from the deterministic FakeEmbedder on both sides (recomputed at the
destination, as they would be by the real model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from service.api.app import create_app
from service.cli.main import app as cli
from service.config import Settings
from service.container import Services, build_services
from service.domain import portability
from service.search.opensearch.backend import OpenSearchBackend
from tests.opensearch import corpus
from tests.opensearch.conftest import mirrored_settings
from tests.opensearch.fakes import FakeEmbedder
from tests.support.clusters import Cluster, new_prefix, remove_prefix

pytestmark = [pytest.mark.opensearch, pytest.mark.postgres]


def history(services: Services) -> None:
    """Writes, amendments, supersessions, retirements, and searches that hit, miss and filter."""
    profile = services.profiles.create("alpha")
    uids = corpus.load(services, profile)
    services.facts.update(profile, uids["Grafana dashboard"], tags=["observability", "grafana"], title="Grafana")
    services.facts.update(profile, uids["Deploys run on Kubernetes"], text="Deploys go through Flux now.")
    for query, kind, tags in corpus.SEARCHES:
        services.search.search(profile, query, kind=kind, tags=list(tags))
    services.search.search(profile, "zqxv wpfk")  # a miss
    services.search.search(profile, "jenkins runbook")  # memory once knew


def answers(services: Services) -> tuple[dict[str, Any], set[str]]:
    """Every REST answer of the profile: stats, summary, the query log and each row, facts and histories."""
    token = services.profiles.issue_token("alpha").token
    out: dict[str, Any] = {}
    sources: set[str] = set()
    with TestClient(create_app(services=services)) as client:
        def get(path: str) -> Any:
            response = client.get(path, headers={"Authorization": f"Bearer {token}"})
            assert response.status_code == 200, (path, response.text)
            sources.add(response.headers.get("X-Memory-Source", "canonical"))
            return response.json()

        for days in (1, 30):
            out[f"stats {days}"] = get(f"/api/alpha/stats?days={days}")
            out[f"summary {days}"] = get(f"/api/alpha/queries/summary?days={days}")
        out["queries"] = get("/api/alpha/queries?limit=500")
        for row in out["queries"]["queries"]:
            out[f"query {row['id']}"] = get(f"/api/alpha/queries/{row['id']}")
        for status in ("status=active&", "status=retired&", "status=superseded&", ""):  # "": every status
            page, pages = get(f"/api/alpha/facts?{status}limit=5"), []
            while True:
                pages.append(page)
                if not page.get("next_cursor"):
                    break
                page = get(f"/api/alpha/facts?{status}limit=5&cursor={page['next_cursor']}")
            out[f"facts {status or 'all'}"] = pages
        for fact in (f for page in out["facts all"] for f in page["facts"]):
            out[f"fact {fact['uid']}"] = get(f"/api/alpha/facts/{fact['uid']}")
    return out, sources


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Services]:
    (tmp_path / "src").mkdir()
    with build_services(Settings(data_dir=tmp_path / "src", embedder="minilm"), embedder=FakeEmbedder()) as services:
        yield services


def test_embedded_to_postgres_and_opensearch_keeps_every_answer(
        tmp_path: Path, source: Services, pg_database_url: str, real_opensearch: Cluster,
        monkeypatch: pytest.MonkeyPatch) -> None:
    history(source)
    before, sources = answers(source)
    assert sources == {"canonical"}
    assert before["summary 30"]["totals"]["zero_match"] >= 2 and len(before["queries"]["queries"]) == len(corpus.SEARCHES) + 2

    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "src"))  # `memory export`, as a user runs it
    exported = CliRunner().invoke(cli, ["export", "alpha"])
    assert exported.exit_code == 0, exported.output
    document = json.loads(exported.output)
    assert document["format"] == "memory-export/3" and len(document["queries"]) == len(before["queries"]["queries"])

    prefix = new_prefix()
    (tmp_path / "dst").mkdir()
    destination = build_services(mirrored_settings(tmp_path / "dst", pg_database_url, real_opensearch, prefix,
                                                   embedder="minilm"), embedder=FakeEmbedder())
    try:
        profile = destination.profiles.create("alpha")
        result = portability.import_profile(destination.store, profile, document)
        assert result == {"imported": len(document["facts"]), "skipped": 0, "uids_remapped": 0,
                          "queries_imported": len(document["queries"]), "queries_skipped": 0,
                          "queries_renumbered": 0}
        backend = destination.backend
        assert isinstance(backend, OpenSearchBackend)
        backend.sync_now()  # embeds the imported facts and delivers the outbox
        backend.client.indices.refresh(index=f"{prefix}-*")
        assert backend.status()["outbox"]["pending"] == 0

        after, sources = answers(destination)
        assert sources == {"canonical", "opensearch"}  # summary and stats from the mirror's aggregations
        assert after.keys() == before.keys()
        for key in before:
            assert after[key] == before[key], key

        # Importing again changes nothing.
        again = portability.import_profile(destination.store, profile, document)
        assert (again["imported"], again["queries_imported"]) == (0, 0)

        # The same searches find the same facts (the query log grows the same way on both sides).
        here, there = source.profiles.get("alpha"), profile
        for query, kind, tags in corpus.SEARCHES:
            a = source.search.search(here, query, kind=kind, tags=list(tags), limit=50)
            b = destination.search.search(there, query, kind=kind, tags=list(tags), limit=50)
            assert (a.matched_count, a.mode) == (b.matched_count, b.mode), query
            assert {f.fact.uid for f in a.facts} == {f.fact.uid for f in b.facts}, query
    finally:
        destination.close()
        remove_prefix(real_opensearch, prefix)
