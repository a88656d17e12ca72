"""OAuth (MEMORY_OAUTH=on) test support: a live server whose MEMORY_PUBLIC_URL is its own loopback address, a
headless "browser" that answers the consent page like a person (GET the page, read its form, POST it, read
`Location`), and the MCP SDK's own OAuthClientProvider driving a whole sign-in with it."""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import uvicorn
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from bench.lib.postgres import free_port
from service.api.app import create_app
from service.config import Settings
from service.container import Services, build_services
from bench.lib.waiting import until

CALLBACK = "http://127.0.0.1:9/callback"  # never fetched: the browser stops at the redirect and reads it


@contextmanager
def oauth_server(data_dir: Path, database_url: str, **settings: Any) -> Iterator[tuple[str, Services]]:
    """The service with MEMORY_OAUTH=on on a free loopback port, its public URL that address; yields the base
    URL and the services (to make profiles and tokens)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    services = build_services(Settings(data_dir=data_dir, database_url=database_url, embedder="none", oauth=True,
                                       public_url=base, port=port, **settings))
    server = uvicorn.Server(uvicorn.Config(create_app(services=services), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until(lambda: server.started or not thread.is_alive(), 20, every=0.02, what="the server starting")
    assert server.started, "the server thread ended before it started"
    try:
        yield base, services
    finally:
        server.should_exit = True
        thread.join(10)
        services.close()


def form_fields(html: str) -> dict[str, str]:
    """The named inputs of the consent form (hidden ones carry their value)."""
    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            fields[name.group(1)] = value.group(1) if value else ""
    return fields


@dataclass
class Browser:
    """What a person's browser does on the consent page, with cookies; `credential` goes in the field `token`."""

    credential: str
    action: str = "approve"
    origin: str | None = None  # the Origin header of the POST (a browser sends the page's own, or "null")
    site: str = "same-origin"  # its Sec-Fetch-Site
    pages: list[httpx.Response] = field(default_factory=list)
    answers: list[httpx.Response] = field(default_factory=list)
    http: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30))

    def open(self, authorize_url: str) -> httpx.Response:
        """GET /authorize and follow its redirect to the consent page (or the client's redirect URI on error)."""
        first = self.http.get(authorize_url, follow_redirects=False)
        if first.status_code in (302, 303) and "/authorize/consent" in first.headers["location"]:
            page = self.http.get(first.headers["location"])
            self.pages.append(page)
            return page
        self.pages.append(first)
        return first

    def submit(self, page: httpx.Response, **overrides: str) -> httpx.Response:
        fields = {**form_fields(page.text), "token": self.credential, "action": self.action, **overrides}
        origin = self.origin or f"{page.url.scheme}://{page.url.netloc.decode()}"
        answer = self.http.post(str(page.url).split("?")[0], data=fields,
                                headers={"Origin": origin, "Sec-Fetch-Site": self.site})
        self.answers.append(answer)
        return answer

    def sign_in(self, authorize_url: str) -> str:
        """The whole consent: the URL the browser is sent back to (the client's redirect URI with code)."""
        page = self.open(authorize_url)
        if page.status_code != 200:
            return page.headers.get("location", "")
        answer = self.submit(page)
        return answer.headers.get("location", "")


