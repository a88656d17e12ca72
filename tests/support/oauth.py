"""OAuth (MEMORY_OAUTH=on) test support: a live server whose MEMORY_PUBLIC_URL is its own loopback address, a
headless "browser" that answers the consent page like a person (GET the page, read its form, POST it, read
`Location`), and the MCP SDK's own OAuthClientProvider driving a whole sign-in with it."""

from __future__ import annotations

import re
import threading
import time
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
    deadline = time.time() + 20
    while not server.started:
        assert thread.is_alive() and time.time() < deadline, "server did not start"
        time.sleep(0.02)
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
    origin: str | None = None  # the Origin header of the POST (a browser sends the page's own)
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
        answer = self.http.post(str(page.url).split("?")[0], data=fields, headers={"Origin": origin})
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
             auth_method: str = "none", redirect: str = CALLBACK) -> OAuthClientProvider:
    """The SDK's OAuthClientProvider whose redirect handler is `browser` (its own httpx client: the SDK's
    must not be used for these browser steps) and whose callback reads the code from where it was sent."""
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
    return OAuthClientProvider(server_url, metadata, storage, redirect_handler, callback_handler)


@asynccontextmanager
async def oauth_mcp(server_url: str, auth: OAuthClientProvider, *, mode: str = "auto") -> AsyncIterator[Client]:
    """An MCP client of `server_url` that signs in with `auth` on its first 401."""
    async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(server_url, http_client=http), mode=mode) as client:
            yield client
