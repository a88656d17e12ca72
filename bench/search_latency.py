"""memory_search and memory_write latency over real MCP HTTP, on an embedded (SQLite) store of N facts.

For each size N (--sizes), in a fresh SQLite data directory:
1. build the services (embedded search, MiniLM or no embedder) and load the model before any timing;
2. seed N facts FAST: varied fact texts generated from templates and vocabulary (decisions, preferences,
   deployments, runbooks, benchmarks, people, config), embedded in batches with embed_documents, then bulk
   INSERTed into facts / fact_tags / fact_vectors with change_seq set and profiles.fact_seq bumped, so the
   embedded index picks them up exactly as if they had been written one by one;
3. start `memory serve` in its own process on a loopback port (as deployed; it loads the model and warms
   the index in the background, and the bench waits for /readyz), or with --server thread a uvicorn server
   in a thread of this process (the client then shares the server's GIL), and talk to /mcp/{profile} with
   the MCP SDK's own streamable-HTTP client (tests/support/mcp_client.py), bearer token included -- or,
   with --client raw, plain JSON-RPC POSTs on one keep-alive connection (what the server costs, without
   the SDK client's own per-call work);
4. time, client-side, per call: the first search (it builds the profile's in-process index: FTS5 + vector
   matrix), --queries mostly distinct searches (a keyword / question / off-topic mix, so the query-vector
   cache does not hide the model's cost), a repeated-query run (a few queries over and over: cache hits),
   and --writes memory_write calls;
5. split a search's server-side time in-process over the same queries, by calling the parts the service
   calls (nothing in the service is instrumented): embed_query (cache emptied first), index sync, lexical
   (term_counts: one FTS5 query per term; bm25 of the facts passing the match rule; top-k), vector (cosine over the matrix + threshold + top-k), fusion, hydration of
   the hits from the store, the query-log write; plus SearchService.search end to end in-process.
RSS (VmRSS, and the VmHWM peak) of this process is printed after seeding, after the first search and after
all calls. The server runs in a thread of this process, so RSS covers model + index + server + client.

The issue's targets: at 10k facts, memory_search p50 <= 15 ms and p95 <= 40 ms. Timings are printed,
never asserted.

    python bench/search_latency.py                          # sizes 1000,10000, MiniLM, 200 queries
    python bench/search_latency.py --sizes 100000           # several minutes of seeding (embedding)
    python bench/search_latency.py --embedder none --sizes 1000,10000,100000
    python bench/search_latency.py --search opensearch --opensearch-url URL   # the same calls with the
        OpenSearch mirror serving memory_search (the seeded store is backfilled into it at start-up;
        its memory-* indices are replaced; `make opensearch` starts a node and prints its URL)
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import httpx  # noqa: E402
import numpy as np  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: E402
from rich.table import Table  # noqa: E402

from service.api.app import create_app  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import Services, build_services  # noqa: E402
from service.domain.models import embedding_text  # noqa: E402
from service.domain.ports import SearchRequest  # noqa: E402
from service.domain.profiles import ProfileRef  # noqa: E402
from service.search import lexical  # noqa: E402
from service.search.fusion import fuse  # noqa: E402
from service.store import repository as repo  # noqa: E402
from service.store.tables import FactRow, FactTag, FactVector, Profile  # noqa: E402
from tests.support.mcp_client import call, mcp_client  # noqa: E402
from tests.support.postgres import free_port  # noqa: E402
from tests.support.server import running  # noqa: E402

console = Console(highlight=False, width=132)

EMBED_BATCH = 256
INSERT_CHUNK = 2000
SEARCH_TARGET = {10_000: (15.0, 40.0)}  # facts -> (p50, p95) ms for memory_search

# --- vocabulary -------------------------------------------------------------------------------------

SERVICES = ["billing-service", "auth-service", "payments-api", "checkout", "ledger", "notification-worker",
            "search-indexer", "web-frontend", "mobile-app", "admin-console", "reporting-job", "export-service",
            "api-gateway", "rate-limiter", "session-store", "scheduler", "inventory-sync", "email-sender",
            "pdf-renderer", "image-resizer", "feature-flags", "audit-log", "user-profile", "recommender",
            "fraud-detector", "data-warehouse", "etl-pipeline", "ml-trainer", "metrics-collector", "log-shipper",
            "sso-bridge", "webhook-dispatcher", "cart-service", "pricing-engine", "tax-calculator",
            "shipping-service", "support-portal", "chat-widget", "status-page", "geo-lookup"]
TOOLS = ["Postgres 15", "PostgreSQL 16", "MySQL 8", "Redis", "Memcached", "Kafka", "RabbitMQ", "NATS", "SQS",
         "S3", "MinIO", "OpenSearch", "Elasticsearch", "ClickHouse", "DuckDB", "SQLite", "pytest", "tox", "nox",
         "ruff", "black", "mypy", "pyright", "uv", "poetry", "Docker", "Podman", "Kubernetes", "Helm", "Argo CD",
         "Terraform", "Pulumi", "Ansible", "GitHub Actions", "GitLab CI", "Jenkins", "Buildkite", "Sentry",
         "Datadog", "Grafana", "Prometheus", "Loki", "OpenTelemetry", "Jaeger", "Celery", "Temporal", "Airflow",
         "dbt", "FastAPI", "Django", "Flask", "gRPC", "GraphQL", "nginx", "Envoy", "Traefik", "Vault", "Bazel"]
AREAS = ["job queue", "session cache", "primary database", "search index", "object storage", "CI runner",
         "metrics backend", "tracing", "secrets management", "deploy pipeline", "feature flag store",
         "message bus", "read replica", "rate limiting", "schema migrations", "test runner", "type checking",
         "linting", "packaging", "log aggregation"]
REASONS = ["cold starts exceeded two seconds", "the old client leaked connections under load",
           "licence costs doubled at renewal", "tests were flaky on shared runners", "p99 latency regressed by 40%",
           "the vendor ended support", "we needed row-level security", "memory grew without bound",
           "migrations locked hot tables for minutes", "on-call pages tripled last quarter",
           "the team already knew it well", "it halves the build time", "audit asked for encryption at rest",
           "replication lag hid writes from readers", "it runs the same way on laptops and in CI"]
FOLLOWUPS = ["Revisit after the Q3 load test.", "Keep the old path behind a flag for one release.",
             "Do not reintroduce the previous setup without a design review.", "Document changes in the ADR folder.",
             "The migration script lives in scripts/migrate_{slug}.py.", "Owner signs off on any rollback.", ""]
TEAMS = ["platform", "payments", "growth", "data", "mobile", "infra", "security", "search", "identity", "billing",
         "checkout", "support"]
PEOPLE = ["Amira", "Bastien", "Chen", "Dagny", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jana", "Kofi", "Lena",
          "Mateus", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tomoko", "Ugo", "Vera", "Wiktor",
          "Ximena", "Yusuf", "Zofia"]
ROLES = ["tech lead", "staff engineer", "engineering manager", "SRE", "product manager", "security champion",
         "data engineer", "release captain"]
CITIES = [("Lisbon", "UTC+0"), ("Berlin", "UTC+1"), ("Nairobi", "UTC+3"), ("Pune", "UTC+5:30"),
          ("Osaka", "UTC+9"), ("Toronto", "UTC-5"), ("Austin", "UTC-6"), ("Seattle", "UTC-8"),
          ("Warsaw", "UTC+1"), ("Sao Paulo", "UTC-3")]
COMMS = ["short written reviews", "a call before large refactors", "async comments on the PR", "pairing sessions",
         "bullet-point summaries", "diagrams over prose"]
ACTIVITIES = ["formatting", "dependency management", "local databases", "integration tests", "type checking",
              "commit messages", "branch naming", "API clients", "task runners", "log output"]
STYLE_NOTES = ["always pin exact versions", "never auto-fix in pre-commit", "run it before pushing",
               "keep the config in pyproject.toml", "tabs are not acceptable", "prefers small focused commits",
               "wants a changelog entry per PR", "dislikes global installs"]
INCIDENTS = ["disk full", "stuck consumer group", "certificate expiry", "connection pool exhaustion",
             "replica lag", "OOM kills", "DNS failures", "queue backlog", "expired API key", "hot partition",
             "slow queries", "failed deploy rollback"]
INFRA = ["the prod-eu-1 EKS cluster", "the staging-us GKE cluster", "bare-metal rack B7", "Cloud Run",
         "ECS Fargate", "Hetzner AX102 boxes", "a single t3.large", "the shared Nomad cluster"]
CIS = ["GitHub Actions", "GitLab CI", "Argo CD", "Jenkins", "Buildkite", "Spinnaker"]
TICKET_PREFIX = ["JIRA", "OPS", "PAY", "SEC", "DATA", "INC", "PLAT"]
OBS = ["Grafana", "Datadog", "Kibana", "Honeycomb", "New Relic"]

# Off-topic vocabulary: nothing of it appears in the facts.
DISHES = ["risotto", "ramen", "shakshuka", "paella", "goulash", "falafel", "pho", "lasagna", "ceviche", "biryani",
          "pierogi", "tagine"]
INGREDIENTS = ["saffron", "mushrooms", "chickpeas", "lemongrass", "paprika", "spinach", "tofu", "pumpkin",
               "anchovies", "coconut milk"]
HOBBIES = ["repot a monstera", "tune a ukulele", "wax cross-country skis", "train a sourdough starter",
           "clean a cast-iron pan", "knit a cable sweater", "fold a paper crane", "brew cold-brew coffee",
           "sharpen a chisel", "patch a bicycle tube"]
PLACES = ["Patagonia", "the Dolomites", "Kyoto", "Iceland", "Sardinia", "the Scottish Highlands", "Banff",
          "the Atacama desert", "Zanzibar", "Tasmania"]
MONTHS = ["January", "March", "May", "July", "September", "November"]


def pick(rng: random.Random, items: list[Any]) -> Any:
    return items[rng.randrange(len(items))]


class FactMaker:
    """Varied, realistic fact texts; remembers identifiers so keyword queries can hit real facts."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.tickets: list[str] = []
        self.env_vars: list[str] = []

    def ticket(self) -> str:
        t = f"{pick(self.rng, TICKET_PREFIX)}-{self.rng.randrange(100, 9999)}"
        self.tickets.append(t)
        return t

    def date(self) -> str:
        return (datetime(2024, 1, 1) + timedelta(days=self.rng.randrange(900))).strftime("%Y-%m-%d")

    def make(self) -> dict[str, Any]:
        r, kind = self.rng, self.rng.choices(
            ["decision", "preference", "project", "reference", "research", "user", "config"],
            [0.25, 0.1, 0.2, 0.15, 0.1, 0.05, 0.15])[0]
        svc, team = pick(r, SERVICES), pick(r, TEAMS)
        tool, tool2 = r.sample(TOOLS, 2)
        area = pick(r, AREAS)
        tags = [svc]
        if kind == "decision":
            tk = self.ticket()
            title = f"{svc}: {tool} for the {area}"
            follow = pick(r, FOLLOWUPS).format(slug=svc.replace("-", "_"))
            text = (f"Decided in {tk} ({self.date()}): {svc} moves its {area} from {tool2} to {tool} because "
                    f"{pick(r, REASONS)}. {follow}").strip()
            tags.append("adr")
        elif kind == "preference":
            title = f"Prefers {tool} over {tool2} for {pick(r, ACTIVITIES)}"
            text = f"The user prefers {tool} over {tool2} for {pick(r, ACTIVITIES)}; {pick(r, STYLE_NOTES)}."
            tags = ["style"]
        elif kind == "project":
            title = f"How {svc} is deployed"
            text = (f"{svc} runs on {pick(r, INFRA)} and is deployed by {pick(r, CIS)} from the "
                    f"{pick(r, ['main', 'release', 'trunk', 'deploy'])} branch; owners: the {team} team, on-call "
                    f"rotation in #{team}-oncall. Its {area} uses {tool}.")
            tags.append(team)
        elif kind == "reference":
            inc = pick(r, INCIDENTS)
            title = f"{svc} runbook: {inc}"
            text = (f"Runbook for {inc} on {svc}: https://wiki.internal/{team}/runbooks/{svc}-{inc.replace(' ', '-')}"
                    f". Dashboards in {pick(r, OBS)}; escalate to {pick(r, PEOPLE)} ({team}).")
            tags += ["runbook", team]
        elif kind == "research":
            n, n2 = r.randrange(500, 60000), r.randrange(500, 60000)
            title = f"{tool} vs {tool2} for the {area}"
            text = (f"Benchmark on {self.date()} on {pick(r, INFRA)}: {tool} sustained {n} req/s at p99 "
                    f"{r.randrange(2, 900)} ms; {tool2} reached {n2} req/s at p99 {r.randrange(2, 900)} ms with the "
                    f"same {area} workload.")
            tags = ["benchmark"]
        elif kind == "user":
            person, (city, tz) = pick(r, PEOPLE), pick(r, CITIES)
            title = f"{person}, {pick(r, ROLES)} ({team})"
            text = f"{person} is a {pick(r, ROLES)} on the {team} team, works from {city} ({tz}), prefers {pick(r, COMMS)}."
            tags = [team]
        else:  # config
            var = f"{svc.upper().replace('-', '_')}_{pick(r, ['TIMEOUT_MS', 'POOL_SIZE', 'MAX_RETRIES', 'CACHE_TTL', 'BATCH_SIZE', 'WORKERS'])}"
            self.env_vars.append(var)
            title = f"{var} setting"
            text = (f"{svc} reads {var} (default {r.choice([5, 10, 30, 64, 250, 1000, 3000])}); production overrides "
                    f"it to {r.choice([2, 20, 60, 128, 500, 2000, 10000])} in the {pick(r, INFRA)} values file. "
                    f"Changing it needs a restart of the {area} workers.")
            tags.append("config")
            kind = "project"
        return {"title": title[:200], "text": text, "kind": kind, "tags": sorted(set(tags))}


