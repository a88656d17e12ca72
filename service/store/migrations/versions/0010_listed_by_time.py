"""the listings newest first by time, not id (an imported row keeps its created_at under a newer id): facts by
(profile_id, [status,] created_at, id), the query log by (profile_id, created_at, id) (revision 0010, after
0009, 2026-11-28)"""
from __future__ import annotations

from alembic import op

revision = '0010'
down_revision = '0009'


def upgrade() -> None:
    op.create_index('ix_facts_profile_created', 'facts', ['profile_id', 'created_at', 'id'])
    op.create_index('ix_facts_profile_status_created', 'facts', ['profile_id', 'status', 'created_at', 'id'])
    op.drop_index('ix_facts_profile_status_id', table_name='facts')
    op.create_index('ix_query_log_profile_created', 'query_log', ['profile_id', 'created_at', 'id'])


def downgrade() -> None:
    op.drop_index('ix_query_log_profile_created', table_name='query_log')
    op.create_index('ix_facts_profile_status_id', 'facts', ['profile_id', 'status', 'id'])
    op.drop_index('ix_facts_profile_status_created', table_name='facts')
    op.drop_index('ix_facts_profile_created', table_name='facts')
