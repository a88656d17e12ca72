"""Search. The core both backends call, pure: lexical.py (the match rule), readable.py (when meaning counts),
fusion.py (score fusion), mode.py (the mode and whether counts are exact). The adapters behind the
SearchBackend port: embedded/ (FTS5 + vectors in the process) and opensearch/ (the mirror). Search indexes
are derived from the canonical store (service.store), which they may read; nothing else here reaches up."""
