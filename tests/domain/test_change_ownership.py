"""Issue 56: the store owns "a fact changed". Every domain path that changes a fact reaches a second process's
embedded index -- which learns of changes only through the store's change numbers -- although no domain module
says what changed (tests/test_layout.py checks that none does). On SQLite and PostgreSQL; the mirror's side is
tests/opensearch/test_change_ownership_mirror.py."""

from __future__ import annotations

from service.config import Settings
from service.container import Services, build_services
from service.domain.profiles import ProfileRef
from tests.support import every_change


def test_every_domain_path_reaches_another_process(settings: Settings, services: Services) -> None:
    with build_services(settings) as other:  # a second process on the same canonical store
        other.backend.warm()  # type: ignore[attr-defined]  # its index is built before the changes
        seen = []
        for step in every_change.steps(services):
            every_change.follows(other, other.profiles.get, step, found=lambda p, q: _uids(other, p, q))
            seen.append(step.name)
    assert seen == ["memory_write", "amend", "supersede", "forget", "resolve", "memory_write", "redact", "import"]


def _uids(services: Services, profile: ProfileRef, query: str) -> set[str]:
    return {s.fact.uid for s in services.search.search(profile, query, limit=50).facts}
