"""The official MCP TypeScript SDK against a real server: all five tools, and what its user sees when the token
or the profile is wrong (the message must say what to check)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import ProfileAccess


def run(client: Path, url: str, token: str) -> tuple[int, dict]:
    result = subprocess.run(["node", str(client), url, token], capture_output=True, text=True, timeout=120)
    return result.returncode, json.loads(result.stdout.strip().splitlines()[-1])


def test_all_five_tools(node_client: Path, base_url: str, alpha: ProfileAccess) -> None:
    code, out = run(node_client, f"{base_url}/mcp/alpha", alpha.token)
    assert code == 0, out
    assert out["tools"] == ["memory_forget", "memory_recent", "memory_search", "memory_update", "memory_write"]
    assert out["server"]["name"] == "memory" and out["server"]["version"]
    assert out["written"]["fact"]["tags"] == ["c#", "infra"]
    assert out["found"]["matched_count"] == 1 and out["found"]["facts"][0]["uid"] == out["written"]["fact"]["uid"]
    assert out["updated"]["superseded_uid"] == out["written"]["fact"]["uid"]
    assert [f["uid"] for f in out["recent"]["facts"]] == [out["updated"]["fact"]["uid"]]
    assert out["forgotten"]["fact"]["status"] == "retired"
    assert out["refused"]["isError"] is True and out["refused"]["text"].startswith("memory_search: argument limit")


def test_a_wrong_token_or_profile_says_so(node_client: Path, base_url: str, alpha: ProfileAccess,
                                         beta: ProfileAccess) -> None:
    for url, token in ((f"{base_url}/mcp/alpha", "mem_wrong"), (f"{base_url}/mcp/alpha", beta.token),
                       (f"{base_url}/mcp/alpah", alpha.token)):
        code, out = run(node_client, url, token)
        assert code == 2 and "token" in out["error"].lower(), (url, out)
