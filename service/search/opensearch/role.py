"""The least-privilege role of the service's OpenSearch user, as the security plugin names permissions
(`memory opensearch role` prints it; the test suite runs as a user holding exactly this role).

Two modes (MEMORY_OPENSEARCH_INSTALL):
- auto: the service puts its index templates and search pipeline itself (cluster-level put permissions);
- check: an administrator puts them once (`memory opensearch install` with an admin's credentials) and the
  service only reads them.
Index permissions cover only the deployment's own names (`<prefix>-facts`, `<prefix>-facts.*`, and the
queries' twins); while a deployment still has indices of the per-profile layout of earlier releases,
`legacy=True` adds `<prefix>-facts-*` and `<prefix>-queries-*` so that `memory reindex` can move and remove them.
"""

from __future__ import annotations

from typing import Any

from service.search.opensearch.templates import Names

CLUSTER_ALWAYS = [
    "cluster:monitor/main",  # the version (and every reachability probe)
    "cluster:monitor/nodes/info",  # the plugins of every node
    "indices:admin/index_template/get",
    "cluster:admin/search/pipeline/get",
    "indices:data/write/bulk",  # the mirror's deliveries (a one-document write is a bulk too)
    "indices:data/read/msearch",  # every search is one _msearch
    "indices:data/read/scroll",  # `memory check` reads a profile's documents
    "indices:data/read/scroll/clear",
]
CLUSTER_INSTALL = ["indices:admin/index_template/put", "cluster:admin/search/pipeline/put"]
INDEX_ACTIONS = [
    "indices:admin/create",  # the shared indices, and a rebuild's next version
    "indices:admin/delete",  # the versions a rebuild replaced (mirror copies only)
    "indices:admin/aliases",  # the rebuild's atomic swap
    "indices:admin/aliases/get",
    "indices:admin/get",
    "indices:admin/mappings/get",
    "indices:admin/refresh*",
    "indices:data/read/search*",
    "indices:data/read/get",
    "indices:data/write/bulk*",
    "indices:data/write/index",
]


def role(names: Names, *, install: str = "auto", legacy: bool = False) -> dict[str, Any]:
    """The role body for `PUT _plugins/_security/api/roles/<name>`."""
    patterns = names.index_patterns()
    if legacy:
        patterns += [f"{names.facts}-*", f"{names.queries}-*"]
    cluster = CLUSTER_ALWAYS + (CLUSTER_INSTALL if install == "auto" else [])
    return {
        "description": f"memory service, deployment prefix {names.prefix!r}, MEMORY_OPENSEARCH_INSTALL={install}",
        "cluster_permissions": cluster,
        "index_permissions": [{"index_patterns": patterns, "allowed_actions": list(INDEX_ACTIONS)}],
    }
