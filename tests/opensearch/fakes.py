"""A deterministic embedder for the tests with vectors: each known word is one axis, a text's vector is
the normalised sum of its words' axes (plus a small constant, so no vector is ever zero). Similarities
are then predictable, and both backends see exactly the same vectors. Every text without a known word has the
same vector (the constant alone) -- so do the probe questions of a store's off-topic level
(service/domain/ranking/level.py): a fact without a known word lies at cosine 1 from all of them and puts the
store's level at 1, where no real model would. A test that searches a store through the gate gives its facts a
known word."""

from __future__ import annotations

from typing import Any

import numpy as np

from service.domain import lexical
from service.domain.late import Embedding

AXES = ["deploy", "kubernet", "cluster", "pytest", "test", "postgr", "databas", "latenc", "grafana", "python",
        "spark", "happi", "releas", "runbook", "jenkin", "cafe"]


class FakeEmbedder:
    enabled = True
    model_id = "fake-axes-v1"

    def __init__(self, vocabulary: frozenset[str] | None = None) -> None:
        self.loaded = True  # False: behaves like a model still loading (nothing is embedded)
        self._vocabulary = vocabulary  # None: every query is read by meaning (as with openai)

    @property
    def dim(self) -> int:
        return len(AXES) + 1

    def start(self) -> None:
        """Nothing to load."""

    def ready(self) -> bool:
        return self.loaded

    def status(self) -> dict[str, Any]:
        return {"embedder": "fake", "state": "ready" if self.loaded else "loading", "model": self.model_id}

    def _one(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        vector[-1] = 0.05
        for token in lexical.tokens(text):
            for i, stem in enumerate(AXES):
                if token.startswith(stem):
                    vector[i] += 1.0
        return vector / np.linalg.norm(vector)

    def forget_queries(self) -> None:
        """Nothing kept."""

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)

    def embed_query_tokens(self, text: str) -> Embedding:
        return Embedding(self._one(text))  # no token vectors: the second stage's plain weights

    def embed_facts(self, texts: list[str]) -> list[Embedding]:
        return [Embedding(v) for v in self.embed_documents(texts)]

    def vocabulary(self) -> frozenset[str] | None:
        return self._vocabulary
