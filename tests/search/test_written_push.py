"""The written fact pushed into the embedded index (SearchBackend.written): an optimisation the sync still
checks. Taken in only when it is the index's very next change; any other write in between (this process,
another one on the same store) leaves it to the sync, which then reads every change from the store."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from service.container import Services
from service.domain.ports.sources import ChangedFact
from service.domain.profiles import ProfileRef
from service.search.embedded.backend import EmbeddedSearch


@pytest.fixture
def rows_read(services: Services, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many fact rows the index read back from the store, sync by sync."""
    backend = services.backend
    assert isinstance(backend, EmbeddedSearch)
    counts: list[int] = []
    original = backend.source.changes

    def changes(profile_id: int, since: int, model: str) -> tuple[int, list[ChangedFact]]:
        seq, changed = original(profile_id, since, model)
        counts.append(len(changed))
        return seq, changed

    monkeypatch.setattr(backend.source, "changes", changes)
    return counts


def write(services: Services, profile: ProfileRef, title: str, text: str) -> str:
    return services.facts.write(profile, title=title, text=text, kind="project", tags=["t"]).fact.uid


def uids(services: Services, profile: ProfileRef, query: str) -> set[str]:
    return {f.fact.uid for f in services.search.search(profile, query).facts}


def test_a_write_is_not_read_back(services: Services, profile: ProfileRef, rows_read: list[int]) -> None:
    write(services, profile, "Zeppelin", "The zeppelin hangar is in Friedrichshafen.")  # builds the index
    rows_read.clear()
    uid = write(services, profile, "Airship", "The airship mast stands in Lakehurst.")
    assert rows_read == []  # pushed: the write's `similar` did not even ask the store what changed
    assert uids(services, profile, "airship mast lakehurst") == {uid}
    assert rows_read == [0]  # the search's sync asked: nothing to read


def test_the_writes_similar_syncs_unless_its_fact_was_the_last_change(services: Services, other: Services,
                                                                      profile: ProfileRef, rows_read: list[int]) -> None:
    """`similar` skips the sync only for the fact just pushed, while the index has not moved since: it then
    lists what was committed up to that write. A fact another process commits afterwards comes in with the
    next sync (the next search, or a `similar` once the index has moved)."""
    backend = services.backend
    assert isinstance(backend, EmbeddedSearch)
    write(services, profile, "Zeppelin", "The zeppelin hangar is in Friedrichshafen.")
    first = write(services, profile, "Airship", "The airship hangar is in Lakehurst.")
    second = write(services, profile, "Dirigible", "The dirigible hangar is in Moffett Field.")
    rows_read.clear()
    backend.similar(profile.id, profile.name, second, 5)
    assert rows_read == []
    backend.similar(profile.id, profile.name, first, 5)  # not the last change: synced (nothing new to read)
    assert rows_read == [0]
    theirs = write(other, other.profiles.get("alpha"), "Blimp", "The blimp hangar is in Akron.")
    backend.similar(profile.id, profile.name, second, 5)
    assert rows_read == [0]  # the index has not moved since the push: what was committed up to that write
    assert theirs in uids(services, profile, "blimp hangar akron")
    assert rows_read == [0, 1]  # the search's sync read the blimp
    backend.similar(profile.id, profile.name, second, 5)
    assert rows_read == [0, 1, 0]  # the index moved past the push: synced again


def test_another_process_between_leaves_it_to_the_sync(services: Services, other: Services, profile: ProfileRef,
                                                       rows_read: list[int]) -> None:
    write(services, profile, "Zeppelin", "The zeppelin hangar is in Friedrichshafen.")
    theirs = write(other, other.profiles.get("alpha"), "Blimp", "The blimp hangar is in Akron.")
    rows_read.clear()
    mine = write(services, profile, "Airship", "The airship hangar is in Lakehurst.")
    assert rows_read == [2]  # not pushed (a change in between): both read from the store, in order
    assert uids(services, profile, "hangar") == {theirs, mine} | uids(services, profile, "zeppelin hangar")
    assert services.backend.status()["facts_indexed"] == 3


def test_a_push_out_of_order_is_refused(services: Services, profile: ProfileRef) -> None:
    write(services, profile, "Zeppelin", "The zeppelin hangar is in Friedrichshafen.")
    backend = services.backend
    assert isinstance(backend, EmbeddedSearch)
    index = backend._indexes[profile.id]
    seq = index.synced_seq
    late = ChangedFact(fact_id=999, uid="f_late", title="Late", text="A change number already past.", kind="project",
                       tags=(), active=True, present=True, vector=None, change_seq=seq)
    ahead = ChangedFact(**{**late.__dict__, "uid": "f_ahead", "change_seq": seq + 2})
    backend.written(profile.id, late, "none")
    backend.written(profile.id, ahead, "none")
    assert index.size == 1 and index.synced_seq == seq


def test_no_index_yet_is_left_alone(services: Services, profile: ProfileRef) -> None:
    backend = services.backend
    assert isinstance(backend, EmbeddedSearch)
    fact = ChangedFact(fact_id=1, uid="f_x", title="X", text="Y", kind="project", tags=(), active=True,
                       present=True, vector=None, change_seq=1)
    backend.written(profile.id, fact, "none")
    assert backend.status()["profiles_loaded"] == 0


def test_a_vector_of_another_model_is_not_taken(services: Services, profile: ProfileRef) -> None:
    """As the store's read would do: the index keeps only vectors of its own embedder's model."""
    write(services, profile, "Zeppelin", "The zeppelin hangar is in Friedrichshafen.")
    backend = services.backend
    assert isinstance(backend, EmbeddedSearch)
    index = backend._indexes[profile.id]
    pushed: dict[str, Any] = dict(fact_id=10_000, uid="f_vec", title="Vec", text="With a vector.", kind="project",
                                  tags=(), active=True, present=True, vector=np.ones(4, dtype=np.float32) / 2,
                                  change_seq=index.synced_seq + 1)
    backend.written(profile.id, ChangedFact(**pushed), "some-other-model")
    row = index.row_of_uid["f_vec"]
    assert not index.has_vector[row]
