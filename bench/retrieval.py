"""Retrieval quality on the labelled set in bench/data/retrieval (see its README).

Prints recall@1/5/10, MRR and nDCG@10 for
- BM25 only: FTS5 BM25 over the OR of the query's informative terms (every partial match);
- vectors only: exact cosine k-NN over all facts;
- hybrid ranking: the shared fusion (min_max + weighted mean) of the strict lexical matches and the
  vector neighbours, before the match rule cuts anything;
- hybrid (served): what memory_search hands back: matched facts only (lexical rule or cosine >=
  MEMORY_MIN_SIMILARITY), fused;
and the zero-match rate on answerable vs unanswerable queries (the honesty of matched_count), for the
current thresholds and for a small grid of alternatives.

    python bench/retrieval.py            # current defaults
    python bench/retrieval.py --grid     # also sweep MEMORY_MIN_SIMILARITY and the lexical share
    python bench/retrieval.py --grid --no-readability   # the same without the readability rule
    python bench/retrieval.py --backend opensearch --opensearch-url URL   # also the same searches on a real
        OpenSearch (the mirror, hybrid query + pipeline): every query's matched_count beside the embedded
        backend's, each difference listed, the top-5 overlap and the served metrics there
        (`make opensearch` starts a node and prints its URL)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.lib import opensearch  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import build_services  # noqa: E402
from service.domain import lexical  # noqa: E402
from service.search.fusion import fuse  # noqa: E402

DATA = ROOT / "bench" / "data" / "retrieval"


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def metrics(rankings: list[list[str]], relevant: list[set[str]]) -> dict[str, float]:
    return {k: float(np.mean(v)) for k, v in per_query(rankings, relevant).items()}


def per_query(rankings: list[list[str]], relevant: list[set[str]]) -> dict[str, list[float]]:
    """Each metric, query by query (metrics() is their mean)."""
    out: dict[str, list[float]] = defaultdict(list)
    for ranked, rel in zip(rankings, relevant):
        for k in (1, 5, 10):
            out[f"recall@{k}"].append(len(set(ranked[:k]) & rel) / len(rel))
        rank = next((i for i, uid in enumerate(ranked) if uid in rel), None)
        out["MRR"].append(0.0 if rank is None else 1.0 / (rank + 1))
        dcg = sum(1.0 / math.log2(i + 2) for i, uid in enumerate(ranked[:10]) if uid in rel)
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), 10)))
        out["nDCG@10"].append(dcg / ideal)
    return dict(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", action="store_true", help="sweep thresholds")
    parser.add_argument("--no-readability", action="store_true",
                        help="read every query by meaning (switch off service/search/readable.py's rule)")
    parser.add_argument("--backend", choices=["embedded", "opensearch"], default="embedded",
                        help="opensearch: compare the served searches with the OpenSearch mirror's")
    parser.add_argument("--opensearch-url", default=os.environ.get("OPENSEARCH_URL"),
                        help="a cluster (default $OPENSEARCH_URL): the run makes and removes its own deployment")
    parser.add_argument("--rankings-out", type=Path, default=None,
                        help="with --backend opensearch: write every query's top 10 on both backends (fact ids and "
                             "scores) as JSON lines, to compare runs on two clusters")
    parser.add_argument("--opensearch-prefix", default=None, help="its prefix (default bench-<pid>; -retrieval is "
                                                                   "added)")
    args = parser.parse_args()
    if args.backend == "opensearch" and not args.opensearch_url:
        parser.error("--backend opensearch needs --opensearch-url (or OPENSEARCH_URL); `make opensearch` starts one")
    facts, queries, offtopic = load("facts.jsonl"), load("queries.jsonl"), load("offtopic.jsonl")

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), embedder="minilm")
        services = build_services(settings)
        if args.no_readability:  # an embedder without a vocabulary: the rule is skipped
            services.embedder.vocabulary = lambda: None  # type: ignore[method-assign]
        profile = services.profiles.create("bench")
        started = time.perf_counter()
        services.embedder.embed_documents(["warm up"])
        load_s = time.perf_counter() - started
        uid_of: dict[str, str] = {}
        for fact in facts:
            written = services.facts.write(profile, title=fact["title"], text=fact["text"], kind=fact["kind"],
                                           tags=fact["tags"])
            uid_of[fact["id"]] = written.fact.uid
        relevant = [{uid_of[r] for r in q["relevant"]} for q in queries]

        backend = services.backend
        index = backend._synced(profile.id)  # the embedded index, for the single-retriever baselines
        bm25_rank, vec_rank, fused_rank, hybrid_rank = [], [], [], []
        vectors = {q["query"]: services.embedder.embed_query(q["query"]) for q in queries + offtopic}
        for q in queries:
            terms = lexical.informative_terms(q["query"])
            counts = index.term_counts(terms) if terms else np.zeros(index.size)
            partial = np.nonzero(counts)[0]  # BM25 alone ranks every partial match
            scores = {int(r): float(s) for r, s in zip(partial, index.bm25(terms, partial))}
            bm25_rank.append([index.uids[r] for r, _ in sorted(scores.items(), key=lambda kv: -kv[1])][:10])
            sims = index.similarities(vectors[q["query"]])
            vec_rank.append([index.uids[r] for r in np.argsort(-sims)[:10]])
            depth = settings.fusion_depth
            strict = {r: s for r, s in scores.items() if counts[r] >= lexical.required_terms(len(terms))}
            lex_top = dict(sorted(strict.items(), key=lambda kv: -kv[1])[:depth])
            vec_top = {int(r): float(sims[r]) for r in np.argsort(-sims)[:depth]}
            fused = fuse([lex_top, vec_top], [settings.lexical_weight, settings.vector_weight],
                         tie=index.fact_ids.__getitem__)
            fused_rank.append([index.uids[r] for r, _ in fused[:10]])
            served = services.search.search(profile, q["query"], limit=10)
            hybrid_rank.append([s.fact.uid for s in served.facts])

        print(f"labelled set: {len(facts)} facts, {len(queries)} answerable queries, {len(offtopic)} unanswerable")
        print(f"model load {load_s:.1f}s; thresholds: min_similarity={settings.min_similarity} "
              f"lexical share={lexical.LEXICAL_SHARE} weights={settings.lexical_weight}/{settings.vector_weight}")
        print(f"\n{'retriever':<22}" + "".join(f"{m:>11}" for m in ("recall@1", "recall@5", "recall@10", "MRR",
                                                                     "nDCG@10")))
        for name, ranking in (("BM25 only", bm25_rank), ("vectors only", vec_rank), ("hybrid ranking", fused_rank),
                              ("hybrid (served)", hybrid_rank)):
            m = metrics(ranking, relevant)
            print(f"{name:<22}" + "".join(f"{m[k]:>11.3f}" for k in ("recall@1", "recall@5", "recall@10", "MRR",
                                                                       "nDCG@10")))
        by_style: dict[str, list[int]] = defaultdict(list)
        for i, q in enumerate(queries):
            by_style[q["style"]].append(i)
        print("\nhybrid recall@5 by query style: " + ", ".join(
            f"{style} {metrics([hybrid_rank[i] for i in idx], [relevant[i] for i in idx])['recall@5']:.3f}"
            f" (n={len(idx)})" for style, idx in sorted(by_style.items())))

        def zero_rates(min_sim: float, share: float) -> tuple[float, dict[str, float]]:
            lexical.LEXICAL_SHARE = share
            object.__setattr__(backend.settings, "min_similarity", min_sim)  # frozen settings, bench only

            def zero(q: str) -> bool:
                return services.search.search(profile, q, limit=1).matched_count == 0

            answerable = np.mean([zero(q["query"]) for q in queries])
            styles: dict[str, list[bool]] = defaultdict(list)
            for q in offtopic:
                styles[q["style"]].append(zero(q["query"]))
            return float(answerable), {s: float(np.mean(v)) for s, v in styles.items()}

        # Where the defaults go wrong, and why: each failing query with its best cosine to any fact
        # (its relevant facts' best, for answerable ones) and whether the lexical rule matched.
        def best_cosine(query: str, rows: list[int] | None = None) -> float:
            sims = index.similarities(vectors[query])
            return float(sims.max() if rows is None else sims[rows].max())

        def lexical_hits(query: str) -> int:
            terms = lexical.informative_terms(query)
            return int((index.term_counts(terms) >= lexical.required_terms(len(terms))).sum()) if terms else 0

        print("\nat the defaults, answerable queries with matched_count 0 (best cosine of a relevant fact):")
        for q, rel in zip(queries, relevant):
            if services.search.search(profile, q["query"], limit=1).matched_count == 0:
                rows = [index.row_of_uid[u] for u in rel]
                print(f"  {best_cosine(q['query'], rows):.2f}  [{q['style']}] {q['query']}")
        print("unanswerable queries with matched_count > 0 (best cosine of any fact; lexical matches):")
        for q in offtopic:
            if services.search.search(profile, q["query"], limit=1).matched_count:
                print(f"  {best_cosine(q['query']):.2f}  lexical {lexical_hits(q['query'])}  "
                      f"[{q['style']}] {q['query']}")
        zero_overlap = []
        for q in offtopic:
            if q["style"] == "offtopic":
                terms = lexical.informative_terms(q["query"])
                shares = index.term_counts(terms) > 0 if terms else np.zeros(index.size, dtype=bool)
                sims = index.similarities(vectors[q["query"]])
                zero_overlap.append((float(sims[~shares].max()), q["query"]))
        top, which = max(zero_overlap)
        print(f"off-topic queries: highest cosine to a fact sharing none of their words: {top:.2f} ({which})")

        print("\nzero-match rate (matched_count 0): want low on answerable, high on unanswerable")
        base_share, base_sim = lexical.LEXICAL_SHARE, settings.min_similarity
        grid = [(base_sim, base_share)]
        if args.grid:
            grid += [(s, 0.5) for s in (0.28, 0.30, 0.32, 0.34, 0.36, 0.38, 0.40) if s != base_sim]
            grid += [(base_sim, 0.67)]
        for min_sim, share in grid:
            answerable, styles = zero_rates(min_sim, share)
            others = ", ".join(f"{s} {v:.1%}" for s, v in sorted(styles.items()))
            print(f"  min_similarity={min_sim:.2f} share={share:.2f}: answerable {answerable:.1%} | {others}")
        lexical.LEXICAL_SHARE = base_share
        object.__setattr__(backend.settings, "min_similarity", base_sim)
        if args.backend == "opensearch":
            compare_with_opensearch(services, profile, facts, queries, offtopic, uid_of, args.opensearch_url, tmp,
                                    args.opensearch_prefix, args.rankings_out)
        services.close()


def compare_with_opensearch(services, profile, facts, queries, offtopic, uid_of, url, tmp, prefix_base,  # noqa: ANN001
                            rankings_out=None):
    """The same store mirrored into OpenSearch; every query searched on both backends."""
    prefix = opensearch.prefix(prefix_base, "retrieval")  # a deployment of the run's own: nothing else is touched
    settings = Settings(data_dir=Path(tmp) / "os", database_url=f"sqlite:///{tmp}/os.db", embedder="minilm",
                        search="opensearch", opensearch_url=url, opensearch_prefix=prefix)
    (Path(tmp) / "os").mkdir()
    mirrored = build_services(settings, embedder=services.embedder)
    try:
        there = mirrored.profiles.create("bench")
        fact_of: dict[str, str] = {}
        for fact in facts:
            written = mirrored.facts.write(there, title=fact["title"], text=fact["text"], kind=fact["kind"],
                                           tags=fact["tags"])
            fact_of[written.fact.uid] = fact["id"]
        here_fact = {uid: fid for fid, uid in uid_of.items()}
        same, overlaps, identical, differences, rankings = 0, [], 0, [], []
        everything = [(q["query"], "answerable") for q in queries] + [(q["query"], q["style"]) for q in offtopic]
        dump = rankings_out.open("w", encoding="utf-8") if rankings_out else None
        for query, style in everything:
            local = services.search.search(profile, query, limit=10)
            remote = mirrored.search.search(there, query, limit=10)
            if remote.mode != "hybrid":
                raise SystemExit(f"OpenSearch answered {remote.mode!r} for {query!r}: is the node healthy?")
            same += local.matched_count == remote.matched_count
            if local.matched_count != remote.matched_count:
                differences.append((style, query, local.matched_count, remote.matched_count))
            top_here = [here_fact[f.fact.uid] for f in local.facts[:5]]
            top_there = [fact_of[f.fact.uid] for f in remote.facts[:5]]
            if top_here:
                overlaps.append(len(set(top_here) & set(top_there)) / len(top_here))
            identical += top_here == top_there
            if style == "answerable":
                rankings.append([fact_of[f.fact.uid] for f in remote.facts])
            if dump is not None:
                dump.write(json.dumps({
                    "query": query, "style": style, "matched": [local.matched_count, remote.matched_count],
                    "embedded": [[here_fact[f.fact.uid], round(f.score, 6)] for f in local.facts],
                    "opensearch": [[fact_of[f.fact.uid], round(f.score, 6)] for f in remote.facts]}) + "\n")
        if dump is not None:
            dump.close()
        print(f"\nOpenSearch ({url}) beside the embedded backend, same facts, same vectors, limit 10:")
        print(f"  matched_count equal on {same}/{len(everything)} queries "
              f"({len(queries)} answerable + {len(offtopic)} unanswerable)")
        for style, query, here, there_count in differences:
            print(f"    differs: embedded {here} vs opensearch {there_count}  [{style}] {query}")
        print(f"  top-5 overlap (share of the embedded top 5 also in OpenSearch's): mean {np.mean(overlaps):.3f}, "
              f"min {min(overlaps):.2f}; identical top-5 order on {identical}/{len(everything)}")
        relevant = [set(q["relevant"]) for q in queries]
        m = metrics(rankings, relevant)
        print(f"  {'hybrid (served), OS':<22}" + "".join(f"{m[k]:>11.3f}" for k in ("recall@1", "recall@5",
                                                                                   "recall@10", "MRR", "nDCG@10")))
    finally:
        mirrored.close()
        opensearch.remove(url, prefix)


if __name__ == "__main__":
    main()
