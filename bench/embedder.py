"""Benchmark of the local MiniLM embedder: load time, query latency, batch throughput, memory.

    python bench/embedder.py [--queries 200] [--docs 256] [--threads 1,2] [--no-onnx]

Each configuration runs in a fresh subprocess, so torch.set_num_threads (process-wide, and best set
before the first forward pass) takes effect cleanly and RSS figures are not shared between runs.

If `onnxruntime` and `onnx` are importable (installed by hand; they are NOT project dependencies),
the model is also exported with torch.onnx.export to a temporary folder and run with ONNX Runtime
plus the model folder's tokenizer.json, without importing torch, to compare vectors and speed.
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
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of all-MiniLM-L6-v2
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


def worker_torch(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    from service.config import Settings
    from service.embedding.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder(Settings(embedder="minilm", torch_threads=args.threads))
    embedder.embed_query("first call loads the model")
    load = time.perf_counter() - started
    after_load = rss_mb()

    import torch

    queries = make_queries(args.queries)
    samples = timed_each(embedder.embed_query, queries)
    hit = timed_each(embedder.embed_query, queries[:50])
    facts = make_facts(args.docs)
    embedder.embed_documents(facts[:BATCH])  # warm the batch shapes
    t0 = time.perf_counter()
    embedder.embed_documents(facts)
    batch_seconds = time.perf_counter() - t0
    return {
        "threads": torch.get_num_threads(),
        "load_s": round(load, 2),
        "model_load_s": embedder.status().get("load_seconds"),
        "after_load": after_load,
        "query": latency_summary(samples),
        "cache_hit_us": round(statistics.median(hit) * 1e6, 1),
        "batch_texts_per_s": round(len(facts) / batch_seconds, 1),
        "end": rss_mb(),
    }


def worker_onnx_export(args: argparse.Namespace) -> dict[str, Any]:
    """Export the transformer to ONNX and save torch reference vectors for the comparison."""
    import numpy as np

    from service.config import Settings
    from service.embedding.minilm import MiniLMEmbedder, bundled_model_dir

    out = Path(args.out)
    embedder = MiniLMEmbedder(Settings(embedder="minilm", torch_threads=2))
    texts = make_queries(50) + make_facts(50)
    np.save(out / "reference.npy", embedder.embed_documents(texts))

    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(bundled_model_dir()), attn_implementation="eager").eval()

    class Encoder(torch.nn.Module):
        # token_type_ids is an explicit input: left implicit, the exporter bakes in BERT's buffered
        # zeros wrongly and the outputs are off by ~1.0.
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    ids = torch.tensor([[101, 7592, 2088, 102, 0, 0], [101, 7592, 2088, 2088, 2088, 102]])
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    started = time.perf_counter()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Encoder(model),
            (ids, mask, torch.zeros_like(ids)),
            str(out / "model.onnx"),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "seq"} for name in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )
    return {"export_s": round(time.perf_counter() - started, 2), "onnx_mb": round((out / "model.onnx").stat().st_size / 2**20, 1)}


def worker_onnx(args: argparse.Namespace) -> dict[str, Any]:
    """ONNX Runtime + tokenizers + numpy only: torch is never imported here."""
    started = time.perf_counter()
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from service.embedding.minilm import bundled_model_dir

    out = Path(args.out)
    tokenizer = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_SEQ_LENGTH)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(str(out / "model.onnx"), options, providers=["CPUExecutionProvider"])

    def embed(texts: list[str]) -> np.ndarray:
        rows = []
        for i in range(0, len(texts), BATCH):
            encodings = tokenizer.encode_batch(texts[i : i + BATCH])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            summed = (hidden * mask[:, :, None]).sum(axis=1)
            pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1e-9, None)
            rows.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(rows).astype(np.float32)

    embed(["first call"])
    load = time.perf_counter() - started
    after_load = rss_mb()

    reference = np.load(out / "reference.npy")
    mine = embed(make_queries(50) + make_facts(50))
    cosines = (mine * reference).sum(axis=1)

    samples = timed_each(lambda q: embed([q]), make_queries(args.queries))
    facts = make_facts(args.docs)
    embed(facts[:BATCH])
    t0 = time.perf_counter()
    embed(facts)
    batch_seconds = time.perf_counter() - t0
    return {
        "threads": args.threads,
        "load_s": round(load, 2),
        "after_load": after_load,
        "max_abs_diff": float(np.abs(mine - reference).max()),
        "min_cosine": float(cosines.min()),
        "query": latency_summary(samples),
        "batch_texts_per_s": round(len(facts) / batch_seconds, 1),
        "end": rss_mb(),
        "torch_imported": "torch" in sys.modules,
    }


WORKERS = {"torch": worker_torch, "onnx-export": worker_onnx_export, "onnx": worker_onnx}


# -- driver --------------------------------------------------------------------------------


def run_worker(kind: str, args: argparse.Namespace, threads: int, out: str = "") -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--threads", str(threads),
               "--queries", str(args.queries), "--docs", str(args.docs), "--out", out]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def onnx_available() -> str | None:
    """None when the ONNX path can run, else why not."""
    import importlib.util

    missing = [name for name in ("onnxruntime", "onnx") if importlib.util.find_spec(name) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (pip install onnxruntime onnx into the venv to compare)"
    return None


def print_run(label: str, r: dict[str, Any]) -> None:
    q = r["query"]
    print(f"  {label:<22} load {r['load_s']:>5.2f}s   query p50 {q['p50_ms']:>6.2f} ms  p95 {q['p95_ms']:>6.2f} ms"
          f"  mean {q['mean_ms']:>6.2f} ms   batch {r['batch_texts_per_s']:>6.1f} texts/s"
          f"   RSS after load {r['after_load']['rss_mb']:.0f} MB (end {r['end']['rss_mb']:.0f}, peak {r['end']['peak_mb']:.0f})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200, help="distinct short queries timed one by one")
    parser.add_argument("--docs", type=int, default=256, help="fact-sized texts embedded in batches of 32")
    parser.add_argument("--threads", default="1,2", help="comma-separated torch/ORT thread counts")
    parser.add_argument("--no-onnx", action="store_true", help="skip the ONNX Runtime comparison")
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--out", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        args.threads = int(args.threads)
        print(json.dumps(WORKERS[args.worker](args)))
        return 0

    thread_counts = [int(t) for t in args.threads.split(",") if t.strip()]
    print(f"MiniLM embedder benchmark: {args.queries} queries, {args.docs} docs (batch {BATCH}), "
          f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    print("torch (sentence-transformers), fresh process per thread count; load = import + model load + warm-up")
    for threads in thread_counts:
        r = run_worker("torch", args, threads)
        print_run(f"torch threads={r['threads']}", r)
        print(f"  {'':<22} inside the embedder (torch import + weights + warm-up) {r['model_load_s']}s, query cache hit {r['cache_hit_us']} us")

    reason = "skipped (--no-onnx)" if args.no_onnx else onnx_available()
    if reason:
        print(f"ONNX Runtime: {reason}")
        return 0
    with tempfile.TemporaryDirectory(prefix="minilm-onnx-") as tmp:
        export = run_worker("onnx-export", args, 2, tmp)
        print(f"ONNX Runtime (export {export['export_s']}s, {export['onnx_mb']} MB; torch not imported in these runs)")
        for threads in thread_counts:
            r = run_worker("onnx", args, threads, tmp)
            print_run(f"onnx threads={threads}", r)
            print(f"  {'':<22} vs torch on 100 texts: max |diff| {r['max_abs_diff']:.2e}, min cosine {r['min_cosine']:.6f}"
                  f", torch imported: {r['torch_imported']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
