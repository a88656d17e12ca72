"""Search. The core both backends call, pure: readable.py (when meaning counts), fusion.py (score fusion),
mode.py (the mode and whether counts are exact); the match rule itself is service.domain.lexical. The
adapters behind the SearchBackend port: embedded/ (FTS5 + vectors in the process) and opensearch/ (the
mirror). Their indexes are derived from the canonical store, which they reach only through the ports of
service.domain.ports.sources (wired by service.container); nothing here imports service.store."""
