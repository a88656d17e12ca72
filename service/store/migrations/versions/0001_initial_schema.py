"""initial schema (revision 0001, 2026-11-22)"""
from alembic import op
import sqlalchemy as sa

revision = '0001'
down_revision = None


def upgrade() -> None:
    op.create_table('profiles',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=63), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('fact_seq', sa.BigInteger(), server_default='0', nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('facts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('profile_id', sa.Integer(), nullable=False),
    sa.Column('uid', sa.String(length=40), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('retired_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('retire_reason', sa.String(length=500), nullable=True),
    sa.Column('supersedes', sa.String(length=40), nullable=True),
    sa.Column('superseded_by', sa.String(length=40), nullable=True),
    sa.Column('created_day', sa.Date(), nullable=False),
    sa.Column('retired_day', sa.Date(), nullable=True),
    sa.Column('change_seq', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['profile_id'], ['profiles.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uid')
    )
    with op.batch_alter_table('facts', schema=None) as batch_op:
        batch_op.create_index('ix_facts_profile_created_day', ['profile_id', 'created_day'], unique=False)
        batch_op.create_index('ix_facts_profile_retired_day', ['profile_id', 'retired_day'], unique=False)
        batch_op.create_index('ix_facts_profile_seq', ['profile_id', 'change_seq'], unique=False)
        batch_op.create_index('ix_facts_profile_status_updated', ['profile_id', 'status', 'updated_at'], unique=False)

    op.create_table('query_log',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('profile_id', sa.Integer(), nullable=False),
    sa.Column('query', sa.String(length=1000), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=True),
    sa.Column('result_limit', sa.Integer(), nullable=False),
    sa.Column('matched_count', sa.Integer(), nullable=True),
    sa.Column('returned_count', sa.Integer(), nullable=False),
    sa.Column('inactive_matched', sa.Integer(), nullable=True),
    sa.Column('top_uid', sa.String(length=40), nullable=True),
    sa.Column('mode', sa.String(length=16), nullable=False),
    sa.Column('latency_ms', sa.Float(), nullable=False),
    sa.Column('results', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.ForeignKeyConstraint(['profile_id'], ['profiles.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('query_log', schema=None) as batch_op:
        batch_op.create_index('ix_query_log_profile_day', ['profile_id', 'day', 'matched_count'], unique=False)
        batch_op.create_index('ix_query_log_profile_day_query', ['profile_id', 'day', 'query'], unique=False)
        batch_op.create_index('ix_query_log_profile_day_top', ['profile_id', 'day', 'top_uid'], unique=False)
        batch_op.create_index('ix_query_log_profile_id', ['profile_id', 'id'], unique=False)

    op.create_table('tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('token_id', sa.String(length=32), nullable=False),
    sa.Column('profile_id', sa.Integer(), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['profile_id'], ['profiles.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('token_hash'),
    sa.UniqueConstraint('token_id')
    )
    with op.batch_alter_table('tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tokens_profile_id'), ['profile_id'], unique=False)

    op.create_table('fact_revisions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('profile_id', sa.Integer(), nullable=False),
    sa.Column('fact_id', sa.Integer(), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('valid_from', sa.DateTime(timezone=True), nullable=False),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['fact_id'], ['facts.id'], ),
    sa.ForeignKeyConstraint(['profile_id'], ['profiles.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('fact_revisions', schema=None) as batch_op:
        batch_op.create_index('ix_fact_revisions_fact', ['fact_id', 'revision'], unique=False)

    op.create_table('fact_tags',
    sa.Column('fact_id', sa.Integer(), nullable=False),
    sa.Column('tag', sa.String(length=64), nullable=False),
    sa.Column('profile_id', sa.Integer(), nullable=False),
    sa.Column('current', sa.Boolean(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['fact_id'], ['facts.id'], ),
    sa.ForeignKeyConstraint(['profile_id'], ['profiles.id'], ),
    sa.PrimaryKeyConstraint('fact_id', 'tag')
    )
    with op.batch_alter_table('fact_tags', schema=None) as batch_op:
        batch_op.create_index('ix_fact_tags_profile_tag', ['profile_id', 'tag'], unique=False)

    op.create_table('fact_vectors',
    sa.Column('fact_id', sa.Integer(), nullable=False),
    sa.Column('profile_id', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('dim', sa.Integer(), nullable=False),
    sa.Column('vector', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['fact_id'], ['facts.id'], ),
    sa.ForeignKeyConstraint(['profile_id'], ['profiles.id'], ),
    sa.PrimaryKeyConstraint('fact_id')
    )
    with op.batch_alter_table('fact_vectors', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_fact_vectors_profile_id'), ['profile_id'], unique=False)

    op.create_table('query_log_tags',
    sa.Column('query_id', sa.Integer(), nullable=False),
    sa.Column('tag', sa.String(length=64), nullable=False),
    sa.Column('profile_id', sa.Integer(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.ForeignKeyConstraint(['profile_id'], ['profiles.id'], ),
    sa.ForeignKeyConstraint(['query_id'], ['query_log.id'], ),
    sa.PrimaryKeyConstraint('query_id', 'tag')
    )
    with op.batch_alter_table('query_log_tags', schema=None) as batch_op:
        batch_op.create_index('ix_query_log_tags_profile_day', ['profile_id', 'day', 'tag'], unique=False)



def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
