"""covering indexes for the summary; (profile_id, uid) for hydrating search hits (revision 0003, after 0002, 2026-11-22)"""
from alembic import op

revision = '0003'
down_revision = '0002'


def upgrade() -> None:
    with op.batch_alter_table('query_log', schema=None) as batch_op:
        batch_op.drop_index('ix_query_log_profile_day')
        batch_op.drop_index('ix_query_log_profile_day_query')
        batch_op.create_index('ix_query_log_profile_day_counts',
                              ['profile_id', 'day', 'matched_count', 'inactive_matched'], unique=False)
        batch_op.create_index('ix_query_log_profile_day_query_mc',
                              ['profile_id', 'day', 'query', 'matched_count'], unique=False)
    with op.batch_alter_table('facts', schema=None) as batch_op:
        batch_op.create_index('ix_facts_profile_uid', ['profile_id', 'uid'], unique=False)


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
