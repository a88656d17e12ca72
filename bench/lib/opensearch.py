"""The benchmarks' deployments on an OpenSearch cluster: a prefix of the run's own, removed afterwards with the
MEMORY_OPENSEARCH_* credentials of the environment (what a user without the right to remove templates or
pipelines cannot remove is said, not fatal)."""

from __future__ import annotations

import os
import time

from opensearchpy.exceptions import AuthorizationException

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


def describe(url: str) -> str:
    """The cluster a figure was taken on: OpenSearch's version, Lucene's, the JVM and whether the JDK's vector module
    (what Lucene's SIMD vector code needs) is in its arguments -- each node's."""
    client = make_client(Settings(search="opensearch", opensearch_url=url))
    try:
        info = client.info()["version"]
        nodes = client.nodes.info(metric="jvm")["nodes"]
    except Exception as exc:  # noqa: BLE001 - a user without cluster:monitor/nodes/info: say so, go on
        return f"(cannot describe the cluster: {type(exc).__name__})"
    finally:
        client.close()
    jvms = sorted({f"Java {node['jvm'].get('version')} ({node['jvm'].get('vm_vendor', '?')}), vector module "
                   f"{'added' if any('jdk.incubator.vector' in a for a in node['jvm'].get('input_arguments', [])) else 'not added'}"
                   for node in nodes.values()})
    return f"OpenSearch {info['number']} (Lucene {info.get('lucene_version', '?')}), {len(nodes)} node(s): {'; '.join(jvms)}"


def search_count(url: str, index: str) -> int | None:
    """How many searches the cluster ran on `index` (query_total over its primaries, all shards); None when the
    user may not read index stats (the service's least-privilege role has no indices:monitor/stats)."""
    client = make_client(Settings(search="opensearch", opensearch_url=url))
    try:
        stats = client.indices.stats(index=index, metric="search")
    except AuthorizationException:
        return None
    finally:
        client.close()
    return int(stats["_all"]["primaries"]["search"]["query_total"])


def settle_merges(url: str, index: str, within: float, every: float = 2.0) -> float | None:
    """Wait (up to `within` s) until the cluster runs no merge on `index`: a mirror just backfilled in bulk goes
    on merging its segments for a while, and searches timed meanwhile share the node's cores with it. The seconds
    waited; None when the user may not read index stats (then nothing is waited for)."""
    client = make_client(Settings(search="opensearch", opensearch_url=url))
    started = time.monotonic()
    try:
        while True:
            try:
                stats = client.indices.stats(index=index, metric="merge")
            except AuthorizationException:
                return None
            if int(stats["_all"]["total"]["merges"]["current"]) == 0 or time.monotonic() - started > within:
                return time.monotonic() - started
            time.sleep(every)
    finally:
        client.close()


def heap_mb(url: str) -> float | None:
    """The JVM heap in use over the cluster's nodes, in MB (None: the user may not read node stats)."""
    client = make_client(Settings(search="opensearch", opensearch_url=url))
    try:
        nodes = client.nodes.stats(metric="jvm")["nodes"]
    except Exception:  # noqa: BLE001 - a user without cluster:monitor/nodes/stats: no figure
        return None
    finally:
        client.close()
    return sum(node["jvm"]["mem"]["heap_used_in_bytes"] for node in nodes.values()) / 2**20
