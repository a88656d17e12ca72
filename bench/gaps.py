"""Cost of the knowledge-gap report on a large log (SQLite and PostgreSQL), and the semantic threshold check.

What it measures: GapReport.report(profile, 365), the call behind `GET /api/{profile}/queries/gaps?days=365`,
on one profile holding N query-log rows (default 100k) spread over 365 days. Each configuration is warmed up
once, then run --runs times; p50/p95/max are printed in milliseconds, with where one call spends its time
(SQL reads, embedding, grouping). Timings are printed, never asserted. The issue's target: well under a second.

The log (seeded straight into the real tables with bulk INSERTs, as bench/summary.py does):
- --topics missed topics (default 300), each asked in 3-6 paraphrases ("billing-service retry policy",
  "how do we handle retry policy in billing-service", "what is the retry policy of billing-service", ...),
  topics drawn Zipf-like; ~18% of all searches miss (matched_count 0), a tenth of those only matched a
  retired fact (inactive_matched > 0, with the retired uids stored as the service stores them);
- the other searches hit (matched_count >= 1) over a few thousand distinct queries; ~5% are unknown (null);
- 0-3 tag filters per search, a kind filter on a quarter of them.

Embedders: `none` (lexical grouping) and `minilm` (semantic: the real all-MiniLM-L6-v2, if installed).

    python bench/gaps.py                               # SQLite, 100k rows, both embedders
    python bench/gaps.py --db both                     # SQLite and PostgreSQL
    python bench/gaps.py --check                       # the labelled threshold table only (needs the model)
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402
from sqlalchemy import insert  # noqa: E402

from bench.lib.corpus import LOG_SUBJECTS as SUBJECTS, LOG_TOPICS as ATTRIBUTES  # noqa: E402
from service.config import Settings  # noqa: E402
from service.contract import KINDS  # noqa: E402
from service.container import build_database, build_store  # noqa: E402
from service.domain import gaps  # noqa: E402
from service.domain.gap_report import GapReport  # noqa: E402
from service.domain.ports import Embedder  # noqa: E402
from service.domain.profiles import ProfileRef, ProfileService  # noqa: E402
from service.embedding.disabled import DisabledEmbedder  # noqa: E402
from service.store import gaps as store_gaps  # noqa: E402
from service.store.engine import Database  # noqa: E402
from service.store.tables import FactRow, QueryLogResult, QueryLogRow, QueryLogTag  # noqa: E402

LABELLED = ROOT / "bench" / "data" / "gaps" / "labelled.jsonl"
DAYS = 365
CHUNK = 5000
PARAPHRASES = ["{s} {t}", "how do we handle {t} in {s}", "what is the {t} of {s}", "{t} for {s}", "{s}: {t}?",
               "where is the {t} for the {s} written down", "{t} used by {s}", "remind me of the {s} {t}"]


def zipf(n: int, s: float = 1.05) -> list[float]:
    return [1.0 / (rank ** s) for rank in range(1, n + 1)]


def missed_topics(n: int, rng: random.Random) -> list[list[str]]:
    """n topics (subject x attribute), each with 3-6 paraphrases."""
    pairs = [(s, t) for s in SUBJECTS for t in ATTRIBUTES]
    rng.shuffle(pairs)
    return [[f.format(s=s, t=t) for f in rng.sample(PARAPHRASES, rng.randint(3, 6))] for s, t in pairs[:n]]


def seed(db: Database, profile: ProfileRef, rows: int, topics: int, rng: random.Random) -> dict[str, int]:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    tag = uuid.uuid4().hex[:6]
    retired_uids = [f"f_gap{tag}{i:05d}" for i in range(200)]
    with db.write() as session:
        session.execute(insert(FactRow), [{
            "profile_id": profile.id, "uid": uid, "title": f"retired fact {i}", "text": "once known", "kind": "project",
            "tags": [], "status": "retired", "created_at": now - timedelta(days=400), "updated_at": now,
            "retired_at": now, "created_day": (now - timedelta(days=400)).date(), "retired_day": now.date(),
            "change_seq": i + 1} for i, uid in enumerate(retired_uids)])
    missed = missed_topics(topics, rng)
    topic_weights = zipf(len(missed))
    hits = [f"{rng.choice(SUBJECTS)} {rng.choice(ATTRIBUTES)} #{i}" for i in range(3000)]
    hit_weights = zipf(len(hits))
    tags = [f"tag{i:02d}" for i in range(40)]
    counts = {"zero_match": 0, "retired_only": 0}
    next_id = 1
    for start in range(0, rows, CHUNK):
        log_rows, log_results, log_tags = [], [], []
        for _ in range(start, min(rows, start + CHUNK)):
            created = now - timedelta(seconds=rng.randrange(DAYS * 86400))
            r = rng.random()
            inactive: int | None = 0
            once_known: list[str] = []
            if r < 0.18:
                forms = missed[rng.choices(range(len(missed)), topic_weights)[0]]
                query = forms[min(len(forms) - 1, int(rng.expovariate(1.2)))]
                matched: int | None = 0
                if rng.random() < 0.1:
                    once_known = rng.sample(retired_uids, rng.randint(1, 3))
                    inactive = len(once_known)
                    counts["retired_only"] += 1
                else:
                    counts["zero_match"] += 1
            else:
                query = rng.choices(hits, hit_weights)[0]
                matched = None if r > 0.95 else 1 + int(rng.paretovariate(1.0))
                inactive = None if matched is None else 0
            qtags = sorted(set(rng.choices(tags, k=rng.choices((0, 1, 2, 3), (0.6, 0.25, 0.1, 0.05))[0])))
            log_rows.append({"id": next_id, "profile_id": profile.id, "query": query, "tags": qtags,
                             "kind": rng.choice(KINDS) if rng.random() < 0.25 else None, "limit": 8,
                             "matched_count": matched, "returned_count": min(8, matched or 0),
                             "inactive_matched": inactive, "top_uid": None, "mode": "hybrid", "latency_ms": 5.0,
                             "created_at": created, "day": created.date()})
            log_results.append({"query_id": next_id, "profile_id": profile.id, "results": [],
                                "inactive_uids": once_known})
            log_tags.extend({"query_id": next_id, "tag": t, "profile_id": profile.id, "day": created.date()}
                            for t in qtags)
            next_id += 1
        with db.write() as session:
            session.execute(insert(QueryLogRow), log_rows)
            session.execute(insert(QueryLogResult), log_results)
            if log_tags:
                session.execute(insert(QueryLogTag), log_tags)
    if db.dialect == "postgresql":
        with db.write() as session:
            session.execute(sa.text("SELECT setval(pg_get_serial_sequence('query_log', 'id'), "
                                    "(SELECT max(id) FROM query_log))"))
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    return counts


class TimedReader(store_gaps.SqlMissReader):
    """The real reader, timing its SQL (statements and fetches)."""

    spent = 0.0

    def misses(self, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return super().misses(*args, **kwargs)
        finally:
            TimedReader.spent += time.perf_counter() - t0

    def fact_labels(self, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return super().fact_labels(*args, **kwargs)
        finally:
            TimedReader.spent += time.perf_counter() - t0


class TimedEmbedder:
    """Wraps an embedder and times embed_documents."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.spent = 0.0
        self.texts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_documents(self, texts: list[str]) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.spent += time.perf_counter() - t0
            self.texts += len(texts)


