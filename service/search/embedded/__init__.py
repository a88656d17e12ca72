"""The embedded backend: one in-process index per profile (index.py), its ranking steps (ranking.py) and the
backend that keeps the index in step with the canonical store (backend.py)."""
