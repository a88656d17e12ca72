"""A canonical store that cannot be opened at start is one line naming the setting (password masked) and what to
check, on the command line and from `memory serve` -- no driver dump (issue 57). Real PostgreSQL and SQLite; the
password refusal's wording is libpq's, classified as recorded (the test cluster trusts every local user)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.lib import postgres
from service.cli.main import app
from service.store.opening import cannot_open


def refused(env: dict[str, str]) -> tuple[dict[str, str], str]:
    """`memory profile list` with this environment: its JSON error and its human line."""
    runner = CliRunner()
    as_json = runner.invoke(app, ["profile", "list", "--json"], env=env)
    human = runner.invoke(app, ["profile", "list"], env=env)
    assert as_json.exit_code == 1 and human.exit_code == 1, (as_json.output, human.output)
    assert "Traceback" not in human.output and human.stderr.count("\n") == 1, human.stderr  # one line, nothing logged
    return json.loads(as_json.stdout)["error"], human.stderr.strip()


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORY_EMBEDDER", "none")
    monkeypatch.delenv("MEMORY_DATABASE_URL", raising=False)
    return tmp_path


def free_port() -> int:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_nothing_listening(cli_env: Path) -> None:
    port = free_port()
    url = f"postgresql://me:hunter2@127.0.0.1:{port}/memory"
    error, line = refused({"MEMORY_DATABASE_URL": url})
    expected = (f"MEMORY_DATABASE_URL=postgresql+psycopg://***@127.0.0.1:{port}/memory: nothing accepts connections at "
                f"127.0.0.1:{port} (connection refused): is PostgreSQL running there, on that port?")
    assert error == {"code": "backend_unavailable", "message": expected}
    assert line == f"error: {expected}" and "hunter2" not in line


def test_a_host_that_does_not_resolve(cli_env: Path) -> None:
    error, _ = refused({"MEMORY_DATABASE_URL": "postgresql://me@no-such-host.invalid/memory"})
    assert error["message"] == ("MEMORY_DATABASE_URL=postgresql+psycopg://***@no-such-host.invalid/memory: the host "
                                "'no-such-host.invalid' does not resolve: check its name")


@pytest.mark.postgres
def test_a_missing_database_and_a_missing_user(cli_env: Path, pg_cluster: postgres.Cluster) -> None:
    server = pg_cluster.url.split("@", 1)[1].rsplit("/", 1)[0]  # 127.0.0.1:PORT
    host, port = server.split(":")
    name = f"nope_{uuid.uuid4().hex[:8]}"
    error, _ = refused({"MEMORY_DATABASE_URL": f"postgresql://postgres@{server}/{name}"})
    assert error["message"] == (f"MEMORY_DATABASE_URL=postgresql+psycopg://***@{server}/{name}: PostgreSQL has no database "
                                f"'{name}' on {host}:{port}: create it (createdb {name}) or fix the name in the URL")
    error, _ = refused({"MEMORY_DATABASE_URL": f"postgresql://{name}@{server}/postgres"})
    assert error["message"] == (f"MEMORY_DATABASE_URL=postgresql+psycopg://***@{server}/postgres: PostgreSQL has no user "
                                f"'{name}': create it (createuser) or name another")


def test_a_sqlite_file_that_cannot_be_made_names_the_data_dir(cli_env: Path) -> None:
    blocked = cli_env / "a-file"
    blocked.write_text("not a directory")
    data_dir = blocked / "memory"
    error, _ = refused({"MEMORY_DATA_DIR": str(data_dir)})
    assert error["message"] == (f"MEMORY_DATA_DIR={data_dir}: cannot open the SQLite file {data_dir / 'memory.db'}: "
                                "does its directory exist, and may this user write there?")


def test_memory_serve_says_the_same_line(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path), "MEMORY_EMBEDDER": "none", "MEMORY_PORT": str(free_port()),
           "MEMORY_DATABASE_URL": f"postgresql://me:hunter2@127.0.0.1:{port}/memory"}
    result = subprocess.run([sys.executable, "-m", "service", "serve"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip() == (f"error: MEMORY_DATABASE_URL=postgresql+psycopg://***@127.0.0.1:{port}/memory: nothing "
                                     f"accepts connections at 127.0.0.1:{port} (connection refused): is PostgreSQL "
                                     "running there, on that port?")


@pytest.mark.parametrize(("said", "says"), [
    ('connection failed: connection to server at "10.0.0.5", port 5432 failed: FATAL:  password authentication '
     'failed for user "app"', "PostgreSQL refused user 'app''s password: check the user and password in the URL"),
    ('connection failed: connection to server at "10.0.0.5", port 5432 failed: FATAL:  no pg_hba.conf entry for '
     'host "10.0.0.9", user "app", database "memory", no encryption',
     "PostgreSQL does not let this client in (pg_hba.conf): allow it there, or connect as another user"),
    ("connection failed: connection to server at \"10.0.0.5\", port 5432 failed: timeout expired",
     "no answer from 10.0.0.5:5432 (timed out): check the host, the port and any firewall in between"),
    ("something new entirely\nsecond line", "the database cannot be used: something new entirely second line"),
])
def test_what_libpq_says_is_read_as_its_cause(said: str, says: str) -> None:
    assert cannot_open("postgresql+psycopg://app:pw@10.0.0.5/memory", said) == \
        f"MEMORY_DATABASE_URL=postgresql+psycopg://***@10.0.0.5/memory: {says}"
