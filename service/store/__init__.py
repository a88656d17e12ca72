"""The canonical store: every SQL statement of the service. SQLModel tables, the engine (SQLite WAL or
PostgreSQL), Alembic migrations, row access (repository.py), SQL aggregates, fact vectors (vectors.py),
the transactional outbox (outbox.py) and what the OpenSearch mirror reads and records (canonical.py)."""
