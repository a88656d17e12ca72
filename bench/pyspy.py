"""Where a running `memory serve` spends its time on one tool, sampled from outside by py-spy.

    python bench/pyspy.py [--tool search|write|recent] [--facts 1000] [--seconds 10] [--gil]

`memory serve` runs in its own process on a fresh data dir with MiniLM, seeded with --facts corpus facts
through memory_write. Then a client calls the tool back to back (plain JSON-RPC POSTs on one keep-alive
connection; searches with distinct queries) while `py-spy record --format raw` samples the server. Printed: calls made and
their p50 (py-spy slows the server a little), the server's CPU per call from /proc (all threads), then the
share of busy samples under each layer of a call (inclusive: a layer's share contains the layers it calls),
and the functions of the service with the most samples. With --gil only the thread holding the GIL is
sampled: the Python that serialises a request, which the two cores cannot run in parallel.

py-spy (the `py-spy` package, in the test extra) must be able to attach to a child process (ptrace; root or
kernel.yama.ptrace_scope 0). Nothing is asserted; compare the rows of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.mcp import RawMCP  # noqa: E402
from bench.lib.server import served  # noqa: E402

# (label, frame name as py-spy prints it). A call crosses threads (the event loop, the tool's worker thread,
# the query-embedding thread) and asyncio tasks (the SDK runs each request in a task of its own), so these
# shares neither nest nor add up: each is the share of busy samples whose stack holds that frame.
LAYERS = [
    ("HTTP server: uvicorn, h11, middlewares", "RequestResponseCycle.run_asgi"),
    ("MCP endpoint: host check, token check, body read", "MCPEndpoint.__call__"),
    ("token check", "ProfileService.authenticate"),
    ("MCP SDK: per-request session and dispatcher", "JSONRPCDispatcher._handle_request"),
    ("MCP SDK: its per-request kernel (a tools/call)", "LeanPath.answer"),
    ("tool call: arguments, our tool, the result", "FuncMetadata.call_fn"),
    ("memory_search in the domain (worker thread)", "SearchService.search"),
    ("  index sync", "EmbeddedSearch._synced"),
    ("  ranking: lexical, vector, fusion", "EmbeddedSearch._search"),
    ("  hydrate", "SearchService.hydrate"),
    ("  query-log row", "QueryLog.record"),
    ("memory_write in the domain (worker thread)", "FactService.write"),
    ("  similar", "FactService._similar"),
    ("  transaction", "SqlStore.add_fact"),
    ("memory_recent in the domain (worker thread)", "FactService.recent"),
    ("model: tokenizer, ONNX Runtime, pooling", "OnnxMiniLM.encode"),
]
ENTRY_POINTS = {"<module>", "main", "serve"}  # service/__main__.py and the CLI: under every sample
IDLE_LEAVES = ("EpollSelector.select", "Condition.wait", "_worker (concurrent", "WorkerThread.run",
               "_wait_for_tstate_lock", "Queue.get", "Event.wait")


def memory_cli(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "service", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True, cwd=ROOT)
    return done.stdout


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def frame_name(frame: str) -> str:
    """`Class.method (path/file.py:123)` -> `Class.method`."""
    return frame.split(" (", 1)[0]


def read_samples(path: Path) -> tuple[Counter[str], Counter[str], Counter[str], int]:
    """Busy samples (idle leaves left out): inclusive counts per function, per service function, per
    thread, and the total."""
    inclusive: Counter[str] = Counter()
    ours: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    busy = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        thread, *frames = stack.split(";")  # "thread (1234): MainThread"
        if not frames or any(frames[-1].startswith(leaf) for leaf in IDLE_LEAVES):
            continue
        n = int(count)
        busy += n
        threads[thread.split(": ", 1)[-1]] += n
        for name in {frame_name(f) for f in frames}:
            inclusive[name] += n
        for name in {frame_name(f) for f in frames if "service/" in f} - ENTRY_POINTS:
            ours[name] += n
    return inclusive, ours, threads, busy


async def drive(url: str, token: str, tool: str, facts: list[dict], queries: list[str], seconds: float,
                pid: int, spy_args: list[str]) -> tuple[int, float, float]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        client = RawMCP(http, f"{url}/mcp/bench")
        await client.call("memory_search", query="warm up the model and the index")
        extra = facts[len(facts) // 2:]
        for fact in facts[: len(facts) // 2]:
            await client.call("memory_write", **fact)
        spy = subprocess.Popen(spy_args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # py-spy attached
        cpu0, latencies, i = cpu_seconds(pid), [], 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            if tool == "search":
                await client.call("memory_search", query=queries[i % len(queries)], limit=10)
            elif tool == "write":
                await client.call("memory_write", **extra[i % len(extra)])
            else:
                await client.call("memory_recent", limit=1)
            latencies.append(time.perf_counter() - started)
            i += 1
        cpu = cpu_seconds(pid) - cpu0
        _, err = spy.communicate(timeout=60)
        if spy.returncode != 0:
            raise SystemExit(f"py-spy failed (it needs ptrace rights on the server): {err.strip()[-500:]}")
    return len(latencies), statistics.median(latencies) * 1000, cpu / max(1, len(latencies)) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=["search", "write", "recent"], default="search")
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=int, default=500, help="samples per second")
    parser.add_argument("--gil", action="store_true", help="sample only the thread holding the GIL")
    args = parser.parse_args(argv)
    pyspy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(pyspy).exists():
        raise SystemExit("py-spy is not installed (pip install py-spy; it is in the test extra)")
    maker = FactMaker(seed=7)
    facts = [{k: f[k] for k in ("title", "text", "kind", "tags")} for f in (maker.make() for _ in range(2 * args.facts))]
    # distinct queries, more than the calls the run can make: a repeated one would skip the model (cache)
    queries = [query for _style, query in make_queries(maker, int(args.seconds * 300) + 100, seed=11)]
    with tempfile.TemporaryDirectory(prefix="pyspy-") as tmp:
        env = {"MEMORY_DATA_DIR": tmp, "MEMORY_BIND": "127.0.0.1"}
        memory_cli("profile", "create", "bench", env=env)
        token = json.loads(memory_cli("token", "issue", "bench", "--json", env=env))["token"]
        samples = Path(tmp) / "samples.txt"
        with served(Path(tmp), env) as (url, pid):
            spy_args = [pyspy, "record", "-p", str(pid), "-r", str(args.rate), "-d", str(int(args.seconds) + 1),
                        "-f", "raw", "-o", str(samples), "--nonblocking", "--threads",
                        *(["--gil"] if args.gil else ["--idle"])]
            calls, p50, cpu_ms = asyncio.run(drive(url, token, args.tool, facts, queries, args.seconds, pid, spy_args))
        inclusive, ours, threads, busy = read_samples(samples)
    print(f"memory_{args.tool} at {args.facts} facts: {calls} calls in {args.seconds:g} s, p50 {p50:.2f} ms "
          f"under py-spy; server CPU {cpu_ms:.2f} ms per call (all threads)")
    print(f"{'GIL-holding' if args.gil else 'busy'} samples: {busy} ({busy / max(1, calls):.1f} per call at "
          f"{args.rate}/s)")
    print("\nshare of samples by thread")
    for thread, count in threads.most_common(6):
        print(f"  {thread:<48} {100 * count / max(1, busy):5.1f} %")
    print("\nshare of samples with each layer on the stack (threads and tasks: the shares do not add up)")
    for label, frame in LAYERS:
        if inclusive[frame]:
            print(f"  {label:<48} {100 * inclusive[frame] / max(1, busy):5.1f} %")
    print("\nfunctions of the service with the most samples (inclusive)")
    for name, count in ours.most_common(15):
        print(f"  {name:<60} {100 * count / max(1, busy):5.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
