"""The store's shape for reviewers: counts by status and kind, tags, per-day growth, span."""

from __future__ import annotations

from typing import Any

from service import clock
from service.domain import reports, validation
from service.domain.profiles import ProfileRef
from service.domain.ports import AggregateMirror, Sourced
from service.domain.ports.canonical import CanonicalStore
from service.domain.querylog import sourced
from service.contract import DAYS_DEFAULT, DAYS_MAX


class StoreStats:
    def __init__(self, store: CanonicalStore, mirror: AggregateMirror | None = None) -> None:
        self.store = store
        self.mirror = mirror  # the search backend's, when it has one (Capabilities.aggregates)

    def sourced_stats(self, profile: ProfileRef, days: int) -> Sourced:
        """The stats from the search backend's mirror when it has one (MEMORY_SEARCH=opensearch), else from
        the canonical store."""
        return sourced(self.mirror.store_stats if self.mirror else None, profile, days, self.stats)

    def stats(self, profile: ProfileRef, days: int = DAYS_DEFAULT) -> dict[str, Any]:
        days = validation.bounded_int(days, low=1, high=DAYS_MAX, param="days")
        first, last = clock.window(days)
        with self.store.read() as uow:
            agg = uow.aggregates
            counts = agg.fact_counts(profile.id)
            tags = agg.top_fact_tags(profile.id)
            per_day = agg.facts_daily(profile.id, first, last)
            oldest, newest = agg.fact_span(profile.id)

        return reports.stats_body(
            profile=profile.name, days=days, first=first, last=last, by_status=reports.status_totals(counts),
            active_kinds=reports.active_kinds(counts), top_tags=tags,
            created_daily={d.isoformat(): created for d, (created, _) in per_day.items()},
            retired_daily={d.isoformat(): retired for d, (_, retired) in per_day.items()},
            oldest=clock.isoformat(oldest), newest=clock.isoformat(newest))
