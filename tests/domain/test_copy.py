"""Copying a profile inside one store (issue 24): `memory import B FILE` with an export of A from the same store.

Facts whose uid A holds get new uids; every uid the copy stores (chains, query-log top_uid, what each search
handed back, the inactive facts it matched) points at the copy's facts; revisions, redactions and the query
log come along; a second import writes nothing; a failed import writes nothing. SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service import clock
from service.api.app import create_app
from service.container import Services
from service.domain import portability
from service.domain.models import ProfileRef
from service.domain.redaction import MARKER, RedactionService
from service.errors import InvalidDocument

SECRET = "tok_live_abcdef123456"
UID = re.compile(r"\bf_[A-Za-z0-9]+")


def history(services: Services, name: str) -> datetime:
    """A superseded chain of three, a fact amended twice (revisions), a retired fact, a redacted fact (with the
    searches that held its secret), and searches that hit, miss, filter and match only what memory once knew.
    Returns an instant in the middle of it (for `as_of`)."""
    p = services.profiles.create(name)
    facts = services.facts

    def write(title: str, text: str, kind: str, tags: list[str]) -> str:
        return facts.write(p, title=title, text=text, kind=kind, tags=tags).fact.uid

    editor = write("Editor", "Uses Helix with the default keymap.", "preference", ["tools"])
    facts.update(p, editor, title="Editor of choice", tags=["tools", "editor"])
    facts.update(p, editor, kind="user")
    deploy = write("Deploys", "Deploy with Argo CD from the main branch.", "project", ["infra"])
    deploy = facts.update(p, deploy, text="Deploy with Flux from the main branch.").fact.uid
    middle = clock.utcnow()
    facts.update(p, deploy, text="Deploy with Flux from release branches.")
    ci = write("CI", "Jenkins runs the nightly build on the old rack.", "project", ["infra", "ci"])
    facts.forget(p, ci, reason="moved to GitHub Actions")
    secret = write("Staging token", f"The staging token is {SECRET} for now.", "reference", ["secrets"])
    write("Reviews", "Two approvals before merging to main.", "decision", [])
    for query, tags in (("deploy flux", ["infra"]), (f"staging token {SECRET}", []), ("helix keymap", []),
                        ("jenkins nightly build", []), ("zqxv wpfk", []), ("deploy flux", []),
                        ("approvals merging", [])):
        services.search.search(p, query, tags=tags)
    RedactionService(services.store).redact(secret, reason="live token", operator="tester",
                                                              also=[SECRET])
    return middle


def rest_answers(services: Services, name: str, as_of: datetime) -> dict[str, Any]:
    """Every REST answer a reviewer reads about the profile, keyed by what was asked (not by uid or id)."""
    token = services.profiles.issue_token(name).token
    out: dict[str, Any] = {}
    with TestClient(create_app(services=services)) as client:
        def get(path: str, *, answers: tuple[int, ...] = (200,)) -> Any:
            response = client.get(f"/api/{name}{path}", headers={"Authorization": f"Bearer {token}"})
            assert response.status_code in answers, (path, response.text)
            return response.json() if answers == (200,) else [response.status_code, response.json()]

        for days in (1, 30):
            out[f"stats {days}"] = get(f"/stats?days={days}")
            out[f"summary {days}"] = get(f"/queries/summary?days={days}")
            out[f"gaps {days}"] = get(f"/queries/gaps?days={days}")
        out["queries"] = get("/queries?limit=500")
        for n, row in enumerate(out["queries"]["queries"]):
            out[f"query #{n}"] = get(f"/queries/{row['id']}")
        when = clock.isoformat(as_of).replace("+00:00", "Z")
        for listing in ("status=active&", "status=retired&", "status=superseded&", "", f"as_of={when}&"):
            page, pages = get(f"/facts?{listing}limit=3"), []
            while True:
                pages.append(page)
                if not page.get("next_cursor"):
                    break
                page = get(f"/facts?{listing}limit=3&cursor={page['next_cursor']}")
            out[f"facts {listing or 'all'}"] = pages
        for n, fact in enumerate(f for page in out["facts all"] for f in page["facts"]):
            out[f"fact #{n}"] = get(f"/facts/{fact['uid']}")
            out[f"fact #{n} as of"] = get(f"/facts/{fact['uid']}?as_of={when}", answers=(200, 404))
    return out


def translator(uids: dict[str, str], ids: dict[int, int], names: tuple[str, str]) -> Callable[[Any], Any]:
    """Rewrites an answer of the copy in the original's terms: its uids and query-log ids, its name; cursors
    (opaque row positions) become one placeholder on both sides; top_facts are re-sorted (ties by title, then
    uid), as docs/reviewers.md (The summary) orders them: two facts of one title get other uids in the copy."""

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            items = [walk(v, key) for v in value]
            return sorted(items, key=lambda f: (-f["count"], f["title"], f["uid"])) if key == "top_facts" else items
        if key == "next_cursor" and value is not None:
            return "<cursor>"
        if key == "id" and isinstance(value, int) and not isinstance(value, bool):
            return ids.get(value, value)
        if key == "profile" and value == names[0]:
            return names[1]
        if isinstance(value, str):  # a uid, or a message naming one
            return UID.sub(lambda m: uids.get(m.group(0), m.group(0)), value)
        return value

    return walk


def copy_maps(services: Services, name: str) -> tuple[dict[str, str], dict[int, int]]:
    """The copy's uid -> original uid and row id -> original id, from what the copy recorded (copied_from)."""
    document = portability.export_profile(services.store, services.profiles.get(name))
    uids = {f["uid"]: f["copied_from"] for f in document["facts"] if "copied_from" in f}
    ids = {q["id"]: q["copied_from"] for q in document["queries"] if "copied_from" in q}
    return uids, ids


