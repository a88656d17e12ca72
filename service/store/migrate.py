"""Automatic, versioned schema upgrades (Alembic) at start-up, for SQLite and PostgreSQL alike."""

from __future__ import annotations

from pathlib import Path

from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
HEAD = "0011"  # the newest revision in migrations/versions (a test checks it is Alembic's head)
_PG_LOCK_KEY = 0x6D656D6F  # "memo": one migrator at a time across processes


def _alembic_config(connection: sa.Connection) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """Alembic's head, read from the migration scripts (imports them all: slow; start-up compares with HEAD)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head


def current_revision(engine: sa.Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def is_current(engine: sa.Engine) -> bool:
    """Whether the schema is at HEAD, read with one SELECT and without Alembic (importing it and its migration
    scripts is ~0.1 s of every CLI command)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table("alembic_version"):
            return False
        versions = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    return versions == [HEAD]


def upgrade(engine: sa.Engine) -> None:
    """Bring the schema to the newest revision. Safe to call on every start; never drops data."""
    if is_current(engine):
        return
    from alembic import command

    if engine.dialect.name == "sqlite":
        _upgrade_sqlite(engine)
        return
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        command.upgrade(_alembic_config(conn), "head")


def _upgrade_sqlite(engine: sa.Engine) -> None:
    """SQLite alters a table by copying it into a new one (Alembic batch mode); foreign keys must be off
    meanwhile (a pragma that only works outside a transaction) and are checked before they are back on."""
    with engine.connect() as conn:
        raw = conn.connection.driver_connection
        assert raw is not None
        raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                from alembic import command

                command.upgrade(_alembic_config(conn), "head")
            broken = raw.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise RuntimeError(f"schema upgrade left dangling references: {broken[:5]}")
        finally:
            raw.execute("PRAGMA foreign_keys=ON")
