"""Where a search's and a write's time go in the peer (mcp-server-qdrant) and in this service, same texts.

    python bench/peer_breakdown.py [--sizes 10000] [--calls 200] [--skip-ours]

The peer is the side-by-side's (`bench/peers/`; its setup.sh fills BASE, default
${TMPDIR:-/tmp}/peers-bench, with the peer's venv and its model). It runs in its own venv, as the side-by-side
starts it (local mode, its default model, streamable HTTP), with timers wrapped around its layers before it
serves -- nothing of it is edited:

  client round trip   what the client measured (one HTTP request to its full response)
  ASGI request        the whole request inside the peer's server
  MCP tool layer      FastMCP's tool manager: argument validation, the tool function, result conversion
  connector search    QdrantConnector.search (qdrant-find's work, limit 10): collection_exists, embed_query
                      (fastembed, all-MiniLM-L6-v2), the embedded qdrant-client's query_points
  connector store     QdrantConnector.store (qdrant-store's work): _ensure_collection_exists,
                      embed_documents, the embedded qdrant-client's upsert
  derived: HTTP + MCP framing = ASGI - MCP tool layer; client + loopback = client round trip - ASGI.

Its store is filled first with --sizes facts (embedded in batches of 64 and upserted directly, as its own
`store` would one by one), then it takes --calls searches and --calls writes. Facts and queries are
bench/breakdown.py's (the same generator and seeds), so this service's breakdown printed after it
(bench/breakdown.py's measure; its searches at the default limit 8) is of the same texts. The client is a
plain-POST client in another process, as bench/breakdown.py's, opening the MCP session the peer requires
first (this service is stateless: no session). Medians over --calls calls, printed, never asserted;
compare parts within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.breakdown import measure, report  # noqa: E402
from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.waiting import until  # noqa: E402
from bench.peers.servers import Qdrant  # noqa: E402
import service  # noqa: E402

# Runs under the peer's python: timers first, then its own server, as `mcp-server-qdrant --transport
# streamable-http` runs it (main.py: `from mcp_server_qdrant.server import mcp; mcp.run(transport=...)`).
PEER = r"""
import asyncio, json, os, sys, time, uuid
from qdrant_client import models
from mcp_server_qdrant.server import mcp

timings = open(os.environ["BENCH_TIMINGS"], "a", buffering=1)
def record(part, t0):
    timings.write(json.dumps([part, time.perf_counter() - t0]) + "\n")
def wrap(owner, name, part):
    original = getattr(owner, name)
    async def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return await original(*args, **kwargs)
        finally:
            record(part, t0)
    setattr(owner, name, timed)

connector = mcp.qdrant_connector
collection = connector._default_collection_name
provider = connector._embedding_provider

async def seed(facts):  # what store does per fact, in batches: the same collection, vectors and payloads
    await connector._ensure_collection_exists(collection)
    for i in range(0, len(facts), 64):
        batch = facts[i:i + 64]
        vectors = await provider.embed_documents([f["information"] for f in batch])
        await connector._client.upsert(collection_name=collection, points=[
            models.PointStruct(id=uuid.uuid4().hex, vector={provider.get_vector_name(): v},
                               payload={"document": f["information"], "metadata": f["metadata"]})
            for f, v in zip(batch, vectors)])
asyncio.run(seed(json.load(open(os.environ["BENCH_SEED"]))))

wrap(connector, "store", "connector store")
wrap(connector, "_ensure_collection_exists", "collection check")
wrap(provider, "embed_documents", "embed")
wrap(connector._client, "upsert", "upsert")
wrap(connector, "search", "connector search")
wrap(connector._client, "collection_exists", "collection exists")
wrap(provider, "embed_query", "embed query")
wrap(connector._client, "query_points", "query points")
wrap(mcp._tool_manager, "call_tool", "MCP tool layer")
http_app = mcp.http_app
def timed_app(*args, **kwargs):
    app = http_app(*args, **kwargs)
    async def asgi(scope, receive, send):
        t0 = time.perf_counter()
        try:
            await app(scope, receive, send)
        finally:
            if scope.get("type") == "http" and scope.get("method") == "POST":
                record("ASGI request", t0)
    return _Asgi(app, asgi)
class _Asgi:  # uvicorn calls the object; the lifespan and everything else are the app's own
    def __init__(self, app, call):
        self._app, self._call = app, call
    def __getattr__(self, name):
        return getattr(self._app, name)
    async def __call__(self, scope, receive, send):
        await self._call(scope, receive, send)
mcp.http_app = timed_app
print("serving", flush=True)
mcp.run(transport="streamable-http")
"""

CLIENT = r"""
import json, sys, time, httpx
url, calls = sys.argv[1], json.loads(sys.stdin.read())
headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

def answer(response):
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()

out = []
with httpx.Client(headers=headers, timeout=60) as client:
    init = client.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    assert init.status_code == 200, init.text
    client.headers["mcp-session-id"] = init.headers["mcp-session-id"]
    client.headers["mcp-protocol-version"] = answer(init)["result"]["protocolVersion"]
    client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i, (tool, arguments) in enumerate(calls, start=1):
        body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        t0 = time.perf_counter()
        response = client.post(url, json=body)
        out.append(time.perf_counter() - t0)
        result = answer(response)
        assert response.status_code == 200 and not result["result"].get("isError"), response.text