def make_queries(maker: FactMaker, n: int, seed: int) -> list[tuple[str, str]]:
    """n distinct (style, query): ~45% keyword, ~35% question, ~20% off-topic."""
    r = random.Random(seed)
    out: dict[str, str] = {}
    while len(out) < n:
        style = r.choices(["keyword", "question", "offtopic"], [0.45, 0.35, 0.2])[0]
        svc, tool, area = pick(r, SERVICES), pick(r, TOOLS), pick(r, AREAS)
        if style == "keyword":
            form = r.randrange(6)
            if form == 0 and maker.tickets:
                q = pick(r, maker.tickets)
            elif form == 1 and maker.env_vars:
                q = pick(r, maker.env_vars)
            elif form == 2:
                q = f"{svc} {tool}"
            elif form == 3:
                q = f"{svc} runbook {pick(r, INCIDENTS)}"
            elif form == 4:
                q = f"{tool} {area}"
            else:
                q = f"{pick(r, PEOPLE)} {pick(r, TEAMS)} team"
        elif style == "question":
            q = pick(r, [
                f"why did {svc} move its {area} to {tool}?",
                f"who owns {svc} and where is its on-call channel?",
                f"how is {svc} deployed?",
                f"what does the user prefer for {pick(r, ACTIVITIES)}?",
                f"which throughput did {tool} reach in the {area} benchmark?",
                f"what should I do when {svc} has {pick(r, INCIDENTS)}?",
                f"which timeout does {svc} use in production?",
                f"is {tool} still used for the {area}?",
            ])
        else:
            q = pick(r, [
                f"{pick(r, DISHES)} recipe with {pick(r, INGREDIENTS)}",
                f"how to {pick(r, HOBBIES)}",
                f"best time to visit {pick(r, PLACES)} in {pick(r, MONTHS)}",
                f"{pick(r, DISHES)} wine pairing for {r.randrange(2, 12)} guests",
            ])
        out.setdefault(q, style)
    return [(style, q) for q, style in out.items()]


