"""The index templates and the search pipeline: loaded from index_templates/*.json (the reviewed, complete
bodies), rendered for this deployment, and the names of everything a deployment owns on the cluster.

Layout (template v3): one deployment, whatever its number of profiles, owns two aliases, `<prefix>-facts` and
`<prefix>-queries`, each over one versioned index `<alias>.v<N>`, two index templates of the same names and
one search pipeline `<prefix>-hybrid`. Every document carries its profile's id (`profile_id`), is routed by it
(all of a profile on one shard; `_routing` is required), and every query filters on it. Creating a profile
changes nothing in the cluster. `MEMORY_OPENSEARCH_PREFIX` (default `memory`) keeps two deployments on one
cluster apart: their names share nothing, and each template's pattern (`<alias>.v*`) matches only its own.

Before v3 every profile had its own aliases `<prefix>-facts-<profile>` (the legacy layout): `memory reindex`
moves a deployment from it (see service.search.opensearch.maintenance).

Rendering changes only what depends on configuration: names, shards/replicas, the vector dimension and
embedder recorded in the mapping's _meta, the pipeline weights, and the facts index's default search pipeline
(so a hybrid query inside an _msearch runs through it; plain queries pass through it unchanged). Each rendered
body records a fingerprint of itself in its _meta, so the service can tell a body installed by another release
or edited by hand from its own. The analyzer drops no stop words: as in the embedded backend, stop words leave
the QUERY (service.domain.lexical.informative_terms), never the indexed text.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any


def _template_dir() -> Path:
    """index_templates/ of the source tree (editable installs, Docker), else the copy a wheel installs
    under <prefix>/share/memory-service/ (pyproject [tool.setuptools.data-files])."""
    candidates = [Path(__file__).resolve().parents[3] / "index_templates",
                  Path(sys.prefix) / "share" / "memory-service" / "index_templates"]
    return next((c for c in candidates if (c / "memory-facts.json").exists()), candidates[0])


FACTS, QUERIES = "facts", "queries"
ENTITIES = (FACTS, QUERIES)
TEMPLATE_DIR = _template_dir()
TEMPLATE_VERSION = 4  # v4: facts sorted by profile and status; v3: shared indices per deployment (profile_id,
# routing); v2: no stop filter
DEFAULT_PREFIX = "memory"
DEFAULT_DIMENSION = 384  # all-MiniLM-L6-v2; used for the (unused) vector field when MEMORY_EMBEDDER=none
PREFIX_PATTERN = r"^[a-z][a-z0-9_-]{0,39}$"  # no dot: the version separator

_VERSIONED = re.compile(r"^(?P<alias>.+)\.v(?P<n>[0-9]+)$")


@dataclass(frozen=True)
class Names:
    """Every name a deployment owns on the cluster, from its prefix."""

    prefix: str = DEFAULT_PREFIX

    def alias(self, entity: str) -> str:
        """`<prefix>-facts` / `<prefix>-queries`: what every read and write names (also the template's name)."""
        return f"{self.prefix}-{entity}"

    @property
    def facts(self) -> str:
        return self.alias(FACTS)

    @property
    def queries(self) -> str:
        return self.alias(QUERIES)

    @property
    def pipeline(self) -> str:
        return f"{self.prefix}-hybrid"

    def index_patterns(self) -> list[str]:
        """The patterns of every index and alias of the deployment (a role's index permissions)."""
        return [name for entity in ENTITIES for name in (self.alias(entity), f"{self.alias(entity)}.*")]

    def legacy_alias(self, entity: str, profile: str) -> str:
        """A profile's alias in the legacy (before v3) layout: `<prefix>-facts-<profile>`."""
        return f"{self.alias(entity)}-{profile}"


def versioned(alias_name: str, n: int) -> str:
    return f"{alias_name}.v{n}"


def version_of(index: str, alias_name: str) -> int | None:
    """N of `<alias>.v<N>`, or None when the index is not a version of that alias."""
    match = _VERSIONED.match(index)
    if match is None or match["alias"] != alias_name:
        return None
    return int(match["n"])


@cache
def load(name: str) -> dict[str, Any]:
    """A body from index_templates/ exactly as stored (callers get their own deep copy via render_*)."""
    with open(TEMPLATE_DIR / f"{name}.json", encoding="utf-8") as handle:
        return json.load(handle)


def fingerprint(body: dict[str, Any]) -> str:
    """A short digest of a rendered body (its _meta.fingerprint left out)."""
    plain = copy.deepcopy(body)
    plain.get("_meta", {}).pop("fingerprint", None)
    digest = hashlib.sha256(json.dumps(plain, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return digest[:16]


def _finish(body: dict[str, Any], names: Names, entity: str, shards: int, replicas: int) -> dict[str, Any]:
    body["index_patterns"] = [f"{names.alias(entity)}.v*"]
    index = body["template"]["settings"]["index"]
    index["number_of_shards"] = shards
    index["number_of_replicas"] = replicas
    body["template"]["mappings"]["_meta"]["template_version"] = TEMPLATE_VERSION
    body["version"] = body["_meta"]["template_version"] = TEMPLATE_VERSION
    body["_meta"]["prefix"] = names.prefix
    body["_meta"]["fingerprint"] = fingerprint(body)
    return body


def render_facts(names: Names, *, shards: int, replicas: int, dimension: int, embedder: str,
                 vectors: bool) -> dict[str, Any]:
    body = copy.deepcopy(load("memory-facts"))
    index = body["template"]["settings"]["index"]
    if vectors:
        index["search.default_pipeline"] = names.pipeline
    else:  # MEMORY_EMBEDDER=none: plain BM25 queries only, no pipeline installed
        index.pop("search.default_pipeline", None)
    mappings = body["template"]["mappings"]
    mappings["_meta"].update({"embedder": embedder, "dimension": dimension})
    mappings["properties"]["embedding"]["dimension"] = dimension
    return _finish(body, names, FACTS, shards, replicas)


def render_queries(names: Names, *, shards: int, replicas: int) -> dict[str, Any]:
    return _finish(copy.deepcopy(load("memory-queries")), names, QUERIES, shards, replicas)


def render_pipeline(*, lexical_weight: float, vector_weight: float) -> dict[str, Any]:
    """Weights in sub-query order [lexical, vector]; they sum to 1 as the processor requires. The fingerprint
    rides in the description (a pipeline has no _meta)."""
    body = copy.deepcopy(load("memory-hybrid-pipeline"))
    processor = body["phase_results_processors"][0]["normalization-processor"]
    processor["combination"]["parameters"]["weights"] = [lexical_weight, vector_weight]
    body["description"] = f"{body['description']} [fingerprint {fingerprint(body)}]"
    return body


def pipeline_fingerprint(body: dict[str, Any]) -> str | None:
    match = re.search(r"\[fingerprint ([0-9a-f]+)\]", str(body.get("description", "")))
    return match.group(1) if match else None
