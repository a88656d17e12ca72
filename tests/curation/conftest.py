"""Curation signals (issue 39) are judged with the real model: near-duplicates are a matter of meaning."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.api.app import create_app
from service.config import Settings
from service.container import Services, build_services
from service.domain.ports import Embedder
from tests.search.conftest import minilm  # noqa: F401 - the session's loaded model
from tests.support.server import running


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(data_dir=tmp_path, database_url=database_url, embedder="minilm")


@pytest.fixture
def services(settings: Settings, minilm: Embedder) -> Iterator[Services]:  # noqa: F811
    with build_services(settings, embedder=minilm) as svc:
        yield svc


@pytest.fixture
def base_url(services: Services) -> Iterator[str]:
    with running(create_app(services=services)) as url:
        yield url
