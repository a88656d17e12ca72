"""Export and import of a whole profile: its facts (every status, revisions, supersession links, timestamps)
and its query log (every search with what it handed back), so a team can move from the embedded store to
PostgreSQL + OpenSearch and every REST answer stays the same.

Format memory-export/3 adds `redaction` to redacted facts (who, when, why, SHA-256 of the removed words;
`memory redact`): a release that reads only /2 refuses the file instead of importing the markers without
the record. /2 adds `queries` to /1 (facts only); both are still read. Query-log ids are kept when
they are free in the destination (moving a store profile by profile never collides: ids are unique across
the source's profiles); a row whose id is taken by another row is imported under a new id and counted in
`queries_renumbered`. A row already there (same id, profile and time, or renumbered by an earlier import)
is skipped, so an import can be run again.

Into another profile of the same store (a copy): uids taken by another profile get new ones, translated
everywhere the document stores a uid, and each copied fact or renumbered row records where it came from
(`copied_from`, exported when set): service.domain.copies."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any


from service import contract
from service import clock
from service.domain import validation
from service.domain.copies import UidPlan, plan_uids
from service.domain.late import Embedding
from service.domain.models import FactStatus
from service.domain.import_check import check_document
from service.domain.ports.canonical import CanonicalStore, UnitOfWork
from service.domain.ports.records import FactRecord, to_fact, to_revision
from service.domain.profiles import ProfileRef
from service.domain.redaction import record_dict
from service.errors import InvalidInput

FORMAT = "memory-export/3"
READABLE = ("memory-export/1", "memory-export/2", FORMAT)


def export_profile(store: CanonicalStore, profile: ProfileRef) -> dict[str, Any]:
    with store.read() as uow:
        facts = []
        for row in uow.facts.all_of(profile.id):
            assert row.id is not None
            item = to_fact(row).to_dict()
            item["revisions"] = [to_revision(r).to_dict() for r in uow.revisions.of(row.id)]
            if row.redacted_at is not None:
                item["redaction"] = record_dict(uow.redactions.of(row.id))
            if row.copied_from is not None:
                item["copied_from"] = row.copied_from
            facts.append(item)
        queries = []
        for qrow, stored in uow.query_log.all_of(profile.id):
            queries.append({
                "id": qrow.id, "query": qrow.query, "tags": list(qrow.tags or []), "kind": qrow.kind,
                "limit": qrow.limit, "matched_count": qrow.matched_count, "returned_count": qrow.returned_count,
                "inactive_matched": qrow.inactive_matched, "top_uid": qrow.top_uid, "mode": qrow.mode,
                "latency_ms": qrow.latency_ms, "created_at": clock.isoformat(qrow.created_at),
                "results": list(stored.results) if stored is not None else [],
                "inactive_uids": list(stored.inactive_uids or []) if stored is not None else [],
                **({"copied_from": qrow.copied_from} if qrow.copied_from is not None else {}),
                **({"since": clock.isoformat(qrow.window_since)} if qrow.window_since is not None else {}),
                **({"until": clock.isoformat(qrow.window_until)} if qrow.window_until is not None else {}),
            })
    return {"format": FORMAT, "profile": profile.name, "exported_at": clock.isoformat(clock.utcnow()),
            "facts": facts, "queries": queries}


def read_document(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") not in READABLE or not isinstance(
        document.get("facts"), list
    ) or not isinstance(document.get("queries", []), list):
        raise InvalidInput(f"{path} is not a `memory export` document ({' or '.join(READABLE)})")
    return document


def _ts(value: Any, field: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise InvalidInput(f"bad timestamp in {field}: {value!r}") from exc
    if parsed.tzinfo is None:
        raise InvalidInput(f"timestamp without UTC offset in {field}: {value!r}")
    return parsed


def import_profile(store: CanonicalStore, profile: ProfileRef, document: dict[str, Any], *,
                   vectors: Mapping[str, Embedding] | None = None, model: str | None = None) -> dict[str, int]:
    """All-or-nothing, in one transaction: facts already in this profile (or copied into it before) are
    skipped, and so are query-log rows already there; a uid taken by another profile of the store gets a new
    one, and every uid the document stores is translated with it (service.domain.copies). `vectors` (by the
    document's uids, of embedder `model`) are stored with their facts. What was imported is queued for the
    search mirror like any new row (the store's outbox)."""
    imported = skipped = 0
    now = clock.utcnow()
    with store.changing(profile.id) as uow:
        check_document(uow, profile.id, document)  # every problem at once, before anything is written
        plan = plan_uids(uow, profile.id, [validation.uid(str(item.get("uid", ""))) for item in document["facts"]])
        for item in document["facts"]:
            uid = validation.uid(str(item.get("uid", "")))
            if uid in plan.present:
                skipped += 1
                continue
            row = _import_fact(uow, profile, item, plan.uid(uid),
                               copied_from=uid if uid in plan.renamed else item.get("copied_from"),
                               links=(plan.uid(item.get("supersedes")), plan.uid(item.get("superseded_by"))))
            vector = (vectors or {}).get(uid)
            if vector is not None and model and row.redacted_at is None:
                uow.vectors.put(row, model, vector, now)
            imported += 1
        queries = _import_queries(uow, profile, document.get("queries") or [], plan)
    return {"imported": imported, "skipped": skipped, "uids_remapped": len(plan.renamed), **queries}


def _import_fact(uow: UnitOfWork, profile: ProfileRef, item: dict[str, Any], uid: str, *,
                 copied_from: str | None, links: tuple[str | None, str | None]) -> FactRecord:
    status = str(item.get("status", ""))
    if status not in {s.value for s in FactStatus}:
        raise InvalidInput(f"fact {uid}: unknown status {status!r}")
    created, updated = _ts(item.get("created_at"), "created_at"), _ts(item.get("updated_at"), "updated_at")
    retired = _ts(item["retired_at"], "retired_at") if item.get("retired_at") else None
    redaction = item.get("redaction")
    row = uow.facts.new(
        profile_id=profile.id, uid=uid, title=validation.title(item.get("title", "")),
        text=validation.text(item.get("text", "")), kind=validation.kind(item.get("kind", "")),
        tags=validation.tags(item.get("tags") or []), status=status, created_at=created, updated_at=updated,
        retired_at=retired, retire_reason=item.get("retire_reason"), supersedes=links[0], superseded_by=links[1],
        created_day=clock.day_of(created), retired_day=clock.day_of(retired) if retired else None,
        redacted_at=_ts(redaction["redacted_at"], "redaction.redacted_at") if redaction else None,
        copied_from=copied_from,
    )
    assert row.id is not None
    if redaction:
        uow.redactions.new(**_redaction_fields(row, redaction))
    for rev in item.get("revisions") or []:
        uow.revisions.new(
            profile_id=profile.id, fact_id=row.id, revision=int(rev["revision"]),
            title=validation.title(rev["title"]), kind=validation.kind(rev["kind"]),
            tags=validation.tags(rev.get("tags") or []), valid_from=_ts(rev["valid_from"], "valid_from"),
            valid_to=_ts(rev["valid_to"], "valid_to"),
        )
    return row


def _redaction_fields(row: FactRecord, item: dict[str, Any]) -> dict[str, Any]:
    assert row.id is not None and row.redacted_at is not None
    return dict(
        profile_id=row.profile_id, fact_id=row.id, redacted_at=row.redacted_at, operator=str(item["operator"]),
        reason=str(item["reason"]), text_sha256=str(item["text_sha256"]), title_sha256=str(item["title_sha256"]),
        revisions=int(item.get("revisions_redacted", 0)), queries=int(item.get("queries_redacted", 0)),
        retired=bool(item.get("retired", False)),
    )


def _import_queries(uow: UnitOfWork, profile: ProfileRef, items: list[Any], plan: UidPlan) -> dict[str, int]:
    """A row already there -- under its own id, or renumbered by an earlier import (its `copied_from`), with
    the same created_at -- is skipped; a row whose id is taken gets a new one and keeps the old in
    `copied_from`. The uids a row names are translated by `plan`."""
    imported = skipped = renumbered = 0
    copies = {source: {clock.isoformat(t) for t in times} for source, times in uow.query_log.copies(profile.id).items()}
    for item in items:
        if not isinstance(item, dict):
            raise InvalidInput("a query-log row is not an object")
        created = _ts(item.get("created_at"), "queries.created_at")
        wanted = item.get("id")
        if not isinstance(wanted, int) or isinstance(wanted, bool) or not 0 < wanted <= contract.MAX_ROW_ID:
            raise InvalidInput(f"query-log row id must be a positive integer, not {wanted!r}")
        existing = uow.query_log.any_profile(wanted)
        when = clock.isoformat(created)
        if (existing is not None and existing.profile_id == profile.id
                and clock.isoformat(existing.created_at) == when) or when in copies.get(wanted, ()):
            skipped += 1
            continue
        matched, inactive = _count(item, "matched_count", optional=True), _count(item, "inactive_matched",
                                                                                  optional=True)
        row: dict[str, Any] = dict(
            profile_id=profile.id, query=validation.query(str(item.get("query", ""))),
            tags=validation.tags(item.get("tags") or []),
            kind=validation.kind(item["kind"]) if item.get("kind") else None,
            limit=_count(item, "limit"), matched_count=matched, returned_count=_count(item, "returned_count"),
            inactive_matched=inactive, top_uid=plan.uid(item.get("top_uid")), mode=str(item.get("mode", "")),
            latency_ms=float(item.get("latency_ms", 0.0)), created_at=created, day=clock.day_of(created),
            copied_from=wanted if existing is not None else item.get("copied_from"),
            window_since=_ts(item["since"], "queries.since") if item.get("since") is not None else None,
            window_until=_ts(item["until"], "queries.until") if item.get("until") is not None else None,
        )
        if existing is None:  # the id is free: kept
            row["id"] = wanted
        results = item.get("results") or []
        if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
            raise InvalidInput(f"query-log row {wanted}: results must be a list of objects")
        once_known = item.get("inactive_uids") or []
        if not isinstance(once_known, list) or not all(isinstance(u, str) for u in once_known):
            raise InvalidInput(f"query-log row {wanted}: inactive_uids must be a list of uids")
        uow.query_log.insert(row, plan.results(results), plan.uids(once_known))
        renumbered += existing is not None
        imported += 1
    uow.query_log.kept_ids()
    return {"queries_imported": imported, "queries_skipped": skipped, "queries_renumbered": renumbered}


def _count(item: dict[str, Any], field: str, *, optional: bool = False) -> Any:
    value = item.get(field)
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidInput(f"query-log row {item.get('id')!r}: {field} must be a non-negative integer")
    return value
