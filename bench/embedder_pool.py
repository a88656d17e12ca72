"""ONNX Runtime's intra-op thread pool, three ways, for the service's encoder: how long a text takes and how
much CPU it costs.

    python bench/embedder_pool.py [--texts 200] [--threads 2] [--idle-ms 3] [--precision int8]

One encoding runs ~150 graph nodes, and every node the pool shares wakes its other thread. The settings:

- sleep: the pool's threads sleep between nodes (what the service did before; woken by the kernel each time);
- spin in run (the service's setting, service.embedding.onnx_minilm.POOL_SPIN_IN_RUN): they spin between the
  nodes of one run and stop when the run returns;
- spin on: ONNX Runtime's default, they also spin after the run, taking a core from the web server, the
  database and the client between calls.

Each setting runs in a process of its own (a pool spinning on after its call would take the CPU of another
encoder in the same process), the three in turn for `--rounds` rounds so the box's moments are shared; each
call is followed by `--idle-ms` of sleep, as the service has between calls. The encoder is the service's (the
shipped graph and weights, opened as the service opens them). Texts: the search benchmarks' queries and facts
(bench/lib/corpus.py). Printed per setting and kind of text, over all rounds: the call's p50 and p90, and the
process's CPU from the call's start to the end of the idle time after it (what the pool takes from everything
else on the box). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.measure import console  # noqa: E402
from service.domain.models import embedding_text  # noqa: E402
from service.embedding.encoder_graph import open_encoder  # noqa: E402
from service.embedding.model_files import locate  # noqa: E402
from service.embedding.onnx_minilm import POOL_SPIN_IN_RUN  # noqa: E402

SETTINGS = {
    "sleep": {"session.intra_op.allow_spinning": "0"},
    "spin in run (service)": POOL_SPIN_IN_RUN,
    "spin on": {"session.intra_op.allow_spinning": "1"},
}


def texts(n: int) -> dict[str, list[str]]:
    maker = FactMaker(seed=7)
    facts = [maker.make() for _ in range(n)]
    return {
        "queries": [q for _, q in make_queries(maker, n, seed=11)],
        "facts": [embedding_text(f["title"], f["text"], f.get("tags") or []) for f in facts],
    }


def worker(args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    """One setting's encoder over both kinds of text: per kind, each call's time and CPU (ms)."""
    encoder = open_encoder(locate(None), args.threads, args.precision, SETTINGS[args.worker])
    out: dict[str, dict[str, list[float]]] = {}
    for kind, items in texts(args.texts).items():
        for text in items[:10]:  # warm-up
            encoder.encode([text])
        calls, cpu = [], []
        for text in items:
            cpu_start, start = time.process_time(), time.perf_counter()
            encoder.encode([text])
            calls.append((time.perf_counter() - start) * 1000)
            time.sleep(args.idle_ms / 1000)
            cpu.append((time.process_time() - cpu_start) * 1000)
        out[kind] = {"calls": calls, "cpu": cpu}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=200, help="texts of each kind")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three settings in turn")
    parser.add_argument("--threads", type=int, default=2, help="intra-op threads (the service's default: 2)")
    parser.add_argument("--idle-ms", type=float, default=3.0, help="sleep after each call")
    parser.add_argument("--precision", default="int8", choices=["int8", "fp32"])
    parser.add_argument("--worker", choices=sorted(SETTINGS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args)))
        return 0

    console.print(f"{args.precision} encoder, {args.threads} intra-op threads, {args.idle_ms:g} ms idle after "
                  f"each call; {args.texts} texts of each kind, {args.rounds} rounds of the settings in turn")
    merged: dict[str, dict[str, dict[str, list[float]]]] = {}
    for _ in range(args.rounds):
        for name in SETTINGS:
            command = [sys.executable, __file__, "--worker", name, "--texts", str(args.texts), "--threads",
                       str(args.threads), "--idle-ms", str(args.idle_ms), "--precision", args.precision]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            for kind, figures in json.loads(done.stdout).items():
                for key, values in figures.items():
                    merged.setdefault(kind, {}).setdefault(name, {}).setdefault(key, []).extend(values)
    console.print(f"{'texts':<8} {'pool':<22} {'call p50':>9} {'call p90':>9} {'CPU a call':>11}  (ms)")
    for kind, by_setting in merged.items():
        for name, figures in by_setting.items():
            ordered = sorted(figures["calls"])
            console.print(f"{kind:<8} {name:<22} {statistics.median(ordered):>9.2f} "
                          f"{ordered[int(0.9 * (len(ordered) - 1))]:>9.2f} {statistics.fmean(figures['cpu']):>11.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
