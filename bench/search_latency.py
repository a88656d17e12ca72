"""memory_search and memory_write latency over real MCP HTTP, on an embedded (SQLite) store of N facts.

For each size N (--sizes), in a fresh SQLite data directory:
1. build the services (embedded search, MiniLM or no embedder) and load the model before any timing;
2. seed N facts FAST (bench/lib/seeding.py): varied fact texts from bench/lib/corpus.py, embedded in
   batches, then bulk INSERTed so the embedded index picks them up exactly as if written one by one;
3. start `memory serve` in its own process on a loopback port (as deployed; it loads the model and warms
   the index in the background, and the bench waits for /readyz), or with --server thread a uvicorn server
   in a thread of this process (the client then shares the server's GIL), and talk to /mcp/{profile} with
   the MCP SDK's own streamable-HTTP client (bench/lib/mcp.py), bearer token included -- or,
   with --client raw, plain JSON-RPC POSTs on one keep-alive connection (what the server costs, without
   the SDK client's own per-call work);
4. time, client-side, per call: the first search (it builds the profile's in-process index: FTS5 + vector
   matrix), --queries mostly distinct searches (a keyword / question / off-topic mix, so the query-vector
   cache does not hide the model's cost), a repeated-query run (a few queries over and over: cache hits),
   and --writes memory_write calls;
5. split a search's server-side time in-process over the same queries, by calling the steps the service
   calls (service.search.embedded.ranking; nothing in the service is instrumented): embed_query (cache
   emptied first), index sync, lexical (term_counts from the index's numpy postings, a word read from FTS5's
   vocabulary the first time it is asked for; bm25 of the facts passing the match rule; top-k), vector (cosine over the matrix + threshold + top-k), fusion, hydration of the hits
   from the store, the query-log write; plus SearchService.search end to end in-process.
RSS (VmRSS, and the VmHWM peak) of this process is printed after seeding, after the first search and after
all calls. The server runs in a thread of this process, so RSS covers model + index + server + client.

The issue's targets: at 10k facts, memory_search p50 <= 15 ms and p95 <= 40 ms. Timings are printed,
never asserted.

    python bench/search_latency.py                          # sizes 1000,10000, MiniLM, 200 queries
    python bench/search_latency.py --sizes 100000           # several minutes of seeding (embedding)
    python bench/search_latency.py --embedder none --sizes 1000,10000,100000
    python bench/search_latency.py --search opensearch --opensearch-url URL   # the same calls with the
        OpenSearch mirror serving memory_search (the seeded store is backfilled into it at start-up, under
        a prefix of the run's own, removed afterwards; `make opensearch` starts a node and prints its URL)
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from rich.table import Table  # noqa: E402

from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib import opensearch  # noqa: E402
from bench.lib.mcp import call, mcp_client, raw_client  # noqa: E402
from bench.lib.measure import console, rss, stats_ms  # noqa: E402
from bench.lib.seeding import seed_facts  # noqa: E402
from bench.lib.server import running, served  # noqa: E402
from service.api.app import create_app  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import Services, build_services  # noqa: E402
from service.domain.models import ProfileRef  # noqa: E402
from service.domain.ports import SearchRequest  # noqa: E402
from service.domain import lexical  # noqa: E402
from service.search.embedded import ranking  # noqa: E402

SEARCH_TARGET = {10_000: (15.0, 40.0)}  # facts -> (p50, p95) ms for memory_search


# --- the MCP run ----------------------------------------------------------------------------------------


async def mcp_run(base_url: str, profile: str, token: str, queries: list[tuple[str, str]], repeated: int,
                  writes: list[dict[str, Any]], client_kind: str = "sdk") -> dict[str, Any]:
    if client_kind == "raw":
        async with raw_client(base_url, profile, token) as raw:
            return await timed_calls(raw.call, queries, repeated, writes)
    async with mcp_client(base_url, profile, token) as client:

        async def sdk_call(tool: str, **arguments: Any) -> dict[str, Any]:
            return await call(client, tool, **arguments)

        return await timed_calls(sdk_call, queries, repeated, writes)


async def timed_calls(invoke: Callable[..., Awaitable[dict[str, Any]]], queries: list[tuple[str, str]],
                      repeated: int, writes: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"by_style": {}, "matched": {}}
    t0 = time.perf_counter()
    await invoke("memory_search", query="warm-up: where is the deploy runbook")
    out["first_search_s"] = time.perf_counter() - t0
    out["rss_after_first"] = rss()

    samples, zero = [], 0
    for style, q in queries:
        t0 = time.perf_counter()
        found = await invoke("memory_search", query=q)
        dt = time.perf_counter() - t0
        samples.append(dt)
        out["by_style"].setdefault(style, []).append(dt)
        out["matched"].setdefault(style, []).append(found["matched_count"])
        zero += found["matched_count"] == 0
    out["search"] = samples

    few = [q for _, q in queries[:10]]
    rep = []
    for i in range(repeated):
        t0 = time.perf_counter()
        await invoke("memory_search", query=few[i % len(few)])
        rep.append(time.perf_counter() - t0)
    out["repeated"] = rep

    wr = []
    for f in writes:
        t0 = time.perf_counter()
        await invoke("memory_write", **f)
        wr.append(time.perf_counter() - t0)
    out["write"] = wr

    # One search after the writes: pays the index catch-up with the new facts.
    t0 = time.perf_counter()
    await invoke("memory_search", query="after writes: who owns billing-service")
    out["search_after_writes_s"] = time.perf_counter() - t0
    return out



# --- the in-process split ------------------------------------------------------------------------------


def split(services: Services, profile: ProfileRef, queries: list[tuple[str, str]]) -> dict[str, list[float]]:
    """Time the steps of one search in-process: the ranking steps EmbeddedSearch._search calls
    (service.search.embedded.ranking), then the rest of SearchService.search."""
    backend: Any = services.backend  # the embedded backend; its internals are timed directly
    embedder, settings = services.embedder, services.settings
    if not hasattr(backend, "_synced"):
        raise SystemExit("the split needs the embedded backend (MEMORY_SEARCH=embedded)")
    cache = getattr(embedder, "_cache", None)
    if cache is not None:
        cache.clear()  # so embed_query runs the model, as for a new query
    parts: dict[str, list[float]] = {k: [] for k in (
        "embed", "sync", "filter", "lexical", "  lexical: term_counts", "  lexical: bm25 + top-k", "vector", "fusion",
        "rank total (_search)", "hydrate", "log write",
        "domain search (cached embed)")}
    depth = settings.fusion_depth
    weights = ranking.fusion_weights(embedder.enabled, settings.lexical_weight, settings.vector_weight)
    for _, q in queries:
        t0 = time.perf_counter()
        vector = embedder.embed_query(q) if embedder.enabled else None
        t1 = time.perf_counter()
        index = backend._synced(profile.id)
        t2 = time.perf_counter()
        parts["embed"].append(t1 - t0)
        parts["sync"].append(t2 - t1)
        with index.lock:
            n = index.size
            t0 = time.perf_counter()
            terms = lexical.informative_terms(q)
            passes = index.filter_mask(None, ())
            active = passes & index.active[:n]
            t1 = time.perf_counter()
            counts = ranking.term_counts(index, terms)
            t_counts = time.perf_counter()
            words = ranking.lexical_pass(index, terms, counts, active, depth)
            t2 = time.perf_counter()
            sims = index.similarities(vector) if vector is not None else None
            meaning = ranking.vector_pass(sims, n, active, settings.min_similarity, depth)
            int((active & (words.matched | meaning.matched)).sum())  # matched_count
            t3 = time.perf_counter()
            ranking.fused(words.top, meaning.top, embedder.enabled, weights, 8, index.fact_ids)
            t4 = time.perf_counter()
            request = SearchRequest(profile_id=profile.id, profile=profile.name, query=q, limit=8, kind=None,
                                    tags=(), vector=vector)
            found = backend._search(index, request)
            t5 = time.perf_counter()
        parts["filter"].append(t1 - t0)
        parts["lexical"].append(t2 - t1)
        parts["  lexical: term_counts"].append(t_counts - t1)
        parts["  lexical: bm25 + top-k"].append(t2 - t_counts)
        parts["vector"].append(t3 - t2)
        parts["fusion"].append(t4 - t3)
        parts["rank total (_search)"].append(t5 - t4)
        t0 = time.perf_counter()
        scored = services.search.hydrate(profile, found)
        t1 = time.perf_counter()
        services.query_log.record(profile, request=request, found=found, returned=scored, latency_ms=0.0)
        t2 = time.perf_counter()
        parts["hydrate"].append(t1 - t0)
        parts["log write"].append(t2 - t1)
        t0 = time.perf_counter()
        services.search.search(profile, q)
        parts["domain search (cached embed)"].append(time.perf_counter() - t0)
    return parts


# --- driver ----------------------------------------------------------------------------------------------


def serve_env(args: argparse.Namespace) -> dict[str, str]:
    """The MEMORY_* variables of the served process."""
    env = {"MEMORY_EMBEDDER": args.embedder, "MEMORY_SEARCH": args.search,
           "MEMORY_SQLITE_SYNCHRONOUS": args.sqlite_synchronous}
    if args.threads:
        env["MEMORY_TORCH_THREADS"] = str(args.threads)
    if args.search == "opensearch":
        env["MEMORY_OPENSEARCH_URL"] = args.opensearch_url
        env["MEMORY_OPENSEARCH_PREFIX"] = args.opensearch_prefix
    return env


def run_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    console.rule(f"[bold]{n:,} facts, search={args.search}, embedder={args.embedder}")
    result: dict[str, Any] = {"n": n}
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        settings = Settings(data_dir=Path(tmp), embedder=args.embedder,
                            **({"torch_threads": args.threads} if args.threads else {}))
        services = build_services(settings)
        try:
            if services.embedder.enabled:
                t0 = time.perf_counter()
                services.embedder.embed_documents(["warm"])
                result["model_load_s"] = time.perf_counter() - t0
                console.print(f"  model loaded in {result['model_load_s']:.1f}s")
            profile = services.profiles.create("bench")
            token = services.profiles.issue_token("bench").token
            maker = FactMaker(args.seed + n)
            result["seed"] = seed_facts(services, profile, n, maker, args.seed_threads)
            result["rss_seeded"] = rss()
            console.print("  seeded: " + ", ".join(f"{k} {v:.1f}s" for k, v in result["seed"].items())
                          + f"; RSS {result['rss_seeded'][0]:.0f} MB")
            queries = make_queries(maker, args.queries, args.seed)
            writer = FactMaker(args.seed + 999_999)
            writes = [writer.make() for _ in range(args.writes)]
            if args.search == "opensearch":  # this run's own deployment prefix: nothing else is touched
                args.opensearch_prefix = opensearch.prefix(args.prefix_base, str(n))
            if args.server == "thread":
                app = create_app(services=services)
                logging.getLogger().setLevel(logging.WARNING)  # the MCP SDK sets INFO (one line per request)
                with running(app) as base_url:
                    mcp = anyio.run(mcp_run, base_url, "bench", token, queries, args.repeated, writes, args.client)
                result["rss_after_calls"] = rss()
            else:
                with served(Path(tmp), serve_env(args), warm_search=args.search) as (base_url, pid):
                    mcp = anyio.run(mcp_run, base_url, "bench", token, queries, args.repeated, writes, args.client)
                    result["server_rss"] = rss(pid)
                result["rss_after_calls"] = result["server_rss"]
            result["mcp"] = mcp
            status = services.backend.status()
            result["indexed"] = status.get("facts_indexed")
            console.print(f"  first search {mcp['first_search_s'] * 1000:.0f} ms (index build), "
                          f"{len(queries)} searches, {args.repeated} repeated, {args.writes} writes done")
            # The in-process split times the embedded backend's own steps; OpenSearch's run in the cluster.
            result["split"] = split(services, profile, queries) if args.search == "embedded" else {}
            result["rss_end"] = rss()
        finally:
            services.close()
            if args.search == "opensearch":
                opensearch.remove(args.opensearch_url, args.opensearch_prefix)
    return result


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    client = "the MCP SDK's client" if args.client == "sdk" else "plain JSON-RPC POSTs"
    table = Table(title=f"memory_search / memory_write over MCP HTTP, {client} (client-side ms)")
    for col in ("facts", "call", "n", "p50", "p95", "mean", "max", "target"):
        table.add_column(col, justify="right" if col not in ("call",) else "left")
    for r in results:
        m = r["mcp"]
        target = SEARCH_TARGET.get(r["n"])
        rows = [("search (distinct)", m["search"]), ("search: keyword", m["by_style"].get("keyword", [])),
                ("search: question", m["by_style"].get("question", [])),
                ("search: off-topic", m["by_style"].get("offtopic", [])),
                ("search (repeated)", m["repeated"]), ("write", m["write"])]
        for label, samples in rows:
            s = stats_ms(samples)
            verdict = ""
            if target and label == "search (distinct)":
                ok = s["p50"] <= target[0] and s["p95"] <= target[1]
                verdict = f"p50<={target[0]:.0f} p95<={target[1]:.0f}: {'met' if ok else 'MISSED'}"
            table.add_row(f"{r['n']:,}", label, str(s["n"]), f"{s['p50']:.1f}", f"{s['p95']:.1f}",
                          f"{s['mean']:.1f}", f"{s['max']:.1f}", verdict)
    console.print(table)

    if not any(r["split"] for r in results):
        console.print("(no server-side split: it times the embedded backend's steps; OpenSearch runs them in the cluster)")
    table = Table(title="server-side split, in-process over the same distinct queries (ms)")
    table.add_column("facts", justify="right")
    table.add_column("part")
    table.add_column("p50", justify="right")
    table.add_column("p95", justify="right")
    table.add_column("mean", justify="right")
    for r in results:
        for part, samples in r["split"].items():
            s = stats_ms(samples)
            table.add_row(f"{r['n']:,}", part, f"{s['p50']:.2f}", f"{s['p95']:.2f}", f"{s['mean']:.2f}")
    if any(r["split"] for r in results):
        console.print(table)

    table = Table(title="warm-up, memory, seeding")
    for col in ("facts", "model load s", "seed embed s", "seed insert s", "first search ms", "search after writes ms",
                "RSS seeded MB", "RSS after 1st search MB", "RSS end MB", "peak MB", "server RSS MB"):
        table.add_column(col, justify="right")
    for r in results:
        m = r["mcp"]
        table.add_row(f"{r['n']:,}", f"{r.get('model_load_s', 0):.1f}", f"{r['seed'].get('embed_s', 0):.1f}",
                      f"{r['seed']['insert_s']:.1f}", f"{m['first_search_s'] * 1000:.0f}",
                      f"{m['search_after_writes_s'] * 1000:.0f}", f"{r['rss_seeded'][0]:.0f}",
                      f"{m['rss_after_first'][0]:.0f}", f"{r['rss_end'][0]:.0f}", f"{r['rss_end'][1]:.0f}",
                      f"{r['server_rss'][0]:.0f} (peak {r['server_rss'][1]:.0f})" if "server_rss" in r else "-")
    console.print(table)

    for r in results:
        matched = r["mcp"]["matched"]
        console.print(f"  {r['n']:,} facts: zero-match share by style: " + ", ".join(
            f"{style} {sum(1 for c in v if c == 0) / len(v):.0%} (median matched {statistics.median([c or 0 for c in v]):.0f})"
            for style, v in sorted(matched.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated fact counts (default 1000,10000)")
    parser.add_argument("--embedder", choices=("minilm", "none"), default="minilm")
    parser.add_argument("--queries", type=int, default=200, help="distinct memory_search calls (default 200)")
    parser.add_argument("--repeated", type=int, default=200, help="calls cycling over 10 queries (default 200)")
    parser.add_argument("--writes", type=int, default=50, help="memory_write calls (default 50)")
    parser.add_argument("--threads", type=int, default=None,
                        help="MEMORY_TORCH_THREADS of the service (default: the service's default)")
    parser.add_argument("--seed-threads", type=int, default=os.cpu_count() or 1,
                        help="torch threads while embedding the seed facts (default: all CPUs)")
    parser.add_argument("--seed", type=int, default=11, help="random seed")
    parser.add_argument("--server", choices=("process", "thread"), default="process",
                        help="run `memory serve` as its own process (default, as deployed) or in a thread here")
    parser.add_argument("--client", choices=("sdk", "raw"), default="sdk",
                        help="the MCP SDK's own client (default), or plain JSON-RPC POSTs (the server's share)")
    parser.add_argument("--search", choices=("embedded", "opensearch"), default="embedded",
                        help="the search backend of the served process (default embedded)")
    parser.add_argument("--opensearch-url", default=os.environ.get("OPENSEARCH_URL"),
                        help="with --search opensearch: a throwaway cluster (default $OPENSEARCH_URL)")
    parser.add_argument("--opensearch-prefix", dest="prefix_base", default=None,
                        help="with --search opensearch: the deployment prefix to use (default bench-<pid>; -<size> "
                             "is added; removed afterwards)")
    parser.add_argument("--sqlite-synchronous", choices=("full", "normal"), default="full",
                        help="MEMORY_SQLITE_SYNCHRONOUS of the served process (default full, the service's)")
    args = parser.parse_args(argv)
    if args.search == "opensearch" and (args.server != "process" or not args.opensearch_url):
        parser.error("--search opensearch needs --opensearch-url (or OPENSEARCH_URL) and --server process")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    load = os.getloadavg()
    console.print(f"search latency benchmark: sizes {sizes}, search {args.search}, embedder {args.embedder}, "
                  f"SQLite synchronous={args.sqlite_synchronous}, "
                  f"{args.queries} queries, "
                  f"{os.cpu_count()} CPUs, load average {load[0]:.2f} (other work on the machine skews timings)")
    results = [run_size(n, args) for n in sizes]
    report(results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
