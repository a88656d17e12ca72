"""Memory as of a date: GET /api/{profile}/facts?as_of= and /facts/{uid}?as_of= over a history of writes,
amendments, a supersession and a retirement at known instants, on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.container import Services
from service.domain.redaction import MARKER, RedactionService
from tests.conftest import ProfileAccess
from tests.support.frozen_clock import frozen_at

T1 = datetime(2026, 1, 1, 10, 0, tzinfo=timezone.utc)  # A, B, C written
T2 = datetime(2026, 1, 2, 10, 0, tzinfo=timezone.utc)  # A amended: title A2, tags x z
T3 = datetime(2026, 1, 3, 10, 0, tzinfo=timezone.utc)  # B's text changed: B2 supersedes B
T4 = datetime(2026, 1, 4, 10, 0, tzinfo=timezone.utc)  # C retired
T5 = datetime(2026, 1, 5, 10, 0, tzinfo=timezone.utc)  # A amended: kind decision
T6 = datetime(2026, 1, 6, 10, 0, tzinfo=timezone.utc)  # D written
HOUR = timedelta(hours=1)


@dataclass
class History:
    a: str
    b: str
    b2: str
    c: str
    d: str


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@pytest.fixture
def history(services: Services, alpha: ProfileAccess) -> History:
    profile = services.profiles.get("alpha")
    facts = services.facts
    with frozen_at(T1):
        a = facts.write(profile, title="A1", text="alpha text", kind="project", tags=["x"]).fact.uid
        b = facts.write(profile, title="B1", text="bravo text", kind="decision", tags=[]).fact.uid
        c = facts.write(profile, title="C1", text="charlie text", kind="reference", tags=["y"]).fact.uid
    with frozen_at(T2):
        facts.update(profile, a, title="A2", tags=["x", "z"])
    with frozen_at(T3):
        b2 = facts.update(profile, b, text="bravo text, corrected").fact.uid
    with frozen_at(T4):
        facts.forget(profile, c, reason="obsolete")
    with frozen_at(T5):
        facts.update(profile, a, kind="decision")
    with frozen_at(T6):
        d = facts.write(profile, title="D1", text="delta text", kind="user", tags=[]).fact.uid
    return History(a=a, b=b, b2=b2, c=c, d=d)


def listing(client: TestClient, alpha: ProfileAccess, **params: Any) -> dict[str, Any]:
    response = client.get("/api/alpha/facts", params=params, headers=alpha.headers)
    assert response.status_code == 200, response.text
    return response.json()


def titles(body: dict[str, Any]) -> list[str]:
    return [f["title"] for f in body["facts"]]


def test_the_active_facts_at_each_instant(client: TestClient, alpha: ProfileAccess, history: History) -> None:
    assert listing(client, alpha, as_of=iso(T1 - HOUR))["facts"] == []
    at_t1 = listing(client, alpha, as_of=iso(T1))  # changes made exactly then count as made
    assert at_t1["as_of"] == "2026-01-01T10:00:00.000000+00:00"
    assert titles(at_t1) == ["C1", "B1", "A1"]
    assert {f["status"] for f in at_t1["facts"]} == {"active"}
    a_then = at_t1["facts"][2]
    assert (a_then["kind"], a_then["tags"], a_then["updated_at"]) == ("project", ["x"], "2026-01-01T10:00:00.000000+00:00")

    after_t2 = listing(client, alpha, as_of=iso(T2 + HOUR))
    a_then = next(f for f in after_t2["facts"] if f["uid"] == history.a)
    assert (a_then["title"], a_then["kind"], a_then["tags"]) == ("A2", "project", ["x", "z"])
    assert a_then["updated_at"].startswith("2026-01-02T10:00")

    after_t3 = listing(client, alpha, as_of=iso(T3 + HOUR))
    assert titles(after_t3) == ["B1", "C1", "A2"]  # B's successor (newest) now, B gone from the active facts
    assert after_t3["facts"][0]["uid"] == history.b2
    after_t4 = listing(client, alpha, as_of=iso(T4 + HOUR))
    assert [f["uid"] for f in after_t4["facts"]] == [history.b2, history.a]
    after_t6 = listing(client, alpha, as_of=iso(T6))
    assert [f["uid"] for f in after_t6["facts"]] == [history.d, history.b2, history.a]
    assert after_t6["facts"][2]["kind"] == "decision"
    # A future instant shows the present.
    now = listing(client, alpha, as_of="2100-01-01T00:00:00Z")
    assert [f["uid"] for f in now["facts"]] == [f["uid"] for f in listing(client, alpha, status="active")["facts"]]


def test_status_kind_and_tag_filters_read_the_state_then(client: TestClient, alpha: ProfileAccess,
                                                         history: History) -> None:
    superseded = listing(client, alpha, as_of=iso(T3 + HOUR), status="superseded")["facts"]
    assert [(f["uid"], f["status"], f["superseded_by"]) for f in superseded] == [(history.b, "superseded", history.b2)]
    assert listing(client, alpha, as_of=iso(T3 - HOUR), status="superseded")["facts"] == []
    before_retired = listing(client, alpha, as_of=iso(T3), status="retired")["facts"]
    assert before_retired == []
    retired = listing(client, alpha, as_of=iso(T4), status="retired")["facts"]
    assert [(f["uid"], f["retire_reason"]) for f in retired] == [(history.c, "obsolete")]
    # B, still active before T3, does not know its successor yet.
    b_then = next(f for f in listing(client, alpha, as_of=iso(T2))["facts"] if f["uid"] == history.b)
    assert (b_then["status"], b_then["superseded_by"]) == ("active", None)

    assert [f["uid"] for f in listing(client, alpha, as_of=iso(T4), kind="project")["facts"]] == [history.a]
    assert listing(client, alpha, as_of=iso(T5), kind="project")["facts"] == []
    assert listing(client, alpha, as_of=iso(T1 + HOUR), tag="z")["facts"] == []
    assert [f["uid"] for f in listing(client, alpha, as_of=iso(T2), tag="Z")["facts"]] == [history.a]


def test_pages_with_the_cursor(client: TestClient, alpha: ProfileAccess, history: History) -> None:
    seen: list[str] = []
    cursor = None
    for _ in range(5):
        params: dict[str, Any] = {"as_of": iso(T6), "limit": 1}
        if cursor:
            params["cursor"] = cursor
        body = listing(client, alpha, **params)
        seen += [f["uid"] for f in body["facts"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == [history.d, history.b2, history.a]


def test_one_fact_then(client: TestClient, alpha: ProfileAccess, history: History) -> None:
    def detail(uid: str, at: str) -> Any:
        return client.get(f"/api/alpha/facts/{uid}", params={"as_of": at}, headers=alpha.headers)

    early = detail(history.a, iso(T1 + HOUR)).json()
    assert (early["fact"]["title"], early["revisions"], early["redaction"]) == ("A1", [], None)
    later = detail(history.a, iso(T2 + HOUR)).json()
    assert later["fact"]["title"] == "A2" and [r["title"] for r in later["revisions"]] == ["A1"]
    assert [r["title"] for r in detail(history.a, iso(T6)).json()["revisions"]] == ["A1", "A2"]

    b_before = detail(history.b, iso(T2)).json()
    assert b_before["fact"]["status"] == "active" and [c["uid"] for c in b_before["chain"]] == [history.b]
    b_after = detail(history.b, iso(T3)).json()
    assert b_after["fact"]["status"] == "superseded" and b_after["fact"]["superseded_by"] == history.b2
    assert [(c["uid"], c["status"]) for c in b_after["chain"]] == [(history.b, "superseded"), (history.b2, "active")]
    c_then = detail(history.c, iso(T3)).json()["fact"]
    assert (c_then["status"], c_then["retired_at"], c_then["retire_reason"]) == ("active", None, None)

    not_yet = detail(history.b2, iso(T2))
    assert not_yet.status_code == 404
    assert not_yet.json()["error"]["code"] == "not_yet_created"
    assert "2026-01-03T10:00:00" in not_yet.json()["error"]["message"]
    unknown = detail("f_nosuchfact", iso(T2))
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01", "2026-01-01T25:00", "2026-02-30", "0000-01-01",
                                   "1" * 65, "2026-01-01T10:00:00Zjunk"])
def test_a_bad_instant_is_a_400(client: TestClient, alpha: ProfileAccess, history: History, value: str) -> None:
    for path in ("/api/alpha/facts", f"/api/alpha/facts/{history.a}", "/api/alpha/facts/f_unknown"):
        response = client.get(path, params={"as_of": value}, headers=alpha.headers)
        assert response.status_code == 400, (path, value, response.text)
        assert response.json()["error"]["param"] == "as_of"


@pytest.mark.parametrize(("value", "read_as"), [
    ("0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00.000000+00:00"),  # before year 1 in UTC: the first instant
    ("9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59.999999+00:00"),  # after 9999: the last
    ("2026-01-02t10:00:00z", "2026-01-02T10:00:00.000000+00:00"),  # RFC 3339 allows lower case
    ("2026-01-02T09:59:60Z", "2026-01-02T10:00:00.000000+00:00"),  # a leap second
    ("2026-01-02T10:00:00.1234567891Z", "2026-01-02T10:00:00.123456+00:00"),  # nanoseconds and more
])
def test_every_rfc_3339_instant_is_read(client: TestClient, alpha: ProfileAccess, history: History, value: str,
                                        read_as: str) -> None:
    """/openapi.json says `format: date-time`: whatever fits it is an answer, not a 400."""
    assert listing(client, alpha, as_of=value)["as_of"] == read_as


def test_time_zones(client: TestClient, alpha: ProfileAccess, history: History) -> None:
    naive = listing(client, alpha, as_of="2026-01-02T09:59:59")  # no offset: UTC, one second before T2
    assert naive["as_of"] == "2026-01-02T09:59:59.000000+00:00"
    assert next(f for f in naive["facts"] if f["uid"] == history.a)["title"] == "A1"
    berlin = listing(client, alpha, as_of="2026-01-02T11:00:00+01:00")  # = T2
    assert next(f for f in berlin["facts"] if f["uid"] == history.a)["title"] == "A2"
    day = listing(client, alpha, as_of="2026-01-02")  # a date alone: 00:00 UTC
    assert day["as_of"] == "2026-01-02T00:00:00.000000+00:00"


def test_a_redacted_fact_has_no_words_on_any_date(services: Services, client: TestClient, alpha: ProfileAccess,
                                                  history: History) -> None:
    RedactionService(services.store).redact(history.a, reason="test", operator="tester")
    then = client.get(f"/api/alpha/facts/{history.a}", params={"as_of": iso(T1 + HOUR)}, headers=alpha.headers)
    body = then.json()
    assert (body["fact"]["title"], body["fact"]["text"], body["fact"]["status"]) == (MARKER, MARKER, "active")
    assert body["redaction"]["operator"] == "tester"
    assert all(r["title"] == MARKER for r in client.get(
        f"/api/alpha/facts/{history.a}", params={"as_of": iso(T6)}, headers=alpha.headers).json()["revisions"])
