"""`memory reindex`, `memory check` and `memory opensearch …` in opensearch mode (the CLI only calls these).

rebuild (`memory reindex`, no profile; `memory redact`): build `<alias>.v<N+1>` of both shared indices from the
canonical store beside the live ones, swap the aliases atomically, replay the outbox rows delivered during the
build (they reached the old indices), delete the old indices -- and the indices of the legacy per-profile layout
(before template v3) of this store's profiles, which is how a deployment moves to the shared layout. Searches
never see a half-built index, and nothing written meanwhile is lost.

resend (`memory reindex NAME`, `memory import`): every document of one profile sent again into the live indices
(external versions: nothing newer is overwritten).

check: the cluster (version, plugins, templates and pipeline) and, per profile, the canonical store against the
mirror: counts, ids, external versions (the latest outbox id of each row), status and vector presence of
facts, pending outbox rows, and whether the index was built by this release's template and embedder.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from opensearchpy import helpers

from service.clock import utcnow
from service.config import Settings
from service.domain.models import ProfileRef
from service.domain.ports import Embedder
from service.domain.ports.sources import MirrorSource
from service.errors import BackendUnavailable
from service.search.opensearch import templates as tpl
from service.search.opensearch.client import IndexMissing, make_client, translated
from service.search.opensearch.cluster import ClusterVersion, plugin_problems, read_version
from service.search.opensearch.documents import routing
from service.search.opensearch.indices import IndexManager
from service.search.opensearch.mirror import Mirror
from service.search.opensearch.permissions import denials, problems as permission_problems
from service.search.opensearch.refusals import squatting
from service.search.opensearch.security_config import security_notes
from service.search.opensearch.role import role

REPLAY_MARGIN = timedelta(seconds=30)  # clock skew between processes marking rows delivered
SHOWN = 20  # ids listed per kind of difference

Tick = Callable[[int, int], None]


class TemplatesNotInstalled(BackendUnavailable):
    """MEMORY_OPENSEARCH_INSTALL=check and the cluster lacks this release's templates or pipeline."""


