"""One profile's trouble is never another's (issue 26). The cluster refuses one profile's documents (they
carry a field the strict mapping refuses: the cluster's own refusal, forced by adding the field to that
profile's documents): its outbox rows record the cause (attempts, last_error), it backs off on its own and its
searches answer degraded, while every other profile is delivered and searches exactly -- in the same sync
cycles. /readyz names the cause. Once the documents fit again, the profile catches up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from service.container import Services, build_services, open_mirror_maintenance
from service.search.opensearch import mirror as mirror_module
from service.search.opensearch.backend import OpenSearchBackend
from service.store.tables import OutboxRow
from tests.opensearch.conftest import mirrored_settings
from tests.support.clusters import Cluster
from bench.lib.waiting import until


@pytest.fixture
def services(tmp_path: Path, database_url: str, os_cluster: Cluster, os_prefix: str) -> Iterator[Services]:
    with build_services(mirrored_settings(tmp_path, database_url, os_cluster, os_prefix,
                                          opensearch_sync_interval=0.2)) as svc:
        yield svc


def _backend(services: Services) -> OpenSearchBackend:
    assert isinstance(services.backend, OpenSearchBackend)
    return services.backend


def _eventually(condition: Any, seconds: float = 20.0) -> None:
    until(condition, seconds)


def test_a_refused_profile_does_not_hold_up_the_others(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    good = [services.profiles.create(f"good{n}") for n in range(3)]
    bad = services.profiles.create("bad")
    original = mirror_module.fact_document

    def misfit(row: Any, vector: Any) -> dict[str, Any]:
        doc = original(row, vector)
        if row.profile_id == bad.id:
            doc["not_in_the_mapping"] = 1  # dynamic: strict refuses it
        return doc

    monkeypatch.setattr(mirror_module, "fact_document", misfit)
    written = services.facts.write(bad, title="Refused", text="This fact never fits.", kind="user", tags=[])
    assert written.fact.uid  # the write itself stands: the canonical store has it
    for n, profile in enumerate(good):
        services.facts.write(profile, title=f"Kept {n}", text=f"Deploys of team {n} run on Argo CD.",
                             kind="project", tags=[])

    backend = _backend(services)
    _eventually(lambda: backend.status()["outbox"]["pending"] == 1)  # only the refused row is left
    with services.db.read() as session:
        (row,) = session.exec(select(OutboxRow).where(OutboxRow.delivered_at == None)).all()  # noqa: E711
    assert row.profile_id == bad.id and row.attempts >= 1
    assert "strict_dynamic_mapping_exception" in (row.last_error or "") and "memory reindex" in (row.last_error or "")

    for n, profile in enumerate(good):  # exact answers from the mirror, in step with every write
        found = services.search.search(profile, "deploys argo")
        assert (found.matched_count, found.mode) == (1, "lexical")
        assert [f.fact.title for f in found.facts] == [f"Kept {n}"]
        services.facts.write(profile, title=f"Later {n}", text="Written while bad is refused.", kind="user", tags=[])
        assert services.search.search(profile, "written refused").matched_count == 1
    refused = services.search.search(bad, "refused fact")
    assert (refused.matched_count, refused.mode) == (None, "degraded")  # its mirror is known to be incomplete
    assert [f.fact.uid for f in refused.facts] == [written.fact.uid]  # answered from the canonical store

    maintenance = open_mirror_maintenance(services.settings, services.db, services.embedder)
    try:  # `memory check` names the cause too
        refused_rows = maintenance.check(bad)["outbox_refused"]
        assert refused_rows["rows"] == 1 and "strict_dynamic_mapping_exception" in refused_rows["last_error"]
        assert "outbox_refused" not in maintenance.check(good[0])
    finally:
        maintenance.close()
    status = backend.status()
    assert status["state"] == "degraded" and list(status["profiles_failing"]) == [str(bad.id)]
    assert any("strict_dynamic_mapping_exception" in p for p in status["problems"])
    assert status["reachable"] is True  # the cluster itself is fine

    monkeypatch.setattr(mirror_module, "fact_document", original)  # the documents fit again
    _eventually(lambda: backend.status()["outbox"]["pending"] == 0 and not backend.status()["profiles_failing"])
    found = services.search.search(bad, "refused fact")
    assert (found.matched_count, found.mode) == (1, "lexical")
