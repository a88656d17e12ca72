"""move what each search handed back out of query_log into query_log_results (narrow summary scans) (revision 0004, after 0003, 2026-11-22)"""
from alembic import op
import sqlalchemy as sa

revision = '0004'
down_revision = '0003'


def upgrade() -> None:
    op.create_table(
        'query_log_results',
        sa.Column('query_id', sa.Integer(), nullable=False),
        sa.Column('profile_id', sa.Integer(), nullable=False),
        sa.Column('results', sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(['profile_id'], ['profiles.id']),
        sa.ForeignKeyConstraint(['query_id'], ['query_log.id']),
        sa.PrimaryKeyConstraint('query_id'),
    )
    # Copy first, then drop the column: no row's results are lost on the way.
    op.execute("INSERT INTO query_log_results (query_id, profile_id, results) "
               "SELECT id, profile_id, results FROM query_log")
    with op.batch_alter_table('query_log', schema=None) as batch_op:
        batch_op.drop_column('results')


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
