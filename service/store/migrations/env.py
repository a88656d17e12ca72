"""Alembic environment: always driven programmatically with a connection (service.store.migrate)."""

from alembic import context

from service.store import tables  # noqa: F401  (registers the models on SQLModel.metadata)
from sqlmodel import SQLModel

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
