"""One write-path cut, on and off, interleaved in one process: what it saves per memory_write.

    python bench/write_ab.py --cut push|lean|similar [--sizes 1000,10000] [--rounds 12] [--calls 20] [--threads N]

The service runs in this process as in bench/breakdown.py (uvicorn in a thread, timers wrapped around the
layers, nothing in the service edited) over a seeded store; a client in another process (plain JSON-RPC POSTs
on one keep-alive connection) makes the calls. The cut is switched off by an attribute swap on the running
objects, so both variants share the process, the store, the warm index and the machine's moment:

  push   SearchBackend.written (the written fact taken into the embedded index at once): off, the write's
         `similar` reads it back from the store in its sync, as before the cut
  lean   service.mcp.exchange (a tools/call straight to the SDK's per-request kernel): off, every request
         takes the SDK's StreamableHTTPSessionManager
  similar  not a cut but its price: FactService._similar (the near-duplicate lookup memory_write answers with,
         README's "The five tools" promises): off, the write answers `similar: []`. What it costs in all -- the
         scan of the profile's vector matrix and its hydration, plus its effect on the next write's model run,
         when matrix and model weights no longer both fit in the CPU's cache (compare "embed" on and off)

Rounds alternate the order (off-on, on-off, ...) so that drift hits both alike; each round writes --calls
new facts with each variant. Printed, per variant: medians over all calls of the client's round trip and of
the server's parts (breakdown.py's names, and per call: "server - embed", the ASGI request minus the model's
run, the part a cut can move without the model's noise; "after the commit", the domain's write minus the model
and the transaction: handing the fact to the index, `similar` and its hydration -- what the push cut moves,
so judge it there and not by `similar` alone). "server CPU" is this process's CPU time over a round's block
divided by its calls (every thread, ONNX Runtime's pool included, whose share varies most with the machine's
load) and "Python threads' CPU" the same for the Python threads only: both drift less than wall time on a busy
machine. Last column: the median over rounds of the paired difference (on - off) of each round's medians.
Nothing is asserted; the machine is shared.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.breakdown import Timers, asgi_timer  # noqa: E402
from bench.lib.corpus import FactMaker  # noqa: E402
from bench.lib.seeding import seed_facts  # noqa: E402
from bench.lib.server import running  # noqa: E402
from service.api.app import create_app  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import Services, build_services  # noqa: E402
from service.mcp.endpoint import MCPEndpoint  # noqa: E402
from service.mcp.server import MemoryMCPServer  # noqa: E402

# A client that stays up: one JSON list of calls per stdin line, one JSON list of seconds per stdout line.
CLIENT = r"""
import json, sys, time, httpx
url, token = sys.argv[1], sys.argv[2]
headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
n = 0
with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
    for line in sys.stdin:
        out = []
        for tool, arguments in json.loads(line):
            n += 1
            body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
            t0 = time.perf_counter()
            answer = client.post("/mcp/bench", json=body)
            out.append(time.perf_counter() - t0)
            assert answer.status_code == 200 and not answer.json()["result"].get("isError"), answer.text
        print(json.dumps(out), flush=True)
"""

PARTS = ["server CPU", "Python threads' CPU", "client round trip", "ASGI request", "server - embed", "auth",
         "HTTP + MCP framing", "MCP tool layer", "domain total", "embed", "transaction", "after the commit",
         "similar"]


class Client:
    def __init__(self, url: str, token: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CLIENT, url, token], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def calls(self, calls: list[tuple[str, dict[str, Any]]]) -> list[float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(calls) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("the client failed (its error is above)")
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(30)


def python_threads_cpu() -> float:
    """Seconds on a CPU of this process's Python threads (the event loop, the tool's worker threads: what the
    cuts touch), from the kernel's per-thread schedstat (ns). Not ONNX Runtime's own pool threads: their share
    of the model's run is the part of the process's CPU time that moves most with the machine's load."""
    total = 0
    for thread in threading.enumerate():
        try:
            total += int(Path(f"/proc/self/task/{thread.native_id}/schedstat").read_text().split()[0])
        except (OSError, ValueError):
            pass
    return total / 1e9


def endpoint_of(app: Any) -> MCPEndpoint:
    for route in app.router.routes:
        if getattr(route, "path", None) == "/mcp/{profile}" and isinstance(route.endpoint, MCPEndpoint):
            return route.endpoint
    raise SystemExit("no MCP endpoint found in the app")


def switch(cut: str, services: Services, endpoint: MCPEndpoint, on: bool) -> None:
    """Shadow the cut's method on the instance with a no-op (off), or drop the shadow (on)."""
    if cut == "push":
        target, name, off = services.backend, "written", lambda *args, **kwargs: None
    elif cut == "similar":
        target, name, off = services.facts, "_similar", lambda *args, **kwargs: []
    else:
        async def sdk_only(*args: Any, **kwargs: Any) -> bool:
            return False
        target, name, off = endpoint.lean, "takes", sdk_only
    if on:
        target.__dict__.pop(name, None)
    else:
        setattr(target, name, off)


