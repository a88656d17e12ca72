"""The index templates and the search pipeline: loaded from index_templates/*.json (the reviewed, complete
bodies), rendered for this deployment, and the names of the per-profile aliases and versioned indices.

Rendering changes only what depends on configuration: shards/replicas, the vector dimension and embedder
recorded in the mapping's _meta and the pipeline weights. The analyzer drops no stop words: as in the
embedded backend, stop words leave the QUERY (service.search.lexical.informative_terms, before the terms
are sent), never the indexed text -- "owns" stems to "own", which a fact saying "their own repo" contains.

Names: alias `memory-facts-<profile>` -> index `memory-facts-<profile>.v<N>`. The version separator is a dot
because profile names cannot contain one (with `-v<N>` the alias of profile `a-v2` would be the name of
profile `a`'s second index).
"""

from __future__ import annotations

import copy
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any


def _template_dir() -> Path:
    """index_templates/ of the source tree (editable installs, Docker), else the copy a wheel installs
    under <prefix>/share/memory-service/ (pyproject [tool.setuptools.data-files])."""
    candidates = [Path(__file__).resolve().parents[3] / "index_templates",
                  Path(sys.prefix) / "share" / "memory-service" / "index_templates"]
    return next((c for c in candidates if (c / f"{FACTS}.json").exists()), candidates[0])


FACTS, QUERIES = "memory-facts", "memory-queries"
TEMPLATE_DIR = _template_dir()
TEMPLATE_VERSION = 2  # v2: no stop filter in the analyzer. Bump when a mapping or analyzer changes; `memory reindex` rolls indices forward
PIPELINE_ID = "memory-hybrid"
PIPELINE_FILE = "memory-hybrid-pipeline"
DEFAULT_DIMENSION = 384  # all-MiniLM-L6-v2; used for the (unused) vector field when MEMORY_EMBEDDER=none

_VERSIONED = re.compile(r"^(?P<alias>.+)\.v(?P<n>[0-9]+)$")


@cache
def load(name: str) -> dict[str, Any]:
    """A body from index_templates/ exactly as stored (callers get their own deep copy via render_*)."""
    with open(TEMPLATE_DIR / f"{name}.json", encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]


def _settings(body: dict[str, Any], shards: int, replicas: int) -> None:
    index = body["template"]["settings"]["index"]
    index["number_of_shards"] = shards
    index["number_of_replicas"] = replicas


def render_facts(*, shards: int, replicas: int, dimension: int, embedder: str) -> dict[str, Any]:
    body = copy.deepcopy(load(FACTS))
    _settings(body, shards, replicas)
    mappings = body["template"]["mappings"]
    mappings["_meta"].update({"template_version": TEMPLATE_VERSION, "embedder": embedder, "dimension": dimension})
    mappings["properties"]["embedding"]["dimension"] = dimension
    body["version"] = body["_meta"]["template_version"] = TEMPLATE_VERSION
    return body


def render_queries(*, shards: int, replicas: int) -> dict[str, Any]:
    body = copy.deepcopy(load(QUERIES))
    _settings(body, shards, replicas)
    body["template"]["mappings"]["_meta"]["template_version"] = TEMPLATE_VERSION
    body["version"] = body["_meta"]["template_version"] = TEMPLATE_VERSION
    return body


def render_pipeline(*, lexical_weight: float, vector_weight: float) -> dict[str, Any]:
    """Weights in sub-query order [lexical, vector]; they sum to 1 as the processor requires."""
    body = copy.deepcopy(load(PIPELINE_FILE))
    processor = body["phase_results_processors"][0]["normalization-processor"]
    processor["combination"]["parameters"]["weights"] = [lexical_weight, vector_weight]
    return body


def alias(entity: str, profile: str) -> str:
    """`memory-facts-<profile>` or `memory-queries-<profile>`: what every read and write goes through."""
    return f"{entity}-{profile}"


def versioned(alias_name: str, n: int) -> str:
    return f"{alias_name}.v{n}"


def version_of(index: str, alias_name: str) -> int | None:
    """N of `<alias>.v<N>`, or None when the index is not a version of that alias."""
    match = _VERSIONED.match(index)
    if match is None or match["alias"] != alias_name:
        return None
    return int(match["n"])
