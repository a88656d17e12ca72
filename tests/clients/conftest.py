"""Real third-party MCP clients, as users run them (their packages pinned in tests/clients/*/package.json)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

TS_DIR = Path(__file__).resolve().parent / "typescript"


@pytest.fixture(scope="session")
def node_client() -> Path:
    """The TypeScript SDK client, its pinned dependencies installed with `npm ci` (once; kept in node_modules)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    reason = "" if node and npm else "node and npm are needed for the TypeScript SDK client tests"
    if not reason and not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
        result = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=TS_DIR, capture_output=True, text=True,
                                timeout=600)
        if result.returncode != 0:
            reason = f"npm ci failed: {(result.stderr or result.stdout).strip()[-500:]}"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return TS_DIR / "client.mjs"
from tests.mcp.conftest import base_url  # noqa: F401 - a real server on loopback