def measure(db: Database, profile: ProfileRef, embedder: Embedder, runs: int) -> dict[str, Any]:
    timed = TimedEmbedder(embedder)
    report = GapReport(TimedReader(db), timed)  # type: ignore[arg-type]
    body = report.report(profile, DAYS)  # warm-up (model load, plans, pool)
    samples, sql, emb = [], [], []
    for _ in range(runs):
        TimedReader.spent, timed.spent = 0.0, 0.0
        t0 = time.perf_counter()
        body = report.report(profile, DAYS)
        samples.append(time.perf_counter() - t0)
        sql.append(TimedReader.spent)
        emb.append(timed.spent)
    ms = sorted(s * 1000 for s in samples)
    return {"p50": statistics.median(ms), "p95": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], "max": ms[-1],
            "sql": statistics.median(sql) * 1000, "embed": statistics.median(emb) * 1000,
            "texts_embedded": timed.texts // (runs + 1), "body": body}


def embedders(choice: str, data_dir: Path) -> list[tuple[str, Embedder]]:
    out: list[tuple[str, Embedder]] = []
    if choice in ("none", "both"):
        out.append(("none", DisabledEmbedder()))
    if choice in ("minilm", "both"):
        from service.embedding.minilm import MiniLMEmbedder

        model = MiniLMEmbedder(Settings(embedder="minilm", data_dir=data_dir))
        try:
            model.embed_documents(["warm up"])
            out.append(("minilm", model))
        except Exception as exc:  # noqa: BLE001 - a bench reports and goes on
            print(f"  minilm skipped: {exc}")
    return out


