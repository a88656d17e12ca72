"""Where the time of one memory_search and one memory_write goes, end to end through HTTP and MCP.

    python bench/breakdown.py [--sizes 1000,10000] [--calls 200] [--threads N]

Method: the service runs in this process (uvicorn in a thread, as `memory serve` runs it) with timers
wrapped around the functions each layer calls -- nothing in the service is edited; the wrappers are set
with monkeypatch-style attribute swaps before the app is built. A client in ANOTHER process (plain
JSON-RPC POSTs on one keep-alive connection, so it does not share this process's GIL) makes the calls
and reports what it saw. Per call the parts are:

  client round trip   what the client measured (HTTP request to response)
  ASGI request        the whole request inside the server (auth, MCP framing, the tool, the response)
  auth                the bearer-token check
  MCP tool layer      the SDK's call_tool: argument validation, the tool function, result conversion
    wait for a worker thread  from the tool handing its domain call to a worker thread until that call starts
                      (while the query's model run keeps the cores busy, the search waits here)
  domain total        SearchService.search / FactService.write
    embed             the model (a search's query is embedded on its own thread from the moment the MCP
                      endpoint has read the call, overlapping MCP framing, the index sync and the lexical
                      pass: "wait for vector" is the part the search actually waited for)
    backend           EmbeddedSearch.search: index sync, lexical, vector, fusion (+ the wait above)
    hydrate           the hits' facts (the embedded index hands them back; read from the store otherwise)
    query-log write   the query-log transaction
    similar           (write) the near-duplicate check
  derived: HTTP + MCP framing = ASGI - auth - MCP tool layer; serialisation & tool glue = MCP tool layer -
  domain total; client + loopback = client round trip - ASGI.
A search's client round trip is also printed apart for answers that list facts and answers with none ("memory
does not know": no facts to hydrate, rank for the caller, log as results or serialise); the median of all calls
falls between the two whenever both kinds are common, as in the side-by-side harness's query set.

Figures are medians over --calls calls after a warm-up, printed, never asserted. The machine is shared;
compare parts within one run, not runs with each other.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.seeding import seed_facts  # noqa: E402
from bench.lib.server import running  # noqa: E402
from service.api.app import create_app  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import build_services  # noqa: E402
from service.mcp.server import MemoryMCPServer  # noqa: E402

CLIENT = r"""
import json, sys, time, httpx
url, token, calls = sys.argv[1], sys.argv[2], json.loads(sys.stdin.read())
headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
out = []
with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
    for i, (tool, arguments) in enumerate(calls):
        body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        t0 = time.perf_counter()
        answer = client.post("/mcp/bench", json=body)
        out.append([time.perf_counter() - t0, len(answer.json()["result"]["structuredContent"].get("facts", ()))])
        assert answer.status_code == 200 and not answer.json()["result"].get("isError"), answer.text