# --- measurement helpers ----------------------------------------------------------------------------


def rss(pid: int | str = "self") -> tuple[float, float]:
    """(VmRSS, VmHWM) in MB of this process or of another one."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", float("nan")), values.get("VmHWM", float("nan"))


def stats_ms(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "mean": float("nan"), "max": float("nan")}
    ms = sorted(s * 1000 for s in samples)
    return {"n": len(ms), "p50": statistics.median(ms), "p95": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))],
            "mean": statistics.fmean(ms), "max": ms[-1]}


def advance(progress: Progress, task: Any, k: int) -> None:
    """Advance a rich progress bar; without a terminal (output to a file) also log every 10%."""
    before = next(t for t in progress.tasks if t.id == task)
    done_before, total = before.completed, before.total or 1
    progress.advance(task, k)
    if not console.is_terminal and int(10 * (done_before + k) / total) > int(10 * done_before / total):
        console.print(f"  {before.description}: {int(done_before + k):,}/{int(total):,} "
                      f"({before.elapsed or 0:.0f}s)")


def set_torch_threads(n: int) -> None:
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


# --- seeding ------------------------------------------------------------------------------------------


def seed_facts(services: Services, profile: ProfileRef, n: int, maker: FactMaker, seed_threads: int) -> dict[str, float]:
    facts = [maker.make() for _ in range(n)]
    now = datetime.now(timezone.utc)
    rng = random.Random(n)
    embedder = services.embedder
    vectors: np.ndarray | None = None
    timings: dict[str, float] = {}
    progress = Progress(TextColumn("  {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, transient=False)
    with progress:
        if embedder.enabled:
            set_torch_threads(seed_threads)
            task = progress.add_task("embedding facts", total=n)
            started = time.perf_counter()
            parts = []
            for i in range(0, n, EMBED_BATCH):
                batch = facts[i:i + EMBED_BATCH]
                parts.append(embedder.embed_documents([embedding_text(f["title"], f["text"]) for f in batch]))
                advance(progress, task, len(batch))
            vectors = np.concatenate(parts) if parts else None
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
                                     "dim": int(vectors.shape[1]), "vector": vectors[i].astype(np.float32).tobytes(),
                                     "created_at": now})
            with services.db.write() as session:
                session.execute(sa.insert(FactRow), fact_rows)
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


# --- the MCP run ----------------------------------------------------------------------------------------


class RawMCP:
    """MCP tool calls as plain JSON-RPC POSTs to /mcp/{profile} on one keep-alive connection: the HTTP
    requests the SDK's client sends (the server is stateless: no session to open first), without the
    client's own per-call machinery -- so the figures are the server's, plus one loopback round trip."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url, self.next_id = http, url, 0

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}
        response = await self.http.post(self.url, json=request)
        result = response.json()["result"]
        assert not result.get("isError"), result
        return dict(result["structuredContent"])


