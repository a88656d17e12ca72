"""Redaction without deletion (`memory redact`) on SQLite and PostgreSQL: the words are gone from every
table, the embedded index and (SQLite) the database file and its WAL; rows, links and every count stay."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import SQLModel

from service.config import Settings
from service.container import Services, build_services
from service.domain import portability
from service.domain.redaction import MARKER, RedactionService
from service.errors import InvalidDocument, InvalidInput, NotFound
from service.search.embedded.backend import EmbeddedSearch
from service.store import tables  # noqa: F401  (every table on SQLModel.metadata)
from tests.conftest import ProfileAccess
from tests.opensearch.fakes import FakeEmbedder

SECRET = "tok_SECRET_9f8e7d6c"
PASSWORD = "hunter2-Zebra-Quartz"
WORDS = (SECRET, PASSWORD, "The prod deploy bot uses", "staging database password is")


@dataclass
class Seeded:
    token_fact: str  # active, two amended titles (one held the secret)
    old: str  # superseded by `new`, its text held the password
    new: str
    other: str


def seed(services: Services) -> Seeded:
    p = services.profiles.get("alpha")
    facts = services.facts
    token = facts.write(p, title="Deploy token", text=f"The prod deploy bot uses {SECRET} as its token.",
                        kind="reference", tags=["deploy"]).fact.uid
    facts.update(p, token, title=f"Deploy token {SECRET}")
    facts.update(p, token, title="Deploy token (prod)", tags=["deploy", "bot"])
    old = facts.write(p, title="Database password", text=f"The staging database password is {PASSWORD}.",
                      kind="project", tags=["db"]).fact.uid
    new = facts.update(p, old, text="The staging database password lives in the vault now.").fact.uid
    other = facts.write(p, title="Editor", text="Prefers vim with the deploy plugin.", kind="preference",
                        tags=["tools"]).fact.uid
    for query in (SECRET, f"where is {SECRET.upper()}", "deploy token", "deploy bot", "vim", PASSWORD, "vim"):
        services.search.search(p, query)
    return Seeded(token_fact=token, old=old, new=new, other=other)


def redactor(services: Services) -> RedactionService:
    return RedactionService(services.store)


def everything(services: Services) -> str:
    """Every row of every table, as text."""
    out = []
    with services.db.engine.connect() as conn:
        for table in SQLModel.metadata.sorted_tables:
            out.append(repr(conn.execute(sa.select(table)).all()))
    return "\n".join(out).casefold()


def counts(services: Services) -> dict[str, Any]:
    p = services.profiles.get("alpha")
    summary = services.query_log.summary(p, 30)
    for item in summary["top_queries"]:
        item.pop("query")  # the words of a redacted search are replaced; its counts are not
    summary["top_queries"].sort(key=lambda q: (-q["count"], -q["zero_match"]))
    for item in summary["top_facts"]:
        item.pop("title")
    return {"stats": services.stats.stats(p, 30), "summary": summary,
            "rows": [{k: v for k, v in r.items() if k != "query"} for r in services.query_log.listing(p, 500)]}


def test_the_words_are_gone_and_every_count_stays(services: Services, alpha: ProfileAccess) -> None:
    seeded = seed(services)
    p = services.profiles.get("alpha")
    services.facts.forget(p, seeded.token_fact, reason="rotated")  # counts then cannot move with the redaction
    assert all(w.casefold() in everything(services) for w in WORDS)  # the check below can fail
    before = counts(services)
    old_before = services.facts.get(p, seeded.old)
    token_before = services.facts.get(p, seeded.token_fact)
    token_text = token_before.fact.text

    done = redactor(services).redact(seeded.token_fact, reason="a live token", operator="alice", also=[SECRET])
    # The secret (--match, any case) and one of its titles ("deploy token"): three searches.
    assert (done.already, done.revisions, done.queries, done.status) == (False, 2, 3, "retired")
    moved = redactor(services).redact(seeded.old, reason="a password", operator="bob", also=[PASSWORD])
    assert moved.queries == 1 and moved.status == "superseded"

    text = everything(services)
    for word in WORDS:
        assert word.casefold() not in text, word
    assert counts(services) == before

    token_after = services.facts.get(p, seeded.token_fact)
    assert (token_after.fact.title, token_after.fact.text) == (MARKER, MARKER)
    assert [r.title for r in token_after.revisions] == [MARKER, MARKER]
    kept = ("uid", "kind", "tags", "status", "created_at", "updated_at", "retired_at", "retire_reason", "supersedes",
            "superseded_by")
    assert {k: token_after.fact.to_dict()[k] for k in kept} == {k: token_before.fact.to_dict()[k] for k in kept}
    assert [(r.kind, r.tags, r.valid_from) for r in token_after.revisions] == \
        [(r.kind, r.tags, r.valid_from) for r in token_before.revisions]
    record = token_after.redaction
    assert record is not None and (record["operator"], record["reason"]) == ("alice", "a live token")
    assert record["text_sha256"] == hashlib.sha256(token_text.encode()).hexdigest()
    assert (record["revisions_redacted"], record["queries_redacted"], record["retired"]) == (2, 3, False)

    # The superseded fact keeps its links; its successor keeps its own text.
    old_after = services.facts.get(p, seeded.old)
    assert old_after.fact.superseded_by == seeded.new and [c.uid for c in old_after.chain] == [seeded.old, seeded.new]
    assert old_after.fact.updated_at == old_before.fact.updated_at
    assert services.facts.get(p, seeded.new).fact.text == "The staging database password lives in the vault now."

    # The searches: markers, one per distinct text, counts kept; the others untouched.
    queries = [r["query"] for r in reversed(services.query_log.listing(p, 500))]
    assert all(q.startswith("[redacted ") for q in queries[:3]) and len(set(queries[:3])) == 3
    assert queries[3:5] == ["deploy bot", "vim"] and queries[5].startswith("[redacted ") and queries[6] == "vim"

    # The embedded index: no match, not even among retired facts, and no words in its FTS table.
    found = services.search.search(p, SECRET)
    assert (found.matched_count, services.query_log.listing(p, 1)[0]["inactive_matched"]) == (0, 0)
    assert isinstance(services.backend, EmbeddedSearch)
    index = services.backend._indexes[p.id]
    cells = repr(index._db.execute("SELECT title, text FROM fts").fetchall()).casefold()
    assert SECRET.casefold() not in cells and PASSWORD.casefold() not in cells
    assert "prefers vim" in cells  # the other facts are still indexed
    assert services.search.search(p, "prefers vim").matched_count == 1

    # Again with the secret: the search made since (above) holds it and is redacted too, numbered after the
    # first run's markers; the record counts it. A third run finds nothing left, and says so.
    again = redactor(services).redact(seeded.token_fact, reason="again", operator="carol", also=[SECRET])
    assert again.already and again.extended and again.queries == 1
    assert again.record == {**record, "queries_redacted": 4}
    redaction_id = queries[0].split()[1].split(".")[0]
    now_logged = [r["query"] for r in services.query_log.listing(p, 500)]
    assert f"[redacted {redaction_id}.4]" in now_logged and SECRET not in now_logged
    third = redactor(services).redact(seeded.token_fact, reason="again", operator="carol", also=[SECRET])
    assert third.already and not third.extended and third.queries == 0
    plain = redactor(services).redact(seeded.token_fact, reason="again", operator="carol")
    assert plain.already and not plain.changed and "already redacted" in plain.notes[0] and "--match" in plain.notes[0]
    assert services.facts.get(p, seeded.token_fact).redaction == {**record, "queries_redacted": 4}


def test_an_active_fact_is_retired_as_a_forget_would(services: Services, alpha: ProfileAccess) -> None:
    seeded = seed(services)
    p = services.profiles.get("alpha")
    before = services.stats.stats(p, 30)
    done = redactor(services).redact(seeded.token_fact, reason="a live token", operator="alice")
    assert done.status == "retired" and done.record is not None and done.record["retired"] is True
    fact = services.facts.get(p, seeded.token_fact).fact
    assert fact.retired_at is not None and fact.retire_reason == "redacted: a live token"
    after = services.stats.stats(p, 30)
    assert (after["facts"], after["retired"]) == (before["facts"] - 1, before["retired"] + 1)
    assert after["daily"][-1]["retired"] == before["daily"][-1]["retired"] + 1
    assert after["kinds"]["reference"] == before["kinds"]["reference"] - 1
    # Without --match, searches holding only a part of the text keep their words (the title/text rule).
    assert SECRET in [r["query"] for r in services.query_log.listing(p, 500)]


def test_dry_run_and_bad_input(services: Services, alpha: ProfileAccess) -> None:
    seeded = seed(services)
    before = everything(services)
    plan = redactor(services).redact(seeded.token_fact, reason="x", operator="alice", also=[SECRET], dry_run=True)
    assert (plan.dry_run, plan.queries, plan.revisions, plan.record) == (True, 3, 2, None)
    assert everything(services) == before
    with pytest.raises(NotFound):
        redactor(services).redact("f_nosuchfact", reason="x", operator="alice")
    for kwargs in ({"reason": "  "}, {"reason": "x" * 501}, {"operator": ""}, {"also": ["abc"]}):
        args: dict[str, Any] = {"reason": "why", "operator": "alice", **kwargs}
        with pytest.raises(InvalidInput):
            redactor(services).redact(seeded.token_fact, **args)
    assert everything(services) == before


def test_vectors_are_dropped_and_never_remade(tmp_path: Path, database_url: str) -> None:
    settings = Settings(data_dir=tmp_path, database_url=database_url, embedder="none")
    with build_services(settings, embedder=FakeEmbedder()) as services:  # type: ignore[arg-type]
        p = services.profiles.create("alpha")
        uid = services.facts.write(p, title="Deploy token", text=f"Deploy with {SECRET}.", kind="reference",
                                   tags=[]).fact.uid
        services.search.search(p, "deploy")
        with services.db.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM fact_vectors")).scalar_one() == 1
        assert redactor(services).redact(uid, reason="token", operator="alice").vector_dropped
        services.search.search(p, "deploy")  # the index syncs; it must not embed the redacted fact again
        from service.domain.vectors import VectorMaintenance
        assert VectorMaintenance(services.store, services.embedder).embed(p)["embedded"] == 0
        with services.db.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM fact_vectors")).scalar_one() == 0
        assert services.backend.status()["facts_without_vector"] == 0
        assert services.search.search(p, "deploy").mode == "hybrid"  # not degraded by the hole


def test_sqlite_file_and_wal_keep_no_trace(tmp_path: Path, alpha: ProfileAccess, services: Services,
                                           database_url: str) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("the file scan is SQLite's; PostgreSQL needs VACUUM (docs/reviewers.md, Redaction)")
    seeded = seed(services)
    files = [tmp_path / "memory.db", tmp_path / "memory.db-wal"]

    def on_disk() -> bytes:
        return b"".join(f.read_bytes() for f in files if f.exists())

    assert SECRET.encode() in on_disk() and PASSWORD.encode() in on_disk()
    done = redactor(services).redact(seeded.token_fact, reason="token", operator="alice", also=[SECRET])
    redactor(services).redact(seeded.old, reason="password", operator="alice", also=[PASSWORD])
    assert done.notes == []  # the WAL was checkpointed and truncated
    data = on_disk()
    for word in (SECRET, PASSWORD, SECRET.upper(), "The prod deploy bot uses", "staging database password is"):
        assert word.encode() not in data, word
    assert b"Prefers vim with the deploy plugin." in data  # the scan sees the file's text


def test_export_and_import_carry_redactions(services: Services, alpha: ProfileAccess, tmp_path: Path) -> None:
    seeded = seed(services)
    redactor(services).redact(seeded.token_fact, reason="a live token", operator="alice", also=[SECRET])
    p = services.profiles.get("alpha")
    document = portability.export_profile(services.store, p)
    assert document["format"] == "memory-export/3"
    dumped = json.dumps(document)
    assert SECRET not in dumped and SECRET.upper() not in dumped
    item = next(f for f in document["facts"] if f["uid"] == seeded.token_fact)
    assert item["redaction"]["operator"] == "alice" and "redaction" not in document["facts"][-1]

    with build_services(Settings(data_dir=tmp_path / "b", database_url=f"sqlite:///{tmp_path / 'b.db'}",
                                 embedder="none")) as target:
        beta = target.profiles.create("alpha")
        for broken_edit in (lambda f: f.update(text="the words again"),
                            lambda f: f["redaction"].update(text_sha256="xyz"),
                            lambda f: f.update(status="active", retired_at=None)):
            broken = copy.deepcopy(document)
            broken_edit(next(f for f in broken["facts"] if f["uid"] == seeded.token_fact))
            with pytest.raises(InvalidDocument):
                portability.import_profile(target.store, beta, broken)
        portability.import_profile(target.store, beta, document)
        moved = target.facts.get(beta, seeded.token_fact)
        assert moved.redaction == services.facts.get(p, seeded.token_fact).redaction
        assert target.search.search(beta, "deploy token").matched_count == services.search.search(
            p, "deploy token").matched_count
        again = RedactionService(target.store).redact(seeded.token_fact, reason="x", operator="bob")
        assert again.already
