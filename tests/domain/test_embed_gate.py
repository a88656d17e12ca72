"""A search that arrives while the model loads waits for it (up to MEMORY_EMBEDDER_WAIT); a write never
waits; a load that fails, or a wait that runs out, leaves the search degraded as before."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.embed_gate import EmbedGate
from tests.opensearch.fakes import FakeEmbedder


class LoadingEmbedder(FakeEmbedder):
    """Loading until `finish()` (or `fail()`)."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded = False
        self.failed = False

    def status(self) -> dict[str, Any]:
        state = "error" if self.failed else "ready" if self.loaded else "loading"
        return {"embedder": "fake", "state": state, "model": self.model_id, "error": "broken" if self.failed else None}

    def finish(self) -> None:
        self.loaded = True

    def fail(self) -> None:
        self.failed = True


@dataclass
class Waits:
    """Every time a caller starts waiting for the load (EmbedGate._wait_for_load), and an event for the first."""

    seconds: list[float] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Waits:
    record = Waits()
    real = EmbedGate._wait_for_load

    def spy(self: EmbedGate, wait_s: float) -> bool:
        record.seconds.append(wait_s)
        record.started.set()
        return real(self, wait_s)

    monkeypatch.setattr(EmbedGate, "_wait_for_load", spy)
    return record


def services_with(tmp_path: Path, embedder: LoadingEmbedder, wait: float) -> Services:
    return build_services(Settings(data_dir=tmp_path, embedder="minilm", embedder_wait=wait), embedder=embedder)


@pytest.fixture
def embedder() -> LoadingEmbedder:
    return LoadingEmbedder()


@pytest.fixture
def services(tmp_path: Path, embedder: LoadingEmbedder) -> Iterator[Services]:
    svc = services_with(tmp_path, embedder, wait=120.0)
    yield svc
    svc.close()


def once_waiting(waits: Waits, action: Callable[[], None]) -> threading.Thread:
    """Once a caller is seen waiting for the load, end the load with `action`."""

    def run() -> None:
        assert waits.started.wait(60)
        action()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_write_does_not_wait_for_the_model(services: Services, waits: Waits) -> None:
    alpha = services.profiles.create("alpha")
    written = services.facts.write(alpha, title="Deploys", text="deploy to the kubernetes cluster",
                                   kind="project", tags=[])
    assert written.fact.status == "active" and waits.seconds == []  # stored at once, embedded later
    ready = services.readiness()
    assert ready["ready"] is False and ready["reason"] == "embedder loading: the model is not loaded yet"


def test_a_search_waits_for_the_model_and_is_exact(services: Services, embedder: LoadingEmbedder,
                                                   waits: Waits) -> None:
    alpha = services.profiles.create("alpha")
    services.facts.write(alpha, title="Deploys", text="deploy to the kubernetes cluster", kind="project", tags=[])
    finisher = once_waiting(waits, embedder.finish)
    outcome = services.search.search(alpha, "kubernetes deploy")
    finisher.join()
    assert waits.seconds == [120.0]
    assert outcome.mode == "hybrid" and outcome.matched_count == 1  # the fact written meanwhile was embedded
    assert services.query_log.listing(alpha)[0]["matched_count"] == 1
    assert services.readiness()["ready"] is True and "reason" not in services.readiness()


def test_a_load_that_fails_during_the_wait_leaves_the_search_degraded(services: Services, embedder: LoadingEmbedder,
                                                                       waits: Waits) -> None:
    alpha = services.profiles.create("alpha")
    failer = once_waiting(waits, embedder.fail)
    outcome = services.search.search(alpha, "kubernetes deploy")
    failer.join()
    assert outcome.mode == "degraded" and outcome.matched_count is None
    ready = services.readiness()
    assert ready["ready"] is False and ready["reason"] == "embedder error: broken"


def test_with_no_wait_a_search_during_the_load_is_degraded(tmp_path: Path, embedder: LoadingEmbedder,
                                                           waits: Waits) -> None:
    services = services_with(tmp_path, embedder, wait=0.0)
    try:
        alpha = services.profiles.create("alpha")
        outcome = services.search.search(alpha, "kubernetes deploy")
        assert outcome.mode == "degraded" and outcome.matched_count is None
        assert waits.seconds == []
    finally:
        services.close()


def test_embedder_wait_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().embedder_wait == 5.0
    monkeypatch.setenv("MEMORY_EMBEDDER_WAIT", "0.5")
    assert Settings().embedder_wait == 0.5
    with pytest.raises(ValueError):
        Settings(embedder_wait=-1)