class MirrorMaintenance:
    def __init__(self, settings: Settings, canonical: MirrorSource, embedder: Embedder) -> None:
        self.settings, self.embedder = settings, embedder
        self.client = make_client(settings)
        self.indices = IndexManager(self.client, settings, embedder)
        self.names = self.indices.names
        self.canonical = canonical  # the canonical store, through its port (service.store.canonical)
        self.mirror = Mirror(self.client, self.canonical, embedder.enabled, self.indices.dimension, self.names)
        self.unusable = False  # check_cluster found the cluster unusable (version, permissions): no mirror advice

    def close(self) -> None:
        self.client.close()

    # --- templates -----------------------------------------------------------------------------------

    def prepare(self) -> dict[str, Any]:
        """Templates and pipeline in place: put them (MEMORY_OPENSEARCH_INSTALL=auto), or refuse to go on when
        they are not those of this release (check: an administrator installs them)."""
        if self.settings.opensearch_install == "auto":
            return self.indices.install()
        differences = self.indices.differences()
        if differences:
            raise TemplatesNotInstalled(f"{'; '.join(differences)}: an administrator runs `memory opensearch "
                                        "install` (MEMORY_OPENSEARCH_INSTALL=check)")
        return {"templates": "checked", "template_version": tpl.TEMPLATE_VERSION}

    def bodies(self) -> dict[str, Any]:
        """`memory opensearch install --print`: every request an administrator sends, in order."""
        requests = []
        pipeline = self.indices.pipeline_body()
        if pipeline is not None:
            requests.append({"method": "PUT", "path": f"/_search/pipeline/{self.names.pipeline}", "body": pipeline})
        for name, body in self.indices.template_bodies().items():
            requests.append({"method": "PUT", "path": f"/_index_template/{name}", "body": body})
        for alias in self.indices.aliases:
            requests.append({"method": "PUT", "path": f"/{tpl.versioned(alias, 1)}",
                             "body": {"aliases": {alias: {"is_write_index": True}}}})
        return {"requests": requests, "then": "the service fills the new indices from the canonical store at its "
                                              "next start (or run `memory reindex`)"}

    def role(self, *, install: str, legacy: bool) -> dict[str, Any]:
        return role(self.names, install=install, legacy=legacy)

    def install(self) -> dict[str, Any]:
        """`memory opensearch install`: put the templates and the pipeline, create the shared indices."""
        report = self.indices.install()
        return {**report, "indices_created": self.mirror.fill_created(self.indices.ensure())}

    # --- rebuild and resend --------------------------------------------------------------------------

    def rebuild(self, progress: Tick | None = None) -> dict[str, Any]:
        """Rebuild both shared indices from the canonical store (every profile) and swap the aliases."""
        self.prepare()
        self.mirror.settle_renames()
        started = utcnow() - REPLAY_MARGIN
        profiles = self.canonical.profiles()
        new_facts = self.indices.create(self.names.facts, attach=False)
        new_queries = self.indices.create(self.names.queries, attach=False)
        total = sum(sum(self.canonical.counts(pid)) for pid, _ in profiles)
        done = 0
        if progress:
            progress(0, total)

        def step(n: int) -> None:
            nonlocal done
            done += n
            if progress:
                progress(done, total)

        counts = {"facts": 0, "facts_failed": 0, "queries": 0, "queries_failed": 0}
        for profile_id, _ in profiles:
            found = self.mirror.backfill(profile_id, facts_index=new_facts, queries_index=new_queries, aliases=False,
                                         progress=step)
            counts = {k: counts[k] + found[k] for k in counts}
        self.indices.refresh(new_facts)
        self.indices.refresh(new_queries)
        replaced = self.indices.swap(self.names.facts, new_facts) + self.indices.swap(self.names.queries, new_queries)
        replayed = sum(self.mirror.replay(profile_id, started).delivered for profile_id, _ in profiles)
        legacy = self._legacy([name for _, name in profiles])
        self.indices.delete(replaced + legacy)  # old mirror copies only; the canonical rows are untouched
        return {**counts, "profiles": len(profiles), "indices": [new_facts, new_queries], "replaced": replaced,
                "legacy_removed": legacy, "replayed": replayed, "template_version": tpl.TEMPLATE_VERSION}

    def resend(self, profile: ProfileRef, progress: Tick | None = None) -> dict[str, Any]:
        """Every document of the profile sent again into the live indices, then its pending outbox rows."""
        self.prepare()
        self.mirror.settle_renames()
        created = self.indices.ensure()
        targets = [pid for pid, _ in self.canonical.profiles()] if created else [profile.id]
        total = sum(sum(self.canonical.counts(pid)) for pid in targets)
        done = 0

        def step(n: int) -> None:
            nonlocal done
            done += n
            if progress:
                progress(done, total)

        counts: dict[str, int] = {}
        for pid in targets:  # a freshly created index gets every profile, not only this one
            found = self.mirror.backfill(pid, facts_index=self.names.facts, queries_index=self.names.queries,
                                         aliases=True, progress=step, repair=True)
            counts = {key: counts.get(key, 0) + value for key, value in found.items()}
        self.mirror.push(profile.id)
        return {**counts, "indices_created": created, "template_version": tpl.TEMPLATE_VERSION}

    def deliver(self, profile: ProfileRef) -> dict[str, Any]:
        """The profile's pending outbox rows delivered now (after `memory import`: each imported fact goes once,
        with the vector the import stored); the shared indices made first if they are missing."""
        self.prepare()
        created = self.mirror.fill_created(self.indices.ensure())
        done = self.mirror.push(profile.id)
        return {"delivered": done.delivered, "failed": done.failed, "sent_without_vector": len(done.unembedded),
                "indices_created": created}

    def _legacy(self, profile_names: list[str]) -> list[str]:
        try:
            return self.indices.legacy(profile_names)
        except BackendUnavailable:  # not allowed to list them, say: `memory check` names them
            return []

    # --- check -------------------------------------------------------------------------------------

    def cluster_version(self) -> ClusterVersion:
        """What the cluster is, with a note when this release is not tested on its version."""
        return read_version(self.client)

    def security_notes(self) -> list[str]:
        """What the cluster's security plugin is set to do that would hide a missing permission (security_config)."""
        return security_notes(self.client, self.names)

    def check_cluster(self) -> list[str]:
        """What keeps the cluster from serving this release (version, plugins, templates, pipeline, legacy
        indices), each with what to do; empty when all is well."""
        problems = list(read_version(self.client).problems)
        self.unusable = bool(problems)
        if problems:
            return problems
        problems = plugin_problems(self.client, vectors=self.embedder.enabled)
        denied = permission_problems(denials(self.client, self.names), self.names)
        if denied:  # what follows (templates, legacy indices) would fail on the same refusals: the grants first
            self.unusable = True
            return problems + denied
        fix = "`memory reindex` puts them" if self.settings.opensearch_install == "auto" else \
            "an administrator runs `memory opensearch install`"
        problems += [f"{d}: {fix}" for d in self.indices.differences()]
        legacy = self._legacy([name for _, name in self.canonical.profiles()])
        if legacy:
            problems.append(f"{len(legacy)} indices of the per-profile layout of earlier releases remain "
                            f"({', '.join(legacy[:4])}{', …' if len(legacy) > 4 else ''}): `memory reindex` moves "
                            "every profile to the shared indices and removes them")
        return problems

    def check(self, profile: ProfileRef) -> dict[str, Any]:
        problems: dict[str, Any] = {}
        pending = self.canonical.lag(profile.id)[0]
        if pending:
            problems["outbox_pending"] = pending
            refused, reason = self.canonical.refused(profile.id)
            if refused:
                problems["outbox_refused"] = {"rows": refused, "last_error": reason}
        missing = [alias for alias in self.indices.aliases if self.indices.current(alias) is None]
        squatted = [alias for alias in missing if self.indices.squatted(alias)]
        if squatted:  # `memory reindex` cannot swap an alias onto a name an index holds
            problems["indices"] = "; ".join(squatting(name) for name in squatted)
            return problems
        if missing:
            problems["indices"] = f"missing {', '.join(missing)}: run `memory reindex`"
            return problems
        for alias in self.indices.aliases:
            self.indices.refresh(alias)  # what was delivered a moment ago counts as there
        meta_problem = self._meta_problem(self.names.facts)
        if meta_problem:
            problems["index"] = meta_problem

        versions = self.canonical.latest_versions(profile.id, "fact")
        vectors = self.embedder.enabled
        expected = {row.uid: (versions.get(row.id or 0, 0), row.status, vectors and vector is not None)
                    for row, vector in self.canonical.all_facts(profile.id)}
        found = {doc_id: (version, src.get("status"), vectors and bool(src.get("has_vector")))
                 for doc_id, version, src in self._scan(self.names.facts, profile.id, ["status", "has_vector"])}
        problems.update(_compare("facts", expected, found))

        qversions = self.canonical.latest_versions(profile.id, "query")
        qexpected = {str(row.id): (qversions.get(row.id or 0, 0),) for row in self.canonical.all_queries(profile.id)}
        qfound = {doc_id: (version,) for doc_id, version, _ in self._scan(self.names.queries, profile.id, [])}
        problems.update(_compare("queries", qexpected, qfound))
        return problems

    def _meta_problem(self, alias: str) -> str | None:
        meta = self.indices.meta(alias)
        if int(meta.get("template_version", 0)) < tpl.TEMPLATE_VERSION:
            return (f"built by template v{meta.get('template_version', 0)}, this release needs "
                    f"v{tpl.TEMPLATE_VERSION}: run `memory reindex`")
        if self.embedder.enabled and (meta.get("embedder"), meta.get("dimension")) != (
                self.embedder.model_id, self.indices.dimension()):
            return (f"built for embedder {meta.get('embedder')} ({meta.get('dimension')}-d), "
                    f"now {self.embedder.model_id}: run `memory reindex`")
        return None

    def _scan(self, alias: str, profile_id: int, fields: list[str]) -> list[tuple[str, int, dict[str, Any]]]:
        body: dict[str, Any] = {"query": {"term": {"profile_id": routing(profile_id)}}, "_source": fields or False,
                                "version": True}
        try:
            with translated("scan"):
                return [(h["_id"], int(h.get("_version", -1)), h.get("_source") or {})
                        for h in helpers.scan(self.client, index=alias, query=body, size=1000, preserve_order=False,
                                              routing=routing(profile_id))]
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
