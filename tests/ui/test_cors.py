"""CORS for a separate reviewer client (MEMORY_CORS_ORIGINS): allowed origins get the headers, others do not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings
from service.container import Services, build_services
from tests.conftest import ProfileAccess, make_profile

ALLOWED = "http://reviewer.example"
OTHER = "http://evil.example"
SUMMARY = "/api/alpha/queries/summary"


def _preflight(client: TestClient, origin: str) -> httpx.Response:
    return client.options(SUMMARY, headers={
        "Origin": origin,
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization",
    })


@pytest.fixture
def cors_services(tmp_path: Path, database_url: str) -> Iterator[Services]:
    with build_services(Settings(data_dir=tmp_path, database_url=database_url, embedder="none",
                                 cors_origins=ALLOWED)) as svc:
        yield svc


@pytest.fixture
def cors_client(cors_services: Services) -> Iterator[TestClient]:
    with TestClient(create_app(services=cors_services)) as client:
        yield client


@pytest.fixture
def cors_alpha(cors_services: Services) -> ProfileAccess:
    return make_profile(cors_services, "alpha")


def test_allowed_origin_gets_the_headers(cors_client: TestClient, cors_alpha: ProfileAccess) -> None:
    pre = _preflight(cors_client, ALLOWED)
    assert pre.status_code == 200
    assert pre.headers["access-control-allow-origin"] == ALLOWED
    assert "authorization" in pre.headers["access-control-allow-headers"].lower()
    assert "GET" in pre.headers["access-control-allow-methods"]

    got = cors_client.get(SUMMARY, headers={"Origin": ALLOWED, **cors_alpha.headers})
    assert got.status_code == 200
    assert got.headers["access-control-allow-origin"] == ALLOWED
    assert "origin" in got.headers.get("vary", "").lower()

    # Errors carry the header too, so the client can read the JSON error body.
    denied = cors_client.get(SUMMARY, headers={"Origin": ALLOWED, "Authorization": "Bearer wrong"})
    assert denied.status_code == 401
    assert denied.headers["access-control-allow-origin"] == ALLOWED
    assert denied.json()["error"]["status"] == 401


def test_other_origin_gets_no_headers(cors_client: TestClient, cors_alpha: ProfileAccess) -> None:
    pre = _preflight(cors_client, OTHER)
    assert pre.status_code == 400
    assert "access-control-allow-origin" not in pre.headers

    got = cors_client.get(SUMMARY, headers={"Origin": OTHER, **cors_alpha.headers})
    assert "access-control-allow-origin" not in got.headers


def test_no_cors_headers_unless_configured(services: Services) -> None:
    alpha = make_profile(services, "alpha")
    with TestClient(create_app(services=services)) as client:
        assert services.settings.cors_origin_list == []
        got = client.get(SUMMARY, headers={"Origin": ALLOWED, **alpha.headers})
        assert got.status_code == 200
        assert "access-control-allow-origin" not in got.headers
        assert "access-control-allow-origin" not in _preflight(client, ALLOWED).headers


def test_origins_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, database_url: str
) -> None:
    monkeypatch.setenv("MEMORY_CORS_ORIGINS", f"{ALLOWED}, http://second.example")
    settings = Settings(data_dir=tmp_path, database_url=database_url, embedder="none")
    assert settings.cors_origin_list == [ALLOWED, "http://second.example"]
    with build_services(settings) as svc:
        with TestClient(create_app(services=svc)) as client:
            for origin in (ALLOWED, "http://second.example"):
                assert _preflight(client, origin).headers["access-control-allow-origin"] == origin
            assert "access-control-allow-origin" not in _preflight(client, OTHER).headers
