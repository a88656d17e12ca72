"""`memory profile rename OLD NEW` (issue 24): facts, revisions, the query log and tokens stay with the profile;
its tokens keep working under the new name -- in a server that was running during the rename (the embedded
index is the profile's, whatever its name) and after a restart. Refusals are one line (or the JSON error)
and change nothing. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlmodel import select
from typer.testing import CliRunner

from service.api.app import create_app
from service.cli.main import app
from service.config import Settings
from service.container import Services, build_services
from service.store.engine import Database
from tests.conftest import ProfileAccess, make_profile
from tests.support.mcp_client import call, mcp_client
from tests.support.server import running

pytestmark = pytest.mark.anyio


@pytest.fixture
def env(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url, "MEMORY_EMBEDDER": "none",
              "MEMORY_PORT": "9123"}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def grow(services: Services) -> ProfileAccess:
    access = make_profile(services, "work")
    p = services.profiles.get("work")
    deploy = services.facts.write(p, title="Deploys", text="Deploy with Argo CD.", kind="project",
                                  tags=["infra"]).fact.uid
    services.facts.update(p, deploy, text="Deploy with Flux.")
    editor = services.facts.write(p, title="Editor", text="Uses Helix.", kind="preference", tags=[]).fact.uid
    services.facts.update(p, editor, title="Editor of choice")
    gone = services.facts.write(p, title="CI", text="Jenkins nightly.", kind="project", tags=[]).fact.uid
    services.facts.forget(p, gone, reason="moved")
    services.search.search(p, "deploy flux")
    services.search.search(p, "zqxv wpfk")
    return access


def reviewed(client: httpx.Client, name: str, token: str) -> dict[str, Any]:
    """What the REST API shows of the profile (its name taken out, so old and new can be compared)."""
    out = {}
    for path in ("facts?limit=50", "queries?limit=50", "stats?days=7", "queries/summary?days=7"):
        response = client.get(f"/api/{name}/{path}", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.text
        out[path] = {k: v for k, v in response.json().items() if k != "profile"}
    for fact in out["facts?limit=50"]["facts"]:
        detail = client.get(f"/api/{name}/facts/{fact['uid']}", headers={"Authorization": f"Bearer {token}"})
        out[fact["uid"]] = {k: v for k, v in detail.json().items() if k != "profile"}
    return out


async def test_a_renamed_profile_keeps_its_history_and_tokens_in_a_running_server(env: dict[str, str]) -> None:
    services = build_services(Settings())
    access = grow(services)
    try:
        with running(create_app(services=services)) as url, httpx.Client(base_url=url) as rest:
            async with mcp_client(url, "work", access.token) as client:
                before_search = await call(client, "memory_search", query="deploy flux")  # index built under "work"
            before = reviewed(rest, "work", access.token)

            code, out = run("profile", "rename", "work", "acme-work", "--json")
            assert code == 0, out
            assert json.loads(out) == {"profile": "acme-work", "renamed_from": "work", "active_tokens": 1}

            # The same token, the new name, the server that kept running: everything is there.
            after = reviewed(rest, "acme-work", access.token)
            assert after.keys() == before.keys()
            for key in before:
                assert after[key] == before[key], key
            async with mcp_client(url, "acme-work", access.token) as client:
                found = await call(client, "memory_search", query="deploy flux")
                assert {k: v for k, v in found.items() if k != "facts"} == \
                    {k: v for k, v in before_search.items() if k != "facts"}
                assert [f["uid"] for f in found["facts"]] == [f["uid"] for f in before_search["facts"]]
                written = await call(client, "memory_write", title="Linters", text="Ruff before every commit.",
                                     kind="decision")
                assert (await call(client, "memory_search", query="ruff commit"))["facts"][0]["uid"] == \
                    written["fact"]["uid"]
            # The old name is gone: the same 401 as any unknown profile, on both faces.
            assert rest.get("/api/work/facts", headers=access.headers).status_code == 401
            mcp = rest.post("/mcp/work", headers={**access.headers, "Accept": "application/json, text/event-stream"},
                            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert mcp.status_code == 401
    finally:
        services.close()

    # After a restart: a fresh process, a fresh index.
    with build_services(Settings()) as restarted:
        profile = restarted.profiles.authenticate(f"Bearer {access.token}", "acme-work")
        found = restarted.search.search(profile, "ruff commit")
        assert found.matched_count == 1 and found.facts[0].fact.title == "Linters"
        assert len(restarted.query_log.listing(profile, 50)) == 6  # 3 before the rename, 2 after, 1 now

    code, out = run("token", "list", "acme-work", "--json")
    assert [t["token_id"] for t in json.loads(out)["tokens"]] == [access.token_id]
    assert run("token", "list", "work")[0] == 1
    from service.store.tables import ProfileRename

    db = Database(env["MEMORY_DATABASE_URL"])
    try:
        with db.read() as session:  # the former name is kept
            renames = session.exec(select(ProfileRename)).all()
            assert [(r.old_name, r.new_name) for r in renames] == [("work", "acme-work")]
    finally:
        db.dispose()


@pytest.mark.parametrize(("args", "code", "message"), [
    (("nobody", "somebody"), "not_found", "no profile named 'nobody'"),
    (("work", "other"), "conflict", "profile 'other' already exists"),
    (("work", "work"), "conflict", "profile 'work' already exists"),
    (("work", "Bad Name"), "invalid_parameter", "invalid profile name"),
    (("Bad Name", "fine"), "invalid_parameter", "invalid profile name"),
])
def test_refusals_are_one_line_and_change_nothing(env: dict[str, str], args: tuple[str, str], code: str,
                                                  message: str) -> None:
    run("profile", "create", "work")
    run("profile", "create", "other")
    exit_code, out = run("profile", "rename", *args)
    assert exit_code == 1 and message in out and len(out.strip().splitlines()) == 1, out
    exit_code, out = run("profile", "rename", *args, "--json")
    error = json.loads(out)["error"]
    assert exit_code == 1 and error["code"] == code and message in error["message"]
    assert error["param"] == "profile"
    assert [p["name"] for p in json.loads(run("profile", "list", "--json")[1])["profiles"]] == ["other", "work"]


def test_human_output_says_where_clients_go_now(env: dict[str, str]) -> None:
    run("profile", "create", "work")
    run("token", "issue", "work")
    code, out = run("profile", "rename", "work", "home")
    assert code == 0
    assert "renamed profile work to home" in out and "1 active token(s)" in out
    assert "http://127.0.0.1:9123/mcp/home" in out and "401" in out
    run("profile", "create", "bare")
    code, out = run("profile", "rename", "bare", "empty")
    assert code == 0 and "no active token" in out and "memory token issue empty" in out
