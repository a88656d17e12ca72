"""keep which retired/superseded facts a search matched (query_log_results.inactive_uids) (revision 0005, after 0004, 2026-11-24)"""
from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'


def upgrade() -> None:
    with op.batch_alter_table('query_log_results', schema=None) as batch_op:
        batch_op.add_column(sa.Column('inactive_uids', sa.JSON(), nullable=True))


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
