"""The dashboard's files: served at /ui/ from the package, small, and self-contained (no request leaves the origin)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.api.ui import STATIC_DIR
from service.container import Services
from tests.ui.conftest import PageSession, Seeded

JS_TYPES = {"text/javascript", "application/javascript"}
ASSETS = {
    "app.js": JS_TYPES,
    "app.css": {"text/css"},
    "vendor/uPlot.iife.min.js": JS_TYPES,
    "vendor/uPlot.min.css": {"text/css"},
}
JS_BUDGET = 300 * 1024


@pytest.fixture
def client(services: Services) -> Iterator[TestClient]:
    with TestClient(create_app(services=services)) as test_client:
        yield test_client


def _type(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";")[0].strip()


def test_ui_serves_index_without_a_token(client: TestClient) -> None:
    page = client.get("/ui/")
    assert page.status_code == 200
    assert _type(page) == "text/html"
    assert "<title>Memory dashboard</title>" in page.text
    assert 'data-testid="login-form"' in page.text


def test_ui_without_slash_redirects(client: TestClient) -> None:
    response = client.get("/ui", follow_redirects=False)
    assert response.status_code in (301, 307, 308)
    assert response.headers["location"] == "/ui/"


def test_assets_load_with_the_right_types(client: TestClient) -> None:
    index = client.get("/ui/").text
    referenced = set(re.findall(r'(?:src|href)="([^"#:]+)"', index))
    assert set(ASSETS) <= referenced, "index.html loads every asset"
    for path in referenced:
        response = client.get(f"/ui/{path}")
        assert response.status_code == 200, path
        if path in ASSETS:
            assert _type(response) in ASSETS[path], (path, _type(response))
    for module in STATIC_DIR.glob("*.js"):  # the ES modules app.js imports
        response = client.get(f"/ui/{module.name}")
        assert response.status_code == 200 and _type(response) in JS_TYPES, module.name
    contract = client.get("/ui/contract.json")
    assert contract.status_code == 200 and contract.json()["kinds"][0] == "user"
    licence = client.get("/ui/vendor/uPlot.LICENSE")
    assert licence.status_code == 200 and "MIT License" in licence.text
    assert client.get("/ui/no-such-file.js").status_code == 404


def test_no_external_references_and_small_javascript() -> None:
    index = (STATIC_DIR / "index.html").read_text()
    # Every src/href is relative (same origin); no CDN, no web font.
    for url in re.findall(r'(?:src|href)="([^"]*)"', index):
        assert not re.match(r"^(?:[a-z]+:)?//", url), url
    own = [p.name for p in STATIC_DIR.glob("*.js")] + ["app.css"]  # the dashboard's modules, not vendor/
    assert "app.js" in own and "contract.js" in own
    for name in own:
        text = (STATIC_DIR / name).read_text()
        assert not re.search(r"https?://", text), f"{name} names an external address"
        assert "@import" not in text and "@font-face" not in text
    total = sum(p.stat().st_size for p in STATIC_DIR.rglob("*.js"))
    assert total < JS_BUDGET, f"{total} bytes of JavaScript"


def test_page_makes_no_request_outside_its_origin(base_url: str, seeded: Seeded, ui: PageSession) -> None:
    page = ui.page
    ui.login(base_url, "alpha", seeded.access.token)
    ui.ready("overview")
    for hash_ in ("#/queries", "#/facts", f"#/facts/{seeded.uids['db']}", "#/"):
        page.goto(f"{base_url}/ui/{hash_}")
        ui.ready({"#/": "overview"}.get(hash_, hash_.split("/")[1]))
    origin = urlsplit(base_url).netloc
    outside = [u for u in ui.requests if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).netloc != origin]
    assert ui.requests and not outside, outside
    assert any("/ui/vendor/uPlot.iife.min.js" in u for u in ui.requests)


def _module_imports() -> dict[str, set[str]]:
    return {p.name: set(re.findall(r'^import [^;]*? from "\./([\w.-]+\.js)";', p.read_text(), re.MULTILINE))
            for p in STATIC_DIR.glob("*.js")}


def test_dashboard_modules_import_without_cycles() -> None:
    """Views ask for a redraw through nav.js, never by importing the router (app.js): no module imports
    one that imports it back, however long the way round."""
    graph = _module_imports()
    assert graph["app.js"] and graph["overview.js"], "the import pattern no longer reads the modules"
    assert all(target in graph for targets in graph.values() for target in targets)
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, " -> ".join((*path, name))
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, (*path, name))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())
    assert not any("app.js" in targets for targets in graph.values()), "only index.html loads app.js"


# The DOM's own child-writing methods print a conditional child's null/undefined/false as text; the dashboard's
# modules write children only through dom.js (h, append, replace), which skip them.
RAW_DOM_WRITES = re.compile(r"\.(?:append|prepend|before|after|replaceChildren|replaceWith|appendChild|insertBefore|"
                            r"insertAdjacent\w+)\(|\.(?:textContent|innerText|innerHTML|outerHTML)\s*=")


def test_children_are_written_only_through_the_dom_helpers() -> None:
    found = {p.name: RAW_DOM_WRITES.findall(p.read_text()) for p in STATIC_DIR.glob("*.js") if p.name != "dom.js"}
    assert {name: calls for name, calls in found.items() if calls} == {}
    assert set(RAW_DOM_WRITES.findall((STATIC_DIR / "dom.js").read_text())) == {".append(", ".replaceChildren("}
