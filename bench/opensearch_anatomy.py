"""Where one OpenSearch-mode memory_search spends the cluster's time: the served `_msearch` taken apart.

    python bench/opensearch_anatomy.py --opensearch-url URL [--facts 10000] [--queries 100] [--rounds 3]
    python bench/opensearch_anatomy.py --opensearch-url URL --facts 100000 --store /var/tmp/anatomy-100k

Seeds one profile of --facts facts (real MiniLM vectors), mirrors it into a deployment prefix of its own on
the cluster, and records the exact `_msearch` the service sends for each query (its Searcher, with a
recorder swapped onto its `_msearch`; nothing in the service is edited). Then, query by query and
interleaved so that the machine's drift hits every variant alike, it sends:

  served _msearch        the request as served: the hybrid query and its companion searches in one round trip
  hybrid query alone     the first search of it (BM25 + exact vector scoring through the normalization pipeline)
  vector sub-query       the hybrid's exact vector sub-query (the k-NN `knn_score` script) as a plain search
  lexical sub-query      the hybrid's BM25 sub-query as a plain search
  companion searches     the rest of the _msearch (inactive matches, facts without a vector, the raw BM25
                         scores, and whether a term occurs at all when the readability rule asks)
  empty search           `match_none` on the same index and routing: the round trip's own floor

and, to show what approximate k-NN would buy (the service does not use it: see docs/benchmarks.md), the vector
sub-query's top MEMORY_RERANK_DEPTH exact, then by the HNSW graph with the profile's filter inside (`knn` with
k), and the radial HNSW search that would have to give the count (`knn` with min_score): how often each gives
the exact answer -- the same cosines above the threshold in its top list, the same count -- is printed beside.

and prints, for each, the client-side median (the opensearch-py call, as the service makes it) and the median
of OpenSearch's own `took`; and what measuring the store's off-topic level costs (SearchBackend.closest: the
probe questions as one `_msearch` of exact searches, which a profile's first search in a process pays, and
a search after its facts changed by a tenth). Figures are printed, never asserted; the machine is shared, so compare the rows of
one run, not runs with each other. The deployment prefix is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from rich.table import Table  # noqa: E402

from bench.lib import opensearch  # noqa: E402
from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.measure import console  # noqa: E402
from bench.lib.seeding import seed_facts, store_dir  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import build_services  # noqa: E402
from service.domain.ports import SearchRequest  # noqa: E402
from service.domain.ranking import level  # noqa: E402
from service.search.opensearch.documents import routing  # noqa: E402
from service.search.opensearch.queries import Space, cosine_to_score, score_to_cosine  # noqa: E402
from service.search.opensearch.searcher import Searcher  # noqa: E402

Bodies = list[dict[str, Any]]


def record_msearch(searcher: Searcher) -> list[tuple[int, Bodies]]:
    """Swap a recorder onto this searcher's `_msearch`: every (profile id, bodies) it sends is kept."""
    sent: list[tuple[int, Bodies]] = []
    served = searcher._msearch

    def recording(profile_id: int, bodies: Bodies, *, check: bool = True) -> list[dict[str, Any]]:
        sent.append((profile_id, [dict(body) for body in bodies]))
        return served(profile_id, bodies, check=check)

    searcher._msearch = recording  # type: ignore[method-assign]
    return sent


def hybrid_part(body: dict[str, Any], n: int) -> dict[str, Any]:
    """Sub-query n of a hybrid search body, as a plain search with the same size and exact total."""
    return {"size": body["size"], "track_total_hits": True, "_source": False,
            "query": body["query"]["hybrid"]["queries"][n]}


def vector_part(body: dict[str, Any]) -> tuple[list[float], list[dict[str, Any]], float]:
    """The query vector, the filter clauses and the cosine threshold of a hybrid body's exact vector sub-query."""
    script = body["query"]["hybrid"]["queries"][1]["script_score"]
    space = script["script"]["params"]["space_type"]
    return (script["script"]["params"]["query_value"], script["query"]["bool"]["filter"],
            score_to_cosine(float(script["min_score"]), space))


def exact_top(body: dict[str, Any]) -> dict[str, Any]:
    """The exact vector sub-query, its top `depth` (the pool's share by meaning) and its exact count."""
    return {"size": body["query"]["hybrid"]["pagination_depth"], "track_total_hits": True, "_source": False,
            "query": body["query"]["hybrid"]["queries"][1]}


