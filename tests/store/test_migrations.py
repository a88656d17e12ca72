"""Schema creation and upgrades are automatic, versioned (Alembic) and keep data."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from service.store import tables  # noqa: F401
from service.store.engine import Database
from service.store.migrate import head_revision, upgrade, current_revision


def test_migrations_match_the_models(database_url: str) -> None:
    db = Database(database_url)
    upgrade(db.engine)
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": False}), SQLModel.metadata)
    assert diff == []
    assert current_revision(db.engine) == head_revision()
    upgrade(db.engine)  # idempotent
    db.dispose()


def test_upgrade_from_the_first_revision_keeps_rows(database_url: str) -> None:
    from alembic import command

    from service.store.migrate import _alembic_config

    db = Database(database_url)
    with db.engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "0001")
        conn.execute(sa.text("INSERT INTO profiles (name, created_at, fact_seq) VALUES ('old', :t, 0)"),
                     {"t": "2026-01-01 00:00:00"})
    upgrade(db.engine)
    with db.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT name FROM profiles")).scalars().all() == ["old"]
        assert "outbox" in sa.inspect(conn).get_table_names()
    db.dispose()
