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
    for row in moved["queries"]:  # ... and its log names them (a uid of another profile's is refused)
        row["top_uid"] = row["top_uid"] and row["top_uid"] + "x"
        for result in row["results"]:
            result["uid"] += "x"
        row["inactive_uids"] = [uid + "x" for uid in row.get("inactive_uids") or []]
    result = portability.import_profile(services.store, beta, moved)
    # The ids are taken by alpha's rows: imported under new ids, everything else kept.
    assert result == {"imported": 2, "skipped": 0, "uids_remapped": 0, "queries_imported": 2,
                      "queries_skipped": 0, "queries_renumbered": 2}
    rows = services.query_log.listing(beta, 10)
    assert [r["query"] for r in rows] == ["nothing like this", "deploy flux"]
    assert all(r["id"] > miss["id"] for r in rows)
    detail = services.query_log.get(beta, rows[1]["id"])
    assert detail["results"] == moved["queries"][0]["results"] and detail["created_at"] == hit["created_at"]
    assert services.query_log.summary(beta, 1)["top_tags"] == [{"tag": "infra", "count": 1}]
    # New searches get ids after the imported ones (PostgreSQL's sequence was moved on).
    later = services.search.search(beta, "deploy").query_id
    assert later > max(r["id"] for r in rows)



def test_the_listing_is_newest_first_by_time_whatever_the_ids(services: Services) -> None:
    """An imported search keeps its created_at under a newer id: the listing (and its cap of the newest rows)
    goes by time, so a live search of today lists before a search of last year imported after it."""
    document = grown(services, "alpha")
    beta = services.profiles.create("beta")
    live = services.search.search(beta, "live search today")
    old = copy.deepcopy(document)
    old["facts"] = []
    old["queries"] = [dict(row, top_uid=None, results=[], returned_count=0, matched_count=0)
                      for row in old["queries"]]
    for row, stamp in zip(old["queries"], ("2025-06-01T10:00:00+00:00", "2025-06-02T10:00:00+00:00")):
        row["created_at"] = stamp
    portability.import_profile(services.store, beta, old)
    rows = services.query_log.listing(beta, 10)
    assert rows[0]["id"] == live.query_id and all(r["id"] > live.query_id for r in rows[1:])
    assert [r["created_at"][:10] for r in rows] == [rows[0]["created_at"][:10], "2025-06-02", "2025-06-01"]
    assert [r["id"] for r in services.query_log.listing(beta, 1)] == [live.query_id]  # the cap keeps the newest

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


def test_facts_list_newest_first_by_created_at_across_pages_and_orders(services: Services) -> None:
    """An imported fact keeps its created_at under a newer id: the listing goes by time (then id) in every
    order and on every page: newest, by status, never-recalled, and recall order's ties."""
    beta = services.profiles.create("beta")
    live = [services.facts.write(beta, title=f"Live {n}", text=f"Written today, number {n}.", kind="project",
                                 tags=[]).fact.uid for n in range(2)]
    document = portability.export_profile(services.store, services.profiles.create("alpha"))
    document["facts"] = [{"uid": f"f_old{n}", "title": f"Old {n}", "text": f"Written long ago, number {n}.",
                          "kind": "project", "tags": [], "status": "active",
                          "created_at": f"2025-0{n + 1}-01T10:00:00+00:00",
                          "updated_at": f"2025-0{n + 1}-01T10:00:00+00:00", "retired_at": None,
                          "retire_reason": None, "supersedes": None, "superseded_by": None, "revisions": []}
                         for n in range(2)]
    portability.import_profile(services.store, beta, document)
    expected = [live[1], live[0], "f_old1", "f_old0"]
    for options in ({}, {"status": "active"}, {"recalled": "never"}, {"order": "recalled"}):
        seen, position = [], None
        while True:
            before_id = position if not isinstance(position, tuple) else None
            before_recall = position if isinstance(position, tuple) else None
            page, position = services.facts.page(beta, status=options.get("status"), kind=None, tag=None, limit=1,
                                                 before_id=before_id, before_recall=before_recall,
                                                 recalled=options.get("recalled"),
                                                 order=options.get("order", "newest"))
            seen += [f.uid for f in page]
            if position is None:
                break
        assert seen == expected, options
