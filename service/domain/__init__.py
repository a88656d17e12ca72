"""The application: the fact lifecycle, search, the query log and its summary, stats, profiles and tokens,
export/import, vector upkeep -- every rule once, for every face. Below it: the ports (ports/: what it needs
from the canonical store, a search backend and an embedder), the pure types (models.py), the input rules
(validation.py, with the limits of service.contract) and the summary and stats bodies (reports.py). It imports
no face and no adapter (store, search backend, embedder): service.container hands it the adapters behind its
ports."""