def approximate_top(body: dict[str, Any]) -> dict[str, Any]:
    """The top `depth` by the HNSW graph, the profile's filter applied inside the graph search (Lucene's
    efficient filtering); scored (1 + cos) / 2 by the index's cosinesimil space."""
    vector, clauses, _ = vector_part(body)
    depth = body["query"]["hybrid"]["pagination_depth"]
    return {"size": depth, "track_total_hits": True, "_source": False,
            "query": {"knn": {"embedding": {"vector": vector, "k": depth, "filter": {"bool": {"filter": clauses}}}}}}


def approximate_radial(body: dict[str, Any]) -> dict[str, Any]:
    """Every fact at cosine >= the threshold by the HNSW graph (radial search): what a count would need."""
    vector, clauses, threshold = vector_part(body)
    return {"size": body["query"]["hybrid"]["pagination_depth"], "track_total_hits": True, "_source": False,
            "query": {"knn": {"embedding": {"vector": vector, "min_score": cosine_to_score(threshold, "cosinesimil"),
                                            "filter": {"bool": {"filter": clauses}}}}}}


def cosines(answer: dict[str, Any], space: Space, threshold: float) -> list[float]:
    """The cosines of an answer's hits at or above the threshold, best first, rounded past float32's noise."""
    found = [round(score_to_cosine(float(h["_score"]), space), 5) for h in answer["hits"]["hits"]]
    return [c for c in found if c >= threshold - 1e-6]


def exactness(client: Any, index: str, sent: list[tuple[int, Bodies]]) -> dict[str, str]:
    """How often the approximate searches answer as the exact one: top list (cosines above the threshold) and
    count."""
    same_top = same_count = 0
    for profile_id, bodies in sent:
        _, _, threshold = vector_part(bodies[0])
        header = {"routing": routing(profile_id)}
        exact, top, radial = client.msearch(index=index, body=[
            header, exact_top(bodies[0]), header, approximate_top(bodies[0]), header, approximate_radial(bodies[0]),
        ])["responses"]
        wanted = cosines(exact, "innerproduct", threshold)
        same_top += cosines(top, "cosinesimil", threshold)[: len(wanted)] == wanted
        same_count += radial["hits"]["total"]["value"] == exact["hits"]["total"]["value"]
    n = len(sent)
    return {"approximate k-NN, top depth (HNSW, filter inside)": f"{same_top / n:.0%} same top list",
            "approximate radial (HNSW, cosine >= threshold)": f"{same_count / n:.0%} same count",
            "vector sub-query, top depth (exact script)": "exact"}


VARIANTS: dict[str, Callable[[Bodies], Bodies]] = {
    "served _msearch": lambda bodies: bodies,
    "hybrid query alone": lambda bodies: bodies[:1],
    "vector sub-query (exact script)": lambda bodies: [hybrid_part(bodies[0], 1)],
    "lexical sub-query (BM25)": lambda bodies: [hybrid_part(bodies[0], 0)],
    "companion searches": lambda bodies: bodies[1:],
    "empty search (round-trip floor)": lambda bodies: [{"size": 0, "query": {"match_none": {}}}],
    "vector sub-query, top depth (exact script)": lambda bodies: [exact_top(bodies[0])],
    "approximate k-NN, top depth (HNSW, filter inside)": lambda bodies: [approximate_top(bodies[0])],
    "approximate radial (HNSW, cosine >= threshold)": lambda bodies: [approximate_radial(bodies[0])],
}


