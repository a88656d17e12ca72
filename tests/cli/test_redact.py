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
    with build_services(Settings()) as services:
        p = services.profiles.create("work")
        uid = services.facts.write(p, title="Token", text="The token is tok_live_123456.", kind="reference",
                                   tags=[]).fact.uid
        services.search.search(p, "tok_live_123456")

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


def test_a_second_run_with_match_finishes_what_the_first_left(env: None, tmp_path: Path, database_url: str) -> None:
    """The first run without --match leaves the searches that held only the secret, and says so (the long word
    they share, the --match advice); a second run with --match scrubs them from the query log, the summary,
    the export and (SQLite) the database file, and extends the record."""
    secret = "tok_live_9f8e7d6c5b4a3"
    with build_services(Settings()) as services:
        p = services.profiles.create("work")
        uid = services.facts.write(p, title="Deploy token", text=f"The staging deploy bot uses {secret}.",
                                   kind="reference", tags=[]).fact.uid
        for query in (secret, f"is {secret} still valid", "staging deploy bot", "editor"):
            services.search.search(p, query)

    code, out = run("redact", uid, "--reason", "live token", "--json")
    first = json.loads(out)
    assert code == 0 and first["queries_redacted"] == 0
    assert first["sharing_long_words"] == [{"word": secret, "searches": 2}]
    code, out = run("redact", uid, "--reason", "live token")
    assert code == 0 and "already redacted" in out and "--match" in out
    code, out = run("export", "work")
    assert secret in out  # what is left to scrub (the check below can fail)

    code, out = run("redact", uid, "--reason", "live token", "--match", secret, "--dry-run")
    assert code == 0 and "would redact 2 more search(es)" in out and "nothing was changed" in out
    code, out = run("export", "work")
    assert secret in out
    code, out = run("redact", uid, "--reason", "live token", "--match", secret)
    assert code == 0 and "redacted 2 more query-log row(s)" in out and "2 in all" in out

    code, out = run("export", "work")
    assert code == 0 and secret not in out and "staging deploy bot" in out  # the other searches stay
    assert json.loads(out)["facts"][0]["redaction"]["queries_redacted"] == 2
    with build_services(Settings()) as services:
        p = services.profiles.get("work")
        summary = services.query_log.summary(p, 30)
        assert secret not in json.dumps(summary) and summary["totals"]["distinct_queries"] == 4
    if database_url.startswith("sqlite"):
        data = b"".join(f.read_bytes() for f in (tmp_path / "memory.db", tmp_path / "memory.db-wal") if f.exists())
        assert secret.encode() not in data and b"staging deploy bot" in data
