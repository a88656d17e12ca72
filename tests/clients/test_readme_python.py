"""README's Python example (issue 24), extracted from README itself and run as written against a real server:
it writes and searches with the MCP SDK 2.x, and a wrong token is one line naming what to check."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ProfileAccess

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    section = README.read_text().split("### From Python (MCP SDK 2.x)", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "README's Python section has no ```python block"
    return blocks[0]


@pytest.fixture
def example(tmp_path: Path) -> Path:
    path = tmp_path / "memory_example.py"
    path.write_text(readme_example())
    return path


def run(example: Path, url: str, token: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_URL": url, "MEMORY_TOKEN": token}
    return subprocess.run([sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=120,
                          cwd=example.parent)


def test_the_example_writes_and_searches(example: Path, base_url: str, alpha: ProfileAccess) -> None:
    result = run(example, f"{base_url}/mcp/alpha", alpha.token)
    assert result.returncode == 0, result.stderr
    written, *found = result.stdout.splitlines()
    assert re.fullmatch(r"written f_[\w-]+", written), result.stdout
    assert "Deploy day" in "\n".join(found) and "matched 1" in found[0], result.stdout


@pytest.mark.parametrize("where", ["wrong token", "another profile"])
def test_a_refused_token_is_one_line(example: Path, base_url: str, alpha: ProfileAccess, beta: ProfileAccess,
                                     where: str) -> None:
    token = "mem_not_a_token" if where == "wrong token" else beta.token
    result = run(example, f"{base_url}/mcp/alpha", token)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("memory: "), result.stderr
    assert "token" in result.stderr and "Traceback" not in result.stderr


def test_a_server_that_is_not_there_is_one_line_naming_the_url(example: Path) -> None:
    """Issue 57: against a stopped server the example printed only "All connection attempts failed"."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp/alpha"
    result = run(example, url, "mem_whatever")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("memory: "), result.stderr
    assert result.stderr.rstrip().endswith(f"({url})") and "Traceback" not in result.stderr
