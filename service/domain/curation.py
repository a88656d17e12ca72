"""Curation signals for reviewers (issue 39): how often memory recalls each fact, which facts say nearly the
same thing, and retiring the extra ones.

- Recall counts are the query log's (the store keeps them in the transaction that logs each search); REST shows
  them on every fact body (reviewed()).
- Duplicate groups: the rule of service.domain.duplicates over the profile's active vectors of the current
  model, remembered until the profile's facts change (its fact_seq moves) — grouping is exact, so its cost grows
  with the square of the facts (bench/curation.py).
- resolve(): the kept fact stays; the others are retired in one unit of work, each with a reason naming the kept
  fact, or nothing is retired at all.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from service.clock import utcnow
from service.domain import duplicates, lifecycle, validation
from service.domain.models import Fact, FactStatus, ReviewedFact
from service.domain.ports.canonical import CanonicalStore, Facts
from service.domain.ports.records import FactRecord, to_fact
from service.domain.profiles import ProfileRef
from service.errors import Conflict, InvalidInput, NotFound

CACHED_GROUPINGS = 16  # profiles x thresholds remembered
RESOLVE_MAX = 100  # facts retired by one resolve

Grouped = duplicates.Group  # named apart: the service method `duplicates` shadows the module in its class


@dataclass(frozen=True)
class DuplicateGroup:
    facts: list[ReviewedFact]  # oldest first
    similarity: float  # the closest pair's cosine
    closest: tuple[str, str]
    keep: str  # the suggestion: the most recalled, then the newest
    command: str  # the CLI line that keeps `keep` and retires the others


@dataclass(frozen=True)
class DuplicateReport:
    threshold: float
    compared: int  # active facts with a vector of the current model
    without_vector: int  # active facts left out: no vector of this model (not embedded yet, or redacted)
    groups: list[DuplicateGroup]


def resolve_command(profile: str, keep: str, retire: Sequence[str]) -> str:
    return f"memory duplicates resolve {profile} --keep {keep} " + " ".join(f"--retire {uid}" for uid in retire)


def retire_reason(keep: str) -> str:
    return f"duplicate of {keep} (memory duplicates resolve)"


Position = int | tuple[int, int]  # where a page of facts starts: after a fact id, or after (recalled_count, id)


def page_position(facts: Facts, profile_id: int, order: str, before_id: int | None,
                  before_recall: tuple[int, int] | None) -> tuple[int | None, tuple[int, int] | None]:
    """The (before_id, before_recall) that page the `order` asked for. A cursor names a fact, whichever order
    made it: in newest order the id of a (count, id) cursor; in recall order the named fact's count now."""
    if order != "recalled":
        return (before_recall[1] if before_recall is not None else before_id), None
    if before_recall is not None or before_id is None:
        return None, before_recall
    named = facts.by_ids(profile_id, [before_id]).get(before_id)
    counted = facts.recalls(profile_id, [named.uid]) if named is not None else {}
    return None, (counted[named.uid][0] if named is not None and named.uid in counted else 0, before_id)


def next_position(facts: Facts, profile_id: int, order: str, last: FactRecord) -> Position:
    """The position after `last`, the last fact of a page that has more after it."""
    assert last.id is not None
    if order != "recalled":
        return last.id
    count, _at = facts.recalls(profile_id, [last.uid]).get(last.uid, (0, None))
    return count, last.id


class CurationService:
    def __init__(self, store: CanonicalStore, *, model_id: str, threshold: float) -> None:
        self.store = store
        self.model_id = model_id
        self.threshold = threshold
        self._groupings: OrderedDict[tuple[int, int, float], tuple[list[duplicates.Group], int, int]] = OrderedDict()
        self._lock = threading.Lock()

    def reviewed(self, profile: ProfileRef, facts: Sequence[Fact]) -> list[ReviewedFact]:
        """The facts with their recall counts (now)."""
        if not facts:
            return []
        with self.store.read() as uow:
            counts = uow.facts.recalls(profile.id, [f.uid for f in facts])
        return [ReviewedFact.of(f, counts.get(f.uid)) for f in facts]

    def duplicates(self, profile: ProfileRef, threshold: float | None = None) -> DuplicateReport:
        wanted = self.threshold if threshold is None else threshold
        groups, compared, without = self._grouping(profile, wanted)
        uids = [uid for g in groups for uid in g.uids]
        with self.store.read() as uow:
            rows = uow.facts.by_uids(profile.id, uids)
            counts = uow.facts.recalls(profile.id, uids)
        out = []
        for g in groups:
            members = [ReviewedFact.of(to_fact(rows[uid]), counts.get(uid)) for uid in g.uids if uid in rows]
            members = [f for f in members if f.status == FactStatus.ACTIVE]  # retired since it was grouped
            if len(members) < 2:
                continue
            keep = max(members, key=lambda f: (f.recalled_count, f.created_at, f.uid)).uid
            command = resolve_command(profile.name, keep, [f.uid for f in members if f.uid != keep])
            out.append(DuplicateGroup(members, g.similarity, g.closest, keep, command))
        return DuplicateReport(wanted, compared, without, out)

    def resolve(self, profile: ProfileRef, keep: str, retire: Sequence[str]) -> list[Fact]:
        """Retire `retire`, keeping `keep`: all or none, in one unit of work. Refuses a uid of another profile,
        a fact that is not active, the kept fact among those to retire, and repeats."""
        keep = validation.uid(keep)
        others = [validation.uid(uid) for uid in retire]
        if not others:
            raise InvalidInput("name at least one fact to retire (--retire UID)", param="retire")
        if len(others) > RESOLVE_MAX:
            raise InvalidInput(f"at most {RESOLVE_MAX} facts to retire at once", param="retire")
        if keep in others:
            raise InvalidInput(f"{keep} is the fact to keep; it cannot be retired too", param="retire")
        if len(set(others)) != len(others):
            raise InvalidInput("a fact is named twice in --retire", param="retire")
        now = utcnow()
        with self.store.changing(profile.id) as uow:
            rows = []
            for uid in [keep, *others]:
                row = uow.facts.get(profile.id, uid, for_update=True)
                if row is None:
                    owner = uow.facts.any_profile(uid)
                    raise NotFound(f"fact {uid} is not in profile {profile.name}"
                                   + (" (it belongs to another profile)" if owner is not None else ""), param="uid")
                if row.status != FactStatus.ACTIVE:
                    raise Conflict(f"fact {uid} is {row.status}, not active: nothing to resolve", param="uid")
                rows.append(row)
            for row in rows[1:]:
                lifecycle.retire(row, now, retire_reason(keep))
            return [to_fact(row) for row in rows[1:]]

    def _grouping(self, profile: ProfileRef, threshold: float) -> tuple[list[Grouped], int, int]:
        with self.store.read() as uow:
            record = uow.profiles.by_id(profile.id)
            seq = record.fact_seq if record is not None else 0
            key = (profile.id, seq, threshold)
            with self._lock:
                if key in self._groupings:
                    self._groupings.move_to_end(key)
                    return self._groupings[key]
            uids, matrix, without = uow.vectors.active_of(profile.id, self.model_id)
        found = (duplicates.group(uids, matrix, threshold), len(uids), without)
        with self._lock:
            self._groupings[key] = found
            while len(self._groupings) > CACHED_GROUPINGS:
                self._groupings.popitem(last=False)
        return found
