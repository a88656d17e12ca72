"""Export/import of a whole profile (memory-export/3: facts, redactions and query log) on SQLite and PostgreSQL."""

from __future__ import annotations

import copy

import pytest

from service.container import Services
from service.domain import portability
from service.errors import InvalidInput


def grown(services: Services, name: str) -> dict:
    profile = services.profiles.create(name)
    uid = services.facts.write(profile, title="Deploys", text="Deploy with Argo CD.", kind="project",
                               tags=["infra"]).fact.uid
    services.facts.update(profile, uid, text="Deploy with Flux.")
    services.search.search(profile, "deploy flux", tags=["infra"])
    services.search.search(profile, "nothing like this")
    return portability.export_profile(services.store, services.profiles.get(name))


def _rename(fact: dict, suffix: str) -> None:
    """A fact under another uid, its supersession links renamed with it (they must stay consistent)."""
    for field in ("uid", "supersedes", "superseded_by"):
        if fact.get(field):
            fact[field] += suffix


def test_the_query_log_travels_with_ids_results_and_tags(services: Services) -> None:
    document = grown(services, "alpha")
    assert document["format"] == "memory-export/3"
    hit, miss = document["queries"]
    assert (hit["matched_count"], hit["tags"], len(hit["results"])) == (1, ["infra"], 1)
    assert miss["matched_count"] == 0 and miss["results"] == []

    beta = services.profiles.create("beta")
    moved = copy.deepcopy(document)
    for fact in moved["facts"]:  # uids are unique across profiles: another profile needs other uids
        _rename(fact, "x")
    result = portability.import_profile(services.store, beta, moved)
    # The ids are taken by alpha's rows: imported under new ids, everything else kept.
    assert result == {"imported": 2, "skipped": 0, "uids_remapped": 0, "queries_imported": 2,
                      "queries_skipped": 0, "queries_renumbered": 2}
    rows = services.query_log.listing(beta, 10)
    assert [r["query"] for r in rows] == ["nothing like this", "deploy flux"]
    assert all(r["id"] > miss["id"] for r in rows)
    detail = services.query_log.get(beta, rows[1]["id"])
    assert detail["results"] == hit["results"] and detail["created_at"] == hit["created_at"]
    assert services.query_log.summary(beta, 1)["top_tags"] == [{"tag": "infra", "count": 1}]
    # New searches get ids after the imported ones (PostgreSQL's sequence was moved on).
    later = services.search.search(beta, "deploy").query_id
    assert later > max(r["id"] for r in rows)


def test_an_import_is_all_or_nothing_and_reads_format_1(services: Services) -> None:
    document = grown(services, "alpha")
    gamma = services.profiles.create("gamma")
    broken = copy.deepcopy(document)
    for fact in broken["facts"]:
        _rename(fact, "y")
    broken["queries"][1]["returned_count"] = -1
    with pytest.raises(InvalidInput, match="returned_count"):
        portability.import_profile(services.store, gamma, broken)
    assert services.query_log.listing(gamma, 10) == []
    assert services.stats.stats(gamma)["facts"] == 0

    old = {"format": "memory-export/1", "profile": "gamma", "facts": broken["facts"]}
    result = portability.import_profile(services.store, gamma, old)
    assert (result["imported"], result["queries_imported"]) == (2, 0)
