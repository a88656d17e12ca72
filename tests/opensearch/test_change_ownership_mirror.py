"""Issue 56, the mirror's side of tests/domain/test_change_ownership.py: every domain path that changes a fact
reaches the OpenSearch mirror through the outbox rows the store records by itself -- each document carries the
fact's status, a redacted fact's words are gone -- and searches (served by the mirror) follow. On osmem and the
real node."""

from __future__ import annotations

from opensearchpy import OpenSearch

from service.container import Services
from service.domain.profiles import ProfileRef
from service.search.opensearch.backend import OpenSearchBackend
from tests.opensearch.conftest import settle
from tests.support import every_change


def test_every_domain_path_reaches_the_mirror(os_services: Services, os_client: OpenSearch) -> None:
    backend = os_services.backend
    assert isinstance(backend, OpenSearchBackend)
    seen = []
    for step in every_change.steps(os_services):
        settle(os_services)
        profile = os_services.profiles.get(step.profile)
        for uid, status in step.expected.items():
            source = os_client.get(index=backend.names.facts, id=uid, routing=str(profile.id))["_source"]
            if status is None:
                assert "marmalade" not in str(source).casefold(), step.name
                assert source["status"] == "retired", step.name
            else:
                assert source["status"] == status, (step.name, uid)
        every_change.follows(os_services, os_services.profiles.get, step, found=lambda p, q: _uids(os_services, p, q))
        seen.append(step.name)
    assert len(seen) == 8


def _uids(services: Services, profile: ProfileRef, query: str) -> set[str]:
    return {s.fact.uid for s in services.search.search(profile, query, limit=50).facts}
