"""The MCP endpoint starts embedding a memory_search's query as soon as the call is authenticated; the
search then takes the vector from the query cache instead of embedding it a second time. Calls the search
would refuse embed nothing (or nothing that is ever read), and the answer is the same as without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.app import create_app
from service.config import Settings
from service.mcp.body import search_query
from tests.conftest import make_profile
from tests.support.mcp_client import call, call_error, mcp_client
from tests.support.server import running

pytestmark = [pytest.mark.anyio, pytest.mark.model]


def test_only_a_memory_search_call_with_a_string_query_is_read() -> None:
    call_ = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "memory_search", "arguments": {"query": "deploys"}}}
    assert search_query(call_) == "deploys"
    assert search_query({**call_, "method": "tools/list"}) is None
    assert search_query({**call_, "params": {"name": "memory_write", "arguments": {"query": "x"}}}) is None
    assert search_query({**call_, "params": {"name": "memory_search", "arguments": {"query": 7}}}) is None
    assert search_query({**call_, "params": {"name": "memory_search", "arguments": ["deploys"]}}) is None
    assert search_query({**call_, "params": "memory_search"}) is None
    assert search_query([call_]) is None and search_query(None) is None


async def test_a_search_embeds_its_query_once_and_answers_as_before(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path / "data", embedder="minilm"))
    services = app.state.services
    access = make_profile(services, "alpha")
    services.embedder.embed_query("load the model first")
    cache = services.embedder.status()["query_cache"]
    try:
        with running(app) as url:
            async with mcp_client(url, "alpha", access.token) as client:
                await call(client, "memory_write", title="Deploys", text="Deploys go through Argo CD to the "
                           "staging cluster first.", kind="project")
                found = await call(client, "memory_search", query="  how do we ship to staging ")
                after = services.embedder.status()["query_cache"]
                # embedded once (the prefetch, on the text the search reads: trimmed), read once (the search)
                assert after["misses"] - cache["misses"] == 1 and after["hits"] - cache["hits"] == 1
                assert found["matched_count"] == 1 and found["mode"] == "hybrid"
                assert found["facts"][0]["title"] == "Deploys" and found["facts"][0]["similarity"] > 0.3

                # refused by validation before anything is embedded: an empty query, one over the limit
                await call_error(client, "memory_search", query="   ")
                await call_error(client, "memory_search", query="x" * 5000)
                assert services.embedder.status()["query_cache"]["misses"] == after["misses"]
    finally:
        services.close()
