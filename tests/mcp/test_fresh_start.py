"""A service started on an empty data dir (so the model's graph is still being built) answers a search at
once with an exact matched_count: the search waits for the model instead of running degraded."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.api.app import create_app
from service.config import Settings
from tests.conftest import make_profile
from tests.support.mcp_client import call, mcp_client
from tests.support.server import running

pytestmark = [pytest.mark.anyio, pytest.mark.model]


async def test_first_search_on_a_fresh_data_dir_is_never_null_because_of_loading(tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh"
    app = create_app(Settings(data_dir=data_dir, embedder="minilm"), preload_embedder=True)  # as `memory serve`
    services = app.state.services
    access = make_profile(services, "alpha")
    try:
        with running(app) as url:
            async with mcp_client(url, "alpha", access.token) as client:
                await call(client, "memory_write", title="Deploys", text="Deploys go through Argo CD to the "
                           "staging cluster first.", kind="project")
                found = await call(client, "memory_search", query="how do we ship to staging")
            assert found["matched_count"] == 1 and found["mode"] == "hybrid"
            assert found["facts"][0]["title"] == "Deploys"
            ready = httpx.get(f"{url}/readyz").json()
            assert ready["ready"] is True and ready["checks"]["embedder"]["state"] == "ready"
        assert [row["matched_count"] for row in services.query_log.listing(services.profiles.get("alpha"))] == [1]
        assert services.embedder.status()["graph"] == "built"  # it really started without a cached graph
    finally:
        services.close()
