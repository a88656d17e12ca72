"""fp32 against int8 MiniLM on the labelled set, query by query: is the difference more than noise?

    python bench/precision_ab.py [--resamples 10000] [--seed 7]

Issue 28 asks to make MEMORY_EMBEDDER_PRECISION=int8 the default only if retrieval "moves by no more than
noise". This bench puts a number on the noise: the labelled set of bench/retrieval.py is written into two
fresh stores, one per precision, and every query is searched in both. For each metric (served hybrid
recall@5 and nDCG@10, vectors-only nDCG@10, and the zero-match rates of answerable and unanswerable queries),
it prints both means, their paired difference (int8 - fp32) and a 95 % paired bootstrap interval of that
difference over the queries. An interval that contains 0 means this set cannot tell the two precisions
apart. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.retrieval import load, per_query  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import build_services  # noqa: E402

PRECISIONS = ("fp32", "int8")


def run(precision: str, facts: list[dict], queries: list[dict], offtopic: list[dict]) -> dict[str, list[float]]:
    """Per-query figures of one precision: rankings are of the labelled ids, so both stores compare."""
    with tempfile.TemporaryDirectory(prefix=f"bench-precision-{precision}-") as tmp:
        with build_services(Settings(data_dir=Path(tmp), embedder="minilm", embedder_precision=precision)) as services:
            profile = services.profiles.create("bench")
            label_of: dict[str, str] = {}
            for fact in facts:
                written = services.facts.write(profile, title=fact["title"], text=fact["text"], kind=fact["kind"],
                                               tags=fact["tags"])
                label_of[written.fact.uid] = fact["id"]
            index = services.backend._synced(profile.id)  # the embedded index: the vectors-only ranking
            served, vectors_only, answerable_zero = [], [], []
            for q in queries:
                answer = services.search.search(profile, q["query"], limit=10)
                served.append([label_of[s.fact.uid] for s in answer.facts])
                answerable_zero.append(float(answer.matched_count == 0))
                sims = index.similarities(services.embedder.embed_query(q["query"]))
                vectors_only.append([label_of[index.uids[r]] for r in np.argsort(-sims)[:10]])
            relevant = [set(q["relevant"]) for q in queries]
            hybrid, vectors = per_query(served, relevant), per_query(vectors_only, relevant)
            unanswerable_zero = [float(services.search.search(profile, q["query"], limit=1).matched_count == 0)
                                 for q in offtopic]
    return {"hybrid (served) recall@5": hybrid["recall@5"], "hybrid (served) nDCG@10": hybrid["nDCG@10"],
            "vectors only nDCG@10": vectors["nDCG@10"], "answerable with 0 matches": answerable_zero,
            "unanswerable with 0 matches": unanswerable_zero}


def paired_interval(a: list[float], b: list[float], resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    """95 % bootstrap interval of mean(b - a), resampling the queries (pairs stay together)."""
    diff = np.asarray(b) - np.asarray(a)
    picks = rng.integers(0, len(diff), size=(resamples, len(diff)))
    means = diff[picks].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    facts, queries, offtopic = load("facts.jsonl"), load("queries.jsonl"), load("offtopic.jsonl")
    figures: dict[str, Any] = {p: run(p, facts, queries, offtopic) for p in PRECISIONS}
    rng = np.random.default_rng(args.seed)
    print(f"labelled set: {len(facts)} facts, {len(queries)} answerable and {len(offtopic)} unanswerable queries; "
          f"95 % paired bootstrap over the queries ({args.resamples:,} resamples)")
    print(f"\n{'metric':<30}{'fp32':>8}{'int8':>8}{'int8-fp32':>11}   95 % interval     verdict")
    for metric in figures["fp32"]:
        a, b = figures["fp32"][metric], figures["int8"][metric]
        low, high = paired_interval(a, b, args.resamples, rng)
        verdict = "within noise" if low <= 0.0 <= high else ("int8 higher" if low > 0 else "int8 lower")
        print(f"{metric:<30}{np.mean(a):8.3f}{np.mean(b):8.3f}{np.mean(b) - np.mean(a):+11.3f}   "
              f"[{low:+.3f}, {high:+.3f}]   {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