def test_a_profile_is_copied_into_another_profile_of_the_same_store(services: Services) -> None:
    middle = history(services, "alpha")
    alpha = services.profiles.get("alpha")
    document = portability.export_profile(services.store, alpha)
    before = rest_answers(services, "alpha", middle)

    beta = services.profiles.create("beta")
    result = portability.import_profile(services.store, beta, document)
    n_facts, n_queries = len(document["facts"]), len(document["queries"])
    assert result == {"imported": n_facts, "skipped": 0, "uids_remapped": n_facts, "queries_imported": n_queries,
                      "queries_skipped": 0, "queries_renumbered": n_queries}

    uids, ids = copy_maps(services, "beta")
    assert sorted(uids.values()) == sorted(f["uid"] for f in document["facts"])  # one copy of each, all renamed
    assert not set(uids) & set(uids.values())
    assert sorted(ids.values()) == sorted(q["id"] for q in document["queries"])
    after = translator(uids, ids, ("beta", "alpha"))(rest_answers(services, "beta", middle))
    same = translator({}, {}, ("alpha", "alpha"))(before)
    assert after.keys() == same.keys()
    for key in same:
        assert after[key] == same[key], key

    # The copy's chains and query log point at the copy's own facts, never at alpha's.
    copied = portability.export_profile(services.store, beta)
    mine = {f["uid"] for f in copied["facts"]}
    for fact in copied["facts"]:
        assert {fact["supersedes"], fact["superseded_by"]} - {None} <= mine
    for row in copied["queries"]:
        assert {row["top_uid"]} - {None} <= mine
        assert {r["uid"] for r in row["results"]} | set(row["inactive_uids"]) <= mine
    assert any(r["inactive_uids"] for r in copied["queries"])  # "memory once knew" came along
    # The redacted fact stays redacted: markers, its record, no words anywhere in the copy.
    redacted = [f for f in copied["facts"] if f.get("redaction")]
    assert len(redacted) == 1 and redacted[0]["title"] == redacted[0]["text"] == MARKER
    assert SECRET not in str(copied)

    # Searches and memory_recent answer the same on both sides.
    assert [uids[f.uid] for f in services.facts.recent(beta)] == [f.uid for f in services.facts.recent(alpha)]
    for query in ("deploy flux", "helix", "jenkins nightly build", "staging token", "zqxv"):
        a, b = services.search.search(alpha, query), services.search.search(beta, query)
        assert (a.matched_count, a.mode) == (b.matched_count, b.mode), query
        assert [(s.fact.uid, s.score) for s in a.facts] == [(uids[s.fact.uid], s.score) for s in b.facts], query
        assert services.query_log.get(beta, b.query_id or 0)["inactive_matches"] == [
            {**m, "uid": next(u for u, o in uids.items() if o == m["uid"])}
            for m in services.query_log.get(alpha, a.query_id or 0)["inactive_matches"]]


