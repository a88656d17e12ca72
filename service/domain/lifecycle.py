"""A fact's status transitions, written once: the rules every path that changes a fact (memory_update and
memory_forget, curation's resolve, redaction, import aside: it copies what an export says) applies to the row.

Nothing is deleted: retiring keeps the row with when and why; superseding keeps it and names its successor;
amending changes title, kind or tags in place (the caller keeps the old ones as a revision). Each sets
updated_at. The rows are the store's (ports.records.FactRecord); the store records the change itself when
the unit of work that holds them commits (ports.canonical, `changing`).
"""

from __future__ import annotations

from datetime import datetime

from service.contract import FactStatus
from service.domain.ports.records import FactRecord


def retire(row: FactRecord, now: datetime, reason: str | None) -> None:
    """No longer true, or no longer wanted: retired now, for `reason` (None: none given)."""
    row.status, row.retired_at, row.retired_day = FactStatus.RETIRED, now, now.date()
    row.retire_reason, row.updated_at = reason, now


def supersede(row: FactRecord, successor_uid: str, now: datetime) -> None:
    """Its text changed: the new text lives on under `successor_uid`, and this row points there."""
    row.status, row.superseded_by, row.updated_at = FactStatus.SUPERSEDED, successor_uid, now


def amend(row: FactRecord, *, title: str, kind: str, tags: list[str], now: datetime) -> None:
    """Title, kind or tags changed in place (the same text: the same fact, the same uid)."""
    row.title, row.kind, row.tags, row.updated_at = title, kind, tags, now
