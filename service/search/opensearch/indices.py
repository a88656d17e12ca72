"""Templates, the search pipeline, and the deployment's two shared indices behind their aliases.

`<prefix>-facts` and `<prefix>-queries` each point at one versioned index `<alias>.v<N>` (is_write_index).
Reads and writes only ever name the alias, so `memory reindex` builds `<alias>.v<N+1>` beside the live index and
swaps the alias in one atomic _aliases call. Everything here is idempotent: installing twice, or two processes
creating the same index, is harmless.

Templates and pipeline: with MEMORY_OPENSEARCH_INSTALL=auto the service puts them itself (at start-up and by
`memory reindex`); with `check` an administrator does (`memory opensearch install`) and the service only
compares what the cluster holds with what this release renders (by the fingerprint in each body).
"""

from __future__ import annotations

import logging
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import RequestError

from service.config import Settings
from service.domain.ports import Embedder
from service.search.opensearch import templates as tpl
from service.search.opensearch.client import IndexMissing, short, translated

log = logging.getLogger(__name__)


class IndexManager:
    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder) -> None:
        self.client = client
        self.settings = settings
        self.embedder = embedder
        self.names = tpl.Names(settings.opensearch_prefix)
        self.pipeline_error: str | None = None  # set when the cluster cannot run hybrid (no neural-search)

    @property
    def aliases(self) -> tuple[str, str]:
        return self.names.facts, self.names.queries

    # --- templates and pipeline -------------------------------------------------------------------

    def dimension(self) -> int:
        """The embedder's vector dimension (a remote embedder is asked once); the default when disabled."""
        if not self.embedder.enabled:
            return tpl.DEFAULT_DIMENSION
        if self.embedder.dim is None:
            self.embedder.embed_query("dimension probe")  # EmbeddingUnavailable: retried next cycle
        assert self.embedder.dim is not None
        return int(self.embedder.dim)

    def template_bodies(self) -> dict[str, dict[str, Any]]:
        s, names = self.settings, self.names
        return {
            names.facts: tpl.render_facts(names, shards=s.opensearch_shards, replicas=s.opensearch_replicas,
                                          dimension=self.dimension(), embedder=self.embedder.model_id,
                                          vectors=self.embedder.enabled and self.pipeline_error is None),
            names.queries: tpl.render_queries(names, shards=s.opensearch_shards, replicas=s.opensearch_replicas),
        }

    def pipeline_body(self) -> dict[str, Any] | None:
        """The hybrid pipeline (None with MEMORY_EMBEDDER=none: plain BM25 needs none)."""
        if not self.embedder.enabled:
            return None
        return tpl.render_pipeline(lexical_weight=self.settings.lexical_weight,
                                   vector_weight=self.settings.vector_weight)

    def install(self) -> dict[str, Any]:
        """PUT the pipeline (the facts template names it as the index's default) and both index templates."""
        report: dict[str, Any] = {"templates": list(self.template_bodies()), "template_version": tpl.TEMPLATE_VERSION}
        pipeline = self.pipeline_body()
        if pipeline is not None:
            try:
                with translated("install search pipeline"):
                    self.client.search_pipeline.put(id=self.names.pipeline, body=pipeline)
                self.pipeline_error = None
            except Exception as exc:  # the cluster lacks neural-search: hybrid search falls back
                self.pipeline_error = short(exc)
                log.warning("search pipeline %s not installed: %s", self.names.pipeline, self.pipeline_error)
            report["pipeline"] = self.pipeline_error or self.names.pipeline
        with translated("install templates"):
            for name, body in self.template_bodies().items():
                self.client.indices.put_index_template(name=name, body=body)
        return report

    def differences(self) -> list[str]:
        """What the cluster holds that is not what this release renders (empty: installed and matching)."""
        out = []
        for name, body in self.template_bodies().items():
            try:
                with translated("get index template"):
                    found = self.client.indices.get_index_template(name=name)
                meta = found["index_templates"][0]["index_template"].get("_meta", {})
            except IndexMissing:
                out.append(f"index template {name} is missing")
                continue
            if meta.get("fingerprint") != body["_meta"]["fingerprint"]:
                out.append(f"index template {name} differs from this release's (template v{meta.get('template_version')}"
                           f", this release renders v{tpl.TEMPLATE_VERSION} for these settings)")
        pipeline = self.pipeline_body()
        if pipeline is not None:
            try:
                with translated("get search pipeline"):
                    found = self.client.search_pipeline.get(id=self.names.pipeline)
                installed: dict[str, Any] = next(iter(found.values()), {})
            except IndexMissing:
                out.append(f"search pipeline {self.names.pipeline} is missing")
            else:
                if tpl.pipeline_fingerprint(installed) != tpl.pipeline_fingerprint(pipeline):
                    out.append(f"search pipeline {self.names.pipeline} differs from this release's (weights "
                               f"{self._weights(installed)}, MEMORY_LEXICAL_WEIGHT wants {self._weights(pipeline)})")
        return out

    @staticmethod
    def _weights(body: dict[str, Any]) -> Any:
        try:
            processor = body["phase_results_processors"][0]["normalization-processor"]
            return processor["combination"]["parameters"]["weights"]
        except (KeyError, IndexError, TypeError):
            return "unknown"

    # --- the shared indices -----------------------------------------------------------------------

    def current(self, alias: str) -> str | None:
        """The index the alias points at, None when the alias does not exist. Asked of the alias itself
        (`GET <alias>/_alias`), so a user allowed only the deployment's own names may ask."""
        try:
            with translated("get alias"):
                found = self.client.indices.get_alias(index=alias)
        except IndexMissing:
            return None
        indices = sorted(name for name, body in found.items() if alias in body.get("aliases", {}))
        return indices[-1] if indices else None

    def squatted(self, alias: str) -> bool:
        """An index (not an alias) bears the alias's own name: the alias can be neither created nor swapped to
        a rebuilt index until it is deleted (an index auto-created by a write that reached the cluster first)."""
        try:
            with translated("get alias"):  # asked as `current` asks: the role's aliases/get on its own names
                found = self.client.indices.get_alias(index=alias)
        except IndexMissing:
            return False
        return alias in found and alias not in found[alias].get("aliases", {})

    def versions(self, alias: str) -> list[str]:
        """Every `<alias>.v<N>` index, oldest version first."""
        with translated("list indices"):
            found = self.client.indices.get(index=f"{alias}.v*", allow_no_indices=True, ignore_unavailable=True)
        named = [(tpl.version_of(name, alias), name) for name in found]
        return [name for n, name in sorted((n, name) for n, name in named if n is not None)]

    def create(self, alias: str, *, attach: bool) -> str:
        """Create the next version of the alias's index (attached to the alias when `attach`)."""
        existing = self.versions(alias)
        last = tpl.version_of(existing[-1], alias) if existing else 0
        index = tpl.versioned(alias, (last or 0) + 1)
        body: dict[str, Any] = {"aliases": {alias: {"is_write_index": True}}} if attach else {}
        try:
            with translated("create index"):
                self.client.indices.create(index=index, body=body)
        except Exception as exc:
            if isinstance(exc.__cause__, RequestError) and "already_exists" in str(exc.__cause__.error):
                return index  # created a moment ago by another process
            raise
        return index

    def ensure(self) -> list[str]:
        """Create the deployment's missing indices (attached to their aliases); returns the aliases created,
        whose content the caller must backfill from the canonical store."""
        created = []
        for alias in self.aliases:
            if self.current(alias) is None:
                orphan = self.versions(alias)  # e.g. a crash between create and attach
                if orphan:
                    self.swap(alias, orphan[-1])
                else:
                    self.create(alias, attach=True)
                created.append(alias)
        return created

    def swap(self, alias: str, index: str) -> list[str]:
        """Point the alias at `index` only, atomically; returns the indices it pointed at before."""
        old = [name for name in self.versions(alias) if name != index]
        actions: list[dict[str, Any]] = [{"remove": {"index": name, "alias": alias}} for name in old
                                         if self._has_alias(name, alias)]
        actions.append({"add": {"index": index, "alias": alias, "is_write_index": True}})
        with translated("swap alias"):
            self.client.indices.update_aliases(body={"actions": actions})
        return old

    def _has_alias(self, index: str, alias: str) -> bool:
        with translated("get alias"):
            return bool(self.client.indices.exists_alias(name=alias, index=index))

    def delete(self, indices: list[str]) -> None:
        """Drop mirror indices an alias no longer points at (after `memory reindex` swapped it to a rebuilt
        copy). Only derived search copies: facts and query-log rows live in the canonical store, never here."""
        if indices:
            with translated("delete old indices"):
                self.client.indices.delete(index=",".join(indices), ignore_unavailable=True)

    def legacy(self, profiles: list[str]) -> list[str]:
        """The indices of the legacy per-profile layout (before template v3) of these profile names:
        `<prefix>-facts-<profile>.v<N>` and the queries' twin, built by this service (their _meta says so)."""
        wanted = {self.names.legacy_alias(entity, p) for entity in tpl.ENTITIES for p in profiles}
        found: list[str] = []
        for entity in tpl.ENTITIES:
            with translated("list legacy indices"):
                mappings = self.client.indices.get_mapping(index=f"{self.names.alias(entity)}-*",
                                                           allow_no_indices=True, ignore_unavailable=True)
            for index, body in mappings.items():
                alias = index.rsplit(".v", 1)[0]
                meta = body.get("mappings", {}).get("_meta", {})
                if alias in wanted and tpl.version_of(index, alias) is not None \
                        and int(meta.get("template_version", 0)) < tpl.TEMPLATE_VERSION:
                    found.append(index)
        return sorted(found)

    def meta(self, alias: str) -> dict[str, Any]:
        """The mapping _meta of the index behind the alias ({} when absent)."""
        with translated("get mapping"):
            found = self.client.indices.get_mapping(index=alias)
        for body in found.values():
            return dict(body.get("mappings", {}).get("_meta", {}))
        return {}

    def refresh(self, index: str) -> None:
        with translated("refresh"):
            self.client.indices.refresh(index=index)
