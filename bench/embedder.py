"""Benchmark of the local MiniLM embedder: load time, query latency, batch throughput, memory.

    python bench/embedder.py [--queries 200] [--docs 256] [--threads 1,2] [--no-onnx]

Measures the service's own embedder (MiniLMEmbedder) on both runtimes: torch (sentence-transformers,
MEMORY_EMBEDDER_RUNTIME=torch) and ONNX Runtime (=onnx), the latter once with an empty data dir (the
first start: torch exports the model, then checks it) and then reusing that export (every later
start: no torch at all). ONNX vectors are compared with the torch ones on 100 texts.

Each configuration runs in a fresh subprocess, so thread settings take effect cleanly and RSS
figures are not shared between runs. Nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
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
BATCH = 32

SUBJECTS = ["the user", "the team", "this repo", "the CI pipeline", "the billing service", "the mobile app",
            "the staging cluster", "our API", "the data pipeline", "the auth service"]
VERBS = ["prefers", "uses", "avoids", "depends on", "was migrated to", "is tested with", "deploys with",
         "logs through", "caches results in", "is configured by"]
OBJECTS = ["pytest", "Postgres 15", "Redis", "GitHub Actions", "Docker Compose", "Kubernetes", "uv", "ruff",
           "OpenSearch", "Terraform", "feature flags", "SQLite in WAL mode", "black formatting", "tabs"]
QUESTIONS = ["which {o} setup does {s} have", "does {s} use {o}", "what does {s} prefer over {o}",
             "how is {o} configured for {s}", "why did {s} pick {o}"]


# -- inputs ------------------------------------------------------------------------------------


def make_queries(n: int) -> list[str]:
    """n distinct short queries (distinct so the query cache never answers)."""
    out: list[str] = []
    i = 0
    while len(out) < n:
        q = QUESTIONS[i % len(QUESTIONS)].format(s=SUBJECTS[i % len(SUBJECTS)], o=OBJECTS[(i * 7) % len(OBJECTS)])
        out.append(f"{q} ({i})")
        i += 1
    return out


def make_facts(n: int) -> list[str]:
    """n fact-sized texts (one or two sentences, ~20-40 words), like the ones agents store."""
    facts = []
    for i in range(n):
        s, v, o = SUBJECTS[i % len(SUBJECTS)], VERBS[(i * 3) % len(VERBS)], OBJECTS[(i * 5) % len(OBJECTS)]
        extra = OBJECTS[(i * 11 + 1) % len(OBJECTS)]
        text = f"{s.capitalize()} {v} {o}; decided in review #{100 + i} because {extra} caused flaky builds"
        if i % 2:
            text += f". Keep {o} pinned and mention it when someone proposes switching to {extra}."
        facts.append(text)
    return facts


# -- measurements --------------------------------------------------------------------------


def rss_mb() -> dict[str, float]:
    """Current and peak resident memory of this process, from /proc (Linux)."""
    values: dict[str, float] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    except OSError:
        pass
    return {"rss_mb": round(values.get("VmRSS", float("nan")), 1), "peak_mb": round(values.get("VmHWM", float("nan")), 1)}


def latency_summary(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


def timed_each(fn: Any, items: list[str]) -> list[float]:
    samples = []
    for item in items:
        started = time.perf_counter()
        fn(item)
        samples.append(time.perf_counter() - started)
    return samples


# -- workers (run in subprocesses) ---------------------------------------------------------


def worker_service(args: argparse.Namespace) -> dict[str, Any]:
    """MiniLMEmbedder with the given runtime and data dir; load = imports + model load + first query."""
    started = time.perf_counter()
    import numpy as np

    from service.config import Settings
    from service.embedding.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder(Settings(embedder="minilm", torch_threads=args.threads, data_dir=Path(args.out),
                                       embedder_runtime=args.runtime))
    embedder.embed_query("first call loads the model")
    load = time.perf_counter() - started
    after_load = rss_mb()
    status = embedder.status()

    vectors = embedder.embed_documents(make_queries(50) + make_facts(50))
    reference_file = Path(args.reference)
    comparison: dict[str, Any] = {}
    if args.runtime == "torch" and not reference_file.exists():
        np.save(reference_file, vectors)
    elif reference_file.exists():
        reference = np.load(reference_file)
        comparison = {"max_abs_diff": float(np.abs(vectors - reference).max()),
                      "min_cosine": float((vectors * reference).sum(axis=1).min())}

    queries = make_queries(args.queries)
    samples = timed_each(embedder.embed_query, queries)
    hit = timed_each(embedder.embed_query, queries[:50])
    facts = make_facts(args.docs)
    embedder.embed_documents(facts[:BATCH])  # warm the batch shapes
    t0 = time.perf_counter()
    embedder.embed_documents(facts)
    batch_seconds = time.perf_counter() - t0
    return {
        "runtime": status["runtime"],
        "fallback": status.get("runtime_fallback"),
        "threads": args.threads,
        "load_s": round(load, 2),
        "model_load_s": status.get("load_seconds"),
        "after_load": after_load,
        "query": latency_summary(samples),
        "cache_hit_us": round(statistics.median(hit) * 1e6, 1),
        "batch_texts_per_s": round(len(facts) / batch_seconds, 1),
        "end": rss_mb(),
        "torch_imported": "torch" in sys.modules,
        **comparison,
    }


WORKERS = {"service": worker_service}


# -- driver --------------------------------------------------------------------------------


def run_worker(runtime: str, args: argparse.Namespace, threads: int, data_dir: Path, reference: Path) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", "service", "--runtime", runtime,
               "--threads", str(threads), "--queries", str(args.queries), "--docs", str(args.docs),
               "--out", str(data_dir), "--reference", str(reference)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{runtime} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def onnx_available() -> str | None:
    """None when the ONNX path can run, else why not."""
    import importlib.util

    missing = [name for name in ("onnxruntime", "onnx") if importlib.util.find_spec(name) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (project dependencies: pip install -e . into the venv)"
    return None


def print_run(label: str, r: dict[str, Any]) -> None:
    q = r["query"]
    print(f"  {label:<26} load {r['load_s']:>5.2f}s (in embedder {r['model_load_s']}s)"
          f"   query p50 {q['p50_ms']:>6.2f} ms"
          f"  p95 {q['p95_ms']:>6.2f} ms  mean {q['mean_ms']:>6.2f} ms   batch {r['batch_texts_per_s']:>6.1f} texts/s"
          f"   RSS after load {r['after_load']['rss_mb']:.0f} MB"
          f" (end {r['end']['rss_mb']:.0f}, peak {r['end']['peak_mb']:.0f})")
    extra = [f"runtime {r['runtime']}", f"torch imported: {r['torch_imported']}", f"cache hit {r['cache_hit_us']} us"]
    if "max_abs_diff" in r:
        extra.append(f"vs torch on 100 texts: max |diff| {r['max_abs_diff']:.2e}, min cosine {r['min_cosine']:.6f}")
    if r.get("fallback"):
        extra.append(f"FELL BACK: {r['fallback']}")
    print(f"  {'':<26} " + ", ".join(extra))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200, help="distinct short queries timed one by one")
    parser.add_argument("--docs", type=int, default=256, help="fact-sized texts embedded in batches of 32")
    parser.add_argument("--threads", default="1,2", help="comma-separated torch/ORT thread counts")
    parser.add_argument("--no-onnx", action="store_true", help="skip the ONNX Runtime runs")
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--runtime", choices=["torch", "onnx"], default="torch", help=argparse.SUPPRESS)
    parser.add_argument("--out", default="", help=argparse.SUPPRESS)
    parser.add_argument("--reference", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        args.threads = int(args.threads)
        print(json.dumps(WORKERS[args.worker](args)))
        return 0

    thread_counts = [int(t) for t in args.threads.split(",") if t.strip()]
    print(f"MiniLM embedder benchmark: {args.queries} queries, {args.docs} docs (batch {BATCH}), "
          f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    print("MiniLMEmbedder, fresh process per run; load = imports + model load + first query")
    with tempfile.TemporaryDirectory(prefix="minilm-bench-") as tmp:
        reference = Path(tmp) / "torch-vectors.npy"
        torch_dir, onnx_dir = Path(tmp) / "torch-data", Path(tmp) / "onnx-data"
        print("torch (MEMORY_EMBEDDER_RUNTIME=torch)")
        for threads in thread_counts:
            print_run(f"torch threads={threads}", run_worker("torch", args, threads, torch_dir, reference))

        reason = "skipped (--no-onnx)" if args.no_onnx else onnx_available()
        if reason:
            print(f"ONNX Runtime: {reason}")
            return 0
        print("ONNX Runtime (MEMORY_EMBEDDER_RUNTIME=onnx)")
        first = run_worker("onnx", args, thread_counts[0], onnx_dir, reference)
        print_run(f"onnx threads={thread_counts[0]} 1st start", first)
        exports = sorted((onnx_dir / "models").glob("*.onnx"))
        sizes = ", ".join(f"{p.name} {p.stat().st_size / 2**20:.0f} MB" for p in exports)
        print(f"  {'':<26} ^ includes the one-off export + check; models dir now holds: {sizes}")
        for threads in thread_counts:
            print_run(f"onnx threads={threads}", run_worker("onnx", args, threads, onnx_dir, reference))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