@asynccontextmanager
async def raw_client(base_url: str, profile: str, token: str) -> AsyncIterator[RawMCP]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        yield RawMCP(http, f"{base_url}/mcp/{profile}")


async def mcp_run(base_url: str, profile: str, token: str, queries: list[tuple[str, str]], repeated: int,
                  writes: list[dict[str, Any]], client_kind: str = "sdk") -> dict[str, Any]:
    if client_kind == "raw":
        async with raw_client(base_url, profile, token) as raw:
            return await timed_calls(raw.call, queries, repeated, writes)
    async with mcp_client(base_url, profile, token) as client:

        async def sdk_call(tool: str, **arguments: Any) -> dict[str, Any]:
            return await call(client, tool, **arguments)

        return await timed_calls(sdk_call, queries, repeated, writes)


async def timed_calls(invoke: Callable[..., Awaitable[dict[str, Any]]], queries: list[tuple[str, str]],
                      repeated: int, writes: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"by_style": {}, "matched": {}}
    t0 = time.perf_counter()
    await invoke("memory_search", query="warm-up: where is the deploy runbook")
    out["first_search_s"] = time.perf_counter() - t0
    out["rss_after_first"] = rss()

    samples, zero = [], 0
    for style, q in queries:
        t0 = time.perf_counter()
        found = await invoke("memory_search", query=q)
        dt = time.perf_counter() - t0
        samples.append(dt)
        out["by_style"].setdefault(style, []).append(dt)
        out["matched"].setdefault(style, []).append(found["matched_count"])
        zero += found["matched_count"] == 0
    out["search"] = samples

    few = [q for _, q in queries[:10]]
    rep = []
    for i in range(repeated):
        t0 = time.perf_counter()
        await invoke("memory_search", query=few[i % len(few)])
        rep.append(time.perf_counter() - t0)
    out["repeated"] = rep

    wr = []
    for f in writes:
        t0 = time.perf_counter()
        await invoke("memory_write", **f)
        wr.append(time.perf_counter() - t0)
    out["write"] = wr

    # One search after the writes: pays the index catch-up with the new facts.
    t0 = time.perf_counter()
    await invoke("memory_search", query="after writes: who owns billing-service")
    out["search_after_writes_s"] = time.perf_counter() - t0
    return out


