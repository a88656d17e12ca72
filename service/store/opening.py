"""The canonical store opened at start (`memory serve` and every CLI command): a database that cannot be used is
one line naming the setting (the password masked), what the database said, and what to check -- no driver dump.
Running requests learn only "database unavailable" (service.store.engine): the details are for the operator who
starts the service, not for its clients."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import unquote, urlsplit

import sqlalchemy as sa

from service.addresses import mask_userinfo
from service.errors import BackendUnavailable

# What PostgreSQL (libpq, through psycopg) and SQLite say, and what the operator should check; the first that
# matches the driver's message wins. {host}, {port}, {user}, {database}, {path} come from the URL.
_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern, re.IGNORECASE), fix) for pattern, fix in (
    (r"connection refused", "nothing accepts connections at {host}:{port} (connection refused): is PostgreSQL "
                            "running there, on that port?"),
    (r"timeout expired|timed out", "no answer from {host}:{port} (timed out): check the host, the port and any "
                                   "firewall in between"),
    (r"failed to resolve host|could not translate host name|name or service not known|nodename nor servname",
     "the host {host!r} does not resolve: check its name"),
    (r"password authentication failed|no password supplied",
     "PostgreSQL refused user {user!r}'s password: check the user and password in the URL"),
    (r'role "[^"]*" does not exist', "PostgreSQL has no user {user!r}: create it (createuser) or name another"),
    (r'database "[^"]*" does not exist', "PostgreSQL has no database {database!r} on {host}:{port}: create it "
                                         "(createdb {database}) or fix the name in the URL"),
    (r"pg_hba\.conf", "PostgreSQL does not let this client in (pg_hba.conf): allow it there, or connect as "
                      "another user"),
    (r"no such file or directory|could not connect to server", "no PostgreSQL on the local socket: is it running "
                                                                "(or give a host in the URL)?"),
    (r"unable to open database file", "cannot open the SQLite file {path}: does its directory exist, and may this "
                                      "user write there?"),
    (r"readonly database|read-only", "the SQLite file {path} is read-only for this user: give it write access"),
))


def cannot_open(url: str, driver_message: str, *, named: str = "MEMORY_DATABASE_URL", shown: str | None = None) -> str:
    """One line: the setting and its value (`shown`, else the URL; a password masked), then the cause and its fix
    (or the driver's first line when the cause is not one of the known ones)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    path = url.split(":///", 1)[1] if url.startswith("sqlite") and ":///" in url else ""
    values = {"host": parts.hostname or "localhost", "port": port or 5432, "user": unquote(parts.username or ""),
              "database": parts.path.lstrip("/"), "path": path}
    first = " ".join(driver_message.strip().split())
    setting = f"{named}={mask_userinfo(url if shown is None else shown)}"
    for pattern, fix in _CAUSES:
        if pattern.search(first):
            return f"{setting}: {fix.format(**values)}"
    return f"{setting}: the database cannot be used: {mask_userinfo(first)[:300]}"


@contextmanager
def opening(url: str, *, named: str = "MEMORY_DATABASE_URL", shown: str | None = None) -> Iterator[None]:
    """Around opening the store at start (its engines, the SQLite file's directory, the schema upgrade): a database
    that cannot be used raises BackendUnavailable with cannot_open's line; nothing is logged (the line says it all)."""
    try:
        yield
    except sa.exc.OperationalError as exc:
        raise BackendUnavailable(cannot_open(url, str(exc.orig), named=named, shown=shown)) from None
    except OSError as exc:  # a SQLite file's directory that cannot be made (a file in the way, no permission)
        if not url.startswith("sqlite"):
            raise
        said = f"unable to open database file ({exc.strerror})"
        raise BackendUnavailable(cannot_open(url, said, named=named, shown=shown)) from None
