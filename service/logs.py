"""Logging of `memory serve`: one line per record on stderr, the uvicorn look, no rich traceback boxes.

Configured before the MCP server is built: the SDK calls logging.basicConfig with a RichHandler (a boxed,
terminal-wide traceback for every logged exception), which is a no-op once the root logger has a handler.
A client that goes away in the middle of its request is not the service's error: the SDK logs it as an
ERROR with a traceback; here it is one WARNING line.
"""

from __future__ import annotations

import logging
import sys

from starlette.requests import ClientDisconnect

FORMAT = "%(levelname)s:     %(name)s: %(message)s"


class ClientWentAway(logging.Filter):
    """A ClientDisconnect logged with its traceback becomes one WARNING line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], ClientDisconnect):
            record.msg, record.args = "client disconnected before its request was read (%s)", (record.getMessage(),)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def configure(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)  # third-party libraries: warnings and errors only
    logging.getLogger("service").setLevel(level)
    logging.getLogger("mcp.server.streamable_http").addFilter(ClientWentAway())
