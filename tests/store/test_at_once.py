"""A bearer token's check on the event loop's thread (Database.at_once, service.web.credentials.authenticated):
answered at once on SQLite, never waited for. Whatever would make it wait -- PostgreSQL, the connection in use
by another thread, a locked database -- is WouldWait, and the request is then checked on a worker thread with
the usual rules, so the answer is the same either way; a revoked token is refused at once (nothing is cached)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from service.container import Services
from service.domain.ports.canonical import WouldWait
from service.errors import Unauthorized
from service.web.credentials import authenticated
from tests.conftest import ProfileAccess


def _sqlite_file(services: Services) -> Path:
    return Path(services.settings.database_url.split("///", 1)[1])


def test_a_token_is_checked_at_once_and_revocation_shows_at_once(services: Services, alpha: ProfileAccess) -> None:
    header = f"Bearer {alpha.token}"
    if services.store.db.dialect != "sqlite":  # over the network: always a worker thread's job
        with pytest.raises(WouldWait):
            services.profiles.authenticate(header, "alpha", at_once=True)
        return
    assert services.profiles.authenticate(header, "alpha", at_once=True).name == "alpha"
    with pytest.raises(Unauthorized):
        services.profiles.authenticate(header, "beta", at_once=True)
    services.profiles.revoke_token(alpha.token_id)
    with pytest.raises(Unauthorized):
        services.profiles.authenticate(header, "alpha", at_once=True)


def test_the_face_gets_the_same_answer_either_way(services: Services, alpha: ProfileAccess) -> None:
    async def check(header: str, profile: str) -> str:
        return (await authenticated(services.profiles, header, profile)).name

    assert anyio.run(check, f"Bearer {alpha.token}", "alpha") == "alpha"
    for header in (f"Bearer {alpha.token}x", "Basic abc"):
        with pytest.raises(Unauthorized):
            anyio.run(check, header, "alpha")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_connection_in_use_elsewhere_is_not_waited_for(services: Services, alpha: ProfileAccess) -> None:
    db = services.store.db
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with db.at_once():
            inside.set()
            leave.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(10)
        with pytest.raises(WouldWait):
            services.profiles.authenticate(f"Bearer {alpha.token}", "alpha", at_once=True)
    finally:
        leave.set()
        holder.join()
    assert services.profiles.authenticate(f"Bearer {alpha.token}", "alpha", at_once=True).name == "alpha"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_locked_database_is_not_waited_for_on_the_loop(services: Services, alpha: ProfileAccess) -> None:
    """Another process holding SQLite's exclusive lock: the loop's check gives up at once (busy timeout 0), the
    worker thread's waits (busy timeout 30 s) and answers once the lock is gone."""
    services.store.db.dispose()  # the service's open connections would keep the lock from being taken
    locker = sqlite3.connect(_sqlite_file(services), isolation_level=None, check_same_thread=False)
    locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    locker.execute("SELECT 1 FROM profiles").fetchall()
    try:
        with pytest.raises(WouldWait):
            services.profiles.authenticate(f"Bearer {alpha.token}", "alpha", at_once=True)

        async def check() -> str:
            async with anyio.create_task_group() as group:
                group.start_soon(anyio.to_thread.run_sync, _release_later, locker)
                ref = await authenticated(services.profiles, f"Bearer {alpha.token}", "alpha")
            return ref.name

        assert anyio.run(check) == "alpha"
    finally:
        locker.close()


def _release_later(locker: sqlite3.Connection) -> None:
    threading.Event().wait(0.3)
    locker.execute("COMMIT")
    locker.close()  # an exclusive-mode connection on a WAL database keeps its lock until it closes
