"""copy and rename a profile: facts.copied_from, query_log.copied_from and profile_renames (issue 24) (revision 0007, after 0006, 2026-11-26)"""
from alembic import op
import sqlalchemy as sa

revision = '0007'
down_revision = '0006'


def upgrade() -> None:
    with op.batch_alter_table('facts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('copied_from', sa.String(length=40), nullable=True))
    with op.batch_alter_table('query_log', schema=None) as batch_op:
        batch_op.add_column(sa.Column('copied_from', sa.Integer(), nullable=True))
    op.create_table(
        'profile_renames',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('profile_id', sa.Integer(), nullable=False),
        sa.Column('old_name', sa.String(length=63), nullable=False),
        sa.Column('new_name', sa.String(length=63), nullable=False),
        sa.Column('renamed_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['profile_id'], ['profiles.id']),
        sa.PrimaryKeyConstraint('id'),
    )


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
