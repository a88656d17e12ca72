"""A service whose model is still loading answers a search at once with an exact matched_count: the search
waits for the model instead of running degraded. The load is slowed down (a slow disk), so the search
surely arrives in the middle of it."""

from __future__ import annotations

from pathlib import Path

import time

import httpx
import pytest

from service.api.app import create_app
from service.config import Settings
from service.embedding import encoder_graph
from tests.conftest import make_profile
from tests.support.mcp_client import call, mcp_client
from tests.support.server import running

pytestmark = [pytest.mark.anyio, pytest.mark.model]


async def test_first_search_on_a_fresh_data_dir_is_never_null_because_of_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "fresh"
    real = encoder_graph.initializers

    def slow_disk(model_dir: Path, *listing: Path) -> object:
        time.sleep(2.0)
        return real(model_dir, *listing)

    monkeypatch.setattr(encoder_graph, "initializers", slow_disk)
    app = create_app(Settings(data_dir=data_dir, embedder="minilm"), preload_embedder=True)  # as `memory serve`
    services = app.state.services
    access = make_profile(services, "alpha")
    try:
        with running(app) as url:
            async with mcp_client(url, "alpha", access.token) as client:
                await call(client, "memory_write", title="Deploys", text="Deploys go through Argo CD to the "
                           "staging cluster first.", kind="project")
                assert services.embedder.status()["state"] == "loading"  # a write never waits for the model
                found = await call(client, "memory_search", query="how do we ship to staging")
            assert found["matched_count"] == 1 and found["mode"] == "hybrid"
            assert found["facts"][0]["title"] == "Deploys"
            ready = httpx.get(f"{url}/readyz").json()
            assert ready["ready"] is True and ready["checks"]["embedder"]["state"] == "ready"
        assert [row["matched_count"] for row in services.query_log.listing(services.profiles.get("alpha"))] == [1]
    finally:
        services.close()
