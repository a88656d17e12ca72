"""The CLI round trip with --json, and its one-line failures with exit code 1."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli.main import app
from service.config import Settings
from service.container import build_services


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


def test_round_trip_with_json(env: dict[str, str]) -> None:
    code, out = run("profile", "create", "work", "--json")
    assert code == 0 and json.loads(out) == {"profile": "work", "created": True}
    code, out = run("token", "issue", "work", "--json")
    issued = json.loads(out)
    assert code == 0 and issued["profile"] == "work" and issued["token"].startswith("mem_")
    assert issued["url"] == "http://127.0.0.1:9123/mcp/work"
    code, out = run("profile", "list", "--json")
    assert [p["name"] for p in json.loads(out)["profiles"]] == ["work"]
    code, out = run("token", "list", "work", "--json")
    tokens = json.loads(out)["tokens"]
    assert [t["token_id"] for t in tokens] == [issued["token_id"]] and tokens[0]["active"] is True
    assert issued["token"] not in out  # never shown again

    with build_services(Settings()) as services:
        assert services.profiles.authenticate(f"Bearer {issued['token']}", "work").name == "work"

    code, out = run("token", "revoke", issued["token_id"], "--json")
    assert code == 0 and json.loads(out)["revoked"] is True
    code, out = run("token", "list", "work", "--json")
    assert json.loads(out)["tokens"][0]["active"] is False


def test_human_token_issue_prints_a_registration(env: dict[str, str]) -> None:
    run("profile", "create", "work")
    code, out = run("token", "issue", "work", "--alias", "mem")
    assert code == 0
    token = out.splitlines()[1].strip()
    assert token.startswith("mem_")
    assert f'claude mcp add --transport http mem http://127.0.0.1:9123/mcp/work --header "Authorization: Bearer ' \
           f'{token}"' in out
    assert '[mcp_servers.mem]\nurl = "http://127.0.0.1:9123/mcp/work"\nbearer_token_env_var = "MEM_TOKEN"' in out
    assert f"export MEM_TOKEN={token}" in out
    start = out.index('{\n  "mcpServers"')
    registration = json.loads(out[start:out.index("\n}\n", start) + 2])
    assert registration == {"mcpServers": {"mem": {"type": "http", "url": "http://127.0.0.1:9123/mcp/work",
                                                   "headers": {"Authorization": f"Bearer {token}"}}}}
    curl = next(line for line in out.splitlines() if line.startswith("curl "))
    assert "tools/list" in curl and token in curl and "/mcp/work" in curl


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("profile", "create", "work"), "already exists"),
        (("profile", "create", "Bad Name"), "invalid profile name"),
        (("profile", "create", "-x"), None),
        (("token", "issue", "nobody"), "no profile named 'nobody'"),
        (("token", "list", "nobody"), "no profile named 'nobody'"),
        (("token", "revoke", "tok_nope"), "no token with id"),
    ],
)
def test_failures_are_one_line_and_exit_1(env: dict[str, str], args: tuple[str, ...], message: str | None) -> None:
    run("profile", "create", "work")
    code, out = run(*args)
    assert code != 0
    if message:
        assert code == 1
        assert message in out and len(out.strip().splitlines()) == 1
        code, out = run(*args, "--json")
        assert code == 1 and message in json.loads(out)["error"]["message"]


COMMANDS = [["serve"], ["profile", "create"], ["profile", "list"], ["profile", "rename"], ["token", "issue"],
            ["token", "list"], ["token", "revoke"], ["reindex"], ["check"], ["export"], ["import"], ["redact"],
            ["grant", "code"], ["grant", "list"], ["grant", "revoke"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_names_what_each_option_takes(command: list[str]) -> None:
    """Issue 24: typer printed `<bool>` beside every flag (--help included) and `<str>` for text."""
    result = CliRunner().invoke(app, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert not re.search(r"<(bool|str|int|float|list\[\w+\]|Path)>", result.output), result.output
    help_line = next(line for line in result.output.splitlines() if "--help" in line)
    assert re.search(r"--help\s+Show this message", help_line), help_line  # a flag takes no value
    if "--json" in result.output:
        assert re.search(r"--json\s+Print one JSON", result.output)


@pytest.fixture
def sqlite_env(tmp_path: Path) -> dict[str, str]:
    """Usage errors are caught before any store is opened: one database is enough."""
    return {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": f"sqlite:///{tmp_path / 'memory.db'}",
            "MEMORY_EMBEDDER": "none"}


def console_script(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The `memory` console script itself (service.cli.entry.main), as a shell runs it."""
    return subprocess.run([sys.executable, "-m", "service", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


@pytest.mark.process  # a console script in a subprocess per case: not in the fast tier
@pytest.mark.parametrize(
    ("args", "message", "param"),
    [
        (("token", "issue"), "Missing argument 'profile'.", "profile"),
        (("profile", "list", "--bogus"), "No such option: --bogus", "--bogus"),
        (("nosuch",), "No such command 'nosuch'.", None),
        (("token", "issue", "work", "extra"), "unexpected extra argument", None),
        (("duplicates", "work", "--threshold", "abc"), "Invalid value for '--threshold'", "threshold"),
    ],
    ids=["missing argument", "unknown option", "unknown command", "extra argument", "malformed value"],
)
def test_usage_errors_with_json_are_one_json_object(sqlite_env: dict[str, str], args: tuple[str, ...], message: str,
                                                     param: str | None) -> None:
    """docs/operators.md, Command line: every command with --json prints one JSON object on stdout -- usage errors
    too, which typer prints as a box on stderr (exit code 2, as without --json)."""
    done = console_script(*args, "--json", env=sqlite_env)
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "usage_error" and message in error["message"] and error.get("param") == param
    plain = console_script(*args, env=sqlite_env)
    assert plain.returncode == 2 and plain.stdout == "" and "Usage: " in plain.stderr


@pytest.mark.process  # a console script in a subprocess per case: not in the fast tier
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_answers_an_unknown_option_in_json(sqlite_env: dict[str, str], command: list[str]) -> None:
    done = console_script(*command, "--no-such-option", "--json", env=sqlite_env)
    assert done.returncode == 2 and json.loads(done.stdout)["error"]["param"] == "--no-such-option", done.stderr


@pytest.mark.process  # a console script in a subprocess per case: not in the fast tier
def test_the_console_script_keeps_exit_codes_and_help_with_json(sqlite_env: dict[str, str]) -> None:
    done = console_script("profile", "create", "work", "--json", env=sqlite_env)
    assert done.returncode == 0 and json.loads(done.stdout) == {"profile": "work", "created": True}
    done = console_script("profile", "create", "work", "--json", env=sqlite_env)
    assert done.returncode == 1 and json.loads(done.stdout)["error"]["code"] == "conflict"
    done = console_script("profile", "list", "--help", "--json", env=sqlite_env)
    assert done.returncode == 0 and "profile list [OPTIONS]" in done.stdout


def test_check_names_a_variable_that_is_no_setting(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A misspelt setting (issue 57): `memory check` may have read another store than the one meant, so it says so;
    a clean environment says nothing."""
    run("profile", "create", "work")
    code, out = run("check", "--json")
    assert code == 0 and "unknown_variables" not in json.loads(out)  # a clean environment: nothing added
    monkeypatch.setenv("MEMORY_DATA_DIRR", "/elsewhere")
    code, out = run("check")
    assert code == 0 and "warning: MEMORY_DATA_DIRR is not a setting — MEMORY_DATA_DIR?" in out.splitlines()
    code, out = run("check", "--json")
    assert json.loads(out)["unknown_variables"] == ["MEMORY_DATA_DIRR is not a setting — MEMORY_DATA_DIR?"]


def test_an_unknown_profile_names_the_one_meant_or_the_ones_there_are(env: dict[str, str]) -> None:
    """Issue 57: `memory token issue wrok` suggested creating 'wrok' rather than the profile the user meant."""
    run("profile", "create", "work")
    run("profile", "create", "research")
    code, out = run("token", "issue", "wrok")
    assert code == 1 and out.strip() == "error: no profile named 'wrok': did you mean 'work'?"
    code, out = run("token", "list", "billing")
    assert code == 1 and out.strip() == ("error: no profile named 'billing' (the profiles are 'research', 'work'; "
                                         "create it with: memory profile create billing)")
    code, out = run("profile", "rename", "reserch", "papers", "--json")
    assert code == 1 and json.loads(out)["error"]["message"] == "no profile named 'reserch': did you mean 'research'?"
