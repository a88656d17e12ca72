"""the query log keeps a search's time window: `window_since`, `window_until` (nullable; revision 0011, after 0010,
2026-12-02)"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'


def upgrade() -> None:
    with op.batch_alter_table('query_log') as batch:
        batch.add_column(sa.Column('window_since', sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column('window_until', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('query_log') as batch:
        batch.drop_column('window_until')
        batch.drop_column('window_since')
