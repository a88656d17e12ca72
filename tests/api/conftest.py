from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.container import Services


LOOPBACK = {"base_url": "http://127.0.0.1:8080", "client": ("127.0.0.1", 50000)}


@pytest.fixture
def client(services: Services) -> Iterator[TestClient]:
    """A caller on loopback, as in a local deployment (the Host of /readyz and /mcp is checked)."""
    with TestClient(create_app(services=services), **LOOPBACK) as test_client:  # type: ignore[arg-type]
        yield test_client
