"""Schema creation and upgrades are automatic, versioned (Alembic) and keep data."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from bench.lib import postgres
from service.store import tables  # noqa: F401
from service.store.engine import Database
from service.store.migrate import HEAD, current_revision, head_revision, is_current, upgrade


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database (the suite's own copies the migrated template on PostgreSQL)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.db'}"
    return postgres.fresh_database(request.getfixturevalue("pg_cluster").url, f"t_{uuid.uuid4().hex[:16]}")


def test_migrations_match_the_models(database_url: str) -> None:
    db = Database(database_url)
    assert not is_current(db.engine)  # an empty database: no alembic_version table
    upgrade(db.engine)
    assert is_current(db.engine)
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": False}), SQLModel.metadata)
    assert diff == []
    assert current_revision(db.engine) == head_revision() == HEAD  # the constant start-up compares with
    upgrade(db.engine)  # idempotent
    db.dispose()


def test_upgrade_from_the_first_revision_keeps_rows(database_url: str) -> None:
    from alembic import command

    from service.store.migrate import _alembic_config

    db = Database(database_url)
    with db.engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "0001")
    assert not is_current(db.engine)
    with db.engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO profiles (name, created_at, fact_seq) VALUES ('old', :t, 0)"),
                     {"t": "2026-01-01 00:00:00"})
    upgrade(db.engine)
    with db.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT name FROM profiles")).scalars().all() == ["old"]
        assert "outbox" in sa.inspect(conn).get_table_names()
    db.dispose()


def test_results_move_to_their_own_table(database_url: str) -> None:
    from alembic import command

    from service.store.migrate import _alembic_config

    db = Database(database_url)
    with db.engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "0003")
        conn.execute(sa.text("INSERT INTO profiles (name, created_at, fact_seq) VALUES ('p', :t, 0)"),
                     {"t": "2026-01-01 00:00:00"})
        conn.execute(sa.text(
            "INSERT INTO query_log (profile_id, query, tags, result_limit, returned_count, mode, latency_ms, "
            "results, created_at, day) VALUES (1, 'q', '[]', 8, 1, 'lexical', 1.0, :r, :t, :d)"),
            {"r": '[{"uid": "f_1", "score": 1.0}]', "t": "2026-01-01 00:00:00", "d": "2026-01-01"})
    upgrade(db.engine)
    with db.engine.connect() as conn:
        moved = conn.execute(sa.text("SELECT query_id, results FROM query_log_results")).all()
        assert len(moved) == 1 and "f_1" in str(moved[0][1])
        assert "results" not in {c["name"] for c in sa.inspect(conn).get_columns("query_log")}
    db.dispose()


def test_recall_counts_are_filled_from_the_log(database_url: str) -> None:
    """Migration 0009 counts each logged search once per returned uid, and keeps its newest time."""
    from alembic import command

    from service.store.migrate import _alembic_config

    db = Database(database_url)
    with db.engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "0008")
        conn.execute(sa.text("INSERT INTO profiles (name, created_at, fact_seq) VALUES ('p', :t, 0)"),
                     {"t": "2026-01-01 00:00:00"})
        for query_id, (results, at) in enumerate([
            ('[{"uid": "f_1", "score": 1.0}, {"uid": "f_2", "score": 0.5}]', "2026-01-02 10:00:00"),
            ('[{"uid": "f_1", "score": 1.0}]', "2026-01-03 09:00:00"),
            ('[]', "2026-01-04 09:00:00"),
            ('[{"uid": "f_1", "score": 1.0}, {"uid": "f_1", "score": 1.0}]', "2026-01-01 08:00:00"),
        ], start=1):
            conn.execute(sa.text(
                "INSERT INTO query_log (id, profile_id, query, tags, result_limit, returned_count, mode, latency_ms, "
                "created_at, day) VALUES (:id, 1, 'q', '[]', 8, 1, 'hybrid', 1.0, :t, :d)"),
                {"id": query_id, "t": at, "d": at[:10]})
            conn.execute(sa.text("INSERT INTO query_log_results (query_id, profile_id, results) VALUES (:id, 1, :r)"),
                         {"id": query_id, "r": results})
    upgrade(db.engine)
    with db.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT uid, recalled_count, last_recalled_at FROM fact_recalls ORDER BY uid")).all()
    assert [(uid, n, str(at)[:19]) for uid, n, at in rows] == [
        ("f_1", 3, "2026-01-03 09:00:00"), ("f_2", 1, "2026-01-02 10:00:00")]
    db.dispose()
