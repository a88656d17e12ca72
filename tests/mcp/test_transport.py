"""Transport edges: auth at the HTTP layer, trailing slash without redirect, Host allow-list, GET."""

from __future__ import annotations

import httpx
import pytest

from service.api.app import create_app
from service.config import Settings
from service.container import build_services
from tests.conftest import ProfileAccess, make_profile
from tests.support.mcp_client import call, mcp_client
from tests.support.server import running

pytestmark = pytest.mark.anyio

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
ACCEPT = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@pytest.mark.parametrize("token", [None, "garbage", "beta"])
async def test_other_tokens_get_401_at_the_http_layer(base_url: str, alpha: ProfileAccess, beta: ProfileAccess,
                                                      token: str | None) -> None:
    headers = dict(ACCEPT)
    if token:
        headers["Authorization"] = f"Bearer {beta.token if token == 'beta' else token}"
    response = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "resource_metadata" not in response.headers["www-authenticate"]


async def test_trailing_slash_is_served_without_redirect(base_url: str, alpha: ProfileAccess) -> None:
    response = httpx.post(f"{base_url}/mcp/alpha/", json=LIST, headers={**ACCEPT, **alpha.headers})
    assert response.status_code == 200
    assert len(response.json()["result"]["tools"]) == 5
    async with mcp_client(base_url, "alpha/", alpha.token) as client:
        assert (await call(client, "memory_recent"))["facts"] == []


async def test_get_is_not_a_stream_and_no_oauth_metadata(base_url: str, alpha: ProfileAccess) -> None:
    assert httpx.get(f"{base_url}/mcp/alpha", headers=alpha.headers).status_code == 405
    for path in ("/.well-known/oauth-protected-resource/mcp/alpha", "/.well-known/oauth-authorization-server"):
        assert httpx.get(f"{base_url}{path}").status_code == 404


async def test_unknown_host_is_refused_with_advice(base_url: str, alpha: ProfileAccess) -> None:
    headers = {**ACCEPT, **alpha.headers, "Host": "memory.example.com"}
    response = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers=headers)
    assert response.status_code == 421
    assert "MEMORY_ALLOWED_HOSTS" in response.json()["error"]["message"]


async def test_allowed_hosts_admit_a_proxy_name(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path, embedder="none", allowed_hosts="memory.example.com")
    with build_services(settings) as services:
        access = make_profile(services, "alpha")
        with running(create_app(services=services)) as url:
            headers = {**ACCEPT, **access.headers, "Host": "memory.example.com"}
            response = httpx.post(f"{url}/mcp/alpha", json=LIST, headers=headers)
            assert response.status_code == 200, response.text
            origin = httpx.post(f"{url}/mcp/alpha", json=LIST,
                                headers={**headers, "Origin": "https://evil.example"})
            assert origin.status_code == 403
