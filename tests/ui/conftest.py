"""Fixtures for the dashboard tests: a live server, a seeded profile, and headless Chromium.

Database: the dashboard is a client of the REST API, whose behaviour on both databases is covered by tests/api;
the UI tests therefore run on SQLite only (this module narrows the shared `database_url` fixture to "sqlite").

Browser: Debian's `chromium` (/usr/bin/chromium, or $CHROMIUM) driven by Playwright for Python through
`executable_path`. No browser is ever downloaded (`playwright install` is not used). Playwright gives each launch a
fresh temporary user-data-dir, and each test gets a fresh browser context (empty sessionStorage). Tests that need the
browser skip with a clear reason when Chromium or Playwright is missing.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import service.clock
from service.api.app import create_app
from service.container import Services
from tests.conftest import ProfileAccess
from tests.support.mcp_client import call, mcp_client
from tests.support.server import running

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-output" / "ui"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(params=["sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """SQLite only for the UI tests (see the module docstring)."""
    return f"sqlite:///{tmp_path / 'memory.db'}"


# --- server -----------------------------------------------------------------------------------


@pytest.fixture
def base_url(services: Services) -> Iterator[str]:
    """A real uvicorn server on a loopback port serving these services (and the dashboard at /ui/)."""
    with running(create_app(services=services)) as url:
        yield url


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def rest(base_url: str, access: ProfileAccess, path: str, **params: Any) -> dict[str, Any]:
    """GET one REST endpoint of the profile with its token; the reference the page is compared with."""
    response = httpx.get(f"{base_url}/api/{access.name}/{path}", params=params, headers=access.headers, timeout=30)
    response.raise_for_status()
    return dict(response.json())


# --- seeding through the MCP tools -----------------------------------------------------------


@contextmanager
def days_ago(days: int) -> Iterator[None]:
    """Shift the service's clock back by whole days, so seeded rows land on earlier days of the window.

    Every module of the service that took `utcnow` from service.clock gets the shifted one; restored on exit.
    """
    original = service.clock.utcnow
    if days == 0:
        yield
        return

    def shifted() -> Any:
        return original() - timedelta(days=days)

    patched = [m for name, m in list(sys.modules.items())
               if (name == "service" or name.startswith("service.")) and getattr(m, "utcnow", None) is original]
    for module in patched:
        module.utcnow = shifted  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module in patched:
            module.utcnow = original  # type: ignore[attr-defined]


@dataclass
class Seeded:
    """What the seed wrote: uids by short name, and the searches made."""

    access: ProfileAccess
    uids: dict[str, str] = field(default_factory=dict)
    searches: list[dict[str, Any]] = field(default_factory=list)


async def _seed(base_url: str, access: ProfileAccess, extra_facts: int) -> Seeded:
    seeded = Seeded(access=access)
    async with mcp_client(base_url, access.name, access.token) as client:

        async def write(key: str, title: str, text: str, kind: str, tags: list[str]) -> None:
            out = await call(client, "memory_write", title=title, text=text, kind=kind, tags=tags)
            seeded.uids[key] = out["fact"]["uid"]

        async def search(query: str, **kw: Any) -> None:
            seeded.searches.append(await call(client, "memory_search", query=query, **kw))

        with days_ago(20):
            await write("pytest", "Test runner", "The user prefers pytest over unittest, with plain asserts.",
                        "preference", ["python", "testing"])
            await write("deploy", "Deploy target", "Staging deploys go to the blue cluster in eu-west.",
                        "project", ["deploy"])
            await write("db", "Database choice", "We chose PostgreSQL 16 for the canonical store.",
                        "decision", ["database"])
            await search("pytest unittest")
            await search("kubernetes namespace quota")
        with days_ago(9):
            await write("ci", "CI runner", "CI runs .ci/run on a fresh clone; it installs PostgreSQL first.",
                        "reference", ["ci"])
            await write("owner", "Who the user is", "The user is a backend engineer who reviews every migration.",
                        "user", [])
            out = await call(client, "memory_update", uid=seeded.uids["db"],
                             text="We chose PostgreSQL 17 for the canonical store; SQLite stays for laptops.")
            seeded.uids["db_v2"] = out["fact"]["uid"]
            await search("PostgreSQL canonical store")
            await search("grafana dashboard address")
            await search("pytest")
        with days_ago(3):
            await call(client, "memory_forget", uid=seeded.uids["deploy"], reason="the blue cluster was shut down")
            await search("staging deploys blue cluster")
            await search("plain asserts", tags=["python"])
        await call(client, "memory_update", uid=seeded.uids["pytest"], tags=["python", "testing", "style"])
        for i in range(extra_facts):
            await write(f"note{i}", f"Research note {i:02d}", f"Finding number {i} about embeddings: cosine works.",
                        "research", ["notes"])
        for query in ("pytest unittest", "pytest unittest", "PostgreSQL", "release checklist location",
                      "kubernetes namespace quota", "who reviews migrations"):
            await search(query)
    return seeded


def seed(base_url: str, access: ProfileAccess, *, extra_facts: int = 0) -> Seeded:
    """Seed the profile through the MCP tools, from a worker thread (the browser owns this thread's loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, _seed, base_url, access, extra_facts).result(timeout=120)


async def _tool(base_url: str, access: ProfileAccess, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with mcp_client(base_url, access.name, access.token) as client:
        return await call(client, tool, **arguments)


def tool(base_url: str, access: ProfileAccess, name: str, **arguments: Any) -> dict[str, Any]:
    """Call one MCP tool (it must succeed), from a worker thread like `seed`; its structured content."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, _tool, base_url, access, name, arguments).result(timeout=60)


@pytest.fixture
def seeded(base_url: str, alpha: ProfileAccess) -> Seeded:
    return seed(base_url, alpha)


# --- browser ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"Chromium not found at {CHROMIUM}: install Debian's package (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed: pip install -e '.[test]'")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, timeout=30_000)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class PageSession:
    """A fresh browser context and page, with every request the page made."""

    page: Any
    requests: list[str]

    def login(self, base_url: str, profile: str, token: str) -> None:
        self.page.goto(f"{base_url}/ui/")
        self.page.get_by_label("Profile", exact=True).fill(profile)
        self.page.get_by_label("Token").fill(token)
        self.page.get_by_test_id("login-submit").click()

    def ready(self, view: str) -> None:
        self.page.wait_for_selector(f"#view[data-ready='{view}']", timeout=15_000)


@pytest.fixture
def page_factory(browser: Any) -> Iterator[Callable[..., PageSession]]:
    contexts: list[Any] = []

    def make(**context_options: Any) -> PageSession:
        options = {"viewport": {"width": 1280, "height": 900}, "service_workers": "block", **context_options}
        context = browser.new_context(**options)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        return PageSession(page=page, requests=requests)

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def ui(page_factory: Callable[..., PageSession]) -> PageSession:
    return page_factory()

