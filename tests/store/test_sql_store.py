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
from service.store.changes import SqlChanges
from service.store.sql import SqlStore, SqlUnitOfWork

IMPLEMENTATIONS = [
    (port.CanonicalStore, SqlStore), (port.Profiles, members.SqlProfiles), (port.Tokens, members.SqlTokens),
    (port.Facts, members.SqlFacts), (port.Revisions, members.SqlRevisions),
    (port.Redactions, members.SqlRedactions), (port.QueryLogStore, members.SqlQueryLog),
    (port.Aggregates, members.SqlAggregates), (port.Vectors, members.SqlVectors), (port.Changes, SqlChanges),
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
                             "vectors", "changes", "oauth"}
    for name in members_named:
        assert hasattr(SqlUnitOfWork, name), name


def test_a_unit_of_work_is_all_or_nothing(services: Services) -> None:
    alpha = services.profiles.create("alpha")
    with pytest.raises(RuntimeError), services.store.unit_of_work() as uow:
        uow.changes.begin(alpha.id)
        row = uow.facts.new(profile_id=alpha.id, uid="f_rolled_back", title="t", text="x", kind="project", tags=["a"],
                            status="active", created_at=utcnow(), updated_at=utcnow(), created_day=utcnow().date())
        uow.changes.facts(row)
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


def test_one_change_number_per_unit_of_work_and_one_outbox_row_per_changed_fact(tmp_path: Any) -> None:
    """The store's change owner (service/store/changes.py): begin() locks the profile and takes its next number
    once; every fact handed to changes.facts() is stamped with it and queued once for the mirror."""
    import sqlalchemy as sa

    from service.config import Settings
    from service.store.changes import Outbox
    from service.store.tables import OutboxRow

    store = SqlStore(build_database(Settings(data_dir=tmp_path)), Outbox(enabled=True))
    with store.unit_of_work() as uow:
        alpha = uow.profiles.add("alpha", utcnow())
        assert alpha is not None and alpha.id is not None
        profile_id = alpha.id

    def fact(uid: str) -> Any:
        now = utcnow()
        return dict(profile_id=profile_id, uid=uid, title=uid, text="x", kind="project", tags=["t"],
                    status="active", created_at=now, updated_at=now, created_day=now.date())

    with store.unit_of_work() as uow:
        number = uow.changes.begin(profile_id)
        assert uow.changes.begin(profile_id) == number  # once per unit of work
        first, second = uow.facts.new(**fact("f_one")), uow.facts.new(**fact("f_two"))
        uow.changes.facts(first, second)
        assert first.change_seq == second.change_seq == number
    with store.unit_of_work() as uow:
        row = uow.facts.get(profile_id, "f_one")
        assert row is not None
        row.title = "renamed"
        uow.changes.facts(row)  # begin() is implied
        assert row.change_seq == number + 1
    with store.db.read() as session:
        queued = session.execute(sa.select(OutboxRow.entity, OutboxRow.entity_id).order_by(OutboxRow.id)).all()
    assert [(e, i) for e, i in queued] == [("fact", first.id), ("fact", second.id), ("fact", first.id)]
