"""The store's shape for reviewers: counts by status and kind, tags, per-day growth, span."""

from __future__ import annotations

from typing import Any

from service import clock
from service.domain import reports, validation
from service.domain.profiles import ProfileRef
from service.domain.ports import Sourced
from service.domain.querylog import from_mirror
from service.contract import DAYS_DEFAULT, DAYS_MAX
from service.store import aggregates as agg
from service.store.engine import Database


class StoreStats:
    def __init__(self, db: Database) -> None:
        self.db = db

    def stats_from(self, profile: ProfileRef, days: int, backend: object) -> Sourced:
        """The stats from the backend's mirror when it has one (MEMORY_SEARCH=opensearch), else from here."""
        return from_mirror(backend, "store_stats", profile, days, self.stats)

    def stats(self, profile: ProfileRef, days: int = DAYS_DEFAULT) -> dict[str, Any]:
        days = validation.bounded_int(days, low=1, high=DAYS_MAX, param="days")
        first, last = clock.window(days)
        with self.db.read() as session:
            counts = agg.fact_counts(session, profile.id)
            tags = agg.top_fact_tags(session, profile.id)
            per_day = agg.facts_daily(session, profile.id, first, last)
            oldest, newest = agg.fact_span(session, profile.id)

        return reports.stats_body(
            profile=profile.name, days=days, first=first, last=last, by_status=reports.status_totals(counts),
            active_kinds=reports.active_kinds(counts), top_tags=tags,
            created_daily={d.isoformat(): created for d, (created, _) in per_day.items()},
            retired_daily={d.isoformat(): retired for d, (_, retired) in per_day.items()},
            oldest=clock.isoformat(oldest), newest=clock.isoformat(newest))
