"""Real third-party MCP clients, as users run them (their packages pinned in tests/clients/*/package.json)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def npm_installed(folder: Path, package: str) -> Path:
    """`folder` with its pinned dependencies installed by `npm ci` (once; kept in its node_modules)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    reason = "" if node and npm else "node and npm are needed for the third-party MCP client tests"
    if not reason and not (folder / "node_modules" / package).exists():
        result = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True,
                                timeout=600)
        if result.returncode != 0:
            reason = f"npm ci in {folder.name} failed: {(result.stderr or result.stdout).strip()[-500:]}"
    if reason:
        if os.environ.get("CI"):  # CI has Node (.ci/run installs it) and the npm registry
            pytest.fail(reason)
        pytest.skip(reason)
    return folder


@pytest.fixture(scope="session")
def node_client() -> Path:
    """tests/clients/typescript/client.mjs: the official TypeScript SDK."""
    return npm_installed(HERE / "typescript", "@modelcontextprotocol/sdk") / "client.mjs"


@pytest.fixture(scope="session")
def inspector_cli() -> list[str]:
    """The MCP Inspector's CLI (its own bin script, run by node)."""
    folder = npm_installed(HERE / "inspector", "@modelcontextprotocol/inspector")
    return [str(folder / "node_modules" / ".bin" / "mcp-inspector"), "--cli"]
from tests.mcp.conftest import base_url  # noqa: F401 - a real server on loopback
