"""`memory redact` on the command line: the record, the second run, the dry run, the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli.main import app
from service.config import Settings
from service.container import build_services


@pytest.fixture
def env(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url,
                       "MEMORY_EMBEDDER": "none"}.items():
        monkeypatch.setenv(key, value)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_redact_from_the_command_line(env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    services = build_services(Settings())
    try:
        p = services.profiles.create("work")
        uid = services.facts.write(p, title="Token", text="The token is tok_live_123456.", kind="reference",
                                   tags=[]).fact.uid
        services.search.search(p, "tok_live_123456")
    finally:
        services.close()

    code, out = run("redact", uid, "--reason", "live token", "--match", "tok_live_123456", "--dry-run")
    assert code == 0 and "would redact" in out and "1 query-log row" in out
    monkeypatch.setattr("getpass.getuser", lambda: "ops-user")
    code, out = run("redact", uid, "--reason", "live token", "--match", "tok_live_123456")
    assert code == 0 and f"redacted {uid}" in out and "By ops-user" in out and "1 query-log row" in out
    code, out = run("redact", uid, "--reason", "live token", "--json")
    report = json.loads(out)
    assert code == 0 and report["already_redacted"] is True and report["redaction"]["operator"] == "ops-user"
    code, out = run("redact", uid, "--reason", "again")
    assert code == 0 and "already redacted" in out and "nothing changed" in out
    code, out = run("export", "work")
    assert "tok_live_123456" not in out

    code, out = run("redact", "f_unknown", "--reason", "x")
    assert code == 1 and "no fact 'f_unknown'" in out
    code, out = run("redact", uid)
    assert code != 0 and "--reason" in out  # the reason is required
