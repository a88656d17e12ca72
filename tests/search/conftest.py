"""The real all-MiniLM-L6-v2 model, loaded once per test session for the search tests that need it."""

from __future__ import annotations

import pytest

from service.config import Settings
from service.domain.ports import Embedder
from service.embedding.minilm import MiniLMEmbedder


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    embedder = MiniLMEmbedder(Settings(embedder="minilm", data_dir=tmp_path_factory.mktemp("models")))
    embedder.embed_documents(["load the model once for the session"])
    return embedder
