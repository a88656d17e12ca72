"""Redaction of tokens in uvicorn's access log: a client that puts a token in the query string
(`?token=…`, `?access_token=…`, or any value that looks like one of ours, `mem_…`) must not leave it in logs."""

from __future__ import annotations

import copy
import logging
from typing import Any
from urllib.parse import unquote_plus

from uvicorn.config import LOGGING_CONFIG

SECRET_NAMES = frozenset({"token", "access_token"})
TOKEN_PREFIX = "mem_"
REDACTED = "[redacted]"


def redact_target(target: str) -> str:
    """The request target with secret query values replaced (the path and other values are kept)."""
    path, sep, query = target.partition("?")
    if not sep:
        return target
    pairs = []
    for pair in query.split("&"):
        name, eq, value = pair.partition("=")
        plain_name, plain_value = unquote_plus(name).strip().lower(), unquote_plus(value).strip()
        if plain_name in SECRET_NAMES or TOKEN_PREFIX in plain_value or TOKEN_PREFIX in plain_name:
            pair = f"{name if TOKEN_PREFIX not in plain_name else REDACTED}{eq}{REDACTED if eq else ''}"
        pairs.append(pair)
    return f"{path}?{'&'.join(pairs)}"


class RedactTokens(logging.Filter):
    """On the uvicorn.access logger: its records carry (client, method, target, http version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact_target(args[2]), *args[3:])
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's own logging configuration plus the redaction filter on its access logger, which writes to
    stderr like every other log line."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_tokens"] = {"()": f"{__name__}.RedactTokens"}
    config["loggers"]["uvicorn.access"]["filters"] = ["redact_tokens"]
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"  # stdout carries only the banner (or --json)
    return config
