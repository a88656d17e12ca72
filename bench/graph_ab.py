"""The shipped encoder graph against the one shipped at another commit: same vectors? how long a text takes?

    python bench/graph_ab.py [--against 6621e35] [--precision int8] [--texts 300] [--threads 2]

Both graphs are opened in this process as the service opens its own (service.embedding.onnx_minilm, the weights
from the installed model.safetensors through the current manifest, which must list the same weights as the
other commit's), then every text is embedded by both, one text per call, in an order that alternates text by
text, with 2 ms of idle time after each call (as between a service's calls): so the box's drift hits both
alike. Texts: the search benchmarks' queries and facts (bench/lib/corpus.py). Printed per kind of text: the
largest difference between the two graphs' vectors, each graph's median call, the median of the paired
differences (this tree's minus the other's) and how often this tree's graph was the faster. The default
commit is the last one before the attention became ONNX Runtime's MultiHeadAttention (bert_graph.py).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.lib.corpus import FactMaker, make_queries  # noqa: E402
from bench.lib.measure import console  # noqa: E402
from service.embedding import bert_graph  # noqa: E402
from service.embedding.encoder_graph import initializers  # noqa: E402
from service.embedding.model_files import locate  # noqa: E402
from service.embedding.onnx_minilm import OnnxMiniLM  # noqa: E402

IDLE_S = 0.002


def at_commit(rev: str, path: Path) -> bytes:
    relative = path.relative_to(ROOT).as_posix()
    return subprocess.run(["git", "show", f"{rev}:{relative}"], cwd=ROOT, capture_output=True, check=True).stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="6621e35", help="the other commit (a git revision)")
    parser.add_argument("--precision", default="int8", choices=["int8", "fp32"])
    parser.add_argument("--texts", type=int, default=300, help="texts of each kind")
    parser.add_argument("--threads", type=int, default=2, help="intra-op threads (the service's default: 2)")
    args = parser.parse_args(argv)

    int8 = args.precision == "int8"
    template = bert_graph.INT8_TEMPLATE_FILE if int8 else bert_graph.TEMPLATE_FILE
    listing = bert_graph.INT8_MANIFEST_FILE if int8 else bert_graph.MANIFEST_FILE
    theirs = json.loads(at_commit(args.against, listing))
    if theirs["weights"] != json.loads(listing.read_text(encoding="utf-8"))["weights"]:
        raise SystemExit(f"{args.against}'s graph wants other weights than this tree's: not comparable here")
    model_dir = locate(None)
    weights = initializers(model_dir, listing)
    encoders = {"this tree": OnnxMiniLM(template.read_bytes(), model_dir, args.threads, weights),
                args.against: OnnxMiniLM(at_commit(args.against, template), model_dir, args.threads, weights)}
    for encoder in encoders.values():
        encoder.batch_size = 1

    maker = FactMaker(seed=5)
    texts = {"queries": [q for _, q in make_queries(maker, args.texts, seed=3)],
             "facts": [f"{f['title']}. {f['text']}" for f in (maker.make() for _ in range(args.texts))]}
    console.print(f"{args.precision} graph of this tree against {args.against}'s, {args.threads} intra-op threads, "
                  f"{args.texts} texts of each kind, alternated text by text")
    names = list(encoders)
    for kind, items in texts.items():
        for encoder in encoders.values():  # warm-up
            for text in items[:10]:
                encoder.encode([text])
        times: dict[str, list[float]] = {name: [] for name in names}
        largest = 0.0
        for i, text in enumerate(items):
            vectors = {}
            for name in names if i % 2 == 0 else names[::-1]:
                start = time.perf_counter()
                vectors[name] = encoders[name].encode([text])
                times[name].append((time.perf_counter() - start) * 1000)
                time.sleep(IDLE_S)
            largest = max(largest, float(np.abs(vectors[names[0]] - vectors[names[1]]).max()))
        paired = [a - b for a, b in zip(times[names[0]], times[names[1]])]
        console.print(f"  {kind:<8} largest vector difference {largest:.2e}; median call: this tree "
                      f"{statistics.median(times[names[0]]):.3f} ms, {args.against} {statistics.median(times[names[1]]):.3f}"
                      f" ms; paired difference {statistics.median(paired):+.3f} ms, this tree faster in "
                      f"{100 * sum(d < 0 for d in paired) / len(paired):.0f} % of texts", soft_wrap=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
