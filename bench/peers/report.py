#!/usr/bin/env python3
"""Summarise harness.py's JSONL: a markdown table per (peer, label, n), best and median over the repetitions (best =
min for latencies and RSS, max for throughput), then for each N with our service and a peer one line

    ratio n=N search_p50=<ours / best peer> write=<ours / best peer>

(medians over the repetitions; search below 1 is faster than the best peer, write above 1 is more writes a second).

    python report.py ${TMPDIR:-/tmp}/peers-bench/side-by-side-*.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def mm(xs, best=min, percent=False):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    b, med = best(xs), statistics.median(xs)
    if percent:
        f = lambda v: f"{100 * v:.0f}%"  # noqa: E731
    else:
        f = (lambda v: f"{v:.0f}") if max(xs) >= 100 else (lambda v: f"{v:.1f}")
    return f"{f(b)} / {f(med)}" if len(xs) > 1 else f(b)


def ratios(rows):
    """{n: (search p50 ratio, write ratio)} of our service ("product") against the best peer, on medians."""
    by = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by[r["n"]][r["peer"]].append(r)
    out = {}
    for n, peers in sorted(by.items()):
        ours = peers.pop("product", [])
        if not ours or not peers:
            continue
        best_search = min(_median(rs, "search_ms_p50") for rs in peers.values())
        best_write = max(_median(rs, "write_per_s") for rs in peers.values())
        out[n] = (_median(ours, "search_ms_p50") / best_search, _median(ours, "write_per_s") / best_write)
    return out


def _median(rows, key):
    return statistics.median(r[key] for r in rows if r.get(key) is not None)


def main():
    rows = [json.loads(line) for p in sys.argv[1:] for line in open(p) if line.strip()]
    table(rows)
    for n, (search, write) in ratios(rows).items():
        print(f"ratio n={n} search_p50={search:.2f} write={write:.2f}")


def table(rows):
    groups = defaultdict(list)
    for r in rows:
        groups[(r["peer"], r.get("label") or "", r.get("search_mode") or "", r["n"])].append(r)
    print("| peer | variant | facts | reps | write facts/s (best / median) | search p50 ms | search p95 ms "
          "| peak RSS MB | paraphrase target in top-10 | off-topic → 0 results | hit count |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (peer, label, mode, n), rs in sorted(groups.items()):
        variant = ", ".join(x for x in (label, mode and f"mode={mode}") if x) or "default"
        wps = mm([r.get("write_per_s") for r in rs], best=max)
        hit = "total of all hits" if any(r.get("matched_count_reported") for r in rs) else "returned only"
        errs = sum(r.get("write_errors", 0) for r in rs)
        if errs:
            wps += f" [{errs} writes refused]"
        print(f"| {rs[0]['name']} | {variant} | {n} | {len(rs)} | {wps} | {mm([r.get('search_ms_p50') for r in rs])} "
              f"| {mm([r.get('search_ms_p95') for r in rs])} | {mm([r.get('rss_hwm_mb') for r in rs])} "
              f"| {mm([r.get('para_target_in_results') for r in rs], best=max, percent=True)} "
              f"| {mm([r.get('off_empty') for r in rs], best=max, percent=True)} | {hit} |")


if __name__ == "__main__":
    main()
