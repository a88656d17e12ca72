"""The `none` embedder (MEMORY_EMBEDDER=none): no vectors at all, search is lexical only."""

from __future__ import annotations

from typing import Any

import numpy as np

from service.domain.late import Embedding
from service.errors import EmbeddingUnavailable

MESSAGE = "embeddings are disabled (MEMORY_EMBEDDER=none)"


class DisabledEmbedder:
    """Stands in for an embedder so callers need no special case beyond checking `enabled`.

    `ready()` is True: there is nothing to wait for, and a lexical-only service is fully ready.
    """

    enabled = False
    model_id = "none"

    @property
    def dim(self) -> int | None:
        return None

    def start(self) -> None:
        """Nothing to load."""

    def ready(self) -> bool:
        return True

    def status(self) -> dict[str, Any]:
        return {
            "embedder": "none",
            "state": "disabled",
            "model": self.model_id,
            "note": "lexical search only (MEMORY_EMBEDDER=none)",
        }

    def forget_queries(self) -> None:
        """Nothing kept."""

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        raise EmbeddingUnavailable(MESSAGE)

    def embed_query(self, text: str) -> np.ndarray:
        raise EmbeddingUnavailable(MESSAGE)

    def embed_query_tokens(self, text: str) -> Embedding:
        raise EmbeddingUnavailable(MESSAGE)

    def embed_facts(self, texts: list[str]) -> list[Embedding]:
        raise EmbeddingUnavailable(MESSAGE)

    def vocabulary(self) -> frozenset[str] | None:
        return None
