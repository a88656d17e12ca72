"""Engine and transactions for SQLite (embedded default) and PostgreSQL (psycopg 3), same code for both."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import StaticPool
from sqlmodel import Session

from service.domain.ports.canonical import WouldWait
from service.errors import BackendUnavailable

log = logging.getLogger(__name__)


def make_engine(url: str, *, immediate_writes: bool = False, synchronous: str = "full",
                at_once: bool = False) -> Engine:
    """Create an engine. SQLite gets WAL, foreign keys, a busy timeout, explicit BEGIN control and the
    `synchronous` level (FULL: a commit is on disk before it returns, so an acknowledged write survives a power
    loss; NORMAL: it survives a crash of the process, and the last commits may be lost with the power); with
    immediate_writes every transaction starts with BEGIN IMMEDIATE (takes the write lock up front). `at_once`
    (SQLite only): one connection that never waits for a lock (busy timeout 0), for Database.at_once."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        pool: dict[str, Any] = {"poolclass": StaticPool} if at_once else {"pool_size": 8, "max_overflow": 16}
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 0 if at_once else 30},
                                  **pool)
        _configure_sqlite(engine, "IMMEDIATE" if immediate_writes else "DEFERRED", synchronous,
                          busy_ms=0 if at_once else 30000)
        return engine
    return sa.create_engine(
        url,
        pool_size=10,
        max_overflow=20,
        pool_pre_ping=True,
        connect_args={"options": "-c timezone=UTC"},
    )


def _configure_sqlite(engine: Engine, begin_mode: str, synchronous: str, *, busy_ms: int = 30000) -> None:
    level = {"full": "FULL", "normal": "NORMAL"}[synchronous]

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy (not pysqlite) decide where transactions begin.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA synchronous={level}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={busy_ms}")
        # Deleted or overwritten content is zeroed, so a redacted fact's words do not survive in free space.
        cur.execute("PRAGMA secure_delete=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql(f"BEGIN {begin_mode}")


def _unavailable(exc: sa.exc.OperationalError) -> BackendUnavailable:
    """Callers learn only that the database is unavailable; the driver's message (host, port, user) is logged."""
    log.error("database unavailable: %s", str(exc.orig).strip().replace("\n", " "))
    return BackendUnavailable("database unavailable")


class Database:
    """Owns the engines; hands out read sessions and write transactions.

    On SQLite, writes go through a second engine whose transactions begin IMMEDIATE, and are
    serialised inside the process, so concurrent writers queue instead of failing "database is locked".
    """

    def __init__(self, url: str, *, synchronous: str = "full") -> None:
        self.url = url
        self.engine = make_engine(url, synchronous=synchronous)
        self.dialect = self.engine.dialect.name
        self._at_once_engine: Engine | None = None
        self._at_once_lock = threading.Lock()
        if self.dialect == "sqlite":
            self._write_engine = make_engine(url, immediate_writes=True, synchronous=synchronous)
            self._write_lock: threading.Lock | None = threading.Lock()
            self._at_once_engine = make_engine(url, synchronous=synchronous, at_once=True)
        else:
            self._write_engine = self.engine
            self._write_lock = None

    @contextmanager
    def read(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            try:
                yield session
            except sa.exc.OperationalError as exc:
                raise _unavailable(exc) from exc

    @contextmanager
    def connect(self) -> Iterator[sa.Connection]:
        """A read on a plain connection (Core statements, no ORM session): what the per-call reads of a
        search use. An ORM session around one SELECT cost ~4x the statement (bench/floor.py, py-spy)."""
        try:
            with self.engine.connect() as conn:
                yield conn
        except sa.exc.OperationalError as exc:
            raise _unavailable(exc) from exc

    @contextmanager
    def at_once(self) -> Iterator[sa.Connection]:
        """A read that does not wait, for the event loop's thread (a bearer token's check: handing it to a worker
        thread and back cost more than the read itself, ~0.3 ms a call on this project's machine). SQLite only,
        on a connection of its own that nothing else waits for; raises WouldWait instead of waiting -- on
        PostgreSQL (the network), while another thread uses that connection, or when SQLite is busy -- so the
        caller asks again on a worker thread, where the normal rules (pool, busy timeout, 503) apply."""
        if self._at_once_engine is None or not self._at_once_lock.acquire(blocking=False):
            raise WouldWait
        try:
            with self._at_once_engine.connect() as conn:
                yield conn
        except sa.exc.OperationalError as exc:
            raise WouldWait from exc
        finally:
            self._at_once_lock.release()

    @contextmanager
    def transaction(self) -> Iterator[sa.Connection]:
        """One write transaction on a plain connection (Core statements), with the same locking as write()."""
        with self._serialised():
            try:
                with self._write_engine.begin() as conn:  # committed at the end of the block (or rolled back)
                    yield conn
            except sa.exc.OperationalError as exc:
                raise _unavailable(exc) from exc

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One transaction: committed when the block ends, rolled back entirely on any exception."""
        with self._serialised(), self._transaction() as session:
            yield session

    def _serialised(self) -> AbstractContextManager[object]:
        """SQLite: this process's writers one at a time (they queue here, not on 'database is locked')."""
        return self._write_lock if self._write_lock is not None else nullcontext()

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        with Session(self._write_engine, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except sa.exc.OperationalError as exc:
                session.rollback()
                raise _unavailable(exc) from exc
            except BaseException:
                session.rollback()
                raise

    def ping(self) -> None:
        """BackendUnavailable("database unavailable") when the database cannot be reached (detail logged)."""
        try:
            with self.engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        except sa.exc.OperationalError as exc:
            raise _unavailable(exc) from exc

    def dispose(self) -> None:
        self.engine.dispose()
        if self._at_once_engine is not None:
            self._at_once_engine.dispose()
        if self._write_engine is not self.engine:
            self._write_engine.dispose()
