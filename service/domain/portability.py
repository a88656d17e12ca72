"""Export and import of a profile's facts (every status, revisions, supersession links, timestamps)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlmodel import col, select

from service import clock
from service.domain import validation
from service.domain.models import FactStatus
from service.domain.profiles import ProfileRef
from service.errors import Conflict, InvalidInput
from service.store import repository as repo
from service.store.engine import Database
from service.store.tables import FactRevision, FactRow

FORMAT = "memory-export/1"


def export_profile(db: Database, profile: ProfileRef) -> dict[str, Any]:
    with db.read() as session:
        rows = session.exec(select(FactRow).where(FactRow.profile_id == profile.id).order_by(col(FactRow.id))).all()
        facts = []
        for row in rows:
            assert row.id is not None
            item = repo.to_fact(row).to_dict()
            item["revisions"] = [r.to_dict() for r in repo.revisions_of(session, row.id)]
            facts.append(item)
    return {"format": FORMAT, "profile": profile.name, "exported_at": clock.isoformat(clock.utcnow()),
            "facts": facts}


def read_document(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT or not isinstance(
        document.get("facts"), list
    ):
        raise InvalidInput(f"{path} is not a `memory export` document ({FORMAT})")
    return document


def _ts(value: Any, field: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise InvalidInput(f"bad timestamp in {field}: {value!r}") from exc
    if parsed.tzinfo is None:
        raise InvalidInput(f"timestamp without UTC offset in {field}: {value!r}")
    return parsed


def import_profile(db: Database, profile: ProfileRef, document: dict[str, Any]) -> dict[str, int]:
    """All-or-nothing: every fact is validated first; uids already in this profile are skipped."""
    imported = skipped = 0
    with db.write() as session:
        seq = repo.lock_profile(session, profile.id)
        for item in document["facts"]:
            uid = validation.uid(str(item.get("uid", "")))
            existing = session.exec(select(FactRow).where(FactRow.uid == uid)).first()
            if existing is not None:
                if existing.profile_id != profile.id:
                    raise Conflict(f"uid {uid} already belongs to another profile; nothing was imported")
                skipped += 1
                continue
            status = str(item.get("status", ""))
            if status not in {s.value for s in FactStatus}:
                raise InvalidInput(f"fact {uid}: unknown status {status!r}")
            created, updated = _ts(item.get("created_at"), "created_at"), _ts(item.get("updated_at"), "updated_at")
            retired = _ts(item["retired_at"], "retired_at") if item.get("retired_at") else None
            row = FactRow(
                profile_id=profile.id, uid=uid, title=validation.title(item.get("title", "")),
                text=validation.text(item.get("text", "")), kind=validation.kind(item.get("kind", "")),
                tags=validation.tags(item.get("tags") or []), status=status, created_at=created, updated_at=updated,
                retired_at=retired, retire_reason=item.get("retire_reason"), supersedes=item.get("supersedes"),
                superseded_by=item.get("superseded_by"), created_day=clock.day_of(created), retired_day=clock.day_of(retired) if retired else None,
                change_seq=seq,
            )
            session.add(row)
            session.flush()
            repo.sync_fact_tags(session, row)
            assert row.id is not None
            for rev in item.get("revisions") or []:
                session.add(FactRevision(
                    profile_id=profile.id, fact_id=row.id, revision=int(rev["revision"]),
                    title=validation.title(rev["title"]), kind=validation.kind(rev["kind"]),
                    tags=validation.tags(rev.get("tags") or []), valid_from=_ts(rev["valid_from"], "valid_from"),
                    valid_to=_ts(rev["valid_to"], "valid_to"),
                ))
            imported += 1
    return {"imported": imported, "skipped": skipped}
