"""The embedded backend, lexical side (MEMORY_EMBEDDER=none): match rule, filters, statuses, freshness."""

from __future__ import annotations

import threading

import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.profiles import ProfileRef


def write(services: Services, profile: ProfileRef, title: str, text: str, kind: str = "project",
          tags: list[str] | None = None) -> str:
    return services.facts.write(profile, title=title, text=text, kind=kind, tags=tags).fact.uid


def test_sharing_one_word_is_not_a_match(services: Services, profile: ProfileRef) -> None:
    write(services, profile, "Billing database", "Invoices live in PostgreSQL 16 on billing-db-1.")
    write(services, profile, "Search cluster", "The search service runs OpenSearch 2.19.")
    assert services.search.search(profile, "what is the capital of France").matched_count == 0
    assert services.search.search(profile, "postgres cooking recipes database france").matched_count == 0
    hit = services.search.search(profile, "billing database postgresql")
    assert hit.matched_count == 1 and hit.mode == "lexical"
    # Stemming: "invoice" matches "Invoices".
    assert services.search.search(profile, "invoice postgresql").matched_count == 1


def test_an_identifier_alone_matches(services: Services, profile: ProfileRef) -> None:
    uid = write(services, profile, "Ticket", "Rate limiting bug tracked in JIRA-4412.", kind="reference")
    write(services, profile, "Other ticket", "Migration tracked in JIRA-5000.", kind="reference")
    found = services.search.search(profile, "JIRA-4412")
    assert found.matched_count == 1 and found.facts[0].fact.uid == uid


def test_kind_and_tag_filters_apply_before_ranking(services: Services, profile: ProfileRef) -> None:
    a = write(services, profile, "Kafka choice", "We chose Kafka for order events.", "decision", ["kafka", "orders"])
    b = write(services, profile, "Kafka topic", "Kafka topic order-events has 12 partitions.", "reference",
              ["kafka"])
    assert {f.fact.uid for f in services.search.search(profile, "kafka order events").facts} == {a, b}
    assert [f.fact.uid for f in services.search.search(profile, "kafka order events", kind="decision").facts] == [a]
    assert [f.fact.uid for f in services.search.search(profile, "kafka order events", tags=["orders"]).facts] == [a]
    assert services.search.search(profile, "kafka order events", tags=["kafka", "nope"]).matched_count == 0


def test_retired_and_superseded_facts_never_come_back(services: Services, profile: ProfileRef) -> None:
    old = write(services, profile, "Staging host", "Staging runs on staging-7.internal.")
    services.facts.forget(profile, old, reason="gone")
    kept = write(services, profile, "Deploy tool", "Deploys use Argo CD version 2.9.")
    new = services.facts.update(profile, kept, text="Deploys use Argo CD version 2.11.").fact.uid
    staging = services.search.search(profile, "staging host staging-7")
    assert staging.matched_count == 0
    argo = services.search.search(profile, "argo cd deploys")
    assert [f.fact.uid for f in argo.facts] == [new] and argo.matched_count == 1


def test_limit_cuts_returned_not_matched(services: Services, profile: ProfileRef) -> None:
    for i in range(7):
        write(services, profile, f"Runbook {i}", f"Runbook {i} for the payments service outage drill.")
    found = services.search.search(profile, "payments runbook", limit=3)
    assert (found.matched_count, found.returned_count, len(found.facts)) == (7, 3, 3)


def test_another_process_sees_a_write_at_once(settings: Settings, services: Services, profile: ProfileRef) -> None:
    with build_services(settings) as other:  # a second process on the same canonical store
        other_profile = other.profiles.get("alpha")
        assert other.search.search(other_profile, "zeppelin hangar").matched_count == 0
        write(services, profile, "Zeppelin", "The zeppelin hangar is in Friedrichshafen.")
        assert other.search.search(other_profile, "zeppelin hangar").matched_count == 1
        uid = other.search.search(other_profile, "zeppelin hangar").facts[0].fact.uid
        services.facts.update(profile, uid, title="Airship hangar")
        assert other.search.search(other_profile, "airship hangar").facts[0].fact.title == "Airship hangar"


def test_profiles_do_not_see_each_other(services: Services, profile: ProfileRef) -> None:
    beta = services.profiles.create("beta")
    write(services, profile, "Secret", "Alpha's launch code is tangerine.")
    assert services.search.search(beta, "launch code tangerine").matched_count == 0
    assert services.search.search(profile, "launch code tangerine").matched_count == 1


def test_warm_builds_every_profile_index(services: Services, profile: ProfileRef) -> None:
    write(services, profile, "Warm fact", "Index me before the first search.")
    services.profiles.create("beta")
    services.backend.warm()  # type: ignore[attr-defined]
    assert services.backend.status()["profiles_loaded"] == 2
    assert services.backend.status()["facts_indexed"] == 1


def test_a_profile_still_loading_is_not_counted_loaded(settings: Settings, services: Services,
                                                       profile: ProfileRef) -> None:
    """/readyz's profiles_loaded counts a profile once its whole store is in the index, not while it loads (a
    100,000-fact profile takes ~30 s: a readiness check that counted it at once let the first search wait)."""
    write(services, profile, "Slow load", "This profile loads slowly.")
    with build_services(settings) as started:  # a process just started on that store
        backend = started.backend
        source = backend.source  # type: ignore[attr-defined]
        reading, release = threading.Event(), threading.Event()
        changes = source.changes

        def slow_changes(*args: object, **kwargs: object) -> object:
            reading.set()
            release.wait(10)
            return changes(*args, **kwargs)

        source.changes = slow_changes
        loader = threading.Thread(target=backend.warm)  # type: ignore[attr-defined]
        loader.start()
        try:
            assert reading.wait(10)
            assert backend.status()["profiles_loaded"] == 0
        finally:
            release.set()
            loader.join(10)
            source.changes = changes
        assert backend.status()["profiles_loaded"] == 1
