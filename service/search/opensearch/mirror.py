"""Delivering canonical changes into the mirror: outbox pushes, full backfills, replays.

- push: a profile's pending outbox rows, oldest first, as bulk `index` actions with version = outbox id
  (external). 409 means the mirror already holds a newer state: the row counts as delivered. Rows are
  marked delivered (delivered_at), never deleted. Per-item failures stay pending with attempts/last_error.
- backfill: every fact and query-log row of a profile into an index (a fresh reindex target, or an alias
  whose index had to be created), each at its latest outbox id (0 when it has none).
- replay: the outbox rows delivered since a moment (or still pending) again, into the live alias: what a
  reindex must add after its swap, for changes that reached the old index during the rebuild.
- renames (`memory profile rename`, outbox entity "rename"): nothing to do in the shared layout -- documents
  carry the profile's id, not its name -- so they are marked delivered.

Every document goes to the deployment's shared aliases, routed by its profile's id. A document the cluster
refuses (a mapping error, say) fails only its own outbox rows (attempts, last_error): the rest of the batch
is delivered, and other profiles are not held up (the backend backs off per profile).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opensearchpy import OpenSearch, helpers

from service.search.opensearch.templates import Names
from service.domain.ports.sources import MirrorSource, Pending
from service.search.opensearch.client import IndexMissing, translated
from service.search.opensearch.documents import fact_document, index_action, query_document
from service.search.opensearch.refusals import explain

log = logging.getLogger(__name__)

Progress = Callable[[int], None]


@dataclass
class Delivery:
    delivered: int = 0  # outbox rows marked delivered
    stale: int = 0  # of which refused with 409 (the mirror was already newer)
    failed: int = 0
    unembedded: list[int] = field(default_factory=list)  # fact ids sent without a vector
    errors: dict[int, str] = field(default_factory=dict)  # outbox id -> why the cluster refused it


class Mirror:
    def __init__(self, client: OpenSearch, canonical: MirrorSource, vectors: bool, dimension: Callable[[], int],
                 names: Names) -> None:
        self.client = client
        self.canonical = canonical
        self.names = names
        self.vectors = vectors  # False with MEMORY_EMBEDDER=none: documents carry no embedding
        self.dimension = dimension

    # --- outbox ------------------------------------------------------------------------------------

    def push(self, profile_id: int) -> Delivery:
        """Deliver the profile's pending rows (facts with refresh=true, so the writer's next search sees its
        write). Raises BackendUnavailable (IndexMissing: build the index)."""
        total = Delivery()
        while batch := self.canonical.pending(profile_id):
            done = self._deliver(profile_id, batch)
            total.delivered += done.delivered
            total.stale += done.stale
            total.failed += done.failed
            total.unembedded += done.unembedded
            total.errors.update(done.errors)
            if done.failed:
                break  # the failing rows stay first in line; the worker retries with backoff
        return total

    def settle_renames(self) -> int:
        """Renames need nothing in the shared layout (documents carry the profile's id): marked delivered."""
        renames = self.canonical.pending_renames()
        self.canonical.delivered([outbox_id for outbox_id, _, _ in renames])
        return len(renames)

    def replay(self, profile_id: int, moment: datetime) -> Delivery:
        rows = self.canonical.since(profile_id, moment)
        done = Delivery()
        for start in range(0, len(rows), 500):
            part = self._deliver(profile_id, rows[start:start + 500])
            done.delivered += part.delivered
            done.stale += part.stale
            done.failed += part.failed
        return done

    def _deliver(self, profile_id: int, batch: Sequence[Pending]) -> Delivery:
        outbox_ids: dict[tuple[str, int], list[int]] = {}
        for pending in batch:
            outbox_ids.setdefault((pending.entity, pending.entity_id), []).append(pending.id)
        fact_ids = [e for (kind, e) in outbox_ids if kind == "fact"]
        query_ids = [e for (kind, e) in outbox_ids if kind == "query"]
        keys: list[tuple[str, int]] = []
        actions: list[dict[str, Any]] = []
        done = Delivery()
        facts_alias, queries_alias = self.names.facts, self.names.queries
        for row, vector in self.canonical.facts(profile_id, ids=fact_ids):
            assert row.id is not None
            vector = self._usable(vector)
            if vector is None:
                done.unembedded.append(row.id)
            version = max(outbox_ids[("fact", row.id)])
            keys.append(("fact", row.id))
            actions.append(index_action(facts_alias, row.uid, version, fact_document(row, vector)))
        for qrow in self.canonical.queries(profile_id, ids=query_ids):
            assert qrow.id is not None
            keys.append(("query", qrow.id))
            actions.append(index_action(queries_alias, str(qrow.id), max(outbox_ids[("query", qrow.id)]),
                                        query_document(qrow)))
        sent = set(keys)
        delivered = [i for key, ids in outbox_ids.items() if key not in sent for i in ids]  # nothing to send
        errors: dict[int, str] = {}
        missing = ""
        # Facts always with refresh=true, from the worker too: a write's own push may find its rows already taken
        # by the worker (woken by a search), and must still return with them searchable.
        results = self.bulk(actions, refresh=bool(fact_ids), require_alias=True)
        for key, (ok, status, reason) in zip(keys, results, strict=True):
            if ok or status == 409:
                delivered.extend(outbox_ids[key])
                done.stale += status == 409
            elif status == 404:
                missing = reason  # the alias is gone (fresh or restarted cluster)
            else:
                errors.update({i: reason for i in outbox_ids[key]})
        self.canonical.delivered(delivered)
        if any(key[0] == "fact" and status == 409 for key, (_, status, _) in zip(keys, results)):
            # A 409 item may not be covered by the refresh: the newer copy (e.g. sent by a backfill or the
            # worker without refresh) must still be searchable when this write returns.
            with translated("refresh"):
                self.client.indices.refresh(index=facts_alias)
        if errors:
            log.warning("mirror: %d outbox rows not delivered: %s", len(errors), next(iter(errors.values())))
            self.canonical.failed(errors)
        if missing:
            raise IndexMissing(f"opensearch bulk: {missing}")
        done.delivered, done.failed, done.errors = len(delivered), len(errors), errors
        return done

    def _usable(self, vector: Any) -> Any:
        """Only vectors of the index's dimension are sent (a mismatch needs `memory reindex`)."""
        if not self.vectors or vector is None:
            return None
        return vector if int(vector.shape[0]) == self.dimension() else None

    # --- bulk --------------------------------------------------------------------------------------

    def bulk(self, actions: Iterable[dict[str, Any]], *, refresh: bool, require_alias: bool
             ) -> list[tuple[bool, int, str]]:
        """(ok, status, reason) per action, in order. Transport failures raise BackendUnavailable."""
        params: dict[str, Any] = {"require_alias": require_alias}
        if refresh:  # "true", not "wait_for": wait_for holds the writer up to the refresh interval (1 s)
            params["refresh"] = "true"
        out: list[tuple[bool, int, str]] = []
        with translated("bulk"):
            for ok, item in helpers.streaming_bulk(self.client, actions, chunk_size=500, raise_on_error=False,
                                                   raise_on_exception=True, **params):
                result = next(iter(item.values()))
                error = result.get("error")
                reason = explain(error)[:500] if error else ""
                out.append((bool(ok), int(result.get("status", 0)), reason))
        return out

    # --- backfill ----------------------------------------------------------------------------------

    def fill_created(self, created: list[str]) -> list[str]:
        """Shared indices just created (IndexManager.ensure) are filled from the canonical store, every profile,
        and refreshed so that the next search sees them. Returns `created`."""
        if created:
            for profile_id, _ in self.canonical.profiles():
                self.backfill(profile_id, facts_index=self.names.facts, queries_index=self.names.queries,
                              aliases=True)
            with translated("refresh"):
                self.client.indices.refresh(index=f"{self.names.facts},{self.names.queries}")
            log.info("mirror: created %s", ", ".join(created))
        return created

    def backfill(self, profile_id: int, *, facts_index: str, queries_index: str,
                 aliases: bool, progress: Progress | None = None, repair: bool = False) -> dict[str, int]:
        """Every row of the profile into the given indices (`aliases`: they are the live aliases, which must
        exist; a write to a missing alias must never auto-create an index of that name). `repair`: documents
        at their own version are rewritten too (a lost or altered copy is made right)."""
        version_type = "external_gte" if repair else "external"
        fact_versions = self.canonical.latest_versions(profile_id, "fact")
        query_versions = self.canonical.latest_versions(profile_id, "query")

        def fact_actions() -> Iterator[dict[str, Any]]:
            for row, vector in self.canonical.all_facts(profile_id):
                assert row.id is not None
                doc = fact_document(row, self._usable(vector))
                yield index_action(facts_index, row.uid, fact_versions.get(row.id, 0), doc, version_type=version_type)

        def query_actions() -> Iterator[dict[str, Any]]:
            for qrow in self.canonical.all_queries(profile_id):
                assert qrow.id is not None
                yield index_action(queries_index, str(qrow.id), query_versions.get(qrow.id, 0),
                                   query_document(qrow), version_type=version_type)

        counts: dict[str, int] = {}
        for name, actions in (("facts", fact_actions()), ("queries", query_actions())):
            written = failed = 0
            for ok, status, reason in self._counting(actions, aliases, progress):
                if ok or status == 409:
                    written += 1
                else:
                    failed += 1
                    log.warning("backfill %s of profile %s: %s", name, profile_id, reason)
            counts[name], counts[f"{name}_failed"] = written, failed
        return counts

    def _counting(self, actions: Iterator[dict[str, Any]], require_alias: bool, progress: Progress | None
                  ) -> Iterator[tuple[bool, int, str]]:
        chunk: list[dict[str, Any]] = []
        for action in actions:
            chunk.append(action)
            if len(chunk) == 500:
                yield from self.bulk(chunk, refresh=False, require_alias=require_alias)
                if progress:
                    progress(len(chunk))
                chunk = []
        if chunk:
            yield from self.bulk(chunk, refresh=False, require_alias=require_alias)
            if progress:
                progress(len(chunk))
