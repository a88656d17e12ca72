"""The REST success bodies: each route returns the model it declares (FastAPI checks it and renders its
schema in /openapi.json; the schemathesis test checks every answer against it). A fact and its revisions are
the domain's own models (service.domain.models), declared once for every face."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from service.contract import BUCKET_LABELS, DAYS_MAX, INACTIVE_SHOWN
from service.domain.models import Fact, Kind, ReviewedFact, Revision, Status
from service.domain.oauth.grants import GrantInfo


class ProfileItem(BaseModel):
    name: str
    facts: int = Field(ge=0, description="Active facts.")
    created_at: str


class ProfilesBody(BaseModel):
    profiles: list[ProfileItem]


class QueryRow(BaseModel):
    id: int
    query: str
    tags: list[str]
    kind: Kind | None
    limit: int
    matched_count: int | None = Field(description="Null when not known exactly (never a guess).")
    returned_count: int
    top_uid: str | None
    inactive_matched: int | None
    mode: str
    latency_ms: float
    created_at: str
    since: str | None = Field(description="The search's time window on the facts' updated_at, as resolved when it "
                                          "ran (a duration or a date turned into an instant); null: open.")
    until: str | None = Field(description="The window's other end, included; null: open.")


class QueryResult(BaseModel):
    uid: str
    score: float | None
    lexical: float | None
    vector: float | None


class InactiveMatch(BaseModel):
    uid: str
    title: str = Field(description="The fact's title now.")
    status: Status


class QueryRowWithResults(QueryRow):
    results: list[QueryResult]
    inactive_matches: list[InactiveMatch] = Field(
        description=f"Retired or superseded facts this search also matched (at most {INACTIVE_SHOWN}, closest first): what "
                    "memory once knew. Empty for searches logged before this was kept.")


class QueriesBody(BaseModel):
    profile: str
    queries: list[QueryRow]


class QueryBody(BaseModel):
    profile: str
    query: QueryRowWithResults


class Totals(BaseModel):
    searches: int
    zero_match: int
    unknown_matched: int
    distinct_queries: int
    retired_only: int


class SummaryDay(BaseModel):
    date: str
    searches: int
    zero_match: int


class Bucket(BaseModel):
    label: Literal[BUCKET_LABELS]  # type: ignore[valid-type]  # a Literal of a runtime tuple (contract.py keeps one list): fine at run time, which mypy cannot see
    count: int


class TopQuery(BaseModel):
    query: str
    count: int
    zero_match: int


class TagCount(BaseModel):
    tag: str
    count: int


class TopFact(BaseModel):
    uid: str
    count: int
    title: str | None


class Window(BaseModel):
    """The whole UTC days an answer covers: the fields the summary and the gap bodies start with."""

    model_config = {"populate_by_name": True}  # "from" is a Python keyword: the field is from_, aliased

    profile: str
    days: int = Field(ge=1, le=DAYS_MAX)
    from_: str = Field(alias="from")
    to: str


class SummaryBody(Window):
    totals: Totals
    daily: list[SummaryDay]
    match_buckets: list[Bucket]
    top_queries: list[TopQuery]
    top_tags: list[TagCount]
    top_facts: list[TopFact]


class GapQuery(BaseModel):
    query: str
    count: int = Field(description="Searches with exactly this text.")


class KindCount(BaseModel):
    kind: Kind
    count: int


class RetiredFact(BaseModel):
    uid: str
    count: int = Field(description="Searches of the group that matched this fact.")
    title: str | None = Field(description="The fact's title now (null if the fact is not in the profile).")
    status: Status | None


class GapGroup(BaseModel):
    id: str = Field(description="Stable while the group's representative stays the same; "
                                "GET /api/{profile}/queries/gaps/{id} lists its searches.")
    representative: str = Field(description="The most searched text of the group's leading form.")
    count: int = Field(description="Searches in the group.")
    queries: list[GapQuery] = Field(description="Distinct texts, most searched first (ties by text).")
    first_seen: str
    last_seen: str
    kinds: list[KindCount] = Field(description="Kind filters of the group's searches (searches without one are "
                                               "not counted).")
    tags: list[TagCount] = Field(description="Tag filters of the group's searches.")
    retired_facts: list[RetiredFact] | None = Field(
        default=None, description="retired_only groups: the retired or superseded facts that would have matched "
                                  "(at most 10, most matched first).")


class GapSection(BaseModel):
    searches: int = Field(description="Searches in this section over the window.")
    distinct_queries: int
    grouped_queries: int = Field(description="Distinct texts grouped (at most 2000, the most searched).")
    grouped_searches: int
    capped: bool = Field(description="True when there were more distinct texts than were grouped.")
    lexical_tail: int = Field(description="Semantic grouping: forms placed by the lexical rule because the "
                                          "embedding budget was spent (0 otherwise).")
    groups: list[GapGroup] = Field(description="Most searched first, ties by representative.")


class Grouping(BaseModel):
    method: Literal["semantic", "lexical"]
    threshold: float
    model: str | None = Field(default=None, description="semantic: the embedder's model id.")
    embedded_forms_max: int | None = None
    tail_rule: str | None = None
    rule: str | None = None
    reason: str | None = Field(default=None, description="lexical: why not semantic.")


class GapsBody(Window):
    grouping: Grouping
    zero_match: GapSection = Field(description="Zero-match searches that no fact matched, not even a retired one.")
    retired_only: GapSection = Field(description="Zero-match searches that only retired or superseded facts "
                                                 "matched.")


class GapSearchesBody(Window):
    section: Literal["zero_match", "retired_only"]
    grouping: Grouping
    group: GapGroup
    total: int = Field(description="The group's searches in the window (the list holds at most `limit`).")
    queries: list[QueryRow] = Field(description="The group's searches, newest first.")


class StatsDay(BaseModel):
    date: str
    created: int
    retired: int


class StatsBody(BaseModel):
    profile: str
    days: int = Field(ge=1, le=DAYS_MAX)
    facts: int
    retired: int
    superseded: int
    kinds: dict[Kind, int]
    top_tags: list[TagCount]
    daily: list[StatsDay]
    oldest: str | None
    newest: str | None


class FactsBody(BaseModel):
    profile: str
    as_of: str | None = Field(None, description="With `as_of`: the instant (UTC); the facts are as they stood "
                                                "then (status, title, kind and tags then).")
    facts: list[ReviewedFact]
    next_cursor: str | None = Field(description="Pass as `cursor` to get the next page; null on the last page.")


class Redaction(BaseModel):
    redacted_at: str
    operator: str = Field(description="Who ran `memory redact`.")
    reason: str
    text_sha256: str = Field(description="SHA-256 (hex) of the removed text, UTF-8.")
    title_sha256: str = Field(description="SHA-256 (hex) of the removed title, UTF-8.")
    revisions_redacted: int = Field(description="Earlier titles (revisions) replaced by the marker.")
    queries_redacted: int = Field(description="Query-log rows whose query was replaced by a marker.")
    retired: bool = Field(description="The fact was active and the redaction retired it.")


class FactBody(BaseModel):
    profile: str
    as_of: str | None = Field(None, description="With `as_of`: the instant (UTC) the fact, its revisions (those "
                                                "replaced by then) and its chain (members that existed then) "
                                                "are shown at.")
    fact: ReviewedFact
    revisions: list[Revision]
    chain: list[ReviewedFact] = Field(description="The whole supersession chain, oldest first.")
    redaction: Redaction | None = Field(None, description="Set when the fact's words were removed by "
                                                          "`memory redact`: who, when, why.")


class DuplicateGroupBody(BaseModel):
    similarity: float = Field(description="Cosine of the group's closest pair.")
    closest: list[str] = Field(min_length=2, max_length=2, description="The uids of the closest pair.")
    keep: str = Field(description="The suggested fact to keep: the most recalled, then the newest.")
    command: str = Field(description="The CLI line that keeps `keep` and retires the others of the group.")
    facts: list[ReviewedFact] = Field(min_length=2, description="The group's active facts, oldest first.")


class DuplicatesBody(BaseModel):
    profile: str
    threshold: float = Field(description="The cosine at or above which two facts count as near-duplicates.")
    compared: int = Field(ge=0, description="Active facts compared (those with a vector of the current model).")
    without_vector: int = Field(ge=0, description="Active facts left out: no vector of the current model yet "
                                                  "(being embedded) or none at all (redacted).")
    groups: list[DuplicateGroupBody] = Field(description="Closest pair first. A fact with no near-duplicate is "
                                                         "in none.")


class HealthBody(BaseModel):
    status: Literal["ok"]


class ReadyBody(BaseModel):
    ready: bool
    degraded: bool = Field(default=False, description=(
        "Serving, but not fully: searches answered lexically from the canonical store, a permission missing, the "
        "outbox lagging... Still 200 unless MEMORY_READY_WHEN_DEGRADED=false."))
    degraded_reasons: list[str] | None = Field(default=None, description=(
        "Why degraded (loopback callers or with a valid token)."))
    checks: dict[str, dict[str, Any]] = Field(
        description="Each check's `state`; details (counts, errors) only for loopback callers or with a valid token.")
    reason: str | None = None


class GrantsBody(BaseModel):
    profile: str
    grants: list[GrantInfo]


class GrantBody(BaseModel):
    profile: str
    grant: GrantInfo
