"""${message} (revision ${up_revision}, after ${down_revision | comma,n}, ${create_date})"""
from alembic import op
import sqlalchemy as sa
${imports if imports else ""}

revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}


def upgrade() -> None:
    ${upgrades if upgrades else "pass"}


def downgrade() -> None:
    raise NotImplementedError("downgrades would lose data; restore a backup instead")
