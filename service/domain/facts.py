"""The fact lifecycle, in one place for every face: write, supersede, amend, retire, read.

Rules (docs/agents.md, "The tools in detail": Lifecycle):
- write: a new active fact under a new uid.
- update with changed text: a new active fact (new uid, supersedes = old uid) replaces the old one, which
  becomes superseded (superseded_by = new uid). Both rows survive.
- update of title/kind/tags only: amended in place (same uid), previous values kept as a revision.
- update that changes nothing: no-op.
- forget: retired (soft), with retired_at and reason; forgetting a retired fact returns it unchanged.
- update/forget of a superseded fact, update of a retired fact: errors naming what to do instead.
Each call is one unit of work of the canonical store (one transaction), so a crash never leaves half a
supersession.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any


from service.domain.window import ANY, Window
from service import ids
from service.contract import RECENT_LIMIT_DEFAULT, RECENT_LIMIT_MAX
from service.clock import utcnow
from service.domain import lifecycle, validation
from service.domain.curation import Position, next_position, page_position
from service.domain.late import Embedding
from service.domain.models import Fact, FactStatus, Revision, UpdateResult, WriteResult, embedding_text
from service.domain.embed_gate import EmbedGate
from service.domain.hits import facts_of
from service.domain.ports import Embedder, SearchBackend
from service.domain.ports.canonical import CanonicalStore, Facts, UnitOfWork
from service.domain.ports.records import FactRecord, to_fact, to_revision
from service.domain.profiles import ProfileRef
from service.domain.redaction import record_dict
from service.errors import Conflict, EmbeddingUnavailable, NotFound

log = logging.getLogger(__name__)

SIMILAR_LIMIT = 3


@dataclass(frozen=True)
class FactDetail:
    fact: Fact
    revisions: list[Revision]
    chain: list[Fact]  # the whole supersession chain, oldest first, this fact included
    redaction: dict[str, Any] | None = None  # who removed its words, when and why (`memory redact`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fact": self.fact.to_dict(),
            "revisions": [r.to_dict() for r in self.revisions],
            "chain": [f.to_dict() for f in self.chain],
            "redaction": self.redaction,
        }


class FactService:
    def __init__(
        self,
        store: CanonicalStore,
        embedder: Embedder,
        search: SearchBackend,
        gate: EmbedGate | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.search = search
        self.gate = gate or EmbedGate(embedder)

    # --- commands ---------------------------------------------------------------------------------

    def write(self, profile: ProfileRef, *, title: str, text: str, kind: str, tags: list[str] | None) -> WriteResult:
        title, text, kind = validation.title(title), validation.text(text), validation.kind(kind)
        clean_tags = validation.tags(tags)
        vector = self._embed(title, text, clean_tags)
        now = utcnow()
        fact = self.store.add_fact({
            "profile_id": profile.id, "uid": ids.new_fact_uid(), "title": title, "text": text, "kind": kind,
            "tags": clean_tags, "status": FactStatus.ACTIVE.value, "created_at": now, "updated_at": now,
            "created_day": now.date(),
        }, vector, self.embedder.model_id)  # the search index hears it from the store (after_commit)
        similar = self._similar(profile, fact.uid)
        return WriteResult(fact=fact, similar=similar)

    def update(
        self,
        profile: ProfileRef,
        uid: str,
        *,
        text: str | None = None,
        title: str | None = None,
        kind: str | None = None,
        tags: list[str] | None = None,
    ) -> UpdateResult:
        uid = validation.uid(uid)
        new_text = validation.text(text) if text is not None else None
        new_title = validation.title(title) if title is not None else None
        new_kind = validation.kind(kind) if kind is not None else None
        new_tags = validation.tags(tags) if tags is not None else None

        # Embed outside the transaction (it may take a while); used only if the locked row agrees.
        with self.store.read() as uow:
            before = uow.facts.get(profile.id, uid)
        vector, embedded_for = None, None
        if before is not None and before.status == FactStatus.ACTIVE:
            final = embedding_text(new_title or before.title, new_text or before.text,
                                   new_tags if new_tags is not None else before.tags)
            if final != embedding_text(before.title, before.text, before.tags):
                vector, embedded_for = self._embed_text(final), final

        now = utcnow()
        with self.store.changing(profile.id) as uow:
            row = self._mutable_row(uow.facts, profile, uid, action="update")
            if row.status == FactStatus.RETIRED:
                raise Conflict(
                    f"fact {uid} is retired and cannot be updated; record the current knowledge with memory_write",
                    param="uid",
                )
            final_title, final_text = new_title or row.title, new_text or row.text
            final_kind = new_kind or row.kind
            # Tags are a set of labels: the same ones in another order change nothing (no revision).
            final_tags = new_tags if new_tags is not None and set(new_tags) != set(row.tags) else list(row.tags)
            embeds = embedding_text(final_title, final_text, final_tags)
            vec = vector if embedded_for == embeds else None

            if final_text != row.text:
                successor = uow.facts.new(
                    profile_id=profile.id, uid=ids.new_fact_uid(), title=final_title, text=final_text,
                    kind=final_kind, tags=final_tags, status=FactStatus.ACTIVE, created_at=now, updated_at=now,
                    created_day=now.date(), supersedes=row.uid,
                )
                lifecycle.supersede(row, successor.uid, now)
                self._store_vector(uow, successor, vec, now)
                result = UpdateResult(fact=to_fact(successor), superseded_uid=row.uid, changed=True)
            elif (final_title, final_kind, final_tags) != (row.title, row.kind, list(row.tags)):
                assert row.id is not None
                uow.revisions.new(
                    profile_id=profile.id, fact_id=row.id, revision=uow.revisions.next_number(row.id),
                    title=row.title, kind=row.kind, tags=list(row.tags), valid_from=row.updated_at, valid_to=now,
                )
                # a new title, or a tag the words do not say, changes what is embedded (models.embedding_text)
                reembedded = embeds != embedding_text(row.title, row.text, row.tags)
                lifecycle.amend(row, title=final_title, kind=final_kind, tags=final_tags, now=now)
                if reembedded:
                    self._store_vector(uow, row, vec, now)
                result = UpdateResult(fact=to_fact(row), superseded_uid=None, changed=True)
            else:
                return UpdateResult(fact=to_fact(row), superseded_uid=None, changed=False)
        return result

    def forget(self, profile: ProfileRef, uid: str, *, reason: str | None = None) -> Fact:
        uid, reason = validation.uid(uid), validation.reason(reason)
        now = utcnow()
        with self.store.changing(profile.id) as uow:
            row = self._mutable_row(uow.facts, profile, uid, action="forget")
            if row.status == FactStatus.RETIRED:
                return to_fact(row)
            lifecycle.retire(row, now, reason)
            return to_fact(row)

    # --- queries ----------------------------------------------------------------------------------

    def recent(self, profile: ProfileRef, *, limit: int = RECENT_LIMIT_DEFAULT, kind: str | None = None) -> list[Fact]:
        limit = validation.bounded_int(limit, low=1, high=RECENT_LIMIT_MAX, param="limit")
        kind = validation.kind(kind) if kind is not None else None  # "" is an error, not 'any kind'
        with self.store.read() as uow:
            return [to_fact(r) for r in uow.facts.recent(profile.id, limit=limit, kind=kind)]

    def page(self, profile: ProfileRef, *, status: str | None, kind: str | None, tag: str | None, limit: int,
             before_id: int | None, recalled: str | None = None, order: str = "newest",
             before_recall: tuple[int, int] | None = None,
             window: Window = ANY) -> tuple[list[Fact], Position | None]:
        """Facts of any status, newest first (order "recalled": most recalled first, ties newest first),
        `limit` of them after the position given; and the position of the next page (None on the last page):
        a fact id, or (recalled_count, id) with order "recalled". recalled "never" / "ever": facts no logged
        search returned / some did."""
        with self.store.read() as uow:
            before_id, before_recall = page_position(uow.facts, profile.id, order, before_id, before_recall)
            rows = uow.facts.page(profile.id, status=status, kind=kind, tag=tag, limit=limit + 1,
                                  before_id=before_id, recalled=recalled, order=order, before_recall=before_recall,
                                  window=window)
            page = rows[:limit]
            more = len(rows) > limit and page[-1].id is not None
            return [to_fact(r) for r in page], next_position(uow.facts, profile.id, order, page[-1]) if more else None

    def count(self, profile: ProfileRef, status: str | None = "active") -> int:
        with self.store.read() as uow:
            return uow.facts.count(profile.id, status)

    def get(self, profile: ProfileRef, uid: str) -> FactDetail:
        validation.no_nul(uid, "uid")  # a 400 on both stores (PostgreSQL cannot even compare it); else 404
        with self.store.read() as uow:
            row = uow.facts.get(profile.id, uid)
            if row is None:
                raise NotFound(f"no fact {uid!r} in this profile", param="uid")
            assert row.id is not None
            return FactDetail(
                fact=to_fact(row), revisions=[to_revision(r) for r in uow.revisions.of(row.id)],
                chain=self._chain(uow.facts, row),
                redaction=record_dict(uow.redactions.of(row.id)) if row.redacted_at else None,
            )

    # --- helpers ----------------------------------------------------------------------------------

    def _mutable_row(self, facts: Facts, profile: ProfileRef, uid: str, *, action: str) -> FactRecord:
        row = facts.get(profile.id, uid, for_update=True)
        if row is None:
            raise NotFound(
                f"unknown uid {uid!r} in this profile; find the fact with memory_search or memory_recent first",
                param="uid",
            )
        if row.status == FactStatus.SUPERSEDED:
            raise Conflict(self._superseded_advice(facts, row, action), param="uid")
        return row

    def _superseded_advice(self, facts: Facts, row: FactRecord, action: str) -> str:
        """Names the fact that replaced it and, when that one was replaced in turn, the chain's latest version;
        the advice leads to a fact the action can take (or says there is none)."""
        said = f"fact {row.uid} was superseded by {row.superseded_by}"
        later = self._walk(facts, row, "superseded_by", {row.uid})
        if not later:
            return f"{said}; {action} {row.superseded_by} instead"
        latest = later[-1]
        if latest.uid != row.superseded_by:
            said += f", whose latest version is {latest.uid}"
        if latest.status == FactStatus.RETIRED:
            then = "record the current knowledge with memory_write" if action == "update" else "nothing left to forget"
            return f"{said}, retired; {then}"
        return f"{said}; {action} {latest.uid} instead"

    def _chain(self, facts: Facts, row: FactRecord) -> list[Fact]:
        seen = {row.uid}
        back = self._walk(facts, row, "supersedes", seen)
        forward = self._walk(facts, row, "superseded_by", seen)
        return [to_fact(r) for r in [*reversed(back), row, *forward]]

    @staticmethod
    def _walk(facts: Facts, row: FactRecord, link: str, seen: set[str]) -> list[FactRecord]:
        """The facts reached by following `link` (supersedes or superseded_by) from row, nearest first."""
        found: list[FactRecord] = []
        cursor = row
        while (uid := getattr(cursor, link)) and uid not in seen:
            nxt = facts.get(row.profile_id, uid)
            if nxt is None:
                break
            found.append(nxt)
            seen.add(nxt.uid)
            cursor = nxt
        return found

    def _embed(self, title: str, text: str, tags: list[str]) -> Embedding | None:
        return self._embed_text(embedding_text(title, text, tags))

    def _embed_text(self, text: str) -> Embedding | None:
        """The vector and token vectors of a fact's embedding text, or None (embedder off, loading or failing):
        the write goes on; it is embedded later (by the search index's catch-up, or `memory reindex`)."""
        if not self.gate.usable():
            return None
        try:
            return self.embedder.embed_facts([text])[0]
        except EmbeddingUnavailable as exc:
            self.gate.failed()
            log.warning("storing fact without a vector for now: %s", exc)
            return None

    def _store_vector(self, uow: UnitOfWork, row: FactRecord, vector: Embedding | None, now: Any) -> None:
        if vector is not None:
            uow.vectors.put(row, self.embedder.model_id, vector, now)


    def _similar(self, profile: ProfileRef, uid: str) -> list[Fact]:
        try:
            hits = self.search.similar(profile.id, profile.name, uid, SIMILAR_LIMIT)
        except Exception:  # similar is advice; never fail a write that is already committed
            log.exception("similar-facts lookup failed")
            return []
        found = facts_of(self.store, profile.id, hits)
        return [found[h.uid] for h in hits if h.uid in found and found[h.uid].status == FactStatus.ACTIVE]
