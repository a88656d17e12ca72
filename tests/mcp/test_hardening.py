"""What a hostile probe found on the MCP face (issue 12), on a real uvicorn server: 401s as JSON-RPC errors
the SDK shows, /mcp without a profile, duplicated Authorization, Host ports, JSON-RPC ids."""

from __future__ import annotations

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from service.api.app import create_app
from service.config import Settings
from service.container import build_services
from service.domain.profiles import UNAUTHORIZED_MESSAGE
from tests.conftest import ProfileAccess, make_profile
from tests.support.mcp_client import mcp_client
from tests.support.server import running

pytestmark = pytest.mark.anyio

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
ACCEPT = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def _flatten(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _flatten(inner)]
    return [exc]


async def test_a_name_that_cannot_be_a_profile_is_the_400_rest_answers(base_url: str, alpha: ProfileAccess) -> None:
    """Issue 57: /mcp/Work answered 401 "missing or invalid bearer token" and sent the user after the token, where
    REST answers /api/Work/... with a 400 naming the rule. The same 400 now, with the token or without."""
    for name in ("Alpha", "-alpha", "a" * 64, "al%20pha"):
        rest = httpx.get(f"{base_url}/api/{name}/facts", headers=alpha.headers)
        assert rest.status_code == 400, (name, rest.text)
        for headers in (alpha.headers, {}):
            mcp = httpx.post(f"{base_url}/mcp/{name}", json=LIST, headers={**ACCEPT, **headers})
            assert mcp.status_code == 400, (name, mcp.text)
            error = mcp.json()["error"]
            assert error["message"] == rest.json()["error"]["message"] and error["message"].startswith(
                "invalid value for profile: string should")
            assert error["data"] == {"status": 400, "code": "invalid_parameter", "param": "profile"}
    assert httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers={**ACCEPT, **alpha.headers}).status_code == 200


async def test_401_is_a_json_rpc_error_and_the_same_answer_as_rest(base_url: str, alpha: ProfileAccess,
                                                                   beta: ProfileAccess) -> None:
    missing = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers=ACCEPT)
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    body = missing.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["message"] == UNAUTHORIZED_MESSAGE and isinstance(body["error"]["code"], int)
    wrong = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers={**ACCEPT, "Authorization": "Bearer mem_x"})
    foreign = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers={**ACCEPT, **beta.headers})
    for response in (wrong, foreign):
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"  # docs/reviewers.md: the same answer in each case
    assert wrong.text == foreign.text == missing.text
    rest = httpx.get(f"{base_url}/api/alpha/stats", headers={"Authorization": "Bearer mem_x"})
    assert rest.headers["www-authenticate"] == wrong.headers["www-authenticate"]
    assert rest.json()["error"]["message"] == body["error"]["message"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_shows_the_servers_401_message(base_url: str, alpha: ProfileAccess, mode: str) -> None:
    with pytest.raises(BaseException) as raised:
        async with mcp_client(base_url, "alpha", "mem_wrong", mode=mode) as client:
            await client.list_tools()
    messages = " ".join(str(e) for e in _flatten(raised.value) if isinstance(e, MCPError))
    assert "profile named in the URL" in messages, [repr(e) for e in _flatten(raised.value)]


@pytest.mark.parametrize("path", ["/mcp", "/mcp/"])
async def test_mcp_without_a_profile_is_a_helpful_404(base_url: str, alpha: ProfileAccess, path: str) -> None:
    response = httpx.post(f"{base_url}{path}", json=LIST, headers={**ACCEPT, **alpha.headers})
    assert response.status_code == 404
    error = response.json()["error"]
    assert response.json()["jsonrpc"] == "2.0" and "/mcp/<profile>" in error["message"]


async def test_a_duplicated_authorization_header_is_400(base_url: str, alpha: ProfileAccess,
                                                        beta: ProfileAccess) -> None:
    headers = [*ACCEPT.items(), ("Authorization", f"Bearer {beta.token}"), ("Authorization", f"Bearer {alpha.token}")]
    response = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers=headers)
    assert response.status_code == 400
    assert response.json()["jsonrpc"] == "2.0" and "Authorization" in response.json()["error"]["message"]


