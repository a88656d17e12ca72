"""service.logs: a repeated failure is one line, then a count; the OpenSearch client's and urllib3's per-request
failure logs (tracebacks) stay below the service's level."""

from __future__ import annotations

import logging

from service import logs


def record(message: str, *args: object, level: int = logging.WARNING, name: str = "service.x") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, args, None)


def test_a_repeated_failure_is_one_line_then_a_count() -> None:
    now = [0.0]
    repeats = logs.Repeats(window=60.0, clock=lambda: now[0])
    assert repeats.filter(record("push for %s deferred: %s", "alpha", "TLS failed"))
    for second in range(1, 60):
        now[0] = float(second)
        assert not repeats.filter(record("push for %s deferred: %s", "beta", "TLS failed"))
    assert repeats.filter(record("another failure"))  # another message is its own line
    assert repeats.filter(record("an info line", level=logging.INFO))  # below WARNING: never held back
    now[0] = 61.0
    later = record("push for %s deferred: %s", "alpha", "TLS failed")
    assert repeats.filter(later)
    assert later.getMessage() == "push for alpha deferred: TLS failed (and 59 more like it in the last 60 s)"
    now[0] = 62.0
    assert not repeats.filter(record("push for %s deferred: %s", "alpha", "TLS failed"))


def test_the_clients_speak_from_error_up_unless_debugging() -> None:
    try:
        logs.quiet_clients(logging.INFO)
        assert all(logging.getLogger(name).level == logging.ERROR for name in logs.CHATTY)
        logs.quiet_clients(logging.DEBUG)
        assert all(logging.getLogger(name).level == logging.DEBUG for name in logs.CHATTY)
    finally:
        logs.quiet_clients(logging.INFO)


def test_a_client_that_went_away_is_one_warning_line() -> None:
    from starlette.requests import ClientDisconnect

    def record(exc: BaseException) -> logging.LogRecord:
        return logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application", (),
                                 (type(exc), exc, None))

    gone = record(ClientDisconnect())
    assert logs.ClientWentAway().filter(gone)
    assert (gone.levelname, gone.exc_info) == ("WARNING", None)
    assert gone.getMessage().startswith("client disconnected before its request was read")
    other = record(RuntimeError("boom"))
    assert logs.ClientWentAway().filter(other)
    assert other.levelname == "ERROR" and other.exc_info is not None


def test_the_cli_does_not_import_the_web_stack() -> None:
    """service.logs is imported by every CLI command: it must not pull starlette (~40 ms a command)."""
    import subprocess
    import sys

    code = "import sys, service.logs; print('starlette' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
