"""The canonical store: every SQL statement of the service. SQLModel tables, the engine (SQLite WAL or
PostgreSQL), Alembic migrations, row access (repository.py, history.py, redactions.py), SQL aggregates, fact
vectors (vectors.py), the one owner of a change (changes.py: change numbers and the transactional outbox),
SqlStore (sql.py and members.py: the canonical
store port the application uses) and what the OpenSearch mirror reads and records (canonical.py)."""