async def test_host_ports_are_checked(base_url: str, alpha: ProfileAccess) -> None:
    port = base_url.rsplit(":", 1)[1]
    for host, status in ((f"localhost:{port}", 200), (f"127.0.0.1:{port}", 200), ("localhost", 200),
                         ("localhost:1", 421), ("127.0.0.1:65000", 421), ("localhost:*", 421)):
        response = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers={**ACCEPT, **alpha.headers, "Host": host})
        assert response.status_code == status, (host, response.text)
        assert httpx.get(f"{base_url}/readyz", headers={"Host": host}).status_code == status, host


async def test_a_foreign_origin_is_a_json_rpc_403_like_every_other_refusal(base_url: str,
                                                                          alpha: ProfileAccess) -> None:
    port = base_url.rsplit(":", 1)[1]
    for origin, status in (("https://evil.example", 403), ("null", 403), (f"http://127.0.0.1:{port}", 200),
                           (f"http://localhost:{port}", 200), (None, 200)):
        headers = {**ACCEPT, **alpha.headers, **({"Origin": origin} if origin else {})}
        response = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers=headers)
        assert response.status_code == status, (origin, response.text)
    refused = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers={**ACCEPT, "Origin": "https://evil.example"})
    assert refused.status_code == 403 and refused.headers["content-type"] == "application/json"
    body = refused.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None and body["error"]["code"] == -32600
    assert body["error"]["data"] == {"status": 403, "code": "origin_not_allowed"}
    assert "'https://evil.example'" in body["error"]["message"] and "MEMORY_CORS_ORIGINS" in body["error"]["message"]
    host = httpx.post(f"{base_url}/mcp/alpha", json=LIST, headers={**ACCEPT, "Host": "memory.example.com"})
    assert host.status_code == 421 and host.json()["error"]["data"]["code"] == "host_not_allowed"
    assert set(host.json()) == set(body) and set(host.json()["error"]) == set(body["error"])  # the same envelope


async def test_an_origin_in_cors_origins_is_admitted(tmp_path) -> None:
    with build_services(Settings(data_dir=tmp_path, embedder="none", cors_origins="https://app.example")) as services:
        access = make_profile(services, "alpha")
        with running(create_app(services=services)) as url:
            for origin, status in (("https://app.example", 200), ("https://app.example:8443", 403)):
                response = httpx.post(f"{url}/mcp/alpha", json=LIST,
                                      headers={**ACCEPT, **access.headers, "Origin": origin})
                assert response.status_code == status, (origin, response.text)


async def test_allowed_hosts_with_a_port_admit_only_that_port(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path, embedder="none", allowed_hosts="memory.example.com:8443,lan.example:*")
    with build_services(settings) as services:
        access = make_profile(services, "alpha")
        with running(create_app(services=services)) as url:
            for host, status in (("memory.example.com:8443", 200), ("memory.example.com", 421),
                                 ("memory.example.com:9", 421), ("lan.example:1234", 200)):
                response = httpx.post(f"{url}/mcp/alpha", json=LIST,
                                      headers={**ACCEPT, **access.headers, "Host": host})
                assert response.status_code == status, (host, response.text)


@pytest.mark.parametrize("request_id", [{"a": 1}, 1.5, None, True, [1]])
async def test_a_request_id_that_is_not_a_string_or_integer_is_invalid(base_url: str, alpha: ProfileAccess,
                                                                        request_id: object) -> None:
    response = httpx.post(f"{base_url}/mcp/alpha", json={**LIST, "id": request_id},
                          headers={**ACCEPT, **alpha.headers})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["id"] is None and body["error"]["code"] == -32600


@pytest.mark.parametrize("request_id", ["abc", 7, 0])
async def test_string_and_integer_ids_are_answered(base_url: str, alpha: ProfileAccess, request_id: object) -> None:
    response = httpx.post(f"{base_url}/mcp/alpha", json={**LIST, "id": request_id},
                          headers={**ACCEPT, **alpha.headers})
    assert response.status_code == 200 and response.json()["id"] == request_id


async def test_a_notification_still_gets_202(base_url: str, alpha: ProfileAccess) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = httpx.post(f"{base_url}/mcp/alpha", json=note, headers={**ACCEPT, **alpha.headers})
    assert response.status_code == 202
