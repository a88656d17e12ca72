#!/usr/bin/env python3
"""The side-by-side harness: agent-memory MCP servers measured through their own MCP interface.

Each repetition: a fresh data directory, the server started on loopback, one warm-up write and the warm-up
searches, then N sequential writes of the corpus (corpus.py), a settle wait until the server's CPU is idle
(background indexing), then the 200 queries once each in a fixed order, sequentially, limit 10. Timings are taken
in the client around call_tool (the official MCP Python SDK's client). Peak RSS is sampled from the server's
process tree every 0.2 s and read from the kernel's VmHWM at the end. One JSON line per repetition goes to --out.

Peers (setup.sh lays them out under BASE, default ${TMPDIR:-/tmp}/peers-bench):
  qdrant   mcp-server-qdrant, embedded qdrant-client: `--transport streamable-http`, qdrant-store / qdrant-find
  mms      mcp-memory-service: `memory server --streamable-http`, tools memory_store / memory_search
  product  our service: streamable HTTP at --url with a bearer --token, memory_write / memory_search

side_by_side.sh runs it for our service and the peers in one go; by hand:
  python harness.py --peer qdrant --n 1000 --reps 2 --out results.jsonl
  python harness.py --peer product --n 1000 --reps 2 --out results.jsonl \
      --url http://127.0.0.1:{port}/mcp/bench --token "$TOKEN" \
      --server-cmd "serve-product.sh {run_dir} {port}"   # or --port PORT (--pid PID) of a running one
"""
import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import psutil
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from measure import RssSampler, free_port, pct, stop, wait_port  # noqa: E402
from servers import PEERS, text_of  # noqa: E402

BASE = Path(os.environ.get("BASE") or Path(os.environ.get("TMPDIR", "/tmp")) / "peers-bench")


