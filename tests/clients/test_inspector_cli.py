"""The MCP Inspector's CLI (pinned, run as a user would from a terminal) against a real server: tools/list and
all five tools, and a wrong token. Without a terminal the Inspector goes for OAuth on a 401 unless told
`--stored-auth-only`; with it, the user sees the server's message (docs/operators.md, "Troubleshooting")."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.conftest import ProfileAccess


def inspect(cli: list[str], url: str, token: str, *args: str) -> tuple[int, dict]:
    result = subprocess.run([*cli, url, "--transport", "http", "--header", f"Authorization: Bearer {token}",
                             "--stored-auth-only", *args], capture_output=True, text=True, timeout=120)
    return result.returncode, json.loads(result.stdout or result.stderr)


def call(cli: list[str], url: str, token: str, tool: str, **arguments: str) -> dict:
    pairs = ["--tool-arg", *[f"{k}={v}" for k, v in arguments.items()]] if arguments else []
    code, out = inspect(cli, url, token, "--method", "tools/call", "--tool-name", tool, *pairs)
    assert code == 0 and out["isError"] is False, out
    return out["structuredContent"]  # type: ignore[no-any-return]


def test_tools_list_and_the_five_tools(inspector_cli: list[str], base_url: str, alpha: ProfileAccess) -> None:
    url = f"{base_url}/mcp/alpha"
    code, listed = inspect(inspector_cli, url, alpha.token, "--method", "tools/list")
    assert code == 0 and sorted(t["name"] for t in listed["tools"]) == [
        "memory_forget", "memory_recent", "memory_search", "memory_update", "memory_write"]
    written = call(inspector_cli, url, alpha.token, "memory_write", title="Deploys", text="Deploys use Argo CD.",
                   kind="project")
    uid = written["fact"]["uid"]
    found = call(inspector_cli, url, alpha.token, "memory_search", query="deploys argo", limit="3")
    assert found["matched_count"] == 1 and found["facts"][0]["uid"] == uid
    updated = call(inspector_cli, url, alpha.token, "memory_update", uid=uid, title="Deploy pipeline")
    assert updated["fact"]["uid"] == uid and updated["superseded_uid"] is None
    assert [f["uid"] for f in call(inspector_cli, url, alpha.token, "memory_recent")["facts"]] == [uid]
    assert call(inspector_cli, url, alpha.token, "memory_forget", uid=uid, reason="gone")["fact"]["status"] == \
        "retired"


def test_a_wrong_token_or_profile_names_the_token(inspector_cli: list[str], base_url: str, alpha: ProfileAccess,
                                                 beta: ProfileAccess) -> None:
    for url, token in ((f"{base_url}/mcp/alpha", "mem_wrong"), (f"{base_url}/mcp/alpha", beta.token),
                       (f"{base_url}/mcp/alpah", alpha.token)):
        code, out = inspect(inspector_cli, url, token, "--method", "tools/list")
        assert code != 0 and "token" in json.dumps(out).lower(), (url, out)


def test_readme_names_the_node_version_the_pinned_inspector_needs() -> None:
    """README's Inspector paragraph says which Node the pinned Inspector needs (its `engines`; npm only warns
    on an older one). No Node needed: it reads tests/clients/inspector/package-lock.json."""
    root = Path(__file__).resolve().parents[2]
    lock = json.loads((root / "tests/clients/inspector/package-lock.json").read_text())
    needs = lock["packages"]["node_modules/@modelcontextprotocol/inspector"]["engines"]["node"]
    version = re.fullmatch(r">=\s*(\d+\.\d+)(?:\.0)?", needs)
    assert version, needs
    readme = (root / "README.md").read_text()
    start = readme.index("or with the MCP Inspector's CLI")
    paragraph = readme[start:readme.index("npx @modelcontextprotocol/inspector", start)]
    assert f"Node ≥ {version.group(1)}" in paragraph, paragraph
