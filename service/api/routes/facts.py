from __future__ import annotations

import re
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from pydantic import WithJsonSchema

from service import contract
from service.api.deps import ProfileDep, ServicesDep
from service.api.params import WholeNumber
from service.web.errors import authenticated
from service.api.schemas import FactBody, FactsBody
from service.clock import isoformat
from service.domain import as_of as as_of_rules
from service.domain import validation, window
from service.contract import FACTS_PAGE_DEFAULT, FACTS_PAGE_MAX, KINDS, STATUSES, TAG_MAX, UID_MAX, FactStatus
from service.errors import InvalidInput

router = APIRouter(tags=["facts"])

KindLiteral = Literal[KINDS]  # type: ignore[valid-type]  # a Literal of a runtime tuple (contract.py keeps one list): fine at run time, which mypy cannot see
StatusLiteral = Literal[STATUSES]  # type: ignore[valid-type]  # a Literal of a runtime tuple (contract.py keeps one list): fine at run time, which mypy cannot see


# Every value of these forms is a page: the facts after that position. `f` + id: newest first; `r` + count + `.` +
# id: order=recalled (most recalled first, ties newest first).
CURSOR_PATTERN = r"^(f[0-9]{1,12}|r[0-9]{1,12}\.[0-9]{1,12})$"


def _cursor(position: int | tuple[int, int] | None) -> str | None:
    """The next page's cursor, None on the last page."""
    if position is None:
        return None
    return f"r{position[0]}.{position[1]}" if isinstance(position, tuple) else f"f{position}"


def _decode_cursor(cursor: str) -> int | tuple[int, int]:
    """The position of a cursor (a value past the newest row, or above any count, is the first page). Either
    form is a position in either order: the fact it names, and what comes after it."""
    if not re.fullmatch(CURSOR_PATTERN, cursor):
        raise InvalidInput("invalid cursor: pass next_cursor from the previous page", param="cursor")
    if cursor[0] == "f":
        return min(int(cursor[1:]), contract.MAX_ROW_ID + 1)
    count, fact_id = cursor[1:].split(".")
    return min(int(count), contract.MAX_ROW_ID + 1), min(int(fact_id), contract.MAX_ROW_ID + 1)


AS_OF_DOC = (
    "An instant, ISO 8601 (`2026-11-22T07:30:00Z`, an offset such as `+02:00`, fractions of a second); without "
    "an offset it is UTC; a date alone is 00:00 UTC of that day; future instants show the present. Anything "
    "else is a 400."
)
# Documented as RFC 3339 (what OpenAPI tools generate and check); the forms ISO 8601 adds (no offset, a space
# for the T) are accepted too, as the description says.
AsOfQuery = Annotated[str | None, Query(min_length=1, max_length=64, description=AS_OF_DOC), WithJsonSchema({
    "anyOf": [{"type": "string", "format": "date-time", "maxLength": 64}, {"type": "string", "format": "date", "maxLength": 10}],
    "description": AS_OF_DOC})]

CURSOR_DOC = (
    "Opaque: the `next_cursor` of the previous page of the same listing, passed back unchanged (`f` and digits, or "
    "with order=recalled `r`, digits, `.`, digits; either form names a fact, and the page starts after it in the "
    "order asked for). Any other value is a 400."
)
RECALLED_DOC = (
    "`never`: only the facts no logged search returned (status active unless `status` says otherwise): what "
    "nothing finds. `ever`: only those some search returned."
)
ORDER_DOC = (
    "`newest` (default): newest first. `recalled`: most recalled first (`recalled_count`, ties newest first; "
    "the counts now, also with `as_of`)."
)
TAG_QUERY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/+#-]*$"
WINDOW_DOC = (
    "written or last changed (`updated_at`, both ends included): an ISO 8601 date or date-time (a date is that "
    "whole UTC day; no offset means UTC) or a duration back from now (`30m`, `24h`, `7d`, `2w`). Not with `as_of`."
)
# Documented as what is read: an RFC 3339 date-time or date, or a duration (the ISO 8601 forms without an offset
# are accepted too, as for as_of). `since` after `until`, or either with as_of, is a 400 the schema cannot state.
_WINDOW_FORMS = [{"type": "string", "format": "date-time", "maxLength": contract.WINDOW_END_MAX},
                 {"type": "string", "format": "date", "maxLength": 10},
                 {"type": "string", "pattern": r"^\s*[0-9]{1,7}[mhdwMHDW]\s*$", "maxLength": contract.WINDOW_END_MAX}]
SinceQuery = Annotated[str | None, Query(min_length=1, max_length=contract.WINDOW_END_MAX,
                                         description=f"Only facts {WINDOW_DOC}"),
                       WithJsonSchema({"anyOf": _WINDOW_FORMS, "description": f"Only facts {WINDOW_DOC}"})]
