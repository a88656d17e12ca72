"""One APIRouter per resource: profiles, queries (log, summary, one row), stats, facts, health."""
