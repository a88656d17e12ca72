"""The search tests' shared fixtures: the real all-MiniLM-L6-v2 model (loaded once per test session for the tests
that need it), a profile, and a second process on the same canonical store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.profiles import ProfileRef
from service.domain.ports import Embedder
from service.embedding.minilm import MiniLMEmbedder


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    embedder = MiniLMEmbedder(Settings(embedder="minilm", data_dir=tmp_path_factory.mktemp("models")))
    embedder.embed_documents(["load the model once for the session"])
    return embedder


@pytest.fixture
def profile(services: Services) -> ProfileRef:
    return services.profiles.create("alpha")


@pytest.fixture
def other(settings: Settings) -> Iterator[Services]:
    """A second process on the same canonical store."""
    with build_services(settings) as services:
        yield services
