"""An embeddings endpoint that fails never loses a write: the fact is stored and embedded later."""

from __future__ import annotations

from pathlib import Path

from service.config import Settings
from service.container import build_services
from service.store.vectors import models as vector_models
from tests.embedding.test_openai import Reply, Stub, stub  # noqa: F401  (the stub fixture)


def test_outage_then_recovery(tmp_path: Path, stub: Stub) -> None:  # noqa: F811
    settings = Settings(data_dir=tmp_path, embedder="openai", embedder_url=stub.url, embedder_model="m",
                        embedder_timeout=2, min_similarity=-1.0)
    with build_services(settings) as services:
        services.facts.gate.retry_after_s = 0.0  # shared by facts, search and the index
        profile = services.profiles.create("alpha")
        stub.reply = lambda body: Reply(status=500, body={"error": "overloaded"})

        written = services.facts.write(profile, title="Outage fact", text="Written while embeddings were down",
                                       kind="project", tags=[])
        assert written.fact.status == "active"
        down = services.search.search(profile, "outage fact embeddings")
        assert down.mode == "degraded" and down.matched_count is None
        assert [f.fact.uid for f in down.facts] == [written.fact.uid]  # still found lexically
        with services.db.read() as session:
            assert vector_models(session) == {}

        stub.reply = lambda body: Reply()
        up = services.search.search(profile, "outage fact embeddings")
        assert up.mode == "hybrid" and up.matched_count == 1
        with services.db.read() as session:
            assert vector_models(session) == {"openai:m": 1}
        assert services.query_log.listing(profile)[1]["matched_count"] is None
        assert services.readiness()["checks"]["embedder"]["state"] == "ready"
