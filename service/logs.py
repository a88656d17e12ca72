"""Logging of `memory serve`: one line per record on stderr, the uvicorn look, no rich traceback boxes.

Configured before the MCP server is built: the SDK calls logging.basicConfig with a RichHandler (a boxed,
terminal-wide traceback for every logged exception), which is a no-op once the root logger has a handler.
A client that goes away in the middle of its request is not the service's error: the SDK logs it as an
ERROR with a traceback; here it is one WARNING line.

A failure that repeats (a cluster down, a CA missing: every write and every cycle fails the same way) is one
line, then a count: the same message logged again within REPEAT_WINDOW is held back, and the next one after the
window carries how many were. The OpenSearch client and urllib3 log each failed request with its traceback at
WARNING; the service reports those failures itself (one line, with what to do), so their loggers speak from
ERROR up, unless the service's level is DEBUG.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable


FORMAT = "%(levelname)s:     %(name)s: %(message)s"
REPEAT_WINDOW = 60.0  # seconds
CHATTY = ("opensearch", "opensearchpy", "urllib3")  # a traceback per failed request at WARNING


class ClientWentAway(logging.Filter):
    """A ClientDisconnect logged with its traceback becomes one WARNING line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and _client_disconnect(record.exc_info[1]):
            record.msg, record.args = "client disconnected before its request was read (%s)", (record.getMessage(),)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def _client_disconnect(exc: BaseException | None) -> bool:
    # Read from sys.modules: only a web process loads starlette, and a CLI command should not pay ~40 ms for it.
    requests = sys.modules.get("starlette.requests")
    return requests is not None and isinstance(exc, requests.ClientDisconnect)


class Repeats(logging.Filter):
    """Warnings and errors: the same logger and message (its template, whatever the arguments) again within
    `window` seconds is counted, not printed; the next one after the window says how many were held back."""

    def __init__(self, window: float = REPEAT_WINDOW, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window, self.clock = window, clock
        self._seen: dict[tuple[str, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key, now = (record.name, str(record.msg)), self.clock()
        with self._lock:
            since, held = self._seen.get(key, (None, 0))
            if since is not None and now - since < self.window:
                self._seen[key] = (since, held + 1)
                return False
            self._seen[key] = (now, 0)
        if held:
            record.msg = f"{record.msg} (and {held} more like it in the last {self.window:.0f} s)"
        return True


def configure(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(Repeats())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)  # third-party libraries: warnings and errors only
    logging.getLogger("service").setLevel(level)
    logging.getLogger("mcp.server.streamable_http").addFilter(ClientWentAway())
    quiet_clients(level)


def quiet_clients(level: int = logging.INFO) -> None:
    """The OpenSearch client's and urllib3's per-request failure logs (with tracebacks) off below ERROR: the
    service and the CLI say what failed in one line of their own. Every command calls it (`memory` entry)."""
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.DEBUG if level <= logging.DEBUG else logging.ERROR)