async def one_rep(peer, a, n, rep, facts, queries):
    run_dir = Path(a.runs or Path(a.base) / "runs") / f"{a.peer}{'-' + a.label if a.label else ''}-{n}-r{rep}"
    if run_dir.exists():
        subprocess.run(["rm", "-rf", str(run_dir)], check=True)
    run_dir.mkdir(parents=True)
    port = a.port or free_port()
    rec = {"peer": a.peer, "label": a.label, "name": peer.name, "transport": peer.transport,
           "n": n, "rep": rep, "search_mode": a.search_mode, "extra_env": a.env,
           "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    proc = None
    log = None
    writes = facts
    cmd = peer.server_cmd(run_dir, port)
    if cmd:
        argv, env = cmd
        for kv in a.env:
            k, v = kv.split("=", 1)
            env[k] = v
        log = open(run_dir / "server.log", "w")
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                cwd=run_dir, start_new_session=True)
        rec["server_pid"] = proc.pid
        wait_port(port, proc, a.start_timeout)
        rec["port_open_s"] = round(time.perf_counter() - t0, 2)
    target = peer.url(port)  # started above, or our service already running at --port
    sampler = None
    try:
        http = httpx2.AsyncClient(headers=peer.headers(), timeout=httpx2.Timeout(30, read=600))
        transport = streamable_http_client(target, http_client=http)
        client = Client(transport, mode="legacy", cache=None, read_timeout_seconds=600)
        async with client as c:
            si = c.server_info
            rec["server_info"] = {"name": si.name, "version": si.version} if si else None
            rec["protocol_version"] = c.protocol_version
            tools = await c.list_tools()
            rec["tools"] = [t.name for t in tools.tools]
            if proc is not None:
                root = proc.pid
            else:
                root = a.pid or None
            rec["server_root_pid"] = root
            if root:
                sampler = RssSampler(root)
                sampler.start()
                rec["server_cmdline"] = " ".join(psutil.Process(root).cmdline())[:300]
            # warm-up: one write (an off-corpus fact) and the warm-up searches load the model(s)
            t0 = time.perf_counter()
            tool, args = peer.write_call({"id": -1, "title": "warmup 99999 bench warm-up note",
                                          "text": "Warm-up note written by the benchmark harness.",
                                          "kind": "reference", "tags": ["bench"]})
            r = await c.call_tool(tool, args)
            rec["warmup_write_ok"] = peer.write_ok(r)
            rec["first_write_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            for q in corpus.WARMUP:
                tool, args = peer.search_call(q, a.limit)
                await c.call_tool(tool, args)
            # writes
            lat, errors, first_err = [], 0, None
            t_all = time.perf_counter()
            for i, f in enumerate(writes):
                tool, args = peer.write_call(f)
                t0 = time.perf_counter()
                r = await c.call_tool(tool, args)
                lat.append((time.perf_counter() - t0) * 1000)
                if not peer.write_ok(r):
                    errors += 1
                    if first_err is None:
                        first_err = text_of(r)[:300]
                if a.progress and (i + 1) % a.progress == 0:
                    el = time.perf_counter() - t_all
                    print(f"  [{a.peer} n={n} r{rep}] {i + 1} writes, {((i + 1) / el):.1f}/s", flush=True)
            wall = time.perf_counter() - t_all
            rec.update({"writes": len(writes), "write_errors": errors, "first_write_error": first_err,
                        "write_wall_s": round(wall, 2),
                        "write_per_s": round(len(writes) / wall, 1),
                        "write_ms_p50": round(pct(lat, 50), 2), "write_ms_p95": round(pct(lat, 95), 2),
                        "write_ms_last100_p50": round(pct(lat[-100:], 50), 2)})
            rec["settle_s"] = round(sampler.cpu_idle_wait(a.settle_max), 1) if sampler else None
            # searches
            lat, per_q = [], []
            for q in queries:
                tool, args = peer.search_call(q["query"], a.limit)
                t0 = time.perf_counter()
                r = await c.call_tool(tool, args)
                ms = (time.perf_counter() - t0) * 1000
                lat.append(ms)
                returned, matched, payload = peer.parse_search(r)
                hit = None
                if q["target"] is not None:
                    tg = q["target"]
                    hit = (tg["text"] in payload) or (tg["title"] in payload)
                per_q.append({"qid": q["qid"], "kind": q["kind"], "ms": round(ms, 2),
                              "returned": returned, "matched": matched, "hit": hit,
                              "error": bool(r.is_error)})
            para = [x for x in per_q if x["kind"] == "paraphrase"]
            off = [x for x in per_q if x["kind"] == "offtopic"]
            rec.update({
                "search_ms_p50": round(pct(lat, 50), 2), "search_ms_p95": round(pct(lat, 95), 2),
                "search_ms_mean": round(statistics.mean(lat), 2), "search_ms_max": round(max(lat), 2),
                "search_errors": sum(x["error"] for x in per_q),
                "para_nonempty": sum(x["returned"] > 0 for x in para) / len(para),
                "para_target_in_results": sum(bool(x["hit"]) for x in para) / len(para),
                "off_empty": sum(x["returned"] == 0 for x in off) / len(off),
                "matched_count_reported": any(x["matched"] is not None for x in per_q),
                "returned_unparsed": sum(x["returned"] < 0 for x in per_q),
            })
            if a.keep_queries:
                rec["per_query"] = per_q
            if sampler:
                rec["rss_peak_sampled_mb"] = round(sampler.peak / 2**20, 1)
                rec["rss_hwm_mb"] = round(sampler.hwm() / 2**20, 1)
                sampler.stop_ev.set()
    finally:
        if sampler:
            sampler.stop_ev.set()
        if proc is not None:
            stop(proc)
        if log:
            log.close()
    rec["disk_mb"] = round(sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file()) / 2**20, 1)
    if not a.keep_data:
        subprocess.run(["rm", "-rf", str(run_dir / "data")], check=False)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", required=True, choices=sorted(PEERS))
    ap.add_argument("--n", type=int, nargs="+", default=[1000])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--out", default="results.jsonl")
    ap.add_argument("--base", default=str(BASE), help="where setup.sh put venvs/models (default $BASE, else ${TMPDIR:-/tmp}/peers-bench)")
    ap.add_argument("--runs", default=None, help="where each repetition's data dir goes (default BASE/runs)")
    ap.add_argument("--label", default="", help="variant label recorded with the results")
    ap.add_argument("--env", action="append", default=[], help="KEY=VAL added to the server's environment")
    ap.add_argument("--search-mode", default=None, help="mms: semantic|hybrid (default hybrid)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--start-timeout", type=float, default=180)
    ap.add_argument("--progress", type=int, default=0, help="print write progress every K writes")
    ap.add_argument("--settle-max", type=float, default=180, help="longest wait for the server to go idle")
    ap.add_argument("--keep-data", action="store_true")
    ap.add_argument("--keep-queries", action="store_true", help="store per-query rows in the output")
    # product
    ap.add_argument("--url", default="http://127.0.0.1:{port}/mcp/bench")
    ap.add_argument("--token", default=os.environ.get("MEMORY_TOKEN"))
    ap.add_argument("--server-cmd", default=None, help="product: command template ({run_dir} {port} {base})")
    ap.add_argument("--pid", type=int, default=0, help="product: PID of an already running server, for RSS")
    a = ap.parse_args()
    if a.peer == "product" and not a.server_cmd and not a.port:
        ap.error("--peer product needs --server-cmd, or --port (and --pid for RSS) of a running server")
    peer = PEERS[a.peer](a)
    qs = corpus.queries()
    for n in a.n:
        facts = corpus.facts(n)
        for rep in range(1, a.reps + 1):
            t0 = time.time()
            rec = asyncio.run(one_rep(peer, a, n, rep, facts, qs))
            rec["rep_wall_s"] = round(time.time() - t0, 1)
            with open(a.out, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            brief = {k: rec.get(k) for k in ("peer", "label", "n", "rep", "write_per_s", "write_errors",
                                             "search_ms_p50", "search_ms_p95", "rss_hwm_mb",
                                             "para_target_in_results", "off_empty", "rep_wall_s")}
            print(json.dumps(brief), flush=True)


if __name__ == "__main__":
    main()