# --- the in-process split ------------------------------------------------------------------------------


def split(services: Services, profile: ProfileRef, queries: list[tuple[str, str]]) -> dict[str, list[float]]:
    """Time the parts of one search in-process (same steps as EmbeddedSearch._search and SearchService)."""
    backend: Any = services.backend  # the embedded backend; its internals are timed directly
    embedder, settings = services.embedder, services.settings
    if not hasattr(backend, "_synced"):
        raise SystemExit("the split needs the embedded backend (MEMORY_SEARCH=embedded)")
    cache = getattr(embedder, "_cache", None)
    if cache is not None:
        cache.clear()  # so embed_query runs the model, as for a new query
    parts: dict[str, list[float]] = {k: [] for k in (
        "embed", "sync", "filter", "lexical", "  lexical: term_counts", "  lexical: bm25 + top-k", "vector", "fusion",
        "rank total (_search)", "hydrate", "log write",
        "domain search (cached embed)")}
    for _, q in queries:
        t0 = time.perf_counter()
        vector = embedder.embed_query(q) if embedder.enabled else None
        t1 = time.perf_counter()
        index = backend._synced(profile.id)
        t2 = time.perf_counter()
        parts["embed"].append(t1 - t0)
        parts["sync"].append(t2 - t1)
        with index.lock:
            n = index.size
            t0 = time.perf_counter()
            terms = lexical.informative_terms(q)
            passes = index.filter_mask(None, ())
            active = passes & index.active[:n]
            t1 = time.perf_counter()
            need = lexical.required_terms(len(terms))
            lexical_ok = index.term_counts(terms) >= need if terms else np.zeros(n, dtype=bool)
            t_counts = time.perf_counter()
            lex_rows = np.nonzero(active & lexical_ok)[0]
            lex_scores = index.bm25(terms, lex_rows)
            best = np.argsort(-lex_scores, kind="stable")[: settings.fusion_depth]
            lex_top = {int(lex_rows[i]): float(lex_scores[i]) for i in best}
            t2 = time.perf_counter()
            vec_top: dict[int, float] = {}
            if vector is not None:
                sims = index.similarities(vector)
                if sims is not None:
                    vector_ok = sims >= settings.min_similarity
                    vec_rows = np.nonzero(active & vector_ok)[0]
                    order = vec_rows[np.argsort(-sims[vec_rows], kind="stable")][: settings.fusion_depth]
                    vec_top = {int(r): float(sims[r]) for r in order}
                    int((active & (lexical_ok | vector_ok)).sum())  # matched_count
            t3 = time.perf_counter()
            if embedder.enabled:
                fuse([lex_top, vec_top], [settings.lexical_weight, settings.vector_weight])[:8]
            else:
                fuse([lex_top], [1.0])[:8]
            t4 = time.perf_counter()
            request = SearchRequest(profile_id=profile.id, profile=profile.name, query=q, limit=8, kind=None,
                                    tags=(), vector=vector)
            found = backend._search(index, request)
            t5 = time.perf_counter()
        parts["filter"].append(t1 - t0)
        parts["lexical"].append(t2 - t1)
        parts["  lexical: term_counts"].append(t_counts - t1)
        parts["  lexical: bm25 + top-k"].append(t2 - t_counts)
        parts["vector"].append(t3 - t2)
        parts["fusion"].append(t4 - t3)
        parts["rank total (_search)"].append(t5 - t4)
        t0 = time.perf_counter()
        with services.db.read() as session:
            rows = repo.fact_rows_by_uid(session, profile.id, [h.uid for h in found.hits])
        from service.domain.models import ScoredFact

        scored = [ScoredFact(fact=repo.to_fact(rows[h.uid]), score=h.score, lexical=h.lexical, vector=h.vector)
                  for h in found.hits if h.uid in rows]
        t1 = time.perf_counter()
        services.query_log.record(profile, request=request, found=found, returned=scored, latency_ms=0.0)
        t2 = time.perf_counter()
        parts["hydrate"].append(t1 - t0)
        parts["log write"].append(t2 - t1)
        t0 = time.perf_counter()
        services.search.search(profile, q)
        parts["domain search (cached embed)"].append(time.perf_counter() - t0)
    return parts


