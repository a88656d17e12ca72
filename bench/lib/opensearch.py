"""The benchmarks' deployments on an OpenSearch cluster: a prefix of the run's own, removed afterwards with the
MEMORY_OPENSEARCH_* credentials of the environment (what a user without the right to remove templates or
pipelines cannot remove is said, not fatal)."""

from __future__ import annotations

import os

from bench.lib.measure import console
from service.config import Settings
from service.search.opensearch.client import make_client


def prefix(base: str | None, part: str) -> str:
    """`<base>-<part>`: --opensearch-prefix, or one made of this process's id."""
    return f"{base or f'bench-{os.getpid()}'}-{part}"


def remove(url: str, prefix: str) -> None:
    client = make_client(Settings(search="opensearch", opensearch_url=url))
    try:
        client.indices.delete(index=f"{prefix}-*", ignore_unavailable=True, allow_no_indices=True)
        steps = [(f"{prefix}-{entity}", lambda name: client.indices.delete_index_template(name=name, ignore=[404]))
                 for entity in ("facts", "queries")]
        steps.append((f"{prefix}-hybrid", lambda name: client.search_pipeline.delete(id=name, ignore=[404])))
        for name, step in steps:
            try:
                step(name)
            except Exception as exc:  # noqa: BLE001 - e.g. 403 for a least-privilege user
                console.print(f"  (left {name} on the cluster: {type(exc).__name__})")
    finally:
        client.close()
