"""Shared fixtures: databases (SQLite and PostgreSQL), settings, services, a live server, profiles."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from service.config import Settings
from service.container import Services, build_services
from service.store.engine import Database
from service.store.migrate import upgrade
from bench.lib import postgres
from tests.support import opensearch_node
from tests.support.clusters import open_opensearch, osmem, real_opensearch, secured_opensearch  # noqa: F401 - session fixtures
from tests.support.containers.fixtures import opensearch_container, postgres_container  # noqa: F401 - the same


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A `secured` test on a node version whose security plugin cannot be had here (3.x without the zip that
    `make opensearch-security-3` builds) skips, and fails under CI, which builds that zip (`make test`)."""
    if item.get_closest_marker("secured") and not opensearch_node.SECURITY_PLUGIN_AVAILABLE:
        message = f"needs the security plugin: {opensearch_node.security_plugin_missing()}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[postgres.Cluster]:
    cluster = postgres.from_env()
    if cluster is not None:
        yield cluster
        return
    try:
        cluster = postgres.start_cluster()
    except postgres.PostgresUnavailable as exc:
        if os.environ.get("CI"):  # CI installs PostgreSQL: a skip there would hide the canonical-store tests
            pytest.fail(f"PostgreSQL tests cannot run: {exc}")
        pytest.skip(f"PostgreSQL tests skipped: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def pg_template(pg_cluster: postgres.Cluster) -> str:
    """A database with the schema at its newest revision, copied by CREATE DATABASE … TEMPLATE for each test (a
    copy is ~10x faster than running every migration again); nothing stays connected to it."""
    name = f"template_{uuid.uuid4().hex[:12]}"
    db = Database(postgres.fresh_database(pg_cluster.url, name))
    upgrade(db.engine)
    db.dispose()
    return name


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh canonical store per test, on each database: SQLite an absent file (the service creates it),
    PostgreSQL a copy of the migrated template (tests/store/test_migrations.py starts from empty databases)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.db'}"
    cluster = request.getfixturevalue("pg_cluster")
    template = request.getfixturevalue("pg_template")
    return postgres.fresh_database(cluster.url, f"t_{uuid.uuid4().hex[:16]}", template=template)


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(data_dir=tmp_path, database_url=database_url, embedder="none")


@pytest.fixture
def services(settings: Settings) -> Iterator[Services]:
    with build_services(settings) as svc:
        yield svc


@dataclass
class ProfileAccess:
    name: str
    token: str
    token_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def make_profile(services: Services, name: str) -> ProfileAccess:
    services.profiles.create(name)
    issued = services.profiles.issue_token(name)
    return ProfileAccess(name=name, token=issued.token, token_id=issued.token_id)


@pytest.fixture
def alpha(services: Services) -> ProfileAccess:
    return make_profile(services, "alpha")


@pytest.fixture
def beta(services: Services) -> ProfileAccess:
    return make_profile(services, "beta")