# --- driver ----------------------------------------------------------------------------------------------


@contextmanager
def served(data_dir: Path, args: argparse.Namespace) -> Iterator[tuple[str, int]]:
    """`memory serve` in its own process (as deployed): the client does not share its GIL. Waits until the
    embedder is loaded and the search index is warm, so the timings are those of a running service."""
    port = free_port()
    env = {**os.environ, "MEMORY_DATA_DIR": str(data_dir), "MEMORY_EMBEDDER": args.embedder,
           "MEMORY_PORT": str(port), "MEMORY_SEARCH": args.search}
    if args.threads:
        env["MEMORY_TORCH_THREADS"] = str(args.threads)
    if args.search == "opensearch":
        env["MEMORY_OPENSEARCH_URL"] = args.opensearch_url
    proc = subprocess.Popen([sys.executable, "-m", "service", "serve"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 180
        while True:
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("memory serve did not become ready")
            try:
                ready = httpx.get(f"{base_url}/readyz", timeout=2).json()
                checks = ready["checks"]
                search = checks["search"]
                warm = search.get("profiles_loaded") if args.search == "embedded" else (
                    search.get("state") == "ready" and search.get("profiles_ready"))  # indices built and backfilled
                if checks["embedder"]["state"] in ("ready", "disabled") and warm:
                    break
            except (httpx.HTTPError, KeyError, ValueError):
                pass
            time.sleep(0.2)
        yield base_url, proc.pid
    finally:
        proc.terminate()
        proc.wait(30)


def run_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    console.rule(f"[bold]{n:,} facts, search={args.search}, embedder={args.embedder}")
    result: dict[str, Any] = {"n": n}
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        settings = Settings(data_dir=Path(tmp), embedder=args.embedder,
                            **({"torch_threads": args.threads} if args.threads else {}))
        services = build_services(settings)
        try:
            if services.embedder.enabled:
                t0 = time.perf_counter()
                services.embedder.embed_documents(["warm"])
                result["model_load_s"] = time.perf_counter() - t0
                console.print(f"  model loaded in {result['model_load_s']:.1f}s")
            profile = services.profiles.create("bench")
            token = services.profiles.issue_token("bench").token
            maker = FactMaker(args.seed + n)
            result["seed"] = seed_facts(services, profile, n, maker, args.seed_threads)
            result["rss_seeded"] = rss()
            console.print("  seeded: " + ", ".join(f"{k} {v:.1f}s" for k, v in result["seed"].items())
                          + f"; RSS {result['rss_seeded'][0]:.0f} MB")
            queries = make_queries(maker, args.queries, args.seed)
            writer = FactMaker(args.seed + 999_999)
            writes = [writer.make() for _ in range(args.writes)]
            if args.search == "opensearch":
                from opensearchpy import OpenSearch

                client = OpenSearch(hosts=[args.opensearch_url])
                client.indices.delete(index="memory-*", ignore_unavailable=True, allow_no_indices=True)
                client.close()
            if args.server == "thread":
                app = create_app(services=services)
                logging.getLogger().setLevel(logging.WARNING)  # the MCP SDK sets INFO (one line per request)
                with running(app) as base_url:
                    mcp = anyio.run(mcp_run, base_url, "bench", token, queries, args.repeated, writes, args.client)
                result["rss_after_calls"] = rss()
            else:
                with served(Path(tmp), args) as (base_url, pid):
                    mcp = anyio.run(mcp_run, base_url, "bench", token, queries, args.repeated, writes, args.client)
                    result["server_rss"] = rss(pid)
                result["rss_after_calls"] = result["server_rss"]
            result["mcp"] = mcp
            status = services.backend.status()
            result["indexed"] = status.get("facts_indexed")
            console.print(f"  first search {mcp['first_search_s'] * 1000:.0f} ms (index build), "
                          f"{len(queries)} searches, {args.repeated} repeated, {args.writes} writes done")
            # The in-process split times the embedded backend's own steps; OpenSearch's run in the cluster.
            result["split"] = split(services, profile, queries) if args.search == "embedded" else {}
            result["rss_end"] = rss()
        finally:
            services.close()
    return result


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    client = "the MCP SDK's client" if args.client == "sdk" else "plain JSON-RPC POSTs"
    table = Table(title=f"memory_search / memory_write over MCP HTTP, {client} (client-side ms)")
    for col in ("facts", "call", "n", "p50", "p95", "mean", "max", "target"):
        table.add_column(col, justify="right" if col not in ("call",) else "left")
    for r in results:
        m = r["mcp"]
        target = SEARCH_TARGET.get(r["n"])
        rows = [("search (distinct)", m["search"]), ("search: keyword", m["by_style"].get("keyword", [])),
                ("search: question", m["by_style"].get("question", [])),
                ("search: off-topic", m["by_style"].get("offtopic", [])),
                ("search (repeated)", m["repeated"]), ("write", m["write"])]
        for label, samples in rows:
            s = stats_ms(samples)
            verdict = ""
            if target and label == "search (distinct)":
                ok = s["p50"] <= target[0] and s["p95"] <= target[1]
                verdict = f"p50<={target[0]:.0f} p95<={target[1]:.0f}: {'met' if ok else 'MISSED'}"
            table.add_row(f"{r['n']:,}", label, str(s["n"]), f"{s['p50']:.1f}", f"{s['p95']:.1f}",
                          f"{s['mean']:.1f}", f"{s['max']:.1f}", verdict)
    console.print(table)

    if not any(r["split"] for r in results):
        console.print("(no server-side split: it times the embedded backend's steps; OpenSearch runs them in the cluster)")
    table = Table(title="server-side split, in-process over the same distinct queries (ms)")
    table.add_column("facts", justify="right")
    table.add_column("part")
    table.add_column("p50", justify="right")
    table.add_column("p95", justify="right")
    table.add_column("mean", justify="right")
    for r in results:
        for part, samples in r["split"].items():
            s = stats_ms(samples)
            table.add_row(f"{r['n']:,}", part, f"{s['p50']:.2f}", f"{s['p95']:.2f}", f"{s['mean']:.2f}")
    if any(r["split"] for r in results):
        console.print(table)

    table = Table(title="warm-up, memory, seeding")
    for col in ("facts", "model load s", "seed embed s", "seed insert s", "first search ms", "search after writes ms",
                "RSS seeded MB", "RSS after 1st search MB", "RSS end MB", "peak MB", "server RSS MB"):
        table.add_column(col, justify="right")
    for r in results:
        m = r["mcp"]
        table.add_row(f"{r['n']:,}", f"{r.get('model_load_s', 0):.1f}", f"{r['seed'].get('embed_s', 0):.1f}",
                      f"{r['seed']['insert_s']:.1f}", f"{m['first_search_s'] * 1000:.0f}",
                      f"{m['search_after_writes_s'] * 1000:.0f}", f"{r['rss_seeded'][0]:.0f}",
                      f"{m['rss_after_first'][0]:.0f}", f"{r['rss_end'][0]:.0f}", f"{r['rss_end'][1]:.0f}",
                      f"{r['server_rss'][0]:.0f} (peak {r['server_rss'][1]:.0f})" if "server_rss" in r else "-")
    console.print(table)

    for r in results:
        matched = r["mcp"]["matched"]
        console.print(f"  {r['n']:,} facts: zero-match share by style: " + ", ".join(
            f"{style} {sum(1 for c in v if c == 0) / len(v):.0%} (median matched {statistics.median([c or 0 for c in v]):.0f})"
            for style, v in sorted(matched.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated fact counts (default 1000,10000)")
    parser.add_argument("--embedder", choices=("minilm", "none"), default="minilm")
    parser.add_argument("--queries", type=int, default=200, help="distinct memory_search calls (default 200)")
    parser.add_argument("--repeated", type=int, default=200, help="calls cycling over 10 queries (default 200)")
    parser.add_argument("--writes", type=int, default=50, help="memory_write calls (default 50)")
    parser.add_argument("--threads", type=int, default=None,
                        help="MEMORY_TORCH_THREADS of the service (default: the service's default)")
    parser.add_argument("--seed-threads", type=int, default=os.cpu_count() or 1,
                        help="torch threads while embedding the seed facts (default: all CPUs)")
    parser.add_argument("--seed", type=int, default=11, help="random seed")
    parser.add_argument("--server", choices=("process", "thread"), default="process",
                        help="run `memory serve` as its own process (default, as deployed) or in a thread here")
    parser.add_argument("--client", choices=("sdk", "raw"), default="sdk",
                        help="the MCP SDK's own client (default), or plain JSON-RPC POSTs (the server's share)")
    parser.add_argument("--search", choices=("embedded", "opensearch"), default="embedded",
                        help="the search backend of the served process (default embedded)")
    parser.add_argument("--opensearch-url", default=os.environ.get("OPENSEARCH_URL"),
                        help="with --search opensearch: a throwaway cluster (default $OPENSEARCH_URL)")
    args = parser.parse_args(argv)
    if args.search == "opensearch" and (args.server != "process" or not args.opensearch_url):
        parser.error("--search opensearch needs --opensearch-url (or OPENSEARCH_URL) and --server process")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    load = os.getloadavg()
    console.print(f"search latency benchmark: sizes {sizes}, search {args.search}, embedder {args.embedder}, "
                  f"{args.queries} queries, "
                  f"{os.cpu_count()} CPUs, load average {load[0]:.2f} (other work on the machine skews timings)")
    results = [run_size(n, args) for n in sizes]
    report(results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
