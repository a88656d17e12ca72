"""Latency of the query-log summary and the store stats on a large log (SQLite and PostgreSQL).

What it measures: QueryLog.summary(profile, days) and StoreStats.stats(profile, days), the calls behind
`GET /api/{profile}/queries/summary` and `GET /api/{profile}/stats`, for days = 30 and 365, on one profile
holding N query-log rows (default 100k) and a few thousand facts. Each call is warmed up once, then run
--runs times; p50/p95/mean are printed in milliseconds, plus the time of each SQL statement of one call,
so a slow figure points at its GROUP BY. Timings are printed, never asserted. The issue's target is
<= 100 ms per call at 100k rows.

The data is seeded fast, straight into the real tables with bulk INSERTs (SQLAlchemy core executemany in
chunks), not through the per-search code path:
- query_log (+ query_log_results): ~400 days of history growing slowly over time, a few thousand distinct queries drawn
  Zipf-like, matched_count null for ~8% (degraded searches), 0 for ~30%, else a long-tailed count;
  top_uid from ~2000 facts; a results list of up to `limit` hits per row, as the service stores it;
- query_log_tags: 0-3 tag filters per search from ~50 tags;
- facts / fact_tags: a few thousand facts over the same 400 days (active, retired, superseded).

PostgreSQL: TEST_DATABASE_URL if set (a server you run; a fresh database is created on it), else a
throwaway cluster from the local binaries (bench/lib/postgres.py). After seeding it runs VACUUM ANALYZE,
the steady state autovacuum reaches on an insert-mostly table. SQLite is left as the service leaves it
(no ANALYZE), unless --sqlite-analyze.

    python bench/summary.py                      # SQLite, 100k rows
    python bench/summary.py --db both            # SQLite and PostgreSQL
    python bench/summary.py --rows 300000 --db postgres --explain
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402
from sqlalchemy import event, insert  # noqa: E402

from service import clock  # noqa: E402
from bench.lib.corpus import LOG_SUBJECTS as SUBJECTS, LOG_TOPICS as TOPICS  # noqa: E402
from service.config import Settings  # noqa: E402
from service.contract import KINDS  # noqa: E402
from service.container import build_database, build_store  # noqa: E402
from service.domain.ports.canonical import CanonicalStore  # noqa: E402
from service.domain.profiles import ProfileRef, ProfileService  # noqa: E402
from service.domain.querylog import QueryLog  # noqa: E402
from service.domain.stats import StoreStats  # noqa: E402
from service.store import aggregates as agg  # noqa: E402
from service.store.engine import Database  # noqa: E402
from service.store.tables import FactRow, FactTag, Profile, QueryLogResult, QueryLogRow, QueryLogTag  # noqa: E402

HISTORY_DAYS = 400
DISTINCT_QUERIES = 3000
FACTS_REFERENCED = 2000
TAGS = 50
CHUNK = 5000
WINDOWS = (30, 365)

FORMS = ["{s} {t}", "how do we handle {t} in {s}", "{t} for {s}", "why {s} {t}", "{s} {t} decision",
         "what is the {t} of {s}", "{s}: {t}"]


# --- data -----------------------------------------------------------------------------------------


def make_queries(n: int, rng: random.Random) -> list[str]:
    """n distinct query strings, realistic shapes (keywords, questions, identifiers)."""
    out: dict[str, None] = {}
    i = 0
    while len(out) < n:
        s, t, f = rng.choice(SUBJECTS), rng.choice(TOPICS), rng.choice(FORMS)
        q = f.format(s=s, t=t)
        if q in out:
            q = f"{q} JIRA-{1000 + i}" if i % 3 == 0 else f"{q} v{i % 40}"
        out[q] = None
        i += 1
    return list(out)


def zipf_weights(n: int, s: float = 1.1) -> list[float]:
    return [1.0 / (rank ** s) for rank in range(1, n + 1)]


def matched_count(rng: random.Random) -> int | None:
    r = rng.random()
    if r < 0.08:
        return None
    if r < 0.38:
        return 0
    if r < 0.55:
        return 1
    return min(500, int(rng.paretovariate(0.9)) + 1)


def day_offsets(n: int, rng: random.Random) -> list[int]:
    """Days back from today, 0..HISTORY_DAYS-1, with usage growing over time (more recent, more searches)."""
    # Density proportional to (1 + 2 * recency): triangular-ish, the last month ~2.5x the first.
    return [min(HISTORY_DAYS - 1, int(HISTORY_DAYS * (1 - (rng.random() ** 0.6)))) for _ in range(n)]


def fact_uid(i: int, tag: str) -> str:
    return f"f_bench{tag}{i:07d}"


def seed(db: Database, profile: ProfileRef, rows: int, facts: int, rng: random.Random, say: Callable[[str], None]
         ) -> None:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    today = now.date()
    run_tag = uuid.uuid4().hex[:6]

    # Facts (for stats, and the titles of top_facts).
    fact_rows, fact_tags = [], []
    tags = [f"tag{i:02d}" for i in range(TAGS)]
    tag_weights = zipf_weights(TAGS, 0.8)
    for i in range(facts):
        back = rng.randrange(HISTORY_DAYS)
        created = now - timedelta(days=back, seconds=rng.randrange(86400))
        status = rng.choices(("active", "retired", "superseded"), (0.8, 0.1, 0.1))[0]
        retired = created + timedelta(days=rng.randrange(back + 1)) if status == "retired" else None
        if retired is not None and retired > now:
            retired = now
        ftags = sorted(set(rng.choices(tags, tag_weights, k=rng.randrange(4))))
        fact_rows.append({
            "id": i + 1, "profile_id": profile.id, "uid": fact_uid(i, run_tag),
            "title": f"{rng.choice(SUBJECTS)} {rng.choice(TOPICS)} #{i}",
            "text": f"The {rng.choice(SUBJECTS)} uses {rng.choice(TOPICS)} settings agreed in review {i}.",
            "kind": rng.choice(KINDS), "tags": ftags, "status": status, "created_at": created,
            "updated_at": retired or created, "retired_at": retired, "retire_reason": "obsolete" if retired else None,
            "created_day": created.date(), "retired_day": retired.date() if retired else None, "change_seq": i + 1,
        })
        for t in ftags:
            fact_tags.append({"fact_id": i + 1, "tag": t, "profile_id": profile.id, "current": True,
                              "active": status == "active"})

    # Query log.
    queries = make_queries(DISTINCT_QUERIES, rng)
    q_weights = zipf_weights(len(queries))
    ref_uids = [fact_rows[i]["uid"] for i in range(min(FACTS_REFERENCED, facts))]
    uid_weights = zipf_weights(len(ref_uids), 0.9)
    picked_queries = rng.choices(queries, q_weights, k=rows)
    picked_tops = rng.choices(ref_uids, uid_weights, k=rows)
    backs = day_offsets(rows, rng)
    backs.sort(reverse=True)  # ids grow with time, as in a real log

    started = time.perf_counter()
    with db.write() as session:
        for start in range(0, len(fact_rows), CHUNK):
            session.execute(insert(FactRow), fact_rows[start:start + CHUNK])
        for start in range(0, len(fact_tags), CHUNK):
            session.execute(insert(FactTag), fact_tags[start:start + CHUNK])
        session.execute(sa.update(Profile).where(Profile.id == profile.id).values(fact_seq=len(fact_rows)))
    say(f"  seeded {len(fact_rows):,} facts, {len(fact_tags):,} fact tags in {time.perf_counter() - started:.1f}s")

    started = time.perf_counter()
    inserted_tags = 0
    next_id = 1
    for start in range(0, rows, CHUNK):
        log_rows, log_tags, log_results = [], [], []
        for k in range(start, min(rows, start + CHUNK)):
            day = today - timedelta(days=backs[k])
            created = datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(
                seconds=rng.randrange(86400))
            if created > now:
                created = now
                day = created.date()
            mc = matched_count(rng)
            limit = rng.choice((8, 8, 8, 5, 10, 20))
            returned = 0 if mc == 0 else min(limit, mc if mc is not None else rng.randrange(0, limit + 1))
            top = picked_tops[k] if returned else None
            results = [{"uid": top if j == 0 else rng.choice(ref_uids), "score": round(1 - j * 0.07, 6),
                        "lexical": round(rng.random() * 9, 6), "vector": round(rng.random(), 6)}
                       for j in range(returned)]
            inactive = None if mc is None else (rng.randrange(1, 3) if mc == 0 and rng.random() < 0.05 else 0)
            qtags = sorted(set(rng.choices(tags, tag_weights, k=rng.choices((0, 1, 2, 3), (0.6, 0.25, 0.1, 0.05))[0])))
            log_rows.append({
                "id": next_id, "profile_id": profile.id, "query": picked_queries[k], "tags": qtags,
                "kind": rng.choice((None, None, None, *KINDS)), "limit": limit, "matched_count": mc,
                "returned_count": returned, "inactive_matched": inactive, "top_uid": top,
                "mode": "degraded" if mc is None else "hybrid", "latency_ms": round(rng.uniform(3, 40), 3),
                "created_at": created, "day": day,
            })
            log_results.append({"query_id": next_id, "profile_id": profile.id, "results": results})
            for t in qtags:
                log_tags.append({"query_id": next_id, "tag": t, "profile_id": profile.id, "day": day})
            next_id += 1
        with db.write() as session:
            session.execute(insert(QueryLogRow), log_rows)
            session.execute(insert(QueryLogResult), log_results)
            if log_tags:
                session.execute(insert(QueryLogTag), log_tags)
        inserted_tags += len(log_tags)
        done = min(rows, start + CHUNK)
        if done == rows or (done // CHUNK) % 10 == 0:
            say(f"  query log: {done:,}/{rows:,} rows ({time.perf_counter() - started:.1f}s)")
    if db.dialect == "postgresql":  # explicit ids: move the sequences past them, as real inserts would
        with db.write() as session:
            for table in ("query_log", "facts"):
                session.execute(sa.text(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"))
    say(f"  seeded {rows:,} query-log rows, {inserted_tags:,} tag rows in {time.perf_counter() - started:.1f}s")


# --- measuring ------------------------------------------------------------------------------------


def percentiles(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {"p50": statistics.median(ms), "p95": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))],
            "mean": statistics.fmean(ms), "max": ms[-1]}


@contextmanager
def statement_timer(engine: sa.Engine) -> Iterator[list[tuple[str, Any, float]]]:
    """Record (sql, params, seconds) of every statement run on the engine inside the block."""
    captured: list[tuple[str, Any, float]] = []

    def before(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        conn.info.setdefault("bench_t0", []).append(time.perf_counter())

    def after(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        t0 = conn.info["bench_t0"].pop()
        captured.append((statement, parameters, time.perf_counter() - t0))

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        yield captured
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)


def label_of(sql: str) -> str:
    s = " ".join(sql.split()).replace('"', "")
    for marker, label in (("query_log_tags", "top_query_tags"), ("fact_tags", "top_fact_tags"),
                          ("count(DISTINCT", "distinct queries"), ("top_uid", "top_facts"),
                          ("GROUP BY query_log.query", "top_queries"), ("GROUP BY query_log.day", "summary_by_day"), ("GROUP BY facts.status", "fact_counts"),
                          ("created_day", "facts_daily created"), ("retired_day", "facts_daily retired"),
                          ("min(facts.created_at)", "fact_span")):
        if marker in s:
            return label
    return s[:40]


PARTS: dict[str, list[tuple[str, Callable[..., Any]]]] = {
    "summary": [("summary_by_day", agg.summary_by_day), ("top_queries + distinct", agg.top_queries),
                ("top_query_tags", agg.top_query_tags), ("top_facts", agg.top_facts)],
    "stats": [("fact_counts", lambda s, p, f, l: agg.fact_counts(s, p)),
              ("top_fact_tags", lambda s, p, f, l: agg.top_fact_tags(s, p)),
              ("facts_daily", agg.facts_daily), ("fact_span", lambda s, p, f, l: agg.fact_span(s, p))],
}


def time_parts(db: Database, profile: ProfileRef, call: str, days: int, runs: int) -> list[tuple[str, float]]:
    """Median ms of each aggregate function of the call (statement + fetch), in one read session each run."""
    first, last = clock.window(days)
    out = []
    for label, fn in PARTS[call]:
        samples = []
        for _ in range(runs):
            with db.read() as session:
                t0 = time.perf_counter()
                fn(session, profile.id, first, last)
                samples.append(time.perf_counter() - t0)
        out.append((label, statistics.median(samples) * 1000))
    return out


def explain(db: Database, sql: str, params: Any) -> list[str]:
    with db.engine.connect() as conn:
        if db.dialect == "postgresql":
            rows = conn.exec_driver_sql(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}", params).all()
            return [r[0] for r in rows]
        rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params).all()
        return [str(r[-1]) for r in rows]


def measure(name: str, db: Database, store: CanonicalStore, profile: ProfileRef, runs: int,
            show_explain: bool) -> list[dict[str, Any]]:
    query_log, stats = QueryLog(store), StoreStats(store)
    results = []
    for days in WINDOWS:
        for call_name, fn in (("summary", query_log.summary), ("stats", stats.stats)):
            out = fn(profile, days)  # warm-up (caches, prepared plans, pool)
            if call_name == "summary":
                assert out["totals"]["searches"] > 0
            samples = []
            for _ in range(runs):
                t0 = time.perf_counter()
                fn(profile, days)
                samples.append(time.perf_counter() - t0)
            results.append({"db": name, "call": call_name, "days": days, **percentiles(samples),
                            "parts": time_parts(db, profile, call_name, days, max(3, runs // 4)),
                            "rows": out["totals"]["searches"] if call_name == "summary" else None})
            if show_explain and days == max(WINDOWS):
                with statement_timer(db.engine) as captured:
                    fn(profile, days)
                print(f"\n--- EXPLAIN {name} {call_name}(days={days}) ---")
                for sql, params, secs in captured:
                    if sql.strip().upper().startswith("BEGIN"):
                        continue
                    print(f"[{label_of(sql)}] execute {secs * 1000:.1f} ms")
                    for line in explain(db, sql, params):
                        print(f"    {line}")
    return results


# --- driver ---------------------------------------------------------------------------------------


def run_one(name: str, url: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    print(f"\n[{name}] {url.split('@')[-1]}")
    settings = Settings(database_url=url, embedder="none", data_dir=Path(tempfile.gettempdir()))
    db = build_database(settings)
    try:
        store = build_store(settings, db)
        profiles = ProfileService(store)
        profile = profiles.create("bench")
        rng = random.Random(args.seed)
        seed(db, profile, args.rows, args.facts, rng, print)
        if db.dialect == "postgresql":
            t0 = time.perf_counter()
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")
            print(f"  VACUUM ANALYZE {time.perf_counter() - t0:.1f}s")
        elif args.sqlite_analyze:
            with db.engine.connect() as conn:
                conn.exec_driver_sql("ANALYZE")
                conn.commit()
            print("  ANALYZE done")
        return measure(name, db, store, profile, args.runs, args.explain)
    finally:
        db.dispose()


def print_table(results: list[dict[str, Any]], rows: int, target: float) -> None:
    print(f"\n{'db':<10} {'call':<8} {'days':>4} {'window rows':>11} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} "
          f"{'max ms':>8}  target <= {target:.0f} ms")
    for r in results:
        ok = "ok" if r["p95"] <= target else "MISSED"
        window = f"{r['rows']:,}" if r["rows"] is not None else "-"
        print(f"{r['db']:<10} {r['call']:<8} {r['days']:>4} {window:>11} {r['p50']:>8.1f} {r['p95']:>8.1f} "
              f"{r['mean']:>8.1f} {r['max']:>8.1f}  {ok}")
    print("\nwhere the time goes (median ms per aggregate, statement + fetch):")
    for r in results:
        parts = ", ".join(f"{label.strip()} {ms:.1f}" for label, ms in r["parts"])
        print(f"  {r['db']:<8} {r['call']:<7} days={r['days']:<3}: {parts}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000, help="query-log rows to seed (default 100000)")
    parser.add_argument("--facts", type=int, default=3000, help="facts to seed for stats (default 3000)")
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per call and window (default 20)")
    parser.add_argument("--seed", type=int, default=7, help="random seed")
    parser.add_argument("--target-ms", type=float, default=100.0, help="target per call (printed, not asserted)")
    parser.add_argument("--explain", action="store_true", help="print the query plan of every statement (days=365)")
    parser.add_argument("--sqlite-analyze", action="store_true", help="run ANALYZE on SQLite after seeding")
    args = parser.parse_args(argv)

    print(f"summary/stats benchmark: {args.rows:,} query-log rows over {HISTORY_DAYS} days, {DISTINCT_QUERIES} "
          f"distinct queries (Zipf), {args.facts:,} facts, {args.runs} runs after 1 warm-up")
    results: list[dict[str, Any]] = []
    if args.db in ("sqlite", "both"):
        with tempfile.TemporaryDirectory(prefix="bench-summary-") as tmp:
            results += run_one("sqlite", f"sqlite:///{Path(tmp) / 'memory.db'}", args)
    if args.db in ("postgres", "both"):
        from bench.lib.postgres import throwaway_database

        with throwaway_database(f"bench_summary_{uuid.uuid4().hex[:8]}") as url:
            if url is not None:
                results += run_one("postgres", url, args)
    if results:
        print_table(results, args.rows, args.target_ms)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
