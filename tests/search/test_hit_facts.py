"""The embedded index hands back its hits' facts (service.domain.hits): the very facts the canonical store holds,
in every state a fact goes through, also after another process changed them; none of a redacted fact stays."""

from __future__ import annotations

import pytest

from service.container import Services
from service.domain.profiles import ProfileRef
from service.domain.redaction import RedactionService
from service.search.embedded.backend import EmbeddedSearch


@pytest.fixture
def store_reads(services: Services, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The uids each hydration asked the canonical store for."""
    asked: list[list[str]] = []
    original = services.store.facts_by_uid

    def facts_by_uid(profile_id: int, uids: list[str]) -> object:
        asked.append(list(uids))
        return original(profile_id, uids)

    monkeypatch.setattr(services.store, "facts_by_uid", facts_by_uid)
    return asked


def write(services: Services, profile: ProfileRef, title: str, text: str, tags: list[str] | None = None) -> str:
    return services.facts.write(profile, title=title, text=text, kind="project", tags=tags or ["hangar"]).fact.uid


def assert_as_stored(services: Services, profile: ProfileRef, query: str) -> list[str]:
    """The search's facts equal the store's (each read on its own), field for field; returns their uids."""
    found = services.search.search(profile, query).facts
    for scored in found:
        assert scored.fact == services.facts.get(profile, scored.fact.uid).fact
    return [f.fact.uid for f in found]


def test_every_state_of_a_fact_as_the_store_has_it(services: Services, profile: ProfileRef,
                                                   store_reads: list[list[str]]) -> None:
    zeppelin = write(services, profile, "Zeppelin", "The zeppelin hangar is in Friedrichshafen.")
    airship = write(services, profile, "Airship", "The airship hangar is in Lakehurst.")
    blimp = write(services, profile, "Blimp", "The blimp hangar is in Akron.")
    services.facts.update(profile, zeppelin, title="Zeppelin works", tags=["hangar", "germany"])  # in place
    newer = services.facts.update(profile, airship, text="The airship hangar moved to Moffett Field.").fact.uid
    services.facts.forget(profile, blimp, reason="demolished")

    uids = assert_as_stored(services, profile, "hangar")
    assert set(uids) == {zeppelin, newer}
    found = {f.fact.uid: f.fact for f in services.search.search(profile, "hangar").facts}
    assert found[zeppelin].title == "Zeppelin works" and found[zeppelin].tags == ["hangar", "germany"]
    assert found[newer].supersedes == airship
    similar = services.facts.write(profile, title="Zeppelin hangar", text="The zeppelin hangar is in "
                                   "Friedrichshafen, by the lake.", kind="project", tags=None).similar
    assert [f.uid for f in similar] == [zeppelin] and similar[0].title == "Zeppelin works"
    assert store_reads == []  # the embedded index handed every fact back


def test_a_change_by_another_process_shows_in_the_next_search(services: Services, other: Services,
                                                              profile: ProfileRef) -> None:
    zeppelin = write(services, profile, "Zeppelin", "The zeppelin hangar is in Friedrichshafen.")
    assert assert_as_stored(services, profile, "zeppelin hangar") == [zeppelin]  # the index is built
    other.facts.update(profile, zeppelin, title="Graf Zeppelin", kind="reference", tags=["lz127"])
    assert assert_as_stored(services, profile, "zeppelin hangar") == [zeppelin]
    fact = services.search.search(profile, "zeppelin hangar").facts[0].fact
    assert (fact.title, fact.kind, fact.tags) == ("Graf Zeppelin", "reference", ["lz127"])
    newer = other.facts.update(profile, zeppelin, text="The zeppelin hangar is in Lakehurst now.").fact.uid
    assert assert_as_stored(services, profile, "zeppelin hangar") == [newer]
    other.facts.forget(profile, newer)
    assert services.search.search(profile, "zeppelin hangar").facts == []


def test_a_redacted_fact_leaves_no_copy_in_the_index(services: Services, profile: ProfileRef) -> None:
    secret = write(services, profile, "Token", "The deploy token is mem_live_abcdef123456.")
    kept = write(services, profile, "Deploy", "Deploys go through the staging cluster first.")
    assert secret in assert_as_stored(services, profile, "deploy token")
    RedactionService(services.store).redact(secret, reason="a live token", operator="alice")
    assert assert_as_stored(services, profile, "deploy") == [kept]
    backend = services.backend
    assert isinstance(backend, EmbeddedSearch)
    index = backend._synced(profile.id)
    copies = [f for f in index.facts if f is not None]
    assert [f.uid for f in copies] == [kept]
    assert not any("mem_live" in f.text or "mem_live" in f.title for f in copies)
