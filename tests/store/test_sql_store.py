"""SqlStore against the canonical store port it implements (service.domain.ports.canonical), on SQLite and
PostgreSQL: every method the port names exists with the port's parameters, a unit of work is all or nothing,
and a profile name taken between the check and the insert is a Conflict, not a crash."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from service.clock import utcnow
from service.config import Settings
from service.container import Services, build_database
from service.domain.ports import canonical as port
from service.errors import Conflict
from service.store import members
from service.store.changes import ChangeOutsideProfile
from service.store.sql import SqlStore, SqlUnitOfWork

IMPLEMENTATIONS = [
    (port.CanonicalStore, SqlStore), (port.Profiles, members.SqlProfiles), (port.Tokens, members.SqlTokens),
    (port.Facts, members.SqlFacts), (port.Revisions, members.SqlRevisions),
    (port.Redactions, members.SqlRedactions), (port.QueryLogStore, members.SqlQueryLog),
    (port.Aggregates, members.SqlAggregates), (port.Vectors, members.SqlVectors),
]


def _methods(cls: type) -> dict[str, Any]:
    return {name: value for name, value in vars(cls).items() if callable(value) and not name.startswith("_")}


def _parameters(function: Any) -> list[tuple[str, Any]]:
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize(("protocol", "implementation"), IMPLEMENTATIONS, ids=lambda c: c.__name__)
def test_every_method_of_the_port_is_implemented_with_its_parameters(protocol: type, implementation: type) -> None:
    wanted = _methods(protocol)
    assert wanted, protocol
    for name, declared in wanted.items():
        made = getattr(implementation, name, None)
        assert made is not None, f"{implementation.__name__} lacks {name}"
        assert _parameters(made) == _parameters(declared), f"{implementation.__name__}.{name}"


def test_a_unit_of_work_has_every_member_the_port_names() -> None:
    members_named = {name for name, value in vars(port.UnitOfWork).items() if isinstance(value, property)}
    assert members_named == {"profiles", "tokens", "facts", "revisions", "redactions", "query_log", "aggregates",
                             "vectors", "oauth"}
    for name in members_named:
        assert hasattr(SqlUnitOfWork, name), name


def test_a_unit_of_work_is_all_or_nothing(services: Services) -> None:
    alpha = services.profiles.create("alpha")
    with pytest.raises(RuntimeError, match="the caller fails"), services.store.changing(alpha.id) as uow:
        row = uow.facts.new(profile_id=alpha.id, uid="f_rolled_back", title="t", text="x", kind="project", tags=["a"],
                            status="active", created_at=utcnow(), updated_at=utcnow(), created_day=utcnow().date())
        assert row.id is not None  # written, inside the transaction
        raise RuntimeError("the caller fails after the write")
    with services.store.read() as uow:
        assert uow.facts.get(alpha.id, "f_rolled_back") is None
        assert uow.facts.count(alpha.id, None) == 0
    assert services.facts.write(alpha, title="t", text="x", kind="project", tags=None).fact.status == "active"


def test_a_profile_created_meanwhile_is_a_conflict(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process creates the name between the service's check and its insert: the unique index refuses
    the insert, the store answers None and the service a Conflict; the other profile stays as it was."""
    services.profiles.create("alpha")
    monkeypatch.setattr(members.SqlProfiles, "by_name", lambda self, name: None)  # the check sees no profile
    with pytest.raises(Conflict, match="already exists"):
        services.profiles.create("alpha")
    monkeypatch.undo()
    assert [p.name for p in services.profiles.every()] == ["alpha"]
    assert isinstance(services.store, SqlStore)


@pytest.mark.parametrize(("setting", "level"), [(None, 2), ("full", 2), ("normal", 1)])
def test_sqlite_commits_reach_the_disk_before_they_are_acknowledged(tmp_path: Path, setting: str | None,
                                                                     level: int) -> None:
    """Issue 24: FULL by default (an acknowledged write survives a power loss, not only kill -9); NORMAL by
    MEMORY_SQLITE_SYNCHRONOUS=normal. Both engines (reads, and the writes' BEGIN IMMEDIATE one) and WAL."""
    overrides = {"sqlite_synchronous": setting} if setting else {}
    db = build_database(Settings(data_dir=tmp_path, **overrides))
    try:
        for engine in (db.engine, db._write_engine):
            with engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar_one() == level
                assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
    finally:
        db.dispose()


