"""keep which retired/superseded facts a search matched (query_log_results.inactive_uids)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('query_log_results', schema=None) as batch_op:
        batch_op.add_column(sa.Column('inactive_uids', sa.JSON(), nullable=True))


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
