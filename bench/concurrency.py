"""Concurrent clients searching and writing through `memory serve` over real MCP HTTP (loopback only).

    python bench/concurrency.py [--clients 20] [--seconds 20] [--facts 1000] [--writes 0.2]
                                [--database-url postgresql://...] [--embedder minilm|none]

`memory serve` runs in its own process on a fresh data dir (SQLite by default; --database-url points it at
an empty PostgreSQL database instead), seeded with --facts facts through memory_write. Then --clients
clients, each on its own keep-alive connection (plain JSON-RPC POSTs, asyncio in one client process), call
memory_search and, with probability --writes, memory_write, back to back, for --seconds seconds (bounded:
no call starts after the deadline). Printed: calls per second, p50/p95/max per tool, errors (any non-200,
JSON-RPC error or tool error counts), and that every acknowledged write is readable afterwards.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.postgres import free_port  # noqa: E402
from bench.lib.waiting import until  # noqa: E402


def memory(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "service", *args], env=env, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"memory {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def body(tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


async def client_loop(url: str, headers: dict[str, str], deadline: float, queries: list[str], maker: FactMaker,
                      write_share: float, rng: random.Random, out: dict[str, list[float]], errors: list[str],
                      written: list[str]) -> None:
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http:
        while time.monotonic() < deadline:
            if rng.random() < write_share:
                tool, arguments = "memory_write", maker.make()
            else:
                tool, arguments = "memory_search", {"query": rng.choice(queries)}
            t0 = time.perf_counter()
            try:
                answer = await http.post("/mcp/bench", json=body(tool, arguments))
                elapsed = time.perf_counter() - t0
                result = answer.json().get("result", {}) if answer.status_code == 200 else {}
                if answer.status_code != 200 or not result or result.get("isError"):
                    errors.append(f"{tool}: {answer.status_code} {answer.text[:200]}")
                    continue
            except httpx.HTTPError as exc:
                errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                continue
            out[tool].append(elapsed)
            if tool == "memory_write":
                written.append(result["structuredContent"]["fact"]["uid"])


async def run(url: str, token: str, args: argparse.Namespace) -> tuple[dict[str, list[float]], list[str], list[str], float]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    maker = FactMaker(args.seed + 1)
    queries = [q for _, q in make_queries(maker, 300, args.seed)]
    out: dict[str, list[float]] = {"memory_search": [], "memory_write": []}
    errors: list[str] = []
    written: list[str] = []
    started = time.monotonic()
    deadline = started + args.seconds
    await asyncio.gather(*(client_loop(url, headers, deadline, queries, FactMaker(args.seed + 100 + i),
                                       args.writes, random.Random(args.seed + i), out, errors, written)
                           for i in range(args.clients)))
    return out, errors, written, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--writes", type=float, default=0.2, help="share of calls that are memory_write")
    parser.add_argument("--database-url", default=None, help="an EMPTY PostgreSQL database (default: SQLite)")
    parser.add_argument("--embedder", choices=("minilm", "none"), default="minilm")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        port = free_port()
        env = {**os.environ, "MEMORY_DATA_DIR": tmp, "MEMORY_PORT": str(port), "MEMORY_EMBEDDER": args.embedder}
        if args.database_url:
            env["MEMORY_DATABASE_URL"] = args.database_url
        memory("profile", "create", "bench", env=env)
        token = json.loads(memory("token", "issue", "bench", "--json", env=env))["token"]
        server = subprocess.Popen([sys.executable, "-m", "service", "serve"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            def ready() -> bool:
                try:
                    if httpx.get(f"{url}/readyz", timeout=2).json().get("ready"):
                        return True
                except (httpx.HTTPError, ValueError):
                    pass
                if server.poll() is not None:
                    raise SystemExit(f"memory serve did not become ready: it exited ({server.returncode})")
                return False

            until(ready, 120, every=0.2, what=f"memory serve ready at {url}/readyz")
            headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
            seed_maker = FactMaker(args.seed)
            with httpx.Client(base_url=url, headers=headers, timeout=60) as http:
                for _ in range(args.facts):
                    http.post("/mcp/bench", json=body("memory_write", seed_maker.make())).raise_for_status()
            out, errors, written, wall = asyncio.run(run(url, token, args))
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
                lost = [uid for uid in written if http.get(f"/api/bench/facts/{uid}").status_code != 200]
        finally:
            server.terminate()
            server.wait(30)

    store = "PostgreSQL" if args.database_url else "SQLite"
    calls = sum(len(v) for v in out.values())
    print(f"{args.clients} clients, {wall:.1f} s, {store}, {args.facts} facts seeded, write share {args.writes:.0%}")
    print(f"  throughput: {calls / wall:.1f} calls/s ({len(out['memory_search']) / wall:.1f} searches/s, "
          f"{len(out['memory_write']) / wall:.1f} writes/s)")
    for tool, samples in out.items():
        if samples:
            ms = sorted(s * 1000 for s in samples)
            print(f"  {tool}: n={len(ms)} p50 {statistics.median(ms):.1f} ms, p95 {ms[int(0.95 * (len(ms) - 1))]:.1f}"
                  f" ms, max {ms[-1]:.1f} ms")
    print(f"  errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    print(f"  acknowledged writes readable afterwards: {len(written) - len(lost)}/{len(written)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
