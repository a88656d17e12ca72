"""The benchmarks' synthetic corpus: varied, realistic fact texts generated from templates and vocabulary
(decisions, preferences, deployments, runbooks, benchmarks, people, config), and a query mix over them
(keyword / question / off-topic). Deterministic for a given seed."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

# --- vocabulary -------------------------------------------------------------------------------------

# The query-log benchmarks' (gaps.py, summary.py) subjects and what is asked about them.
LOG_SUBJECTS = ["billing-service", "auth-service", "payments api", "mobile app", "web frontend", "data pipeline",
                "search indexer", "ci pipeline", "staging cluster", "notification worker", "admin console",
                "reporting job", "feature flags", "rate limiter", "session store", "export service", "gateway",
                "scheduler", "ledger", "inventory sync"]
LOG_TOPICS = ["postgres version", "redis ttl", "deploy steps", "retry policy", "timeout", "owner", "runbook",
              "test command", "lint config", "docker image", "helm chart", "env vars", "migration", "backup",
              "alerting", "logging format", "api keys rotation", "release branch", "code style", "python version",
              "node version", "kafka topic", "s3 bucket", "cron schedule", "oncall"]

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
