"""Cost of the curation signals (issue 39) on a large store: recall counts, the never-recalled and
most-recalled listings, and the near-duplicate groups.

    python bench/curation.py                         # SQLite: 100k facts, 1M query-log rows; groups at 1k-20k
    python bench/curation.py --db both               # SQLite and PostgreSQL
    python bench/curation.py --facts 20000 --rows 100000 --sizes 1000,10000

Part 1 (listings): one profile holding --facts facts and --rows logged searches (bench/summary.py's seeding:
Zipf queries, results over 2,000 referenced facts, so most facts are never returned). The recall counts are
filled by migration 0009's own function (its time is printed: what an upgrade of such a store costs). Then,
through the domain calls behind the REST routes (FactService.page + CurationService.reviewed, as
GET /api/{profile}/facts does), p50/p95 in ms over --runs runs of: the plain listing (newest first, the
baseline), `?recalled=never`, `order=recalled` (first page and a page deep in the never-recalled tail), and
the query-log write of one search with its counts (QueryLog's store call, 8 returned uids).

Part 2 (duplicates): service.domain.duplicates.group over N unit vectors (random, with 1% planted near-copies),
and CurationService.duplicates at the largest size read from the store, cold and then remembered.

Printed, never asserted; the machine is shared, so compare rows of one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from bench.lib.measure import stats_ms  # noqa: E402
from bench.summary import seed  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import build_database, build_store  # noqa: E402
from service.domain import duplicates  # noqa: E402
from service.domain.curation import CurationService  # noqa: E402
from service.domain.facts import FactService  # noqa: E402
from service.domain.profiles import ProfileService  # noqa: E402
from service.embedding.disabled import DisabledEmbedder  # noqa: E402
from service.search.embedded.backend import EmbeddedSearch  # noqa: E402
from service.store.tables import FactRow, FactVector  # noqa: E402

MIGRATION = ROOT / "service" / "store" / "migrations" / "versions" / "0009_fact_recalls.py"
MODEL = "bench-random"


def fill_counts(db: Any) -> float:
    spec = importlib.util.spec_from_file_location("migration_0009", MIGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    started = time.perf_counter()
    with db.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM fact_recalls")
        module._fill_from_the_log(conn)
    return time.perf_counter() - started


def timed(fn: Any, runs: int) -> dict[str, float]:
    fn()  # warm-up
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return stats_ms(samples)


def listings(name: str, url: str, args: argparse.Namespace) -> list[tuple[str, dict[str, float]]]:
    print(f"\n[{name}] seeding {args.facts:,} facts and {args.rows:,} logged searches")
    settings = Settings(database_url=url, embedder="none", data_dir=Path(tempfile.gettempdir()))
    db = build_database(settings)
    try:
        store = build_store(settings, db)
        profile = ProfileService(store).create("bench")
        seed(db, profile, args.rows, args.facts, random.Random(args.seed), print)
        print(f"  recall counts filled from the log (migration 0009's function): {fill_counts(db):.1f}s")
        if db.dialect == "postgresql":
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")
        embedder = DisabledEmbedder()
        facts = FactService(store, embedder, EmbeddedSearch(db, embedder, settings))
        curation = CurationService(store, model_id=embedder.model_id, threshold=settings.similar_threshold)

        def page(**kw: Any) -> Any:
            found, position = facts.page(profile, status=kw.pop("status", None), kind=None, tag=None, limit=50,
                                         before_id=None, **kw)
            curation.reviewed(profile, found)
            return position

        with db.read() as session:
            middle = int(session.execute(sa.select(sa.func.max(FactRow.id))).scalar_one()) // 2
        out = [
            ("listing, newest first (baseline)", timed(lambda: page(), args.runs)),
            ("?recalled=never (active)", timed(lambda: page(status="active", recalled="never"), args.runs)),
            ("order=recalled, first page", timed(lambda: page(order="recalled"), args.runs)),
            ("order=recalled, a page in the tail", timed(lambda: page(order="recalled", before_recall=(0, middle)),
                                                         args.runs)),
        ]
        now = datetime.now(timezone.utc)
        with db.read() as session:
            uids = [u for (u,) in session.execute(sa.select(FactRow.uid).limit(8))]
        row = {"profile_id": profile.id, "query": "bench", "tags": [], "kind": None, "limit": 8, "matched_count": 8,
               "returned_count": 8, "inactive_matched": 0, "top_uid": uids[0], "mode": "hybrid", "latency_ms": 1.0,
               "created_at": now, "day": now.date()}
        results = [{"uid": u, "score": 1.0, "lexical": 1.0, "vector": 1.0} for u in uids]
        out.append(("log one search + its 8 counts", timed(lambda: store.log_search(row, results, []), args.runs)))
        return [(f"{name}: {label}", figures) for label, figures in out]
    finally:
        db.dispose()


def planted(n: int, rng: np.random.Generator) -> np.ndarray:
    matrix = rng.standard_normal((n, 384)).astype(np.float32)
    for i in rng.choice(n, size=max(1, n // 100), replace=False):  # near-copies of another row
        matrix[i] = matrix[(i + 1) % n] + 0.2 * rng.standard_normal(384).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def grouping(sizes: list[int], threshold: float) -> list[tuple[str, dict[str, float]]]:
    rng = np.random.default_rng(7)
    out = []
    for n in sizes:
        matrix, uids = planted(n, rng), [f"f_{i}" for i in range(n)]
        found: list[Any] = []
        figures = timed(lambda: found.append(duplicates.group(uids, matrix, threshold)), 3)
        out.append((f"group() over {n:,} facts ({len(found[-1])} groups)", figures))
    n = sizes[-1]
    with tempfile.TemporaryDirectory(prefix="bench-curation-") as tmp:
        settings = Settings(database_url=f"sqlite:///{Path(tmp) / 'memory.db'}", embedder="none", data_dir=Path(tmp))
        db = build_database(settings)
        store = build_store(settings, db)
        profile = ProfileService(store).create("bench")
        matrix, now = planted(n, rng), datetime.now(timezone.utc)
        with db.write() as session:
            session.execute(sa.insert(FactRow), [{
                "id": i + 1, "profile_id": profile.id, "uid": f"f_{i}", "title": f"fact {i}", "text": f"text {i}",
                "kind": "reference", "tags": [], "status": "active", "created_at": now, "updated_at": now,
                "created_day": now.date(), "change_seq": i + 1} for i in range(n)])
            session.execute(sa.insert(FactVector), [{
                "fact_id": i + 1, "profile_id": profile.id, "model": MODEL, "dim": 384,
                "vector": matrix[i].tobytes(), "created_at": now} for i in range(n)])
        curation = CurationService(store, model_id=MODEL, threshold=threshold)
        started = time.perf_counter()
        report = curation.duplicates(profile)
        cold = time.perf_counter() - started
        out.append((f"duplicates() from the store, {n:,} facts, first call", stats_ms([cold])))
        out.append((f"duplicates() again, unchanged profile ({len(report.groups)} groups)",
                    timed(lambda: curation.duplicates(profile), 5)))
        db.dispose()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sizes", default="1000,10000,20000", help="facts compared for duplicates")
    parser.add_argument("--threshold", type=float, default=Settings().similar_threshold)
    args = parser.parse_args(argv)

    figures: list[tuple[str, dict[str, float]]] = []
    if args.db in ("sqlite", "both"):
        with tempfile.TemporaryDirectory(prefix="bench-curation-") as tmp:
            figures += listings("sqlite", f"sqlite:///{Path(tmp) / 'memory.db'}", args)
    if args.db in ("postgres", "both"):
        from bench.lib.postgres import throwaway_database

        with throwaway_database(f"bench_curation_{uuid.uuid4().hex[:8]}") as url:
            if url is not None:
                figures += listings("postgres", url, args)
    figures += grouping([int(s) for s in args.sizes.split(",")], args.threshold)
    print(f"\n{'call':<62} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
    for label, f in figures:
        print(f"{label:<62} {f['p50']:>9.1f} {f['p95']:>9.1f} {f['max']:>9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
