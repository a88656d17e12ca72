"""redaction without deletion: facts.redacted_at and the fact_redactions record (`memory redact`) (revision 0006, after 0005, 2026-11-25)"""
from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'


def upgrade() -> None:
    with op.batch_alter_table('facts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('redacted_at', sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        'fact_redactions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('profile_id', sa.Integer(), nullable=False),
        sa.Column('fact_id', sa.Integer(), nullable=False),
        sa.Column('redacted_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('operator', sa.String(length=200), nullable=False),
        sa.Column('reason', sa.String(length=500), nullable=False),
        sa.Column('text_sha256', sa.String(length=64), nullable=False),
        sa.Column('title_sha256', sa.String(length=64), nullable=False),
        sa.Column('revisions', sa.Integer(), nullable=False),
        sa.Column('queries', sa.Integer(), nullable=False),
        sa.Column('retired', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['fact_id'], ['facts.id']),
        sa.ForeignKeyConstraint(['profile_id'], ['profiles.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('fact_id'),
    )

def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