def callback_params(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


@dataclass
class MemoryStorage:
    """The SDK's TokenStorage, in memory (what a hosted client keeps per connection)."""

    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def sdk_auth(server_url: str, browser: Browser, storage: MemoryStorage, *, name: str = "Test client",
             auth_method: str = "none", redirect: str = CALLBACK,
             client_metadata_url: str | None = None) -> OAuthClientProvider:
    """The SDK's OAuthClientProvider whose redirect handler is `browser` (its own httpx client: the SDK's
    must not be used for these browser steps) and whose callback reads the code from where it was sent.
    `client_metadata_url`: the client identifies itself by that client ID metadata document, not by
    registering."""
    landed: dict[str, str] = {}

    async def redirect_handler(url: str) -> None:
        landed["location"] = browser.sign_in(url)

    async def callback_handler() -> AuthorizationCodeResult:
        params = callback_params(landed.get("location", ""))
        if "code" not in params:
            raise RuntimeError(f"no code in the redirect: {landed.get('location')!r}")
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    metadata = OAuthClientMetadata(client_name=name, redirect_uris=[redirect],  # type: ignore[list-item]
                                   token_endpoint_auth_method=auth_method)  # type: ignore[arg-type]
    return OAuthClientProvider(server_url, metadata, storage, redirect_handler, callback_handler,
                               client_metadata_url=client_metadata_url)


@asynccontextmanager
async def oauth_mcp(server_url: str, auth: OAuthClientProvider, *, mode: str = "auto") -> AsyncIterator[Client]:
    """An MCP client of `server_url` that signs in with `auth` on its first 401."""
    async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(server_url, http_client=http), mode=mode) as client:
            yield client


# --- the protocol by hand: what a client that knows only the MCP specification sends ------------------------


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge)."""
    import base64
    import hashlib
    import secrets

    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def register(base: str, *, redirect_uris: list[str] | None = None, auth_method: str = "none",
             name: str = "Raw client") -> httpx.Response:
    body = {"redirect_uris": redirect_uris or [CALLBACK], "token_endpoint_auth_method": auth_method,
            "client_name": name, "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}
    return httpx.post(f"{base}/register", json=body)


def authorize_url(base: str, client_id: str, challenge: str, resource: str | None, *, redirect: str = CALLBACK,
                  state: str = "st4te", **extra: str) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect, "state": state,
              "code_challenge": challenge, "code_challenge_method": "S256", **extra}
    if resource is not None:
        params["resource"] = resource
    return str(httpx.URL(f"{base}/authorize", params=params))


@dataclass
class Grant:
    """A registered client, the code the consent page sent back, and its verifier."""

    client: dict[str, Any]
    code: str
    verifier: str
    resource: str

    def exchange(self, base: str, **overrides: str) -> httpx.Response:
        form = {"grant_type": "authorization_code", "code": self.code, "redirect_uri": CALLBACK,
                "client_id": self.client["client_id"], "code_verifier": self.verifier, "resource": self.resource}
        if self.client.get("client_secret"):
            form["client_secret"] = self.client["client_secret"]
        form.update(overrides)
        return httpx.post(f"{base}/token", data={k: v for k, v in form.items() if v is not None})

    def refresh(self, base: str, refresh_token: str, **overrides: str) -> httpx.Response:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self.client["client_id"],
                "resource": self.resource, **overrides}
        if self.client.get("client_secret"):
            form["client_secret"] = self.client["client_secret"]
        return httpx.post(f"{base}/token", data={k: v for k, v in form.items() if v is not None})


def approved(base: str, credential: str, resource: str, *, auth_method: str = "none") -> Grant:
    """Register, authorize (PKCE S256, `resource`) and approve on the consent page with `credential`."""
    client = register(base, auth_method=auth_method).json()
    verifier, challenge = pkce()
    location = Browser(credential).sign_in(authorize_url(base, client["client_id"], challenge, resource))
    params = callback_params(location)
    assert "code" in params, location
    return Grant(client, params["code"], verifier, resource)


def tokens_for(base: str, credential: str, profile: str | None) -> tuple[Grant, dict[str, Any]]:
    """A grant for /mcp/<profile> (or /mcp) and the token answer of its code."""
    grant = approved(base, credential, f"{base}/mcp" + (f"/{profile}" if profile else ""))
    answer = grant.exchange(base)
    assert answer.status_code == 200, answer.text
    return grant, answer.json()


LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def mcp_post(base: str, path: str, access_token: str | None, body: dict[str, Any] | None = None) -> httpx.Response:
    headers = {**MCP_HEADERS, **({"Authorization": f"Bearer {access_token}"} if access_token else {})}
    return httpx.post(f"{base}{path}", json=body or LIST, headers=headers)
