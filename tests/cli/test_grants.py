"""`memory grant code|list|revoke`, and `memory token revoke` revoking the grants its token approved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli.main import app
from tests.conftest import make_profile
from tests.support.oauth import mcp_post, oauth_server, tokens_for


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memory.db'}"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_grant_code_list_and_revoke(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with oauth_server(tmp_path, database_url) as (base, services):
        for key, value in {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url,
                           "MEMORY_EMBEDDER": "none", "MEMORY_OAUTH": "on", "MEMORY_PUBLIC_URL": base}.items():
            monkeypatch.setenv(key, value)
        alpha = make_profile(services, "alpha")
        code, out = run("grant", "code", "alpha", "--json")
        issued = json.loads(out)
        assert code == 0 and issued["profile"] == "alpha" and issued["code"].startswith("mem_gc_")
        code, out = run("grant", "code", "alpha")
        assert code == 0 and "single use" in out and out.splitlines()[1].startswith("mem_gc_")
        _, by_code = tokens_for(base, issued["code"], "alpha")
        _, by_token = tokens_for(base, alpha.token, "alpha")

        code, out = run("grant", "list", "alpha", "--json")
        grants = json.loads(out)["grants"]
        assert code == 0 and [g["approved_with"] for g in grants] == [alpha.token_id, "consent_code"]
        assert issued["code"] not in out and by_code["access_token"] not in out
        code, out = run("grant", "list", "alpha")
        assert code == 0 and "'Raw client' -> 127.0.0.1:9" in out and "active" in out

        code, out = run("grant", "revoke", grants[1]["grant_id"], "--json")
        assert code == 0 and json.loads(out)["grant"]["active"] is False
        assert mcp_post(base, "/mcp/alpha", by_code["access_token"]).status_code == 401
        assert mcp_post(base, "/mcp/alpha", by_token["access_token"]).status_code == 200

        code, out = run("token", "revoke", alpha.token_id)
        assert code == 0 and "and 1 OAuth grant(s) approved with it" in out
        assert mcp_post(base, "/mcp/alpha", by_token["access_token"]).status_code == 401
        code, out = run("token", "revoke", alpha.token_id, "--json")  # again: nothing more to revoke
        assert json.loads(out)["grants_revoked"] == 0


@pytest.mark.parametrize(("args", "message"), [
    (("grant", "code", "nobody"), "no profile named 'nobody'"),
    (("grant", "list", "Bad Name"), "invalid profile name"),
    (("grant", "revoke", "grt_0000000000000000"), "no grant 'grt_0000000000000000'"),
])
def test_grant_failures_are_one_line(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch,
                                     args: tuple[str, ...], message: str) -> None:
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORY_DATABASE_URL", database_url)
    code, out = run(*args)
    assert code == 1 and message in out and len(out.strip().splitlines()) == 1
    code, out = run(*args, "--json")
    assert code == 1 and message in json.loads(out)["error"]["message"]


def test_token_issue_names_the_hosted_clients_when_oauth_is_on(tmp_path: Path, database_url: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url,
                       "MEMORY_OAUTH": "on", "MEMORY_PUBLIC_URL": "https://memory.example.com"}.items():
        monkeypatch.setenv(key, value)
    run("profile", "create", "work")
    code, out = run("token", "issue", "work")
    assert code == 0 and "https://memory.example.com/mcp/work" in out
    assert "claude.ai, Claude Desktop, ChatGPT (OAuth)" in out and "memory grant code work" in out
    monkeypatch.setenv("MEMORY_PUBLIC_URL", "http://memory.example.com")
    code, out = run("token", "issue", "work")
    assert code == 1 and "MEMORY_OAUTH=on needs MEMORY_PUBLIC_URL" in out
