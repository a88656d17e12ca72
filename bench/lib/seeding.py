"""Seeding a store fast for the benchmarks: N corpus facts embedded in batches (embed_facts: vectors and token
vectors), then bulk INSERTed into facts / fact_tags / fact_vectors with change_seq set and profiles.fact_seq
bumped, so the embedded index picks them up exactly as if they had been written one by one."""

from __future__ import annotations

import gc
import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import sqlalchemy as sa
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.lib.corpus import FactMaker
from bench.lib.measure import advance, console, set_torch_threads
from service.container import Services
from service.domain.late import Embedding
from service.domain.models import ProfileRef, embedding_text
from service.store.vectors import to_bytes
from service.store.tables import FactRow, FactTag, FactVector, Profile

EMBED_BATCH = 256
INSERT_CHUNK = 2000


@contextmanager
def store_dir(kept: str | None, prefix: str) -> Iterator[tuple[Path, bool]]:
    """The data directory of a benchmark's store: `kept` (a --store DIR: created and left in place; True when a
    store was seeded there before, so seeding -- ~10 min for 100,000 facts here -- is not repeated), else a
    temporary one, removed afterwards."""
    if kept:
        path = Path(kept)
        path.mkdir(parents=True, exist_ok=True)
        yield path, (path / "memory.db").exists()
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp), False


Corpus = list[tuple[dict, Embedding]]  # facts made and embedded once, drawn from by many profiles


def embedded_corpus(services: Services, n: int, maker: FactMaker, seed_threads: int) -> Corpus:
    """n corpus facts with their vectors and token vectors, embedded in batches: what seed_facts(drawn_from=...)
    draws a large store's facts from when embedding every one of them would take hours."""
    facts = [maker.make() for _ in range(n)]
    set_torch_threads(seed_threads)
    made: list[Embedding] = []
    for i in range(0, n, EMBED_BATCH):
        made += services.embedder.embed_facts([embedding_text(f["title"], f["text"], f.get("tags") or []) for f in facts[i:i + EMBED_BATCH]])
    set_torch_threads(services.settings.torch_threads)
    return list(zip(facts, made))


def seed_facts(services: Services, profile: ProfileRef, n: int, maker: FactMaker, seed_threads: int, *,
               drawn_from: Corpus | None = None) -> dict[str, float]:
    """n facts of the corpus into the profile, each embedded here -- or, `drawn_from`, n facts drawn (at random,
    each at most once while the corpus lasts) from facts embedded once before, with their vectors."""
    now = datetime.now(timezone.utc)
    rng = random.Random(n)
    embedder = services.embedder
    vectors: list[Embedding] | None = None
    timings: dict[str, float] = {}
    if drawn_from is not None:
        picked = maker.rng.sample(drawn_from, n) if n <= len(drawn_from) else maker.rng.choices(drawn_from, k=n)
        facts, vectors = [f for f, _ in picked], [v for _, v in picked]
    else:
        facts = [maker.make() for _ in range(n)]
    progress = Progress(TextColumn("  {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, transient=False)
    with progress:
        if embedder.enabled and vectors is None:
            set_torch_threads(seed_threads)
            task = progress.add_task("embedding facts", total=n)
            started = time.perf_counter()
            parts = []
            for i in range(0, n, EMBED_BATCH):
                batch = facts[i:i + EMBED_BATCH]
                parts += embedder.embed_facts([embedding_text(f["title"], f["text"], f.get("tags") or []) for f in batch])
                advance(progress, task, len(batch))
            vectors = parts or None
            timings["embed_s"] = time.perf_counter() - started
            set_torch_threads(services.settings.torch_threads)
        task = progress.add_task("inserting rows", total=n)
        started = time.perf_counter()
        with services.db.read() as session:
            base_id = int(session.execute(sa.select(sa.func.coalesce(sa.func.max(FactRow.id), 0))).scalar_one())
            base_seq = int(session.execute(sa.select(Profile.fact_seq).where(Profile.id == profile.id)).scalar_one())
        for start in range(0, n, INSERT_CHUNK):
            fact_rows, tag_rows, vec_rows = [], [], []
            for i in range(start, min(n, start + INSERT_CHUNK)):
                f = facts[i]
                fid = base_id + i + 1
                created = now - timedelta(days=rng.randrange(400), seconds=rng.randrange(86400))
                status = rng.choices(("active", "retired", "superseded"), (0.9, 0.05, 0.05))[0]
                retired = created + timedelta(seconds=1) if status == "retired" else None
                fact_rows.append({
                    "id": fid, "profile_id": profile.id, "uid": f"f_seed{fid:08d}", "title": f["title"],
                    "text": f["text"], "kind": f["kind"], "tags": f["tags"], "status": status, "created_at": created,
                    "updated_at": retired or created, "retired_at": retired,
                    "retire_reason": "no longer true" if retired else None,
                    "superseded_by": f"f_seed{fid + 1:08d}" if status == "superseded" else None,
                    "created_day": created.date(), "retired_day": retired.date() if retired else None,
                    "change_seq": base_seq + i + 1,
                })
                for t in f["tags"]:
                    tag_rows.append({"fact_id": fid, "tag": t, "profile_id": profile.id, "current": True,
                                     "active": status == "active"})
                if vectors is not None:
                    vec_rows.append({"fact_id": fid, "profile_id": profile.id, "model": embedder.model_id,
                                     "dim": int(vectors[i].vector.shape[0]), "vector": to_bytes(vectors[i]),
                                     "created_at": now})  # with its token vectors, as memory_write stores them
            with services.db.write() as session:
                session.execute(sa.insert(FactRow), fact_rows)
                if tag_rows:  # an empty list would be one INSERT of a row of defaults
                    session.execute(sa.insert(FactTag), tag_rows)
                if vec_rows:
                    session.execute(sa.insert(FactVector), vec_rows)
            advance(progress, task, len(fact_rows))
        with services.db.write() as session:
            session.execute(sa.update(Profile).where(Profile.id == profile.id).values(fact_seq=base_seq + n))
        timings["insert_s"] = time.perf_counter() - started
    del facts, vectors
    gc.collect()
    return timings