UntilQuery = Annotated[str | None, Query(min_length=1, max_length=contract.WINDOW_END_MAX,
                                         description=f"Only facts {WINDOW_DOC} (the other end)"),
                       WithJsonSchema({"anyOf": _WINDOW_FORMS,
                                       "description": f"Only facts {WINDOW_DOC} (the other end)"})]


@router.get("/api/{profile}/facts", response_model_exclude_unset=True, responses=authenticated())
def list_facts(
    profile: ProfileDep,
    svc: ServicesDep,
    status: Annotated[StatusLiteral | None, Query()] = None,
    kind: Annotated[KindLiteral | None, Query()] = None,
    tag: Annotated[str | None, Query(min_length=1, max_length=TAG_MAX, pattern=TAG_QUERY_PATTERN,
                                     description=f"Facts carrying this tag (1-{TAG_MAX} characters of a-z 0-9 . _ : "
                                                 "/ + # -, starting with a letter or digit, case-insensitive).")]
    = None,
    limit: Annotated[int, Query(ge=1, le=FACTS_PAGE_MAX, description=f"Facts per page (1-{FACTS_PAGE_MAX})."),
                     WholeNumber]
    = FACTS_PAGE_DEFAULT,
    cursor: Annotated[str | None, Query(min_length=2, max_length=26, pattern=CURSOR_PATTERN,
                                        description=CURSOR_DOC)] = None,
    as_of: AsOfQuery = None,
    recalled: Annotated[Literal["never", "ever"] | None, Query(description=RECALLED_DOC)] = None,
    order: Annotated[Literal["newest", "recalled"], Query(description=ORDER_DOC)] = "newest",
    since: SinceQuery = None,
    until: UntilQuery = None,
) -> FactsBody:
    """Facts of the profile, newest first, any status unless filtered; page with next_cursor. Each carries
    `recalled_count` and `last_recalled_at` (from the query log, now). `recalled=never`: the active facts no
    search has returned; `order=recalled`: most recalled first. With `as_of`: the facts as they stood then
    (status then, default active; kind and tags then). `since`/`until`: only the facts written or last changed
    inside that window (service.domain.window)."""
    tag_value = validation.tag(tag, param="tag") if tag else None
    scope = window.parse(since, until)
    if scope and as_of is not None:
        raise InvalidInput("since/until select facts by when they last changed, which as_of views do not "
                           "show: leave out as_of or the window", param="since" if since is not None else "until")
    before = _decode_cursor(cursor) if cursor else None
    before_id = before if isinstance(before, int) else None
    before_recall = before if isinstance(before, tuple) else None
    if recalled == "never" and status is None:
        status = FactStatus.ACTIVE.value  # what nothing finds: among the facts a search could return
    if as_of is not None:
        at = as_of_rules.parse(as_of)
        facts, after = svc.as_of.page(profile, at, status=status, kind=kind, tag=tag_value, limit=limit,
                                      recalled=recalled, order=order, before_id=before_id,
                                      before_recall=before_recall)
        return FactsBody(profile=profile.name, as_of=isoformat(at), facts=svc.curation.reviewed(profile, facts),
                         next_cursor=_cursor(after))
    page, position = svc.facts.page(profile, status=status, kind=kind, tag=tag_value, limit=limit, recalled=recalled,
                                    order=order, window=scope, before_id=before_id, before_recall=before_recall)
    return FactsBody(profile=profile.name, facts=svc.curation.reviewed(profile, page), next_cursor=_cursor(position))


@router.get("/api/{profile}/facts/{uid}", response_model_exclude_unset=True, responses=authenticated(404))
def get_fact(
    profile: ProfileDep, svc: ServicesDep,
    uid: Annotated[str, Path(min_length=1, max_length=UID_MAX, description=f"A fact uid (at most {UID_MAX} characters, "
                                  "no NUL)."), WithJsonSchema({"type": "string", "minLength": 1, "maxLength": UID_MAX,
                                                               "pattern": "^[^\u0000]+$"})],
    as_of: AsOfQuery = None,
) -> FactBody:
    """One fact with its revisions, its whole supersession chain (oldest first) and its redaction, if any.
    With `as_of`: the fact as it stood then (revisions replaced by then, the chain members that existed then);
    404 with code `not_yet_created` when it did not exist yet."""
    at = as_of_rules.parse(as_of) if as_of is not None else None  # a bad as_of is a 400 whatever the uid
    detail = svc.facts.get(profile, uid)
    if at is not None:
        then = svc.as_of.get(profile, uid, at, detail.chain)
        fact, *chain = svc.curation.reviewed(profile, [then.fact, *then.chain])
        return FactBody(profile=profile.name, as_of=isoformat(then.at), fact=fact, revisions=then.revisions,
                        chain=chain, redaction=then.redaction)
    fact, *chain = svc.curation.reviewed(profile, [detail.fact, *detail.chain])
    return FactBody(profile=profile.name, fact=fact, revisions=detail.revisions, chain=chain,
                    redaction=detail.redaction)