def per_call(samples: dict[str, list[float]], client: list[float]) -> dict[str, list[float]]:
    """The parts of one block, one value per call (derived parts computed call by call)."""
    parts = {"client round trip": client, **{k: list(v) for k, v in samples.items()}}
    n = len(client)
    whole = all(len(parts.get(k, [])) == n for k in ("ASGI request", "auth", "MCP tool layer", "embed"))
    if whole:
        parts["HTTP + MCP framing"] = [a - b - c for a, b, c in
                                       zip(parts["ASGI request"], parts["auth"], parts["MCP tool layer"])]
        parts["server - embed"] = [a - e for a, e in zip(parts["ASGI request"], parts["embed"])]
    if all(len(parts.get(k, [])) == n for k in ("domain total", "embed", "transaction")):
        parts["after the commit"] = [d - e - t for d, e, t in
                                     zip(parts["domain total"], parts["embed"], parts["transaction"])]
    return parts


def measure(n: int, cut: str, rounds: int, calls_n: int, seed: int, threads: int | None
            ) -> tuple[dict[bool, dict[str, list[float]]], dict[bool, list[dict[str, float]]]]:
    with tempfile.TemporaryDirectory(prefix="bench-write-ab-") as tmp:
        extra = {"torch_threads": threads} if threads else {}
        with build_services(Settings(data_dir=Path(tmp), embedder="minilm", **extra)) as services:
            services.embedder.embed_documents(["warm up"])
            profile = services.profiles.create("bench")
            token = services.profiles.issue_token("bench").token
            seed_facts(services, profile, n, FactMaker(seed + n), 2)
            writer = FactMaker(seed + 777)

            timers = Timers()
            timers.wrap(services.profiles, "authenticate", "auth")
            timers.wrap(MemoryMCPServer, "call_tool", "MCP tool layer")
            timers.wrap(services.facts, "write", "domain total")
            timers.wrap(services.embedder, "_encode", "embed")
            timers.wrap(services.embedder, "_encode_facts", "embed")  # a write's run, with token vectors
            timers.wrap(services.backend, "similar", "similar")
            timers.wrap(services.store, "add_fact", "transaction")
            app = create_app(services=services)
            endpoint = endpoint_of(app)
            everything: dict[bool, dict[str, list[float]]] = {False: defaultdict(list), True: defaultdict(list)}
            by_round: dict[bool, list[dict[str, float]]] = {False: [], True: []}
            with running(asgi_timer(app, timers)) as url:
                client = Client(url, token)
                try:
                    client.calls([("memory_search", {"query": "warm up the index"})]
                                 + [("memory_write", writer.make()) for _ in range(10)])
                    for r in range(rounds):
                        for on in ((False, True) if r % 2 == 0 else (True, False)):
                            switch(cut, services, endpoint, on)
                            block = [("memory_write", writer.make()) for _ in range(calls_n)]
                            timers.samples.clear()
                            timers.recording = True
                            cpu, threads_cpu = time.process_time(), python_threads_cpu()
                            seconds = client.calls(block)
                            timers.stop("ASGI request", len(block))  # the last call's sample lands after its answer
                            cpu, threads_cpu = time.process_time() - cpu, python_threads_cpu() - threads_cpu
                            parts = per_call(timers.samples, seconds)
                            parts["server CPU"] = [cpu / len(block)]
                            parts["Python threads' CPU"] = [threads_cpu / len(block)]
                            for k, v in parts.items():
                                everything[on][k].extend(v)
                            by_round[on].append({k: statistics.median(v) for k, v in parts.items() if v})
                finally:
                    switch(cut, services, endpoint, True)
                    client.close()
            return everything, by_round


def report(n: int, cut: str, everything: dict[bool, dict[str, list[float]]],
           by_round: dict[bool, list[dict[str, float]]]) -> None:
    print(f"\nmemory_write at {n:,} facts, cut {cut!r}: median ms per call "
          f"({len(everything[True]['client round trip'])} calls each)")
    print(f"  {'part':<24}{'off':>9}{'on':>9}{'on - off, paired':>20}")
    for part in PARTS:
        off, on = everything[False].get(part), everything[True].get(part)
        if not off or not on:
            continue
        diffs = [b[part] - a[part] for a, b in zip(by_round[False], by_round[True]) if part in a and part in b]
        paired = f"{statistics.median(diffs) * 1000:+8.3f}" if diffs else ""
        print(f"  {part:<24}{statistics.median(off) * 1000:9.3f}{statistics.median(on) * 1000:9.3f}{paired:>20}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cut", choices=["push", "lean", "similar"], required=True)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--calls", type=int, default=20, help="writes per variant per round")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--threads", type=int, default=None,
                        help="MEMORY_TORCH_THREADS (the model's threads; default: the service's default)")
    args = parser.parse_args()
    for n in (int(s) for s in args.sizes.split(",") if s.strip()):
        report(n, args.cut, *measure(n, args.cut, args.rounds, args.calls, args.seed, args.threads))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
