"""OAuth 2.1 for hosted MCP clients: clients, pending requests, grants, codes, tokens, consent codes (issue 27) (revision 0008, after 0007, 2026-11-27)"""
from alembic import op
import sqlalchemy as sa

revision = '0008'
down_revision = '0007'


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        'oauth_clients',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('client_id', sa.String(length=64), nullable=False),
        sa.Column('secret_hash', sa.String(length=64), nullable=True),
        sa.Column('registration', sa.JSON(), nullable=False),
        _ts('created_at'),
        _ts('first_grant_at', nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('client_id'),
    )
    op.create_table(
        'oauth_requests',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('request_id', sa.String(length=40), nullable=False),
        sa.Column('client_id', sa.Integer(), nullable=False),
        sa.Column('resource', sa.String(length=400), nullable=False),
        sa.Column('redirect_uri', sa.String(length=2000), nullable=False),
        sa.Column('redirect_explicit', sa.Boolean(), nullable=False),
        sa.Column('state', sa.String(length=1000), nullable=True),
        sa.Column('scopes', sa.JSON(), nullable=False),
        sa.Column('code_challenge', sa.String(length=128), nullable=False),
        sa.Column('csrf_hash', sa.String(length=64), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        _ts('created_at'),
        _ts('expires_at'),
        _ts('closed_at', nullable=True),
        sa.Column('outcome', sa.String(length=16), nullable=True),
        sa.ForeignKeyConstraint(['client_id'], ['oauth_clients.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('request_id'),
    )
    op.create_table(
        'oauth_grants',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('grant_id', sa.String(length=32), nullable=False),
        sa.Column('profile_id', sa.Integer(), nullable=False),
        sa.Column('client_id', sa.Integer(), nullable=False),
        sa.Column('resource', sa.String(length=400), nullable=False),
        sa.Column('scopes', sa.JSON(), nullable=False),
        sa.Column('approved_token_id', sa.String(length=32), nullable=True),
        _ts('created_at'),
        _ts('revoked_at', nullable=True),
        sa.Column('revoke_reason', sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(['client_id'], ['oauth_clients.id']),
        sa.ForeignKeyConstraint(['profile_id'], ['profiles.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('grant_id'),
    )
    op.create_index('ix_oauth_grants_profile_id', 'oauth_grants', ['profile_id'])
    op.create_index('ix_oauth_grants_approved_token_id', 'oauth_grants', ['approved_token_id'])
    op.create_table(
        'oauth_codes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('code_hash', sa.String(length=64), nullable=False),
        sa.Column('grant_id', sa.Integer(), nullable=False),
        sa.Column('code_challenge', sa.String(length=128), nullable=False),
        sa.Column('redirect_uri', sa.String(length=2000), nullable=False),
        sa.Column('redirect_explicit', sa.Boolean(), nullable=False),
        _ts('created_at'),
        _ts('expires_at'),
        _ts('used_at', nullable=True),
        sa.ForeignKeyConstraint(['grant_id'], ['oauth_grants.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('code_hash'),
    )
    op.create_table(
        'oauth_tokens',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('grant_id', sa.Integer(), nullable=False),
        _ts('created_at'),
        _ts('expires_at'),
        _ts('used_at', nullable=True),
        sa.ForeignKeyConstraint(['grant_id'], ['oauth_grants.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_hash'),
    )
    op.create_index('ix_oauth_tokens_grant_id', 'oauth_tokens', ['grant_id'])
    op.create_table(
        'oauth_consent_codes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('code_hash', sa.String(length=64), nullable=False),
        sa.Column('profile_id', sa.Integer(), nullable=False),
        _ts('created_at'),
        _ts('expires_at'),
        _ts('used_at', nullable=True),
        sa.ForeignKeyConstraint(['profile_id'], ['profiles.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('code_hash'),
    )


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