def run_one(name: str, url: str, args: argparse.Namespace, data_dir: Path) -> list[dict[str, Any]]:
    print(f"\n[{name}] seeding {args.rows:,} rows over {DAYS} days, {args.topics} missed topics ...")
    settings = Settings(database_url=url, embedder="none", data_dir=data_dir)
    db = build_database(settings)
    try:
        profile = ProfileService(build_store(settings, db)).create("bench")
        t0 = time.perf_counter()
        counts = seed(db, profile, args.rows, args.topics, random.Random(args.seed))
        print(f"  seeded in {time.perf_counter() - t0:.1f}s: {counts['zero_match']:,} zero-match and "
              f"{counts['retired_only']:,} retired-only misses")
        results = []
        for label, embedder in embedders(args.embedder, data_dir):
            r = measure(db, profile, embedder, args.runs)
            body = r.pop("body")
            z, ro = body["zero_match"], body["retired_only"]
            results.append({"db": name, "embedder": label, "method": body["grouping"]["method"], **r,
                            "distinct": z["distinct_queries"] + ro["distinct_queries"],
                            "groups": len(z["groups"]) + len(ro["groups"]), "capped": z["capped"] or ro["capped"],
                            "tail": z["lexical_tail"] + ro["lexical_tail"]})
        return results
    finally:
        db.dispose()


def check_threshold(data_dir: Path) -> None:
    """Pairwise precision/recall of the grouping on the labelled set, per threshold (docs/benchmarks.md)."""
    from service.embedding.minilm import MiniLMEmbedder

    rows = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    topic = {r["query"]: r["topic"] for r in rows}
    now = datetime.now(timezone.utc)
    items = [gaps.MissedQuery(q, 1, now, now) for q in topic]
    model = MiniLMEmbedder(Settings(embedder="minilm", data_dir=data_dir))

    def score(grouping: gaps.Grouping) -> str:
        label = {q.query: i for i, g in enumerate(grouping.groups) for q in g.queries}
        tp = fp = fn = 0
        for a, b in itertools.combinations(sorted(topic), 2):
            same, together = topic[a] == topic[b], label[a] == label[b]
            tp, fp, fn = tp + (same and together), fp + (together and not same), fn + (same and not together)
        return f"{tp / max(1, tp + fp):>9.3f} {tp / max(1, tp + fn):>7.3f} {len(grouping.groups):>7}"

    print(f"\nlabelled check: {len(rows)} queries in {len(set(topic.values()))} topics ({LABELLED.name})")
    print(f"{'grouping':<22} {'precision':>9} {'recall':>7} {'groups':>7}")
    for threshold in (0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.80):
        mark = "  <- SEMANTIC_THRESHOLD" if threshold == gaps.SEMANTIC_THRESHOLD else ""
        print(f"{f'semantic {threshold:.2f}':<22} {score(gaps.group_semantic(items, model.embed_documents, threshold))}"
              f"{mark}")
    print(f"{f'lexical {gaps.LEXICAL_THRESHOLD:.2f}':<22} {score(gaps.group_lexical(items))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000, help="query-log rows to seed (default 100000)")
    parser.add_argument("--topics", type=int, default=300, help="missed topics, each with paraphrases (default 300)")
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--embedder", choices=("none", "minilm", "both"), default="both")
    parser.add_argument("--runs", type=int, default=10, help="timed runs per configuration (default 10)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--check", action="store_true", help="only the labelled threshold table")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-gaps-") as tmp:
        data_dir = Path(tmp)
        if args.check:
            check_threshold(data_dir)
            return 0
        results: list[dict[str, Any]] = []
        if args.db in ("sqlite", "both"):
            results += run_one("sqlite", f"sqlite:///{data_dir / 'memory.db'}", args, data_dir)
        if args.db in ("postgres", "both"):
            results += _postgres(args, data_dir, run_one)
    print(f"\ngap report, days={DAYS}, {args.rows:,} log rows, {args.runs} runs after 1 warm-up (ms):")
    print(f"{'db':<9} {'embedder':<8} {'grouping':<9} {'p50':>7} {'p95':>7} {'max':>7} {'sql':>6} {'embed':>6} "
          f"{'embedded':>8} {'distinct':>8} {'groups':>6} {'tail':>5} capped")
    for r in results:
        print(f"{r['db']:<9} {r['embedder']:<8} {r['method']:<9} {r['p50']:>7.1f} {r['p95']:>7.1f} {r['max']:>7.1f} "
              f"{r['sql']:>6.1f} {r['embed']:>6.1f} {r['texts_embedded']:>8} {r['distinct']:>8} {r['groups']:>6} "
              f"{r['tail']:>5} {r['capped']}")
    return 0


def _postgres(args: argparse.Namespace, data_dir: Path, run: Callable[..., list[dict[str, Any]]]
              ) -> list[dict[str, Any]]:
    from bench.lib.postgres import throwaway_database

    with throwaway_database(f"bench_gaps_{uuid.uuid4().hex[:8]}") as url:
        return run("postgres", url, args, data_dir) if url else []


if __name__ == "__main__":
    sys.exit(main())
