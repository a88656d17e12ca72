"""recall counts of facts (fact_recalls), filled from the query log's results, and the listings' indexes (issue 39) (revision 0009, after 0008, 2026-11-28)"""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'

BATCH = 5000


def upgrade() -> None:
    op.create_table(
        'fact_recalls',
        sa.Column('uid', sa.String(length=40), nullable=False),
        sa.Column('profile_id', sa.Integer(), nullable=False),
        sa.Column('recalled_count', sa.Integer(), nullable=False),
        sa.Column('last_recalled_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['profile_id'], ['profiles.id']),
        sa.PrimaryKeyConstraint('uid'),
    )
    op.create_index('ix_fact_recalls_profile_count', 'fact_recalls', ['profile_id', 'recalled_count'])
    op.create_index('ix_facts_profile_id', 'facts', ['profile_id', 'id'])
    op.create_index('ix_facts_profile_status_id', 'facts', ['profile_id', 'status', 'id'])
    _fill_from_the_log(op.get_bind())


def _fill_from_the_log(conn: sa.Connection) -> None:
    """Every logged search's returned uids counted once per search (what insert_query_log keeps up from now on)."""
    counts: dict[str, list[Any]] = {}  # uid -> [profile_id, count, last created_at]
    for profile_id, results, created_at in _log(conn):
        if isinstance(results, str):
            results = json.loads(results)
        for uid in {item.get("uid") for item in results or [] if isinstance(item, dict)}:
            if not isinstance(uid, str):
                continue
            seen = counts.get(uid)
            if seen is None:
                counts[uid] = [profile_id, 1, created_at]
            else:
                seen[1] += 1
                seen[2] = max(seen[2], created_at, key=_instant)
    table = sa.table('fact_recalls', sa.column('uid'), sa.column('profile_id'), sa.column('recalled_count'),
                     sa.column('last_recalled_at'))
    values = [{"uid": uid, "profile_id": p, "recalled_count": n, "last_recalled_at": at}
              for uid, (p, n, at) in counts.items()]
    for start in range(0, len(values), BATCH):
        conn.execute(table.insert(), values[start:start + BATCH])


def _log(conn: sa.Connection) -> Any:
    """The log's results in pages by query id (a server-side cursor would end alembic's own statements)."""
    after = 0
    while True:
        page = conn.execute(sa.text(
            "SELECT r.query_id, r.profile_id, r.results, q.created_at FROM query_log_results r "
            "JOIN query_log q ON q.id = r.query_id WHERE r.query_id > :after ORDER BY r.query_id LIMIT :n"),
            {"after": after, "n": BATCH}).all()
        if not page:
            return
        for _query_id, profile_id, results, created_at in page:
            yield profile_id, results, created_at
        after = page[-1][0]


def _instant(value: Any) -> Any:
    """SQLite hands back text, PostgreSQL datetimes; both order by the text of one format or by value."""
    return value if isinstance(value, datetime) else str(value)


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
