"""The whole of a `memory export` document checked before an import writes anything: every problem is
reported with where it is (fact index and uid, query-log row, field), so a damaged or hand-edited history is
refused as a whole instead of being half-imported or imported inconsistent.

Checked: each field against the rules the tools apply (title, text, kind, tags, retire reason ≤ 500,
timestamps with a UTC offset and not in the future), statuses against their fields (retired ⇒ retired_at,
superseded ⇒ a successor), a redaction's record and its markers (a redacted fact is never active),
supersession links both ways, to uids of the file or of this profile, without loops, uids unique in the file,
query-log ids and counts. A uid of another profile is no problem: the import gives the fact a new uid
(service.domain.copies).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any, TypeGuard

from service import contract
from service import clock
from service.domain import redaction, validation
from service.domain.models import FactStatus
from service.domain.ports.canonical import UnitOfWork
from service.errors import InvalidDocument, InvalidInput

SHA256 = re.compile(r"^[0-9a-f]{64}$")
CLOCK_SKEW = timedelta(minutes=5)  # a document written on a machine whose clock runs a little ahead


class Problems:
    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, where: str, field: str, problem: str) -> None:
        self.items.append({"where": where, "field": field, "problem": problem})

    def rule(self, where: str, field: str, check: Callable[[], Any]) -> Any:
        """Run one validation rule; its refusal becomes a problem (and None is returned)."""
        try:
            return check()
        except InvalidInput as exc:
            self.add(where, field, exc.message)
            return None


def check_document(uow: UnitOfWork, profile_id: int, document: dict[str, Any]) -> None:
    """Raise InvalidDocument listing every problem; return quietly when the document can be imported."""
    problems = Problems()
    now = clock.utcnow()
    facts = document.get("facts") or []
    by_uid: dict[str, tuple[str, dict[str, Any]]] = {}
    for index, item in enumerate(facts):
        where = f"facts[{index}]"
        if not isinstance(item, dict):
            problems.add(where, "", "a fact must be an object")
            continue
        uid = problems.rule(where, "uid", lambda: validation.uid(item.get("uid", "")))
        if uid is None:
            continue
        where = f"facts[{index}] (uid {uid})"
        if uid in by_uid:
            problems.add(where, "uid", f"uid repeated (also {by_uid[uid][0]})")
            continue
        by_uid[uid] = (where, item)
        _check_fact(problems, where, item, now)
    known = _profile_uids(uow, profile_id, by_uid)
    _check_links(problems, by_uid, known)
    queries = document.get("queries") or []
    _check_queries(problems, queries, now)
    _check_query_uids(problems, queries, set(by_uid) | _own(uow, profile_id, _query_uids(queries) - set(by_uid)))
    if problems.items:
        raise InvalidDocument(problems.items)


def _timestamp(problems: Problems, where: str, field: str, value: Any, now: datetime) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        problems.add(where, field, f"not an ISO 8601 timestamp: {str(value)[:40]!r}")
        return None
    if parsed.tzinfo is None:
        problems.add(where, field, f"timestamp without UTC offset: {str(value)[:40]!r}")
        return None
    if parsed > now + CLOCK_SKEW:
        problems.add(where, field, f"in the future: {str(value)[:40]!r}")
        return None
    return parsed


def _check_fact(problems: Problems, where: str, item: dict[str, Any], now: datetime) -> None:
    problems.rule(where, "title", lambda: validation.title(item.get("title", "")))
    problems.rule(where, "text", lambda: validation.text(item.get("text", "")))
    problems.rule(where, "kind", lambda: validation.kind(item.get("kind", "")))
    problems.rule(where, "tags", lambda: validation.tags(item.get("tags") or []))
    copied = item.get("copied_from")
    if copied is not None:
        problems.rule(where, "copied_from", lambda: validation.uid(copied) if isinstance(copied, str)
                      else validation.uid(""))
    reason = item.get("retire_reason")
    if reason is not None and not isinstance(reason, str):
        problems.add(where, "retire_reason", "must be a string or null")
    else:
        problems.rule(where, "retire_reason", lambda: validation.reason(reason))
    status = item.get("status")
    if status not in {s.value for s in FactStatus}:
        problems.add(where, "status", f"unknown status {str(status)[:40]!r}")
    created = _timestamp(problems, where, "created_at", item.get("created_at"), now)
    updated = _timestamp(problems, where, "updated_at", item.get("updated_at"), now)
    retired = _timestamp(problems, where, "retired_at", item["retired_at"], now) if item.get("retired_at") else None
    if created and updated and updated < created:
        problems.add(where, "updated_at", "earlier than created_at")
    if created and retired and retired < created:
        problems.add(where, "retired_at", "earlier than created_at")
    if status == FactStatus.RETIRED and not item.get("retired_at"):
        problems.add(where, "retired_at", "a retired fact needs retired_at")
    if status == FactStatus.SUPERSEDED and not item.get("superseded_by"):
        problems.add(where, "superseded_by", "a superseded fact needs the uid of its successor")
    if status != FactStatus.SUPERSEDED and item.get("superseded_by"):
        problems.add(where, "superseded_by", f"set on a fact whose status is {status!r}, not 'superseded'")
    revisions = item.get("revisions") or []
    if not isinstance(revisions, list):
        problems.add(where, "revisions", "must be a list")
        return
    if item.get("redaction") is not None:
        check_redaction(problems, where, item, revisions, now)
    for number, rev in enumerate(revisions):
        at = f"{where} revisions[{number}]"
        if not isinstance(rev, dict):
            problems.add(at, "", "a revision must be an object")
            continue
        if not isinstance(rev.get("revision"), int) or isinstance(rev.get("revision"), bool) \
                or not 0 < rev["revision"] <= contract.MAX_ROW_ID:
            problems.add(at, "revision", "must be a positive integer")
        problems.rule(at, "title", lambda: validation.title(rev.get("title", "")))
        problems.rule(at, "kind", lambda: validation.kind(rev.get("kind", "")))
        problems.rule(at, "tags", lambda: validation.tags(rev.get("tags") or []))
        _timestamp(problems, at, "valid_from", rev.get("valid_from"), now)
        _timestamp(problems, at, "valid_to", rev.get("valid_to"), now)


def check_redaction(problems: Problems, where: str, item: dict[str, Any], revisions: list[Any],
                    now: datetime) -> None:
    """A redacted fact carries the record and no words: markers in place of its title, text and old titles."""
    record = item["redaction"]
    if not isinstance(record, dict):
        problems.add(where, "redaction", "must be an object or null")
        return
    at = f"{where} redaction"
    _timestamp(problems, at, "redacted_at", record.get("redacted_at"), now)
    for field, limit in (("operator", redaction.OPERATOR_MAX), ("reason", contract.REASON_MAX)):
        value = record.get(field)
        if not isinstance(value, str) or not 1 <= len(value.strip()) <= limit:
            problems.add(at, field, f"must be 1-{limit} characters")
    for field in ("text_sha256", "title_sha256"):
        if not isinstance(record.get(field), str) or not SHA256.match(record[field]):
            problems.add(at, field, "must be a SHA-256 in hex (64 characters of 0-9 a-f)")
    for field in ("revisions_redacted", "queries_redacted"):
        value = record.get(field, 0)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= contract.MAX_ROW_ID:
            problems.add(at, field, "must be a non-negative integer")
    if not isinstance(record.get("retired", False), bool):
        problems.add(at, "retired", "must be true or false")
    if item.get("status") == FactStatus.ACTIVE:
        problems.add(where, "status", "a redacted fact cannot be active")
    for field in ("title", "text"):
        if item.get(field) != redaction.MARKER:
            problems.add(where, field, f"a redacted fact's {field} must be {redaction.MARKER!r}")
    if any(isinstance(r, dict) and r.get("title") != redaction.MARKER for r in revisions):
        problems.add(where, "revisions", f"a redacted fact's earlier titles must be {redaction.MARKER!r}")


def _profile_uids(uow: UnitOfWork, profile_id: int, by_uid: dict[str, tuple[str, dict[str, Any]]]) -> set[str]:
    """uids the links may point at besides the file's: this profile's facts (a link out of the file to a fact
    of another profile is refused: a profile's history stays its own)."""
    linked = {str(v) for _, item in by_uid.values() for v in (item.get("supersedes"), item.get("superseded_by")) if v}
    owners = uow.facts.owners(linked - set(by_uid))
    return {uid for uid, owner in owners.items() if owner == profile_id}


def _check_links(problems: Problems, by_uid: dict[str, tuple[str, dict[str, Any]]], known: set[str]) -> None:
    for uid, (where, item) in by_uid.items():
        for field, back in (("supersedes", "superseded_by"), ("superseded_by", "supersedes")):
            target = item.get(field)
            if not target:
                continue
            if not isinstance(target, str):
                problems.add(where, field, "must be a uid or null")
            elif target == uid:
                problems.add(where, field, "links the fact to itself")
            elif target in by_uid:
                if by_uid[target][1].get(back) != uid:
                    problems.add(where, field, f"{target} does not link back ({back} is "
                                               f"{by_uid[target][1].get(back)!r})")
            elif target not in known:
                problems.add(where, field, f"{target} is neither in this file nor in this profile")
    for uid, (where, _) in by_uid.items():  # follow each chain of successors: it must end
        seen = {uid}
        current = by_uid[uid][1].get("superseded_by")
        while isinstance(current, str) and current in by_uid:
            if current in seen:
                problems.add(where, "superseded_by", f"supersession loop through {current}")
                break
            seen.add(current)
            current = by_uid[current][1].get("superseded_by")


def _check_queries(problems: Problems, items: list[Any], now: datetime) -> None:
    seen: dict[int, int] = {}
    for index, item in enumerate(items):
        where = f"queries[{index}]"
        if not isinstance(item, dict):
            problems.add(where, "", "a query-log row must be an object")
            continue
        row_id = item.get("id")
        if not isinstance(row_id, int) or isinstance(row_id, bool) or not 0 < row_id <= contract.MAX_ROW_ID:
            problems.add(where, "id", f"must be an integer from 1 to {contract.MAX_ROW_ID}")
        elif row_id in seen:
            problems.add(where, "id", f"id {row_id} repeated (also queries[{seen[row_id]}])")
        else:
            seen[row_id] = index
            where = f"queries[{index}] (id {row_id})"
        problems.rule(where, "query", lambda: validation.query(str(item.get("query", ""))))
        problems.rule(where, "tags", lambda: validation.tags(item.get("tags") or []))
        if item.get("kind"):
            problems.rule(where, "kind", lambda: validation.kind(item["kind"]))
        for field, optional in (("limit", False), ("returned_count", False), ("matched_count", True),
                                ("inactive_matched", True)):
            value = item.get(field)
            if value is None and optional:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= contract.MAX_ROW_ID:
                problems.add(where, field, "must be a non-negative integer" + (" or null" if optional else ""))
        copied = item.get("copied_from")
        if copied is not None and (not isinstance(copied, int) or isinstance(copied, bool)
                                   or not 0 < copied <= contract.MAX_ROW_ID):
            problems.add(where, "copied_from", f"must be an integer from 1 to {contract.MAX_ROW_ID} or null")
        _timestamp(problems, where, "created_at", item.get("created_at"), now)
        for end in ("since", "until"):  # the search's time window: any instant (an end may lie in the future)
            if item.get(end) is not None:
                _timestamp(problems, where, end, item[end], datetime.max.replace(tzinfo=timezone.utc) - CLOCK_SKEW)
        results = item.get("results") or []
        if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
            problems.add(where, "results", "must be a list of objects")
        limit, returned = item.get("limit"), item.get("returned_count")
        if _count(limit) and _count(returned) and returned > limit:
            problems.add(where, "returned_count", f"more than the row's limit ({returned} > {limit})")
        if _count(returned) and (item.get("top_uid") is None) != (returned == 0):
            problems.add(where, "top_uid", "must be the first returned fact's uid, and null exactly when "
                                           "returned_count is 0")


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _stored_uids(item: Any) -> list[tuple[str, Any]]:
    """(field, uid) of every fact a query-log row names: its top_uid, the facts it handed back, the inactive
    facts it matched."""
    if not isinstance(item, dict):
        return []
    named = [("top_uid", item.get("top_uid"))] if item.get("top_uid") is not None else []
    results = item.get("results")
    named += [("results", r.get("uid")) for r in results if isinstance(r, dict)] if isinstance(results, list) else []
    inactive = item.get("inactive_uids")
    named += [("inactive_uids", u) for u in inactive] if isinstance(inactive, list) else []
    return named


def _query_uids(items: list[Any]) -> set[str]:
    return {uid for item in items for _, uid in _stored_uids(item) if isinstance(uid, str)}


def _own(uow: UnitOfWork, profile_id: int, uids: set[str]) -> set[str]:
    return {uid for uid, owner in uow.facts.owners(uids).items() if owner == profile_id} if uids else set()


def _check_query_uids(problems: Problems, items: list[Any], known: set[str]) -> None:
    """A logged search names facts of its own profile only (an export holds all of them): a uid neither in the
    file nor in this profile is damage, or another profile's fact, which this profile's log must not name."""
    for index, item in enumerate(items):
        for field, uid in _stored_uids(item):
            if not isinstance(uid, str) or uid not in known:
                where = f"queries[{index}]" + (f" (id {item['id']})" if isinstance(item.get("id"), int) else "")
                problems.add(where, field, f"{uid!r} is neither a fact of this file nor of this profile")