def test_importing_the_copy_again_changes_nothing(services: Services) -> None:
    history(services, "alpha")
    document = portability.export_profile(services.store, services.profiles.get("alpha"))
    beta = services.profiles.create("beta")
    portability.import_profile(services.store, beta, document)
    first = portability.export_profile(services.store, beta)

    again = portability.import_profile(services.store, beta, document)
    assert again == {"imported": 0, "skipped": len(document["facts"]), "uids_remapped": 0, "queries_imported": 0,
                     "queries_skipped": len(document["queries"]), "queries_renumbered": 0}
    second = portability.export_profile(services.store, beta)
    assert second["facts"] == first["facts"] and second["queries"] == first["queries"]

    # The profile it came from: today's behaviour, everything is there already.
    alpha = services.profiles.get("alpha")
    same = portability.import_profile(services.store, alpha, document)
    assert (same["imported"], same["uids_remapped"], same["queries_imported"]) == (0, 0, 0)

    # A copy of the copy, and the copy's export into the original store's third profile: new uids again,
    # each pointing back at the uid it had in the document it came from.
    gamma = services.profiles.create("gamma")
    result = portability.import_profile(services.store, gamma, first)
    assert result["uids_remapped"] == len(first["facts"])
    third = portability.export_profile(services.store, gamma)
    assert {f["copied_from"] for f in third["facts"]} == {f["uid"] for f in first["facts"]}


def test_a_new_fact_of_the_original_is_added_to_the_copy_with_its_chain(services: Services) -> None:
    """Re-importing a later export: what was copied before is recognised, what is new is copied, and a link
    from a new fact to one copied before leads to the copy."""
    history(services, "alpha")
    alpha = services.profiles.get("alpha")
    beta = services.profiles.create("beta")
    portability.import_profile(services.store, beta, portability.export_profile(services.store, alpha))
    reviews = next(f for f in services.facts.recent(alpha) if f.title == "Reviews")
    services.facts.forget(alpha, reviews.uid)
    services.facts.write(alpha, title="Linters", text="Ruff runs before every commit.", kind="decision", tags=[])
    later = portability.export_profile(services.store, alpha)
    result = portability.import_profile(services.store, beta, later)
    assert (result["imported"], result["uids_remapped"], result["queries_imported"]) == (1, 1, 0)
    assert [f.title for f in services.facts.recent(beta, limit=1)] == ["Linters"]


def test_a_failed_copy_writes_nothing(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    history(services, "alpha")
    document = portability.export_profile(services.store, services.profiles.get("alpha"))
    gamma = services.profiles.create("gamma")

    def empty(profile: ProfileRef) -> None:
        assert services.facts.count(profile, status=None) == 0
        assert services.query_log.listing(profile, 500) == []
        assert portability.export_profile(services.store, profile)["facts"] == []

    broken = {**document, "queries": [*document["queries"][:-1], {**document["queries"][-1], "returned_count": -1}]}
    with pytest.raises(InvalidDocument, match="returned_count"):
        portability.import_profile(services.store, gamma, broken)
    empty(gamma)

    # A failure after the facts were written (the query log is written last): rolled back as a whole.
    def boom(*args: Any, **kwargs: Any) -> dict[str, int]:
        raise RuntimeError("disk full")

    monkeypatch.setattr(portability, "_import_queries", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        portability.import_profile(services.store, gamma, document)
    empty(gamma)
    monkeypatch.undo()
    assert portability.import_profile(services.store, gamma, document)["imported"] == len(document["facts"])
