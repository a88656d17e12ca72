"""`memory reindex` and `memory check` in opensearch mode (the CLI only calls these).

reindex: build `<alias>.v<N+1>` from the canonical store beside the live index, swap the alias atomically,
replay the outbox rows delivered during the build (they reached the old index), delete the old index.
Searches never see a half-built index, and nothing written meanwhile is lost.

check: compare the canonical store with the mirror, per profile: counts, ids, external versions (the
latest outbox id of each row), status and vector presence of facts, pending outbox rows, and whether the
index behind the alias was built by this release's template and embedder. Empty report = in step.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from opensearchpy import helpers

from service.clock import utcnow
from service.config import Settings
from service.domain.ports import Embedder
from service.domain.models import ProfileRef
from service.search.opensearch import templates as tpl
from service.store.canonical import Canonical
from service.search.opensearch.client import IndexMissing, make_client, translated
from service.search.opensearch.indices import IndexManager
from service.search.opensearch.mirror import Mirror
from service.store.engine import Database

REPLAY_MARGIN = timedelta(seconds=30)  # clock skew between processes marking rows delivered
SHOWN = 20  # ids listed per kind of difference

Tick = Callable[[int, int], None]


class MirrorMaintenance:
    def __init__(self, settings: Settings, db: Database, embedder: Embedder) -> None:
        self.settings, self.embedder = settings, embedder
        self.client = make_client(settings)
        self.indices = IndexManager(self.client, settings, embedder)
        self.canonical = Canonical(db, embedder.model_id)
        self.mirror = Mirror(self.client, self.canonical, embedder.enabled, self.indices.dimension)

    def close(self) -> None:
        self.client.close()

    # --- reindex -----------------------------------------------------------------------------------

    def reindex(self, profile: ProfileRef, progress: Tick | None = None) -> dict[str, Any]:
        self.indices.install()
        self.mirror.settle_renames(self.indices.drop_profile)  # a rename not followed yet: old indices go
        started = utcnow() - REPLAY_MARGIN
        facts_alias, queries_alias = tpl.alias(tpl.FACTS, profile.name), tpl.alias(tpl.QUERIES, profile.name)
        new_facts = self.indices.create(facts_alias, attach=False)
        new_queries = self.indices.create(queries_alias, attach=False)
        total = sum(self.canonical.counts(profile.id))
        done = 0
        if progress:
            progress(0, total)

        def step(n: int) -> None:
            nonlocal done
            done += n
            if progress:
                progress(done, total)

        counts = self.mirror.backfill(profile.id, profile.name, facts_index=new_facts, queries_index=new_queries,
                                      aliases=False, progress=step)
        self.indices.refresh(new_facts)
        self.indices.refresh(new_queries)
        replaced = self.indices.swap(facts_alias, new_facts) + self.indices.swap(queries_alias, new_queries)
        replayed = self.mirror.replay(profile.id, profile.name, started)
        self.indices.delete(replaced)  # the old mirror copies only; the canonical rows are untouched
        return {**counts, "indices": [new_facts, new_queries], "replaced": replaced,
                "replayed": replayed.delivered, "template_version": tpl.TEMPLATE_VERSION}

    def sync_profile(self, profile: ProfileRef) -> dict[str, int]:
        """Make sure the profile's indices exist and hold every canonical row (after `memory import`, and
        `memory profile rename`: the renames not followed yet are settled first)."""
        self.indices.install()
        self.mirror.settle_renames(self.indices.drop_profile)
        self.indices.ensure(profile.name)
        counts = self.mirror.backfill(profile.id, profile.name, facts_index=tpl.alias(tpl.FACTS, profile.name),
                                      queries_index=tpl.alias(tpl.QUERIES, profile.name), aliases=True)
        self.mirror.push(profile.id, profile.name, wait=True)
        return counts

    # --- check -------------------------------------------------------------------------------------

    def check(self, profile: ProfileRef) -> dict[str, Any]:
        problems: dict[str, Any] = {}
        pending = self.canonical.lag(profile.id)[0]
        if pending:
            problems["outbox_pending"] = pending
        facts_alias, queries_alias = tpl.alias(tpl.FACTS, profile.name), tpl.alias(tpl.QUERIES, profile.name)
        for alias in (facts_alias, queries_alias):
            if self.indices.current(alias) is None:
                problems[alias] = f"missing: run `memory reindex {profile.name}`"
        if problems.keys() & {facts_alias, queries_alias}:
            return problems
        self.indices.refresh(facts_alias)  # what was delivered a moment ago counts as there
        self.indices.refresh(queries_alias)
        meta_problem = self._meta_problem(facts_alias)
        if meta_problem:
            problems["index"] = meta_problem

        versions = self.canonical.latest_versions(profile.id, "fact")
        vectors = self.embedder.enabled
        expected = {row.uid: (versions.get(row.id or 0, 0), row.status, vectors and vector is not None)
                    for row, vector in self.canonical.all_facts(profile.id)}
        found = {doc_id: (version, src.get("status"), vectors and bool(src.get("has_vector")))
                 for doc_id, version, src in self._scan(facts_alias, ["status", "has_vector"])}
        problems.update(_compare("facts", expected, found))

        qversions = self.canonical.latest_versions(profile.id, "query")
        qexpected = {str(row.id): (qversions.get(row.id or 0, 0),) for row in self.canonical.all_queries(profile.id)}
        qfound = {doc_id: (version,) for doc_id, version, _ in self._scan(queries_alias, [])}
        problems.update(_compare("queries", qexpected, qfound))
        return problems

    def _meta_problem(self, alias: str) -> str | None:
        meta = self.indices.meta(alias)
        if int(meta.get("template_version", 0)) < tpl.TEMPLATE_VERSION:
            return f"built by template v{meta.get('template_version', 0)}, this release needs v{tpl.TEMPLATE_VERSION}"
        if self.embedder.enabled and (meta.get("embedder"), meta.get("dimension")) != (
                self.embedder.model_id, self.indices.dimension()):
            return (f"built for embedder {meta.get('embedder')} ({meta.get('dimension')}-d), "
                    f"now {self.embedder.model_id}")
        return None

    def _scan(self, alias: str, fields: list[str]) -> list[tuple[str, int, dict[str, Any]]]:
        body: dict[str, Any] = {"query": {"match_all": {}}, "_source": fields or False, "version": True}
        try:
            with translated("scan"):
                return [(h["_id"], int(h.get("_version", -1)), h.get("_source") or {})
                        for h in helpers.scan(self.client, index=alias, query=body, size=1000,
                                              preserve_order=False)]
        except IndexMissing:
            return []


def _compare(name: str, expected: dict[str, tuple[Any, ...]], found: dict[str, tuple[Any, ...]]) -> dict[str, Any]:
    """Differences between canonical (`expected`) and mirror (`found`) documents, keyed by id; the first
    element of each tuple is the version, the rest are fields that must be equal too."""
    missing = sorted(expected.keys() - found.keys())
    extra = sorted(found.keys() - expected.keys())
    stale = sorted(k for k in expected.keys() & found.keys() if expected[k] != found[k])
    if not (missing or extra or stale or len(expected) != len(found)):
        return {}
    report: dict[str, Any] = {"canonical": len(expected), "mirror": len(found)}
    for label, ids in (("missing", missing), ("extra", extra), ("stale", stale)):
        if ids:
            report[label] = len(ids)
            report[f"{label}_ids"] = ids[:SHOWN]
    if stale:
        first = stale[0]
        report["stale_example"] = {"id": first, "canonical": list(expected[first]), "mirror": list(found[first])}
    return {name: report}