print(json.dumps(out))
"""


def peer_call(fact: dict) -> dict:
    """The side-by-side's qdrant-store arguments for a fact."""
    _, arguments = Qdrant(None).write_call(fact)
    return arguments


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def measure_peer(base: Path, n: int, calls: int, seed: int) -> dict[str, dict[str, list[float]]]:
    maker, writer = FactMaker(seed + n), FactMaker(seed + 777)
    seeds = [peer_call(maker.make()) for _ in range(n)]
    queries = [("qdrant-find", {"query": q}) for _, q in make_queries(maker, calls, seed)]
    writes = [("qdrant-store", peer_call(writer.make())) for _ in range(calls + 20)]
    with tempfile.TemporaryDirectory(prefix="bench-peer-breakdown-") as tmp:
        run = Path(tmp)
        (run / "seed.json").write_text(json.dumps(seeds))
        timings = run / "timings.jsonl"
        port = free_port()
        env = dict(os.environ, QDRANT_LOCAL_PATH=str(run / "data"), COLLECTION_NAME="bench",
                   EMBEDDING_MODEL="sentence-transformers/all-MiniLM-L6-v2",
                   FASTEMBED_CACHE_PATH=str(base / "models" / "fastembed"), HF_HUB_OFFLINE="1",
                   FASTMCP_SERVER_HOST="127.0.0.1", FASTMCP_SERVER_PORT=str(port),
                   FASTMCP_LOG_LEVEL="WARNING", BENCH_SEED=str(run / "seed.json"), BENCH_TIMINGS=str(timings))
        if not service.OPENBLAS_TIMEOUT_GIVEN:  # the peer as its users run it, not with this service's setting
            env.pop("OPENBLAS_THREAD_TIMEOUT", None)
        log = (run / "peer.log").open("w")
        server = subprocess.Popen([str(base / "venv-qdrant" / "bin" / "python"), "-c", PEER], env=env,
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}/mcp/"
            def started() -> bool:
                if _listening(port):
                    return True
                if server.poll() is not None:
                    raise SystemExit(f"the peer did not start: {(run / 'peer.log').read_text()[-2000:]}")
                return False

            until(started, 1800, every=0.5,
                  what=lambda: f"the peer listening on port {port}: {(run / 'peer.log').read_text()[-2000:]}")
            client_run(url, queries[:20])  # warm-up, as bench/breakdown.py's
            out = {}
            for tool, calls_of_tool in (("qdrant-find", queries), ("qdrant-store", writes[20:])):
                time.sleep(0.3)
                before = len(timings.read_text().splitlines())
                parts: dict[str, list[float]] = {"client round trip": client_run(url, calls_of_tool)}
                time.sleep(0.3)
                for line in timings.read_text().splitlines()[before:]:
                    part, seconds = json.loads(line)
                    parts.setdefault(part, []).append(seconds)
                out[tool] = parts
            return out
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def client_run(url: str, calls: list[tuple[str, dict]]) -> list[float]:
    result = subprocess.run([sys.executable, "-c", CLIENT, url], input=json.dumps(calls),
                            capture_output=True, text=True, timeout=3600)
    if result.returncode != 0:
        raise SystemExit(f"client failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def report_peer(n: int, results: dict[str, dict[str, list[float]]], calls: int) -> None:
    for tool, parts in results.items():
        rows = _peer_rows(tool, parts, calls)
        print(f"\nmcp-server-qdrant {tool} at {n:,} facts, median ms per call over {calls} calls")
        for label, value in rows:
            print(f"  {label:<34}{value:8.2f}")


def _peer_rows(tool: str, parts: dict[str, list[float]], calls: int) -> list[tuple[str, float]]:
    def ms(part: str) -> float:
        samples = parts.get(part)
        if not samples:
            return 0.0
        # the session's initialize and initialized notification pass the ASGI timer first: not writes
        return statistics.median(samples[-calls:]) * 1000.0

    asgi, layer = ms("ASGI request"), ms("MCP tool layer")
    if tool == "qdrant-find":
        work = ms("connector search")
        inner = [("      collection exists", ms("collection exists")), ("      embed query", ms("embed query")),
                 ("      query points", ms("query points"))]
        label = "    connector search"
    else:
        work = ms("connector store")
        inner = [("      collection check", ms("collection check")), ("      embed", ms("embed")),
                 ("      upsert", ms("upsert"))]
        label = "    connector store"
    return [("client round trip", ms("client round trip")), ("ASGI request (server)", asgi),
            ("  HTTP + MCP framing", asgi - layer), ("  MCP tool layer", layer),
            ("    serialisation & tool glue", layer - work), (label, work), *inner,
            ("      rest", work - sum(v for _, v in inner)),
            ("client + loopback", ms("client round trip") - asgi)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--skip-ours", action="store_true", help="only the peer")
    args = parser.parse_args()
    base = Path(os.environ.get("BASE") or Path(os.environ.get("TMPDIR", "/tmp")) / "peers-bench")
    if not (base / "venv-qdrant" / "bin" / "python").exists() or not (base / "models").is_dir():
        raise SystemExit(f"no peer at {base}: run `bash bench/peers/setup.sh {base}` first")
    for n in (int(s) for s in args.sizes.split(",") if s.strip()):
        report_peer(n, measure_peer(base, n, args.calls, args.seed), args.calls)
        if not args.skip_ours:
            report(n, measure(n, args.calls, args.seed, None), args.calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