def measure(client: Any, index: str, sent: list[tuple[int, Bodies]], rounds: int) -> dict[str, tuple[list, list]]:
    """{variant: (client-side ms, took ms of its slowest search)} over every recorded request, interleaved, with
    the shard request cache off."""
    out: dict[str, tuple[list, list]] = {name: ([], []) for name in VARIANTS}
    for _ in range(rounds):
        for profile_id, bodies in sent:
            # Each request is sent again every round: the shard request cache would answer its size-0 searches
            # (the counts) from memory, which a served search, a new query each time, never gets.
            header = {"routing": routing(profile_id), "request_cache": False}
            for name, pick in VARIANTS.items():
                lines: list[dict[str, Any]] = []
                for body in pick(bodies):
                    lines += [header, body]
                started = time.perf_counter()
                answer = client.msearch(index=index, body=lines)
                out[name][0].append((time.perf_counter() - started) * 1000)
                failed = [r["error"] for r in answer["responses"] if "error" in r]
                if failed:
                    raise SystemExit(f"{name}: OpenSearch refused a search: {failed[0]}")
                out[name][1].append(max(float(r["took"]) for r in answer["responses"]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opensearch-url", default=os.environ.get("OPENSEARCH_URL"))
    parser.add_argument("--opensearch-prefix", default=None, help="deployment prefix (default bench-<pid>)")
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the recorded requests")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--store", default=None, help="seed the store into DIR and keep it; reuse it when seeded before")
    args = parser.parse_args(argv)
    if not args.opensearch_url:
        parser.error("--opensearch-url (or OPENSEARCH_URL) is needed: `make opensearch` starts a node")
    console.print(f"OpenSearch search anatomy: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    console.print(f"  the cluster: {opensearch.describe(args.opensearch_url)}")
    prefix = opensearch.prefix(args.opensearch_prefix, "anatomy")
    with store_dir(args.store, "bench-anatomy-") as (data_dir, reused):
        with build_services(Settings(data_dir=data_dir, embedder="minilm")) as seeding:
            seeding.embedder.embed_documents(["warm"])
            maker = FactMaker(args.seed)
            if reused:  # seeded by an earlier run with --store
                profile = seeding.profiles.get("bench")
                console.print(f"  reusing the store seeded in {data_dir}")
            else:
                profile = seeding.profiles.create("bench")
                seed_facts(seeding, profile, args.facts, maker, os.cpu_count() or 1)
            queries = [q for _, q in make_queries(maker, args.queries, args.seed)]
        services = build_services(Settings(data_dir=data_dir, embedder="minilm", search="opensearch",
                                           opensearch_url=args.opensearch_url, opensearch_prefix=prefix))
        try:
            backend = services.backend
            backend.sync_now()  # indices, pipeline and the backfill of the seeded facts
            searcher: Searcher = backend.searcher
            sent = record_msearch(searcher)
            served_ms = []
            for query in [*queries, *queries]:  # the first pass warms the node's JIT; the second is timed
                request = SearchRequest(profile_id=profile.id, profile=profile.name, query=query, limit=8,
                                        vector=services.embedder.embed_query(query))
                started = time.perf_counter()
                backend.search(request)
                served_ms.append((time.perf_counter() - started) * 1000)
            del served_ms[: len(queries)]
            hybrid = [(pid, bodies) for pid, bodies in sent[len(sent) // 2:] if "hybrid" in bodies[0].get("query", {})]
            console.print(f"  {len(hybrid)} of {len(queries)} queries went to the hybrid query (the others were "
                          f"answered without it); backend.search p50 {statistics.median(served_ms):.2f} ms")
            if not hybrid:
                raise SystemExit("no query reached the hybrid query: raise --queries")
            probes = np.stack([services.embedder.embed_query(q) for q in level.probes()])
            level_ms = []
            for _ in range(args.rounds * 4 + 1):  # the first warms the node
                started = time.perf_counter()
                backend.closest(profile.id, profile.name, probes)
                level_ms.append((time.perf_counter() - started) * 1000)
            console.print(f"  measuring the store's off-topic level ({len(probes)} probe questions, one _msearch of "
                          f"exact searches; once per profile and process, again when its facts change by a tenth): "
                          f"p50 {statistics.median(level_ms[1:]):.1f} ms")
            measure(backend.client, searcher.index, hybrid, 1)  # warm-up, not counted
            figures = measure(backend.client, searcher.index, hybrid, args.rounds)
            exact = exactness(backend.client, searcher.index, hybrid)
        finally:
            services.close()
            opensearch.remove(args.opensearch_url, prefix)
    table = Table(title=f"one profile of {args.facts:,} facts: the served _msearch taken apart "
                        f"({len(hybrid)} queries x {args.rounds} rounds, interleaved)")
    for column in ("request", "client p50 ms", "took p50 ms (OpenSearch)", "searches", "answers as exact"):
        table.add_column(column, justify="right")
    for name, (client_ms, took_ms) in figures.items():
        count = len(VARIANTS[name](hybrid[0][1]))
        table.add_row(name, f"{statistics.median(client_ms):.2f}", f"{statistics.median(took_ms):.1f}", str(count),
                      exact.get(name, ""))
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
