"""The embedded backend: one in-process index per profile (index.py; its words' numpy postings and FTS5's
BM25 in postings.py), its ranking steps (ranking.py) and the backend that keeps the index in step with the
canonical store (backend.py)."""