print(json.dumps(out))
"""


class Timers:
    """Per-thread stacks are not needed: each part is timed where it runs; calls are sequential."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.lock = threading.Lock()
        self.recording = False

    def stop(self, part: str, count: int, timeout: float = 10.0) -> None:
        """Stop recording once `part` has `count` samples (or after `timeout`): the ASGI timer of a block's last
        call stops after the response went out, so the client can be done before that sample is in."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.samples.get(part, ())) >= count:
                    break
            time.sleep(0.001)
        self.recording = False

    def add(self, part: str, seconds: float) -> None:
        if self.recording:
            with self.lock:
                self.samples[part].append(seconds)

    def wrap(self, owner: Any, name: str, part: str) -> None:
        original = getattr(owner, name)
        timers = self
        if _is_async(original):
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    timers.add(part, time.perf_counter() - t0)
            setattr(owner, name, timed_async)
        else:
            def timed(*args: Any, **kwargs: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    timers.add(part, time.perf_counter() - t0)
            setattr(owner, name, timed)


def _is_async(fn: Callable[..., Any]) -> bool:
    import inspect

    return inspect.iscoroutinefunction(fn)


def asgi_timer(app: Any, timers: Timers) -> Any:
    async def timed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        t0 = time.perf_counter()
        try:
            await app(scope, receive, send)
        finally:
            if scope.get("type") == "http" and scope.get("path", "").startswith("/mcp/"):
                timers.add("ASGI request", time.perf_counter() - t0)
    return timed


@contextmanager
def worker_start_timed(timers: Timers) -> Iterator[None]:
    """Time each worker-thread hop from the call until its function starts ("wait for a worker thread"): the
    tools hand their domain call to anyio's worker threads (service.mcp.tools)."""
    import anyio.to_thread

    original = anyio.to_thread.run_sync

    async def run_sync(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        asked = time.perf_counter()

        def started(*inner: Any) -> Any:
            timers.add("wait for a worker thread", time.perf_counter() - asked)
            return fn(*inner)

        return await original(started, *args, **kwargs)

    anyio.to_thread.run_sync = run_sync  # type: ignore[assignment]
    try:
        yield
    finally:
        anyio.to_thread.run_sync = original  # type: ignore[assignment]


def run_client(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[float, int]]:
    """Each call's round trip (seconds) and how many facts its answer listed."""
    result = subprocess.run([sys.executable, "-c", CLIENT, url, token], input=json.dumps(calls),
                            capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        raise SystemExit(f"client failed: {result.stderr[-2000:]}")
    return [(float(seconds), int(facts)) for seconds, facts in json.loads(result.stdout)]


def measure(n: int, calls_n: int, seed: int, threads: int | None) -> dict[str, dict[str, list[float]]]:
    with tempfile.TemporaryDirectory(prefix="bench-breakdown-") as tmp:
        extra = {"torch_threads": threads} if threads else {}
        with build_services(Settings(data_dir=Path(tmp), embedder="minilm", **extra)) as services:
            services.embedder.embed_documents(["warm up"])
            profile = services.profiles.create("bench")
            token = services.profiles.issue_token("bench").token
            maker = FactMaker(seed + n)
            seed_facts(services, profile, n, maker, 2)
            queries = [q for _, q in make_queries(maker, calls_n, seed)]
            writer = FactMaker(seed + 777)
            writes = [writer.make() for _ in range(calls_n)]

            timers = Timers()
            timers.wrap(services.profiles, "authenticate", "auth")
            timers.wrap(MemoryMCPServer, "call_tool", "MCP tool layer")
            timers.wrap(services.search, "search", "domain total")
            timers.wrap(services.facts, "write", "domain total")
            # the model's runs, not embed_query: a search's query is embedded once, by the prefetch the MCP
            # endpoint starts, and the search's own embed_query then reads it from the query cache
            timers.wrap(services.embedder, "_encode", "embed")
            timers.wrap(services.embedder, "_encode_facts", "embed")  # with token vectors (service.domain.late)
            timers.wrap(services.backend, "search", "backend")
            timers.wrap(services.backend, "similar", "similar")
            timers.wrap(services.search, "hydrate", "hydrate")
            timers.wrap(services.query_log, "record", "query-log write")
            from service.domain import ports

            timers.wrap(ports.SearchRequest, "query_vector", "wait for vector")
            app = create_app(services=services)
            with running(asgi_timer(app, timers)) as url, worker_start_timed(timers):
                run_client(url, token, [("memory_search", {"query": q}) for q in queries[:20]])  # warm-up
                out: dict[str, dict[str, list[float]]] = {}
                for label, calls in (("memory_search", [("memory_search", {"query": q}) for q in queries]),
                                     ("memory_write", [("memory_write", w) for w in writes])):
                    timers.samples.clear()
                    timers.recording = True
                    client = run_client(url, token, calls)
                    timers.stop("ASGI request", len(calls))
                    out[label] = {"client round trip": [seconds for seconds, _ in client],
                                  # a search's round trip by its answer: facts listed, or "memory does not know"
                                  "with facts": [seconds for seconds, facts in client if facts],
                                  "without facts": [seconds for seconds, facts in client if not facts],
                                  **{k: list(v) for k, v in timers.samples.items()}}
                return out


def median_ms(samples: list[float] | None, calls: int) -> float:
    """Median per call; a part that ran several times per call (auth, embed) is summed per call first."""
    if not samples:
        return 0.0
    if len(samples) > calls:
        per_call = len(samples) / calls
        return statistics.median(samples) * per_call * 1000.0
    return statistics.median(samples) * 1000.0


def report(n: int, results: dict[str, dict[str, list[float]]], calls: int) -> None:
    for tool, parts in results.items():
        m = {k: median_ms(v, calls) for k, v in parts.items()}
        rows = [("client round trip", m["client round trip"]), ("ASGI request (server)", m.get("ASGI request", 0)),
                ("  auth", m.get("auth", 0)),
                ("  HTTP + MCP framing", m.get("ASGI request", 0) - m.get("auth", 0) - m.get("MCP tool layer", 0)),
                ("  MCP tool layer", m.get("MCP tool layer", 0)),
                ("    serialisation & tool glue", m.get("MCP tool layer", 0) - m.get("domain total", 0)),
                ("      of which worker-thread wait", m.get("wait for a worker thread", 0)),
                ("    domain total", m.get("domain total", 0))]
        if tool == "memory_search":
            rows += [("      embed (own thread)", m.get("embed", 0)), ("      backend (rank)", m.get("backend", 0)),
                     ("        of which wait for vector", m.get("wait for vector", 0)),
                     ("      hydrate", m.get("hydrate", 0)), ("      query-log write", m.get("query-log write", 0))]
        else:
            rows += [("      embed", m.get("embed", 0)), ("      similar", m.get("similar", 0)),
                     ("      transaction & rest", m.get("domain total", 0) - m.get("embed", 0) - m.get("similar", 0))]
        rows.append(("client + loopback", m["client round trip"] - m.get("ASGI request", 0)))
        print(f"\n{tool} at {n:,} facts, median ms per call over {calls} calls")
        for label, value in rows:
            print(f"  {label:<34}{value:8.2f}")
        if tool == "memory_search":  # the median of all calls falls between these two when both are common
            print("  client round trip by answer")
            for label, key in (("listing facts", "with facts"), ("no fact: memory does not know", "without facts")):
                times = parts[key]
                shown = f"{statistics.median(times) * 1000:8.2f}" if times else "       -"
                print(f"    {label:<32}{shown}  ({len(times)} calls)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--threads", type=int, default=None,
                        help="MEMORY_TORCH_THREADS (the model's threads; default: the service's default)")
    args = parser.parse_args()
    for n in (int(s) for s in args.sizes.split(",") if s.strip()):
        report(n, measure(n, args.calls, args.seed, args.threads), args.calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
