"""Memory as of a date: what the store believed at a past instant (REST only, not an MCP tool).

Nothing is deleted, so the state at any instant T follows from the rows: a fact exists from its created_at;
its title, kind and tags at T come from the revision valid then ([valid_from, valid_to)) or are its current
ones; it was retired at T when retired_at <= T, superseded when it was replaced at or before T (the successor
then exists too). Changes made exactly at T count as made. Text never changes in place (a text change is a new
fact), so the text is the fact's own, or the redaction marker once redacted (a redaction removes the words
from every date: that is its point).

`as_of` is ISO 8601 (`2026-11-22T07:30:00Z`, `+02:00` offsets, fractions); without an offset it is UTC; a date
alone is 00:00 UTC of that day. Instants in the future are allowed (they show the present).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from service import clock
from service.domain import instants, validation
from service.domain.curation import Position, next_position, page_position
from service.domain.models import Fact, FactStatus, Revision
from service.domain.ports.canonical import CanonicalStore
from service.domain.ports.records import FactRecord, RevisionRecord, to_fact, to_revision
from service.domain.profiles import ProfileRef
from service.domain.redaction import record_dict
from service.errors import InvalidInput, NotFound

AS_OF_MAX = instants.INSTANT_MAX
STATUSES = tuple(s.value for s in FactStatus)


class NotYetCreated(NotFound):
    """The fact exists now but did not exist yet at the instant asked for (404, code not_yet_created)."""

    code = "not_yet_created"


def parse(value: str) -> datetime:
    """An aware UTC datetime from the `as_of` parameter (service.domain.instants: RFC 3339 and the ISO 8601 forms
    Python reads, no offset UTC, a date alone 00:00 UTC), or a 400 naming the parameter."""
    try:
        return instants.read(value)
    except ValueError as exc:
        text = value.strip().upper() if isinstance(value, str) else ""
        raise InvalidInput(
            f"as_of must be an ISO 8601 timestamp such as 2026-11-22T07:30:00Z (no offset means UTC), "
            f"got {text[:AS_OF_MAX]!r}", param="as_of",
        ) from exc


def state_at(row: FactRecord, revisions: Sequence[RevisionRecord], at: datetime) -> Fact | None:
    """The fact as it stood at `at`, or None when it did not exist yet."""
    if row.created_at > at:
        return None
    current = to_fact(row)
    then = next((r for r in revisions if r.valid_from <= at < r.valid_to), None)
    retired = row.status == FactStatus.RETIRED and row.retired_at is not None and row.retired_at <= at
    superseded = row.status == FactStatus.SUPERSEDED and row.updated_at <= at
    status = FactStatus.RETIRED if retired else FactStatus.SUPERSEDED if superseded else FactStatus.ACTIVE
    changes = [row.created_at, *(r.valid_to for r in revisions if r.valid_to <= at)]
    if retired or superseded:
        changes.append(row.updated_at)
    return current.model_copy(update={
        "title": then.title if then else current.title,
        "kind": then.kind if then else current.kind,
        "tags": list(then.tags) if then else current.tags,
        "status": status.value,
        "updated_at": max(changes),
        "retired_at": current.retired_at if retired else None,
        "retire_reason": current.retire_reason if retired else None,
        "superseded_by": current.superseded_by if superseded else None,
    })


@dataclass(frozen=True)
class FactAsOf:
    at: datetime
    fact: Fact
    revisions: list[Revision]  # the earlier states replaced by then
    chain: list[Fact]  # the members of the supersession chain that existed then, as they stood then
    redaction: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {"as_of": clock.isoformat(self.at), "fact": self.fact.to_dict(),
                "revisions": [r.to_dict() for r in self.revisions], "chain": [f.to_dict() for f in self.chain],
                "redaction": self.redaction}


class AsOfService:
    def __init__(self, store: CanonicalStore) -> None:
        self.store = store

    def page(self, profile: ProfileRef, at: datetime, *, status: str | None, kind: str | None, tag: str | None,
             limit: int, before_id: int | None, recalled: str | None = None, order: str = "newest",
             before_recall: tuple[int, int] | None = None) -> tuple[list[Fact], Position | None]:
        """Up to `limit` facts whose status at `at` was `status` (default active) and whose kind and tags then
        pass the filters, newest first (or most recalled first; `recalled` as for FactService.page, the counts
        now); and the position to page on (None on the last page)."""
        wanted_status = status or FactStatus.ACTIVE.value
        if wanted_status not in STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(STATUSES)}", param="status")
        out: list[tuple[FactRecord, Fact]] = []
        batch = max(limit + 1, 100)
        with self.store.read() as uow:
            before_id, before_recall = page_position(uow.facts, profile.id, order, before_id, before_recall)
            while len(out) <= limit:
                rows = uow.facts.at(profile.id, at, status=wanted_status, before_id=before_id, limit=batch,
                                    recalled=recalled, order=order, before_recall=before_recall)
                revisions = uow.revisions.of_facts([r.id for r in rows if r.id is not None])
                for row in rows:
                    assert row.id is not None
                    fact = state_at(row, revisions[row.id], at)
                    if fact is not None and (kind is None or fact.kind == kind) and (tag is None or tag in fact.tags):
                        out.append((row, fact))
                        if len(out) > limit:
                            break
                if len(rows) < batch:
                    break
                position = next_position(uow.facts, profile.id, order, rows[-1])
                before_id, before_recall = (None, position) if isinstance(position, tuple) else (position, None)
            page = out[:limit]
            more = len(out) > limit
            return [f for _, f in page], next_position(uow.facts, profile.id, order, page[-1][0]) if more else None

    def get(self, profile: ProfileRef, uid: str, at: datetime, chain: list[Fact]) -> FactAsOf:
        """`chain`: the fact's whole supersession chain now (FactService.get)."""
        uid = validation.uid(uid)
        with self.store.read() as uow:
            rows = uow.facts.by_uids(profile.id, [c.uid for c in chain] or [uid])
            row = rows.get(uid)
            if row is None or row.id is None:
                raise NotFound(f"no fact {uid!r} in this profile", param="uid")
            if row.created_at > at:
                raise NotYetCreated(
                    f"fact {uid} did not exist yet at {clock.isoformat(at)}: it was created at "
                    f"{clock.isoformat(row.created_at)}", param="as_of")
            revisions = uow.revisions.of_facts([r.id for r in rows.values() if r.id is not None])
            fact = state_at(row, revisions[row.id], at)
            assert fact is not None
            then = [state_at(rows[c.uid], revisions[rows[c.uid].id or 0], at) for c in chain if c.uid in rows]
            record = uow.redactions.of(row.id) if row.redacted_at else None
            return FactAsOf(
                at=at, fact=fact,
                revisions=[to_revision(r) for r in revisions[row.id] if r.valid_to <= at],
                chain=[f for f in then if f is not None], redaction=record_dict(record),
            )
