"""A running server forgets its caches of recent texts once a redaction is recorded (service.domain.redaction_watch):
the embedder's recent queries, the ranking stage's stems and word sets, the embedded index's stems of query terms
-- on SQLite and PostgreSQL, by a check and by the thread `memory serve` runs."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings
from service.container import Services, build_services
from service.domain import wording
from service.domain.redaction import RedactionService
from service.domain.redaction_watch import RedactionWatch
from service.search.embedded.backend import EmbeddedSearch
from tests.conftest import ProfileAccess, make_profile

SECRET = "tok_LIVE_5e4d3c2b1a"
PART = "5e4d3c2b1a"  # a word of it (the tokenizers split at "_")


def written(services: Services) -> str:
    p = services.profiles.get("alpha")
    uid = services.facts.write(p, title="Deploy token", text=f"The deploy bot uses {SECRET} as its token.",
                               kind="reference", tags=["deploy"]).fact.uid
    services.search.search(p, f"which bot uses {SECRET}")
    return uid


def counting(services: Services) -> tuple[RedactionWatch, list[int]]:
    emptied: list[int] = []
    return RedactionWatch(services.store, [lambda: emptied.append(1)]), emptied


def test_the_caches_are_emptied_when_the_mark_moves_and_only_then(services: Services, alpha: ProfileAccess) -> None:
    uid = written(services)
    watch, emptied = counting(services)
    assert watch.check() and len(emptied) == 1  # the first check: nothing known yet
    assert not watch.check() and len(emptied) == 1
    p = services.profiles.get("alpha")
    services.search.search(p, f"is {SECRET} still live")  # a later search holding the secret

    redact = RedactionService(services.store).redact
    assert redact(uid, reason="a live token", operator="alice").queries == 0  # the search words differ from the fact's
    assert watch.check() and len(emptied) == 2  # a new record
    assert not watch.check()
    assert redact(uid, reason="again", operator="alice", also=[SECRET]).queries == 2  # no new record: more searches
    assert watch.check() and len(emptied) == 3
    assert redact(uid, reason="again", operator="alice", also=[SECRET]).queries == 0  # nothing more: nothing to do
    assert not watch.check() and len(emptied) == 3


def test_a_failing_cache_is_tried_again_at_the_next_check(services: Services, alpha: ProfileAccess) -> None:
    calls: list[str] = []

    def broken() -> None:
        calls.append("broken")
        if len(calls) == 1:
            raise RuntimeError("not now")

    watch = RedactionWatch(services.store, [broken])
    with pytest.raises(RuntimeError):
        watch.check()
    assert watch.check() and calls == ["broken", "broken"]
    assert not watch.check()


def test_the_services_caches_hold_no_word_of_the_redacted_fact(services: Services, alpha: ProfileAccess) -> None:
    uid = written(services)
    p = services.profiles.get("alpha")
    services.redactions.check()
    services.search.search(p, f"is {SECRET} still live")
    assert isinstance(services.backend, EmbeddedSearch)
    query_terms = services.backend._indexes[p.id]._tokenizer._stems  # the index's stems of query terms
    assert any(PART in term for term in query_terms)  # the checks below can fail
    wording.fact_words("Deploy token", f"The deploy bot uses {SECRET} as its token.", ("deploy",))
    assert wording.stem.cache_info().currsize and wording.fact_words.cache_info().currsize

    RedactionService(services.store).redact(uid, reason="a live token", operator="alice", also=[SECRET])
    assert services.redactions.check()
    assert not any(PART in term for term in query_terms)
    assert wording.stem.cache_info().currsize == 0 and wording.fact_words.cache_info().currsize == 0


def test_a_running_server_checks_on_its_own(services: Services, alpha: ProfileAccess) -> None:
    uid = written(services)
    with TestClient(create_app(services=services)):
        until = time.monotonic() + 10
        while services.redactions.seen is None and time.monotonic() < until:  # its first check, at start
            time.sleep(0.05)
        first = services.redactions.emptied
        assert first >= 1
        RedactionService(services.store).redact(uid, reason="a live token", operator="alice", also=[SECRET])
        while services.redactions.emptied == first and time.monotonic() < until:
            time.sleep(0.05)
        assert services.redactions.emptied == first + 1  # within a check's interval (2 s)
    thread = services.redactions._thread
    assert thread is None  # stopped with the server


@pytest.mark.model
def test_the_embedders_recent_queries_are_forgotten(tmp_path, database_url: str) -> None:
    settings = Settings(data_dir=tmp_path, database_url=database_url, embedder="minilm")
    with build_services(settings) as services:
        make_profile(services, "alpha")
        services.embedder.start()
        until = time.monotonic() + 120
        while not services.embedder.ready() and time.monotonic() < until:
            time.sleep(0.1)
        uid = written(services)
        services.redactions.check()
        services.search.search(services.profiles.get("alpha"), f"is {SECRET} still live")
        assert services.embedder.status()["query_cache"]["size"] >= 1
        RedactionService(services.store).redact(uid, reason="a live token", operator="alice", also=[SECRET])
        assert services.redactions.check()
        assert services.embedder.status()["query_cache"]["size"] == 0
