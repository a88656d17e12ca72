"""Templates, the search pipeline, and the per-profile indices behind their aliases.

Every profile has two aliases, `memory-facts-<p>` and `memory-queries-<p>`, each pointing at one versioned
index `<alias>.v<N>` (is_write_index). Reads and writes only ever name the alias, so `memory reindex`
builds `<alias>.v<N+1>` beside the live index and swaps the alias in one atomic _aliases call.
Everything here is idempotent: installing twice, or two processes creating the same index, is harmless.
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

ENTITIES = (tpl.FACTS, tpl.QUERIES)


class IndexManager:
    def __init__(self, client: OpenSearch, settings: Settings, embedder: Embedder) -> None:
        self.client = client
        self.settings = settings
        self.embedder = embedder
        self.pipeline_error: str | None = None  # set when the cluster cannot run hybrid (no neural-search)

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
        s = self.settings
        return {
            tpl.FACTS: tpl.render_facts(shards=s.opensearch_shards, replicas=s.opensearch_replicas,
                                        dimension=self.dimension(), embedder=self.embedder.model_id),
            tpl.QUERIES: tpl.render_queries(shards=s.opensearch_shards, replicas=s.opensearch_replicas),
        }

    def install(self) -> dict[str, Any]:
        """PUT both index templates and (when vectors are on) the hybrid pipeline. Safe to repeat."""
        with translated("install templates"):
            for name, body in self.template_bodies().items():
                self.client.indices.put_index_template(name=name, body=body)
        report: dict[str, Any] = {"templates": list(ENTITIES), "template_version": tpl.TEMPLATE_VERSION}
        if self.embedder.enabled:
            body = tpl.render_pipeline(lexical_weight=self.settings.lexical_weight,
                                       vector_weight=self.settings.vector_weight)
            try:
                with translated("install search pipeline"):
                    self.client.search_pipeline.put(id=tpl.PIPELINE_ID, body=body)
                self.pipeline_error = None
            except Exception as exc:  # the cluster lacks neural-search: hybrid search falls back
                self.pipeline_error = short(exc)
                log.warning("search pipeline %s not installed: %s", tpl.PIPELINE_ID, self.pipeline_error)
            report["pipeline"] = self.pipeline_error or tpl.PIPELINE_ID
        return report

    def installed(self) -> bool:
        """Both templates are in the cluster (a restarted, empty cluster has none)."""
        with translated("get templates"):
            return all(self.client.indices.exists_index_template(name=name) for name in ENTITIES)

    # --- per-profile indices ----------------------------------------------------------------------

    def current(self, alias: str) -> str | None:
        """The index the alias points at, None when the alias does not exist."""
        with translated("get alias"):
            if not self.client.indices.exists_alias(name=alias):
                return None
            found = self.client.indices.get_alias(name=alias)
        indices = sorted(found)
        return indices[-1] if indices else None

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

    def ensure(self, profile: str) -> list[str]:
        """Create the profile's missing indices (attached to their aliases); returns the aliases created,
        whose content the caller must backfill from the canonical store."""
        created = []
        for entity in ENTITIES:
            alias = tpl.alias(entity, profile)
            if self.current(alias) is None:
                orphan = self.versions(alias)  # e.g. a crash between create and attach
                if orphan:
                    self.swap(alias, orphan[-1])
                else:
                    self.create(alias, attach=True)
                created.append(alias)
        return created

    def existing_aliases(self) -> set[str]:
        """Every memory-* alias of the cluster, in one request (a restarted cluster has none)."""
        try:
            with translated("list aliases"):
                found = self.client.indices.get_alias(name=",".join(f"{e}-*" for e in ENTITIES))
        except IndexMissing:
            return set()
        return {name for body in found.values() for name in body.get("aliases", {})}

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

    def drop_profile(self, profile: str) -> list[str]:
        """Drop every index of both aliases of a profile name (a renamed profile's old name; what a new name
        may have left from an earlier profile of that name). Derived copies only: the caller rebuilds the
        profile under its current name from the canonical store."""
        found = [index for entity in ENTITIES for index in self.versions(tpl.alias(entity, profile))]
        self.delete(found)
        return found

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
