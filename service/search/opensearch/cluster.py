"""What the service needs of a cluster, checked before it relies on it: OpenSearch (not Elasticsearch) at
least MIN_VERSION, with the k-NN and neural-search plugins. Each problem is one line saying what to do.

2.19 is the minimum because the hybrid query sends `pagination_depth` (neural-search 2.19); the hybrid
query itself and the normalization processor need neural-search, the vectors and the exact `knn_score` script
need k-NN. Without vectors (MEMORY_EMBEDDER=none) neither plugin is used.

This release is tested on TESTED_ON (the test suite runs on real 2.19.1 and 3.5.0 nodes). A newer major or minor
is used all the same, with a note (ClusterVersion.note: logged once, shown by `memory opensearch check` and
/readyz), never refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch

from service.errors import BackendUnavailable
from service.search.opensearch.client import translated

MIN_VERSION = (2, 19, 0)
TESTED = ((2, 19), (3, 0), (3, 1), (3, 2), (3, 3), (3, 4), (3, 5))  # (major, minor) this release is tested on
TESTED_ON = "2.19.x and 3.x up to 3.5"
PLUGINS = {"opensearch-knn": "k-NN", "opensearch-neural-search": "neural-search"}


@dataclass(frozen=True)
class ClusterVersion:
    """What the cluster said it is, and what follows: `problems` (it cannot be used) or a `note` (a version this
    release is not tested on: used all the same)."""

    distribution: str
    number: str
    problems: list[str] = field(default_factory=list)
    note: str | None = None


def version_tuple(number: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", number)[:3])


def cluster_problems(client: OpenSearch, *, vectors: bool) -> list[str]:
    """Everything the cluster lacks (empty: it can serve this release): version_problems, then
    plugin_problems. Raises BackendUnavailable when it cannot be asked at all."""
    return version_problems(client) or plugin_problems(client, vectors=vectors)


def version_problems(client: OpenSearch) -> list[str]:
    """Not OpenSearch, or older than MIN_VERSION: the service cannot use the cluster at all."""
    return read_version(client).problems


def read_version(client: OpenSearch) -> ClusterVersion:
    """The cluster's distribution and version (GET /), judged: see ClusterVersion."""
    with translated("info"):
        info: dict[str, Any] = client.info()
    version = info.get("version", {})
    return judged(str(version.get("distribution", "elasticsearch")), str(version.get("number", "0")))


def judged(distribution: str, number: str) -> ClusterVersion:
    wanted = ".".join(map(str, MIN_VERSION))
    if distribution != "opensearch":
        return ClusterVersion(distribution, number, [
            f"the cluster is {distribution} {number}, not OpenSearch: the service needs OpenSearch ≥ {wanted} "
            "with the k-NN and neural-search plugins"])
    if version_tuple(number) < MIN_VERSION:
        return ClusterVersion(distribution, number, [
            f"OpenSearch {number} is older than {wanted}, which the hybrid query needs (pagination_depth): "
            f"upgrade the cluster to {wanted} or later"])
    if version_tuple(number)[:2] not in TESTED:
        return ClusterVersion(distribution, number, note=(
            f"OpenSearch {number} is newer than the versions this release is tested on ({TESTED_ON}): it is used "
            "all the same; `memory check` compares the mirror with the canonical store"))
    return ClusterVersion(distribution, number)


def plugin_problems(client: OpenSearch, *, vectors: bool) -> list[str]:
    """The k-NN or neural-search plugin missing (with vectors on): without neural-search searches run by words
    only (degraded); without k-NN no vector can be mirrored."""
    if not vectors:
        return []
    try:
        missing = sorted(set(PLUGINS) - installed_plugins(client))
    except BackendUnavailable as exc:
        return [f"cannot list the cluster's plugins ({exc.message}): the service needs k-NN and neural-search "
                "(grant cluster:monitor/nodes/info to check them)"]
    if not missing:
        return []
    return [f"the cluster lacks the {' and '.join(PLUGINS[m] for m in missing)} plugin"
            f"{'s' if len(missing) > 1 else ''} ({', '.join(missing)}): install "
            f"{'them' if len(missing) > 1 else 'it'} on every node, or run with MEMORY_EMBEDDER=none "
            "(lexical search only)"]


def installed_plugins(client: OpenSearch) -> set[str]:
    """The plugins every node has (a plugin missing on one node is missing)."""
    with translated("list plugins"):
        nodes = client.nodes.info(metric="plugins")["nodes"]
    sets = [{plugin["name"] for plugin in node.get("plugins", [])} for node in nodes.values()]
    return set.intersection(*sets) if sets else set()
