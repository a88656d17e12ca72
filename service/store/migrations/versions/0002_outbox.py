"""outbox for the search mirror (revision 0002, after 0001, 2026-11-22)"""
from alembic import op
import sqlalchemy as sa

revision = '0002'
down_revision = '0001'


def upgrade() -> None:
    op.create_table(
        'outbox',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('profile_id', sa.Integer(), nullable=False),
        sa.Column('entity', sa.String(length=16), nullable=False),
        sa.Column('entity_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
        sa.Column('last_error', sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(['profile_id'], ['profiles.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index('ix_outbox_pending', ['delivered_at', 'id'], unique=False)


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
