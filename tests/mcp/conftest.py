from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.api.app import create_app
from service.container import Services
from tests.support.server import running


@pytest.fixture
def base_url(services: Services) -> Iterator[str]:
    """A real uvicorn server on a loopback port serving these services."""
    with running(create_app(services=services)) as url:
        yield url
