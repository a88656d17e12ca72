"""Benchmark of the local MiniLM embedder: time to ready, load time, query latency, batch throughput, memory.

    python bench/embedder.py [--queries 200] [--docs 256] [--threads 1,2] [--old-graph FILE] [--no-serve]

Measures the service's own embedder (MiniLMEmbedder, ONNX Runtime with the graph that ships in the package
and the weights read from model.safetensors, no torch), each configuration in a fresh subprocess so thread
settings and RSS figures are not shared:

- the service's load (the shipped graph template + weights, checked), per thread count;
- one graph file with the weights inside (what the service built and cached before the template shipped),
  for before/after query speed in the same run; needs the `onnx` package (test extra), else skipped;
- the two side by side in one process, query by query in turn (the fairest before/after on a shared box);
- --old-graph FILE: another ONNX file with the same inputs, e.g. the torch export the service made before
  (a `<data dir>/models/all-MiniLM-L6-v2-*.onnx` written by older versions), timed by the same encoder;
- torch (MEMORY_EMBEDDER_RUNTIME=torch), only where torch and sentence-transformers are installed.

Vectors are compared with tests/embedding/data/reference_vectors.json (made by sentence-transformers on
torch). Unless --no-serve, it also starts `memory serve` (this venv) on a fresh data dir and then again on
the same one, and prints the seconds from process start until /readyz says ready (the model loaded).
Nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "embedding" / "data" / "reference_vectors.json"
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


def rss_mb(pid: int | str = "self") -> dict[str, float]:
    """Current and peak resident memory of a process, from /proc (Linux)."""
    values: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
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


def fixture() -> tuple[list[str], Any]:
    import numpy as np

    items = json.loads(FIXTURE.read_text(encoding="utf-8"))["items"]
    return [i["text"] for i in items], np.array([i["vector"] for i in items], dtype=np.float32)


# -- workers (run in subprocesses) ---------------------------------------------------------


def load_encoder(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """(something with .encode(texts), facts about its load); imports and load are inside the timing."""
    from service.config import Settings
    from service.embedding.minilm import MiniLMEmbedder
    from service.embedding.model_files import locate
    from service.embedding.onnx_minilm import OnnxMiniLM

    if args.mode == "old-graph":
        encoder = OnnxMiniLM(Path(args.graph), locate(None), args.threads)
        return encoder, {"runtime": "onnx", "graph": Path(args.graph).name}
    if args.mode == "full-graph":
        import onnx
        from onnx import numpy_helper

        from service.embedding.bert_graph import TEMPLATE_FILE
        from service.embedding.encoder_graph import initializers

        model_dir = locate(None)
        model = onnx.load(str(TEMPLATE_FILE), load_external_data=False)
        weights = initializers(model_dir)
        for tensor in model.graph.initializer:
            if tensor.name in weights:
                tensor.CopyFrom(numpy_helper.from_array(weights[tensor.name], tensor.name))
        encoder = OnnxMiniLM(model.SerializeToString(), model_dir, args.threads)
        return encoder, {"runtime": "onnx", "graph": "one file with the weights inside, unchecked"}
    runtime = "torch" if args.mode == "torch" else "onnx"
    embedder = MiniLMEmbedder(Settings(embedder="minilm", torch_threads=args.threads, data_dir=Path(args.out),
                                       embedder_runtime=runtime))
    embedder.embed_query("first call loads the model")
    status = embedder.status()
    return embedder._model, {"runtime": status["runtime"], "graph": status.get("graph"),
                             "model_load_s": status.get("load_seconds")}


def interleaved(args: argparse.Namespace) -> dict[str, Any]:
    """Shipped graph vs one file with the weights inside, in one process, each query on both in turn."""
    from service.embedding.encoder_graph import open_encoder
    from service.embedding.model_files import locate

    shipped = open_encoder(locate(None), args.threads)
    args.mode = "full-graph"
    inside, _ = load_encoder(args)
    queries = make_queries(args.queries)
    shipped.encode(queries[:5]), inside.encode(queries[:5])  # warm-up
    times: dict[str, list[float]] = {"shipped": [], "inside": []}
    for query in queries:
        for name, encoder in (("shipped", shipped), ("inside", inside)):
            started = time.perf_counter()
            encoder.encode([query])
            times[name].append(time.perf_counter() - started)
    return {name: latency_summary(samples) for name, samples in times.items()}


def worker(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    if args.mode == "interleaved":
        return interleaved(args)

    started = time.perf_counter()
    encoder, facts_about = load_encoder(args)
    encoder.encode(["first call"])
    load = time.perf_counter() - started
    after_load = rss_mb()

    texts, reference = fixture()
    diff = float(np.abs(encoder.encode(texts) - reference).max())

    queries = make_queries(args.queries)
    encoder.encode(queries[:5])  # warm-up
    samples = timed_each(lambda q: encoder.encode([q]), queries)
    facts = make_facts(args.docs)
    encoder.encode(facts[:BATCH])  # warm the batch shapes
    t0 = time.perf_counter()
    encoder.encode(facts)
    batch_seconds = time.perf_counter() - t0
    return {
        **facts_about,
        "threads": args.threads,
        "load_s": round(load, 2),
        "after_load": after_load,
        "query": latency_summary(samples),
        "batch_texts_per_s": round(len(facts) / batch_seconds, 1),
        "end": rss_mb(),
        "torch_imported": "torch" in sys.modules,
        "max_abs_diff": diff,
    }


# -- time to ready of `memory serve` -------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_until_ready(memory: Path, data_dir: Path, timeout: float = 120.0) -> dict[str, Any]:
    """Start `memory serve` with MEMORY_DATA_DIR=data_dir and poll /readyz every 20 ms: seconds from process
    start until HTTP answers and until ready (the embedder loaded), the model's own load time, and the
    server's RSS once ready."""
    port = free_port()
    env = {**os.environ, "MEMORY_DATA_DIR": str(data_dir), "MEMORY_PORT": str(port), "MEMORY_BIND": "127.0.0.1"}
    env.pop("PYTHONPATH", None)  # the service installed in the venv of `memory`
    started = time.perf_counter()
    server = subprocess.Popen([str(memory), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    first_answer: float | None = None
    try:
        while time.perf_counter() - started < timeout:
            if server.poll() is not None:
                raise RuntimeError(f"memory serve exited: {server.stderr.read()[-2000:] if server.stderr else ''}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
                    report = json.loads(response.read())
            except urllib.error.HTTPError as exc:  # 503 while not ready
                report = json.loads(exc.read())
            except OSError:
                time.sleep(0.02)
                continue
            if first_answer is None:
                first_answer = time.perf_counter() - started
            if report["ready"]:
                embedder = report["checks"]["embedder"]
                return {"ready_s": time.perf_counter() - started, "http_s": first_answer,
                        "rss_mb": rss_mb(server.pid)["rss_mb"], "load_s": embedder.get("load_seconds"),
                        "graph": embedder.get("graph")}
            time.sleep(0.02)
        raise RuntimeError(f"memory serve was not ready after {timeout:.0f}s")
    finally:
        server.terminate()
        server.wait(30)


def print_serve(label: str, r: dict[str, Any]) -> None:
    print(f"  {label:<34} HTTP answers after {r['http_s']:.2f}s, ready after {r['ready_s']:.2f}s"
          f" (model load {r['load_s']}s, graph {r['graph']}), RSS then {r['rss_mb']:.0f} MB")


# -- driver --------------------------------------------------------------------------------


def run_worker(mode: str, args: argparse.Namespace, threads: int, data_dir: Path) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--mode", mode, "--threads", str(threads),
               "--queries", str(args.queries), "--docs", str(args.docs), "--out", str(data_dir),
               "--old-graph", args.old_graph or ""]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def print_run(label: str, r: dict[str, Any]) -> None:
    q = r["query"]
    print(f"  {label:<34} load {r['load_s']:>5.2f}s   query p50 {q['p50_ms']:>6.2f} ms"
          f"  p95 {q['p95_ms']:>6.2f} ms  mean {q['mean_ms']:>6.2f} ms   batch {r['batch_texts_per_s']:>6.1f} texts/s"
          f"   RSS after load {r['after_load']['rss_mb']:.0f} MB (end {r['end']['rss_mb']:.0f},"
          f" peak {r['end']['peak_mb']:.0f})")
    extra = [f"runtime {r['runtime']}", f"graph {r.get('graph')}", f"torch imported: {r['torch_imported']}",
             f"vs sentence-transformers fixture: max |diff| {r['max_abs_diff']:.1e}"]
    if r.get("model_load_s") is not None:
        extra.insert(0, f"embedder load {r['model_load_s']}s")
    print(f"  {'':<34} " + ", ".join(extra))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200, help="distinct short queries timed one by one")
    parser.add_argument("--docs", type=int, default=256, help="fact-sized texts embedded in batches of 32")
    parser.add_argument("--threads", default="1,2", help="comma-separated ONNX Runtime (or torch) thread counts")
    parser.add_argument("--old-graph", default="", help="another ONNX file to time the same way (e.g. the torch export)")
    parser.add_argument("--no-serve", action="store_true", help="skip the `memory serve` time-to-ready runs")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="onnx", help=argparse.SUPPRESS)
    parser.add_argument("--out", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        args.threads = int(args.threads)
        args.graph = args.old_graph
        print(json.dumps(worker(args)))
        return 0

    thread_counts = [int(t) for t in args.threads.split(",") if t.strip()]
    print(f"MiniLM embedder benchmark: {args.queries} queries, {args.docs} docs (batch {BATCH}), "
          f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    print("fresh process per run; load = imports + model load + first encode")
    with tempfile.TemporaryDirectory(prefix="minilm-bench-") as tmp:
        data_dir = Path(tmp) / "data"
        print("ONNX Runtime, shipped graph + model.safetensors (default, MEMORY_EMBEDDER_RUNTIME=onnx)")
        for threads in thread_counts:
            print_run(f"threads={threads} shipped graph", run_worker("onnx", args, threads, data_dir))
        if importlib.util.find_spec("onnx") is None:
            print("graph with the weights inside: skipped (the `onnx` package is not installed; test extra)")
        else:
            for threads in thread_counts:
                print_run(f"threads={threads} weights inside", run_worker("full-graph", args, threads, data_dir))
            for threads in thread_counts:
                r = run_worker("interleaved", args, threads, data_dir)
                print(f"  threads={threads} in turn, one process     query p50 shipped graph {r['shipped']['p50_ms']:.2f} ms,"
                      f" weights inside {r['inside']['p50_ms']:.2f} ms (p95 {r['shipped']['p95_ms']:.2f} /"
                      f" {r['inside']['p95_ms']:.2f} ms)")
        if args.old_graph:
            print(f"Another graph: {args.old_graph}")
            for threads in thread_counts:
                print_run(f"threads={threads} old graph", run_worker("old-graph", args, threads, data_dir))
        missing = [m for m in ("torch", "sentence_transformers") if importlib.util.find_spec(m) is None]
        if missing:
            print(f"torch runtime: skipped ({', '.join(missing)} not installed; the [torch] extra)")
        else:
            print("torch (MEMORY_EMBEDDER_RUNTIME=torch)")
            for threads in thread_counts:
                print_run(f"threads={threads} torch", run_worker("torch", args, threads, data_dir))
        if not args.no_serve:
            memory = Path(sys.executable).parent / "memory"
            print(f"`memory serve` until /readyz is ready ({memory})")
            serve_dir = Path(tmp) / "serve-data"
            print_serve("fresh data dir", serve_until_ready(memory, serve_dir))
            print_serve("second start, same data dir", serve_until_ready(memory, serve_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