def _outboxed_store(tmp_path: Any) -> tuple[SqlStore, int]:
    from service.store.changes import Outbox

    store = SqlStore(build_database(Settings(data_dir=tmp_path)), Outbox(enabled=True))
    with store.unit_of_work() as uow:
        alpha = uow.profiles.add("alpha", utcnow())
        assert alpha is not None and alpha.id is not None
        return store, alpha.id


def _fact(profile_id: int, uid: str) -> dict[str, Any]:
    now = utcnow()
    return dict(profile_id=profile_id, uid=uid, title=uid, text="x", kind="project", tags=["t"],
                status="active", created_at=now, updated_at=now, created_day=now.date())


def _queued(store: SqlStore) -> list[tuple[str, int]]:
    import sqlalchemy as sa

    from service.store.tables import OutboxRow

    with store.db.read() as session:
        return [(e, i) for e, i in session.execute(sa.select(OutboxRow.entity, OutboxRow.entity_id)
                                                   .order_by(OutboxRow.id)).all()]


def test_the_store_numbers_and_queues_every_fact_a_unit_of_work_writes(tmp_path: Any) -> None:
    """Issue 56: the store owns the change. `changing(profile)` takes the profile's next change number on entry;
    every fact row written in it -- new, or only an attribute set, with nobody saying so -- is stamped with that
    number and queued once for the mirror, its tags kept in step; the after-commit hook hears the profile once."""
    import sqlalchemy as sa

    from service.store.tables import FactTag

    store, profile_id = _outboxed_store(tmp_path)
    heard: list[port.Committed] = []
    store.after_commit(heard.append)
    with store.changing(profile_id) as uow:
        first, second = uow.facts.new(**_fact(profile_id, "f_one")), uow.facts.new(**_fact(profile_id, "f_two"))
        number = first.change_seq
        assert number == second.change_seq and number > 0
    assert heard == [port.Committed(profile_id, "alpha")]
    with store.changing(profile_id) as uow:
        row = uow.facts.get(profile_id, "f_one")
        assert row is not None
        row.title, row.tags = "renamed", ["u"]  # set, and nothing else: the store finds it
        uow.facts.get(profile_id, "f_two")  # read, not changed: not queued
    with store.read() as uow:
        changed = uow.facts.get(profile_id, "f_one")
        assert changed is not None and changed.title == "renamed" and changed.change_seq == number + 1
        untouched = uow.facts.get(profile_id, "f_two")
        assert untouched is not None and untouched.change_seq == number
    assert _queued(store) == [("fact", first.id), ("fact", second.id), ("fact", first.id)]
    assert len(heard) == 2
    with store.db.read() as session:
        tags = session.execute(sa.select(FactTag.tag, FactTag.current).where(FactTag.fact_id == first.id)).all()
    assert sorted(tags) == [("t", False), ("u", True)]


def test_a_fact_written_outside_its_profiles_unit_of_work_is_refused(tmp_path: Any) -> None:
    """A fact row written where its change cannot be numbered -- a plain unit of work, or one of another
    profile -- fails at its flush and the transaction is rolled back: no change goes unrecorded."""
    store, profile_id = _outboxed_store(tmp_path)
    with store.changing(profile_id) as uow:
        uow.facts.new(**_fact(profile_id, "f_one"))
    with pytest.raises(ChangeOutsideProfile), store.unit_of_work() as uow:
        row = uow.facts.get(profile_id, "f_one")
        assert row is not None
        row.title = "unrecorded"
    with store.unit_of_work() as uow:
        beta = uow.profiles.add("beta", utcnow())
        assert beta is not None and beta.id is not None
    with pytest.raises(ChangeOutsideProfile), store.changing(beta.id) as uow:
        uow.facts.new(**_fact(profile_id, "f_elsewhere"))
    with store.read() as uow:
        kept = uow.facts.get(profile_id, "f_one")
        assert kept is not None and kept.title == "f_one"
        assert uow.facts.get(profile_id, "f_elsewhere") is None
    assert _queued(store) == [("fact", kept.id)]


def test_a_failing_after_commit_hook_does_not_undo_or_fail_the_change(tmp_path: Any,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    store, profile_id = _outboxed_store(tmp_path)

    def broken(change: port.Committed) -> None:
        raise RuntimeError("the index is away")

    store.after_commit(broken)
    with store.changing(profile_id) as uow:
        uow.facts.new(**_fact(profile_id, "f_one"))
    with store.read() as uow:
        assert uow.facts.get(profile_id, "f_one") is not None
    assert "after-commit hook failed" in caplog.text
