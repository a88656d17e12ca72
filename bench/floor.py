"""The floor under one memory_search and one memory_write, as an MCP client sees them.

    python bench/floor.py [--facts 1000] [--calls 200]

`memory serve` runs in its own process on a fresh data dir; the client is the MCP SDK's streamable-HTTP
client (what bench/peers/side_by_side.sh uses), calls one at a time. Printed, medians:

  write / search        memory_write of --facts corpus facts, then --calls distinct memory_search calls
  tool round trip       memory_recent(limit=1): the same client, HTTP, MCP framing, auth and a one-row read,
                        but no model -- the least any tool call costs through this stack
  query / fact embed    all-MiniLM-L6-v2 on one query / one fact text, in this process with the service's
                        own embedder and thread count (the server is idle meanwhile)
  floor                 round trip + the embedding the call cannot skip (a search embeds its query; a write
                        embeds its fact, since `similar` is part of its answer)
  above the floor       the call minus its floor: ranking, hydration, the query-log row, the transaction

Nothing is asserted; the machine is shared, so compare the rows of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.mcp import call, mcp_client  # noqa: E402
from bench.lib.server import served  # noqa: E402


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def memory_cli(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "service", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True, cwd=ROOT)
    return done.stdout


async def client_side(url: str, token: str, facts: list[dict[str, Any]], queries: list[str],
                      calls: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"write": [], "search": [], "round trip": []}
    async with mcp_client(url, "bench", token, mode="legacy") as client:
        await call(client, "memory_search", query="warm up the model and the index")
        for fact in facts:
            started = time.perf_counter()
            await call(client, "memory_write", **fact)
            times["write"].append(time.perf_counter() - started)
        for _ in range(calls):
            started = time.perf_counter()
            await call(client, "memory_recent", limit=1)
            times["round trip"].append(time.perf_counter() - started)
        for query in queries[:calls]:
            started = time.perf_counter()
            await call(client, "memory_search", query=query, limit=10)
            times["search"].append(time.perf_counter() - started)
    return {name: median_ms(samples) for name, samples in times.items()}


def embedding_side(facts: list[dict[str, Any]], queries: list[str], calls: int) -> dict[str, float]:
    from service.config import Settings
    from service.container import build_embedder
    from service.domain.models import embedding_text

    embedder = build_embedder(Settings(data_dir=Path(tempfile.mkdtemp(prefix="floor-embedder-"))))
    embedder.embed_query("load")
    query_times, fact_times = [], []
    for query in queries[:calls]:
        started = time.perf_counter()
        embedder.embed_query(query + " ")  # a text the query cache has not seen
        query_times.append(time.perf_counter() - started)
    for fact in facts[:calls]:
        started = time.perf_counter()
        embedder.embed_documents([embedding_text(fact["title"], fact["text"], fact.get("tags") or [])])
        fact_times.append(time.perf_counter() - started)
    return {"query embed": median_ms(query_times), "fact embed": median_ms(fact_times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    maker = FactMaker(seed=7)
    facts = [{k: f[k] for k in ("title", "text", "kind", "tags")} for f in (maker.make() for _ in range(args.facts))]
    queries = [query for _style, query in make_queries(maker, args.calls, seed=11)]
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
        env = {"MEMORY_DATA_DIR": tmp, "MEMORY_BIND": "127.0.0.1"}
        memory_cli("profile", "create", "bench", env=env)
        token = json.loads(memory_cli("token", "issue", "bench", "--json", env=env))["token"]
        with served(Path(tmp), env) as (url, _pid):
            measured = asyncio.run(client_side(url, token, facts, queries, args.calls))
    measured.update(embedding_side(facts, queries, args.calls))
    floors = {"search": measured["round trip"] + measured["query embed"],
              "write": measured["round trip"] + measured["fact embed"]}
    print(f"floor of one call through the MCP SDK client, {args.facts} facts, medians of {args.calls} calls (ms)")
    for name in ("round trip", "query embed", "fact embed"):
        print(f"  {name:<28} {measured[name]:7.2f}")
    for name in ("search", "write"):
        print(f"  memory_{name:<21} {measured[name]:7.2f}   floor {floors[name]:6.2f}"
              f"   above the floor {measured[name] - floors[name]:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
