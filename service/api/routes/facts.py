from __future__ import annotations

import base64
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query

from service.api.deps import ProfileDep, ServicesDep
from service.api.errors import responses
from service.domain import validation
from service.domain.models import KINDS
from service.errors import InvalidInput
from service.store import repository as repo

router = APIRouter(tags=["facts"])

KindLiteral = Literal["user", "preference", "project", "reference", "research", "decision"]
assert set(KindLiteral.__args__) == set(KINDS)  # type: ignore[attr-defined]


def _encode_cursor(fact_id: int) -> str:
    return base64.urlsafe_b64encode(f"f:{fact_id}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, value = raw.partition(":")
        if prefix != "f" or not value.isascii() or not value.isdigit() or not 0 < int(value) <= validation.MAX_ROW_ID:
            raise ValueError(raw)
        return int(value)
    except ValueError as exc:
        raise InvalidInput("invalid cursor: pass next_cursor from the previous page", param="cursor") from exc


@router.get("/api/{profile}/facts", responses=responses(400, 401))
def list_facts(
    profile: ProfileDep,
    svc: ServicesDep,
    status: Annotated[Literal["active", "retired", "superseded"] | None, Query()] = None,
    kind: Annotated[KindLiteral | None, Query()] = None,
    tag: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """Facts of the profile, newest first, any status unless filtered; page with next_cursor."""
    tag_value = validation.tags([tag])[0] if tag else None
    before = _decode_cursor(cursor) if cursor else None
    with svc.db.read() as session:
        rows = repo.list_facts(
            session, profile.id, status=status, kind=kind, tag=tag_value, limit=limit + 1, before_id=before
        )
    page = rows[:limit]
    next_cursor = _encode_cursor(page[-1].id) if len(rows) > limit and page[-1].id is not None else None
    return {"profile": profile.name, "facts": [repo.to_fact(r).to_dict() for r in page], "next_cursor": next_cursor}


@router.get("/api/{profile}/facts/{uid}", responses=responses(401, 404))
def get_fact(
    profile: ProfileDep, svc: ServicesDep, uid: Annotated[str, Path(max_length=40)]
) -> dict[str, Any]:
    """One fact with its revisions and its whole supersession chain (oldest first)."""
    return {"profile": profile.name, **svc.facts.get(profile, uid).to_dict()}
