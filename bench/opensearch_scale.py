"""OpenSearch mode against the embedded default, on the same store, side by side (issues 26 and 35):

1. one profile of --facts facts (default 10,000): memory_search p50/p95 over MCP with the SDK's client, from two
   `memory serve` running at once on copies of one store -- the embedded backend, and the OpenSearch mirror --
   query by query, interleaved (the order alternates, so the machine's drift hits both alike), after --warmup
   untimed searches on each; and the ratio of the p50s;
2. --profiles profiles (default 1,000) of --per-profile facts each: the number of indices and shards the
   deployment holds on the cluster (two indices, whatever the number of profiles; the per-profile layout of
   earlier releases held two per profile), and the search p50 over --sample profiles (a few searches each)
   in both modes, with the ratio. --distinct N embeds N facts once and lets every profile draw its facts from
   them (with their vectors): how 1,000,000 facts across profiles are seeded in minutes, not hours.

For each part it prints the seeding time (embedding, inserting), how long the OpenSearch side took from its start
to its first search answered by the cluster (the mirror built and backfilled from the store meanwhile), each
server's resident memory after the searches, and the cluster's JVM heap in use.

Needs a cluster (`make opensearch` starts the test node and prints its URL; OPENSEARCH_TEST_VERSION=3.5.0 for
3.5); the runs use deployment prefixes of their own and remove them afterwards. Timings are printed, never
asserted; the machine is shared, so quote ratios and medians of several runs (--runs).

A ratio is printed only when OpenSearch served every search of the OpenSearch run: each memory_search answered
in hybrid mode (never "degraded", i.e. answered from the canonical store), the deployment's indices are on the
cluster, and the cluster's own search count on the facts index grew by at least one per search. Otherwise the run
stops with what it found (a degraded run once printed 0.53).

    python bench/opensearch_scale.py --opensearch-url http://127.0.0.1:9200
    python bench/opensearch_scale.py --opensearch-url URL --facts 10000 --profiles 1000 --runs 3
    python bench/opensearch_scale.py --opensearch-url URL --facts 100000 --skip many
    python bench/opensearch_scale.py --opensearch-url URL --skip one --profiles 1000 --per-profile 1000 \
        --distinct 20000 --sides opensearch

(Both sides of the last need more memory than 24 GB: the embedded server holds every profile's index, token vectors
included -- 3.3 GB at 100,000 facts; docs/benchmarks.md, "Large stores". --sides opensearch serves the store in
OpenSearch mode alone: its p50/p95 and memory, no ratio.)
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import httpx  # noqa: E402
from rich.table import Table  # noqa: E402

from bench.lib import opensearch  # noqa: E402
from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.mcp import call, mcp_client  # noqa: E402
from bench.lib.measure import console, rss, stats_ms  # noqa: E402
from bench.lib.seeding import embedded_corpus, seed_facts, store_dir  # noqa: E402
from bench.lib.server import served  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import build_services  # noqa: E402
from service.search.opensearch.client import make_client  # noqa: E402


class NotServed(SystemExit):
    """The OpenSearch run was not served by OpenSearch: no ratio."""


async def served_fully(client: Any, query: str, within: float = 300.0) -> None:
    """A warm-up search, again until it answers in hybrid mode: the OpenSearch mirror is built on the first search
    after start-up (indices created, the store backfilled), and searches answer degraded from the canonical store
    until it is -- those must not be timed."""
    deadline = time.monotonic() + within
    while (await call(client, "memory_search", query=query)).get("mode") != "hybrid":
        if time.monotonic() > deadline:
            raise NotServed(f"refused to print a ratio: searches still answer degraded {within:.0f} s after start-up")
        await anyio.sleep(0.5)


async def searches(urls: dict[str, str], targets: list[tuple[str, str, list[str]]], warmup: int,
                   within: float = 300.0) -> dict[str, Any]:
    """The services of `urls` (side -> base URL: embedded, opensearch or both), query by query, interleaved (the
    order alternates), so the machine's drift hits both alike: first `warmup` untimed searches on each (over the
    targets in order), then every query of every target timed. Client-side seconds of each memory_search per
    side, the modes the searches answered in, and how many timed searches got the same matched_count from both
    (they count by one rule: all of them; 0 with one side). `within`: how long a first search may answer degraded
    (the mirror still backfilling a large store)."""
    out: dict[str, Any] = {side: [] for side in urls}
    out.update(modes={side: Counter() for side in urls}, same_count=0)
    for timed in (False, True):
        left = warmup
        for profile, token, queries in targets:
            if not timed and left <= 0:
                break
            async with AsyncExitStack() as stack:
                clients = {side: await stack.enter_async_context(mcp_client(url, profile, token))
                           for side, url in urls.items()}
                for client in clients.values():
                    await served_fully(client, queries[0], within)
                for n, query in enumerate(queries if timed else queries[:left]):
                    order = list(clients) if n % 2 == 0 else list(reversed(clients))
                    counts = set()
                    for side in order:
                        started = time.perf_counter()
                        answer = await call(clients[side], "memory_search", query=query)
                        if timed:
                            out[side].append(time.perf_counter() - started)
                            out["modes"][side][str(answer.get("mode"))] += 1
                            counts.add(answer.get("matched_count"))
                    out["same_count"] += timed and len(clients) > 1 and len(counts) == 1
                    left -= 1
    return out


def served_by_opensearch(modes: Counter[str], searched: int | None, indices: int) -> None:
    """Raise NotServed unless every search of the run answered in hybrid mode from the cluster (see the module's
    text); `searched` is how many searches the cluster counted on the facts index during the run (None: the
    user may not read it; the modes alone decide)."""
    total = sum(modes.values())
    problems = []
    if modes.get("hybrid", 0) != total:
        problems.append(f"{total - modes.get('hybrid', 0)} of {total} searches answered "
                        + ", ".join(f"{n} {mode}" for mode, n in sorted(modes.items()) if mode != "hybrid"))
    if indices == 0:
        problems.append("the deployment has no index on the cluster")
    if searched is not None and searched < total:
        problems.append(f"the cluster counted {searched} searches on the facts index for {total} memory_search calls")
    if problems:
        raise NotServed("refused to print a ratio: OpenSearch did not serve the OpenSearch run (" + "; ".join(problems)
                        + "): is the cluster healthy and reachable with these settings? (`memory opensearch check`)")


def cluster_shape(url: str, prefix: str) -> tuple[int, int]:
    """(indices, shards) the deployment holds on the cluster (with the MEMORY_OPENSEARCH_* credentials)."""
    client = make_client(Settings(search="opensearch", opensearch_url=url))
    try:
        found = client.indices.get(index=f"{prefix}-*", allow_no_indices=True, ignore_unavailable=True)
    finally:
        client.close()
    shards = sum(int(body["settings"]["index"]["number_of_shards"]) * (
        1 + int(body["settings"]["index"]["number_of_replicas"])) for body in found.values())
    return len(found), shards


def compare(data_dir: Path, url: str, prefix: str, targets: list[tuple[str, str, list[str]]],
            warmup: int, *, facts: int, profiles: int = 1, embedded: bool = True) -> dict[str, Any]:
    """The same store served twice at once: embedded, and a copy of it with the OpenSearch mirror (backfilled on its
    first search); the searches interleaved (see `searches`). `embedded=False` (--sides opensearch): the store
    served in OpenSearch mode alone, as it is (no copy): for stores the embedded server cannot hold."""
    mirrored = data_dir.with_name(data_dir.name + "-opensearch") if embedded else data_dir
    if embedded:
        shutil.copytree(data_dir, mirrored)
    env = {"MEMORY_EMBEDDER": "minilm", "MEMORY_SEARCH": "opensearch", "MEMORY_OPENSEARCH_URL": url,
           "MEMORY_OPENSEARCH_PREFIX": prefix}
    try:
        within = 180.0 + facts / 200  # a large store: every profile loaded, the mirror backfilled, before timing
        with ExitStack() as stack:
            urls, pids = {}, {}
            if embedded:
                urls["embedded"], pids["embedded"] = stack.enter_context(
                    served(data_dir, {"MEMORY_EMBEDDER": "minilm"}, profiles=profiles, within=within))
            started = time.perf_counter()
            urls["opensearch"], pids["opensearch"] = stack.enter_context(
                served(mirrored, env, warm_search="opensearch", within=within))
            anyio.run(searches, urls, targets[:1], 1, within)  # the mirror built and backfilled before counting
            ready_s = time.perf_counter() - started  # started, the mirror built, a search answered by it
            merging_s = opensearch.settle_merges(url, f"{prefix}-facts", within)
            if merging_s is not None and merging_s >= 1.0:
                console.print(f"  waited {merging_s:.0f} s for the cluster to finish merging the backfilled mirror")
            before = opensearch.search_count(url, f"{prefix}-facts")
            out = anyio.run(searches, urls, targets, warmup)
            after = opensearch.search_count(url, f"{prefix}-facts")
            out["rss"] = {side: rss(pid)[0] for side, pid in pids.items()}
            out["cache"] = httpx.get(f"{urls['opensearch']}/readyz", timeout=10).json()["checks"]["search"].get(
                "candidate_cache") or {}  # loopback: the details are shown
            out["heap"] = opensearch.heap_mb(url)
            out["ready_s"] = ready_s
    finally:
        if embedded:
            shutil.rmtree(mirrored, ignore_errors=True)
    searched = None if before is None or after is None else after - before
    if searched is None:
        console.print("  (the cluster's own search count not compared: the user may not read index stats)")
    modes = out.pop("modes")
    if embedded and modes["embedded"].get("hybrid", 0) != sum(modes["embedded"].values()):
        raise NotServed(f"refused to print a ratio: the embedded run answered {dict(modes['embedded'])}, not all "
                        "hybrid")
    out["shape"] = cluster_shape(url, prefix)
    served_by_opensearch(modes["opensearch"], searched, out["shape"][0])
    return out


def one_profile(args: argparse.Namespace, run: int) -> dict[str, Any]:
    console.rule(f"[bold]run {run}: one profile of {args.facts:,} facts")
    prefix = opensearch.prefix(args.opensearch_prefix, f"a{run}")
    with store_dir(args.store, "bench-scale-") as (data_dir, reused):
        with build_services(Settings(data_dir=data_dir, embedder="minilm")) as services:
            services.embedder.embed_documents(["warm"])
            maker = FactMaker(args.seed + run)
            if reused:  # seeded by an earlier run with --store: its one profile, queries of a maker of their own
                profile = services.profiles.get("bench")
                console.print(f"  reusing the store seeded in {data_dir}")
            else:
                profile = services.profiles.create("bench")
                seeded(args.facts, seed_facts(services, profile, args.facts, maker, os.cpu_count() or 1))
            token = services.profiles.issue_token("bench").token
            queries = [q for _, q in make_queries(maker, args.queries, args.seed + run)]
        try:
            return compare(data_dir, args.opensearch_url, prefix, [("bench", token, queries)], args.warmup,
                           facts=args.facts, embedded=args.sides == "both")
        finally:
            opensearch.remove(args.opensearch_url, prefix)


def many_profiles(args: argparse.Namespace, run: int) -> dict[str, Any]:
    console.rule(f"[bold]run {run}: {args.profiles:,} profiles of {args.per_profile} facts")
    prefix = opensearch.prefix(args.opensearch_prefix, f"b{run}")
    rng = random.Random(args.seed + run)
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        services = build_services(Settings(data_dir=Path(tmp), embedder="minilm"))
        targets = []
        try:
            services.embedder.embed_documents(["warm"])
            names = [f"team{n:04d}" for n in range(args.profiles)]
            sample = set(rng.sample(names, min(args.sample, len(names))))
            started = time.perf_counter()
            corpus = embedded_corpus(services, args.distinct, FactMaker(args.seed + run), os.cpu_count() or 1) \
                if args.distinct else None
            timings = {"embed_s": time.perf_counter() - started, "insert_s": 0.0}
            for name in names:
                profile = services.profiles.create(name)
                maker = FactMaker(hash(name) % 100_000)
                part = seed_facts(services, profile, args.per_profile, maker, os.cpu_count() or 1, drawn_from=corpus)
                for key in timings:
                    timings[key] += part.get(key, 0.0)
                if name in sample:
                    token = services.profiles.issue_token(name).token
                    targets.append((name, token, [q for _, q in make_queries(maker, args.per_sample, run)]))
        finally:
            services.close()
        seeded(args.profiles * args.per_profile, timings, distinct=args.distinct)
        try:
            return compare(Path(tmp), args.opensearch_url, prefix, targets, args.warmup,
                           facts=args.profiles * args.per_profile, profiles=args.profiles,
                           embedded=args.sides == "both")
        finally:
            opensearch.remove(args.opensearch_url, prefix)


def seeded(n: int, timings: dict[str, float], *, distinct: int = 0) -> None:
    embedded = f"{distinct:,} distinct facts embedded" if distinct else "embedding"
    console.print(f"  seeded {n:,} facts in {timings.get('embed_s', 0.0) + timings.get('insert_s', 0.0):.0f} s "
                  f"({embedded} {timings.get('embed_s', 0.0):.0f} s, inserting {timings.get('insert_s', 0.0):.0f} s)")


def cached(cache: dict[str, int]) -> str:
    """The OpenSearch server's candidate cache over the whole run (warm-up included): candidates taken from it /
    read from the canonical store."""
    return f"{cache['hits']:,} / {cache['misses']:,}" if cache else "-"


def report(title: str, results: list[dict[str, Any]]) -> None:
    table = Table(title=title)
    for column in ("run", "embedded p50 / p95 ms", "opensearch p50 / p95 ms", "p50 ratio",
                   "indices, shards on the cluster", "server RSS MB (embedded / opensearch)", "node heap MB",
                   "opensearch side: start to first hybrid search, s", "same matched_count",
                   "candidates kept / read (MEMORY_OPENSEARCH_CANDIDATE_CACHE_MB)"):
        table.add_column(column, justify="right")
    ratios = []
    for n, result in enumerate(results, 1):
        b = stats_ms(result["opensearch"])
        both = "embedded" in result
        a = stats_ms(result["embedded"]) if both else None
        if a is not None:
            ratios.append(b["p50"] / a["p50"])
        indices, shards = result["shape"]
        table.add_row(str(n), "-" if a is None else f"{a['p50']:.1f} / {a['p95']:.1f}",
                      f"{b['p50']:.1f} / {b['p95']:.1f}", f"{ratios[-1]:.2f}" if both else "-", f"{indices}, {shards}",
                      f"{result['rss'].get('embedded', 0.0):.0f} / {result['rss']['opensearch']:.0f}" if both
                      else f"- / {result['rss']['opensearch']:.0f}",
                      "-" if result["heap"] is None else f"{result['heap']:.0f}", f"{result['ready_s']:.0f}",
                      f"{result['same_count']} of {len(result['opensearch'])}" if both else "-", cached(result["cache"]))
    console.print(table)
    shapes = sorted({result["shape"] for result in results})
    where = "the deployment on the cluster: " + ", ".join(f"{i} indices, {n} shards" for i, n in shapes)
    if ratios:
        console.print(f"  median p50 ratio (opensearch / embedded): {statistics.median(ratios):.2f}; {where}")
    else:
        console.print(f"  OpenSearch mode alone (--sides opensearch): no ratio; {where}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opensearch-url", default=os.environ.get("OPENSEARCH_URL"), required=False)
    parser.add_argument("--opensearch-prefix", default=None, help="deployment prefix (default bench-<pid>)")
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--profiles", type=int, default=1_000)
    parser.add_argument("--per-profile", type=int, default=10)
    parser.add_argument("--sample", type=int, default=50, help="profiles searched in the many-profiles part")
    parser.add_argument("--per-sample", type=int, default=4, help="searches per sampled profile")
    parser.add_argument("--store", default=None,
                        help="one-profile part: seed the store into DIR and keep it; reuse it when seeded before")
    parser.add_argument("--distinct", type=int, default=0,
                        help="many-profiles part: embed this many facts once and draw every profile's from them")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=40,
                        help="untimed searches on each service first (the node's and the service's JIT, caches)")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--skip", choices=("one", "many"), default=None, help="leave one part out")
    parser.add_argument("--sides", choices=("both", "opensearch"), default="both",
                        help="opensearch: serve the store in OpenSearch mode alone (no ratio), for stores the "
                             "embedded server cannot hold in memory")
    args = parser.parse_args(argv)
    if not args.opensearch_url:
        parser.error("--opensearch-url (or OPENSEARCH_URL) is needed: `make opensearch` starts a node")
    console.print(f"OpenSearch scale benchmark: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    console.print(f"  the cluster: {opensearch.describe(args.opensearch_url)}")
    if args.skip != "one":
        report(f"one profile of {args.facts:,} facts: memory_search over MCP (SDK client)",
               [one_profile(args, run) for run in range(1, args.runs + 1)])
    if args.skip != "many":
        report(f"{args.profiles:,} profiles of {args.per_profile} facts: memory_search over {args.sample} of them",
               [many_profiles(args, run) for run in range(1, args.runs + 1)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
