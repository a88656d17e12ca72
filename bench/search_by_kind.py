"""The side-by-side's searches split by the kind of query: paraphrases of a stored fact and off-topic questions.

    python bench/search_by_kind.py RESULTS.jsonl [MORE.jsonl ...]

RESULTS.jsonl is the results file `KEEP_QUERIES=1 bash bench/peers/side_by_side.sh 1000` names on its last line
but the table (one line a repetition of each server, each with its 200 queries' times).

Why split: the 200 queries are 100 paraphrases and 100 off-topic questions. This service answers an off-topic
question with no facts and a paraphrase with up to `limit` of them, so its times form two groups, and the p50
of all 200 falls in the gap between them: it follows the slowest off-topic query and the fastest paraphrase,
not the typical call. mcp-server-qdrant returns 10 entries for every query: one group. Per kind, medians
of the repetitions' p50s, and this service's p50 over the peer's of the same kind.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

KINDS = ("paraphrase", "offtopic")


def percentile(values: list[float], p: float) -> float:
    """Linear interpolation between closest ranks: bench/peers/measure.py's `pct`, so `all` matches its search_ms_p50."""
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    low = int(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def by_kind(rows: list[dict]) -> dict[tuple[str, int], dict[str, list[tuple[float, float, float]]]]:
    """(server, facts) -> kind ('all' too) -> one (p10, p50, p90) per repetition."""
    out: dict[tuple[str, int], dict[str, list[tuple[float, float, float]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        queries = row.get("per_query")
        if not queries:
            raise SystemExit(f"{row.get('peer')} n={row.get('n')} rep {row.get('rep')}: no per_query "
                             "(run bench/peers/side_by_side.sh with KEEP_QUERIES=1)")
        groups = {"all": [q["ms"] for q in queries]}
        groups.update({kind: [q["ms"] for q in queries if q["kind"] == kind] for kind in KINDS})
        for kind, times in groups.items():
            if times:
                out[(row["peer"], row["n"])][kind].append(tuple(percentile(times, p) for p in (10, 50, 90)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args()
    rows = [json.loads(line) for path in args.results for line in path.read_text().splitlines() if line.strip()]
    table = by_kind(rows)
    median = {key: {kind: tuple(statistics.median(r[i] for r in reps) for i in range(3))
                    for kind, reps in kinds.items()} for key, kinds in table.items()}
    print("| server | facts | reps | query kind | p10 | p50 | p90 (ms) |")
    print("|---|---|---|---|---|---|---|")
    for (server, n), kinds in sorted(median.items(), key=lambda kv: (kv[0][1], kv[0][0] != "product", kv[0][0])):
        for kind in ("all", *KINDS):
            if kind in kinds:
                p10, p50, p90 = kinds[kind]
                print(f"| {server} | {n} | {len(table[(server, n)][kind])} | {kind} | {p10:.2f} | {p50:.2f} | {p90:.2f} |")
    for n in sorted({n for _, n in median}):
        ours = median.get(("product", n))
        peers = {server: kinds for (server, m), kinds in median.items() if m == n and server != "product"}
        for server, theirs in sorted(peers.items()):
            if ours:
                ratios = " ".join(f"{kind}={ours[kind][1] / theirs[kind][1]:.2f}"
                                  for kind in ("all", *KINDS) if kind in ours and kind in theirs)
                print(f"p50 ratio n={n} against {server}: {ratios}")


if __name__ == "__main__":
    main()
