"""`memory serve` as a user runs it (a real process): a configuration it cannot serve is one line on stderr
naming the variable and the value, exit code 1, and no banner; a good one serves on the port it names."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from bench.lib.postgres import free_port
from bench.lib.waiting import until

pytestmark = pytest.mark.process  # not in the fast tier (Makefile FAST)


def serve(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    values = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path), "MEMORY_EMBEDDER": "none", **env}
    return subprocess.run([sys.executable, "-m", "service", "serve"], env=values, capture_output=True, text=True,
                          timeout=60)


@contextmanager
def serving(env: dict[str, str]) -> Iterator[list[str]]:
    """`memory serve` with this environment (MEMORY_PORT set), answering /healthz, until the block ends; then the
    list holds its stdout and stderr."""
    port = env["MEMORY_PORT"]
    process = subprocess.Popen([sys.executable, "-m", "service", "serve"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    captured: list[str] = []
    try:
        def healthy() -> bool:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            assert process.poll() is None, process.stderr.read()  # type: ignore[union-attr]
            return False

        until(healthy, 60, every=0.2, what=f"memory serve answering /healthz on port {port}")
        yield captured
    finally:
        process.terminate()
        captured.extend(process.communicate(timeout=30))


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize(("env", "expected"), [
    ({"MEMORY_PORT": "abc"}, "MEMORY_PORT='abc': input should be a valid integer"),
    ({"MEMORY_PORT": "70000"}, "MEMORY_PORT='70000': input should be less than or equal to 65535"),
    ({"MEMORY_BIND": "0.0.0.0:8080"}, "MEMORY_BIND='0.0.0.0:8080': an address without a port"),
    ({"MEMORY_BIND": "10.254.254.254"}, "MEMORY_BIND='10.254.254.254': this machine has no such address"),
    ({"MEMORY_BIND": "no-such-host.invalid"}, "MEMORY_BIND='no-such-host.invalid': not an address"),
    ({"MEMORY_SEARCH": "opensearch"}, "MEMORY_SEARCH=opensearch needs MEMORY_OPENSEARCH_URL"),
    # a misspelt setting would be ignored without a word (issue 57): named, with the setting it was meant to be
    ({"MEMORY_DATABSE_URL": "postgresql://u:pw@db.internal/memory"},
     "error: MEMORY_DATABSE_URL is not a setting — MEMORY_DATABASE_URL? (fix the name, or "
     "MEMORY_UNKNOWN_SETTINGS=warn to start anyway)"),
    ({"MEMORY_PROT": "8091", "memory_embeder": "none"},
     "MEMORY_PROT is not a setting — MEMORY_PORT?; memory_embeder is not a setting — MEMORY_EMBEDDER?"),
    ({"MEMORY_SHOUTING": "1"}, "MEMORY_SHOUTING is not a setting (docs/operators.md lists them)"),
])
def test_a_configuration_it_cannot_serve_is_one_line_and_exit_1(tmp_path: Path, env: dict[str, str],
                                                                expected: str) -> None:
    result = serve(tmp_path, **env)
    assert result.returncode == 1, result
    assert result.stdout == ""  # no banner before the failure
    assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "pydantic.dev" not in result.stderr


def test_a_port_in_use_names_the_port(tmp_path: Path, busy_port: int) -> None:
    result = serve(tmp_path, MEMORY_PORT=str(busy_port))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip() == (f"error: MEMORY_PORT={busy_port}: port {busy_port} on 127.0.0.1 is already "
                                     "in use (another `memory serve`?); stop it or choose another MEMORY_PORT")


def test_a_flag_is_named_as_typed(tmp_path: Path, busy_port: int) -> None:
    """Issue 57: `memory serve --port N` reported MEMORY_PORT=N, a variable the user never set."""
    values = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path), "MEMORY_EMBEDDER": "none"}
    for args, expected in [
        (["--port", str(busy_port)], f"error: --port {busy_port}: port {busy_port} on 127.0.0.1 is already in use "
                                     "(another `memory serve`?); stop it or choose another --port"),
        (["--port", "70000"], "error: invalid configuration: --port 70000: input should be less than or equal to 65535"),
        (["--host", "10.254.254.254"], "error: --host '10.254.254.254': this machine has no such address"),
    ]:
        result = subprocess.run([sys.executable, "-m", "service", "serve", *args], env=values, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 1 and result.stdout == "", result
        assert result.stderr.startswith(expected) and result.stderr.count("\n") == 1, result.stderr
        assert "MEMORY_PORT=" not in result.stderr and "MEMORY_BIND=" not in result.stderr


def test_a_good_configuration_serves_on_its_port(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path), "MEMORY_EMBEDDER": "none", "MEMORY_PORT": str(port)}
    with serving(env) as output:
        pass
    base = f"http://127.0.0.1:{port}"  # the banner, once serving was possible: one line, the dashboard named,
    banner = [line for line in output[0].splitlines() if not line.startswith("INFO:")]  # uvicorn's access log
    assert banner == [f"memory service on {base}: MCP at {base}/mcp/<profile>, dashboard at {base}/ui/ "
                      f"(database SQLite {tmp_path / 'memory.db'}, search embedded)"]  # and where it keeps facts


def test_told_to_start_anyway_it_names_the_unknown_variable_on_stderr_and_in_readyz(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path), "MEMORY_EMBEDDER": "none", "MEMORY_PORT": str(port),
           "MEMORY_UNKNOWN_SETTINGS": "warn", "MEMORY_DATABSE_URL": "postgresql://u:secret@db.internal/memory",
           "MEMORY_URL": "http://elsewhere/mcp/x", "MEMORY_TOKEN": "mem_x", "MEMORY_TEST_CACHE": "/tmp"}  # not settings, known
    with serving(env) as output:
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
    err = output[1]
    unknown = "MEMORY_DATABSE_URL is not a setting — MEMORY_DATABASE_URL?"
    assert ready.json()["checks"]["settings"] == {"state": "warning", "unknown_variables": [unknown]}  # loopback
    assert ready.status_code == 200 and ready.json()["ready"] is True  # named, not fatal
    assert [line for line in err.splitlines() if "not a setting" in line] == [f"warning: {unknown}"]
    assert "secret" not in err


def test_a_client_that_goes_away_mid_request_is_one_warning_line(tmp_path: Path) -> None:
    import json

    from service.config import Settings
    from service.container import build_services

    services = build_services(Settings(data_dir=tmp_path, embedder="none"))
    services.profiles.create("alpha")
    token = services.profiles.issue_token("alpha").token
    services.close()
    port = free_port()
    env = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path), "MEMORY_EMBEDDER": "none", "MEMORY_PORT": str(port)}
    with serving(env) as output:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "memory_search", "arguments": {"query": "hello"}}}).encode()
        head = (f"POST /mcp/alpha HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                f"Content-Length: {len(body) + 10}\r\n\r\n").encode()
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(head + body)  # ten bytes short: then gone
        time.sleep(1.0)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200  # still serving
    err = output[1]
    lines = [line for line in err.splitlines() if "disconnected" in line]
    assert lines == ["WARNING:     mcp.server.streamable_http: client disconnected before its request was read "
                     "(Error handling POST request)"], err
    assert "Traceback" not in err and "╭" not in err


def test_the_listener_sends_small_responses_at_once(tmp_path: Path) -> None:
    """TCP_NODELAY on the listening socket, inherited by every accepted connection: without it the last small
    segment of each answer waited for the client's delayed ACK (~40 ms a call through `memory serve`)."""
    from service.cli.listen import open_listener
    from service.config import Settings

    listener = open_listener(Settings(data_dir=tmp_path, port=free_port()))
    try:
        assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        with socket.create_connection(listener.getsockname()[:2]):
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        listener.close()
