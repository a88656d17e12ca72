"""A small store and a set of searches exercising the lexical match rule: stems, identifiers, URLs,
diacritics, underscores, stop words, tags, kinds, and facts that are retired or superseded."""

from __future__ import annotations

from service.container import Services
from service.domain.profiles import ProfileRef

FACTS = [
    ("Deploys run on Kubernetes", "Production deployments go through Argo CD on the GKE cluster.", "project",
     ["infra", "k8s"]),
    ("Prefers pytest", "The user wants tests written with pytest fixtures, not unittest classes.", "preference",
     ["testing", "lang:python"]),
    ("JIRA-4412 tracks the migration", "The Postgres migration is tracked in JIRA-4412.", "reference", ["db"]),
    ("Grafana dashboard", "Latency graphs live at https://grafana.example.com/d/abc123/api-latency.", "reference",
     ["observability"]),
    ("Café naïve résumé", "Diacritics must fold: café, naïve and résumé are searched without accents.", "research",
     ["i18n"]),
    ("snake_case_names in Python", "Functions use snake_case_names; classes use CamelCase.", "preference",
     ["lang:python", "style"]),
    ("Chose PostgreSQL over MySQL", "We decided on PostgreSQL because of JSONB and transactional DDL.", "decision",
     ["db", "architecture"]),
    ("Release v1.2.3 notes", "Version v1.2.3 shipped the service.search module and fixed the running jobs.",
     "project", ["release"]),
    ("User is a data engineer", "Works mostly with Spark, Airflow and dbt; prefers SQL over pandas.", "user", []),
    ("Happiness metric research", "Generalization of the happiness metric agreed with the analysts.", "research",
     ["metrics"]),
    ("Retired deploy runbook", "Old runbook for deploying with Jenkins to the VM cluster.", "reference", ["infra"]),
    ("Old testing preference", "The user used unittest classes before switching.", "preference", ["testing"]),
]
RETIRE = ["Retired deploy runbook"]
SUPERSEDE = {"Old testing preference": "The user used nose and unittest before switching to pytest."}

SEARCHES: list[tuple[str, str | None, tuple[str, ...]]] = [
    ("deploy kubernetes cluster", None, ()),
    ("deploying to the cluster", None, ()),
    ("running deployments", None, ()),
    ("pytest fixtures", None, ()),
    ("unittest", None, ()),
    ("JIRA-4412", None, ()),
    ("jira 4412 postgres", None, ()),
    ("https://grafana.example.com/d/abc123/api-latency", None, ()),
    ("grafana latency", "reference", ()),
    ("cafe naive", None, ()),
    ("résumé", None, ()),
    ("snake_case_names", None, ()),
    ("snake case", None, ()),
    ("v1.2.3", None, ()),
    ("service.search", None, ()),
    ("postgresql jsonb ddl transactional", None, ()),
    ("why did we choose postgresql", "decision", ()),
    ("python style", None, ("lang:python",)),
    ("python", None, ("lang:python", "style")),
    ("what does the user know", None, ()),
    ("is it the", None, ()),
    ("spark airflow dbt pandas sql", "user", ()),
    ("generalized happiness agreement", None, ()),
    ("jenkins runbook", None, ()),
    ("nose unittest pytest", None, ()),
    ("deploy", None, ("infra",)),
    ("kubernetes", "decision", ()),
]


def load(services: Services, profile: ProfileRef) -> dict[str, str]:
    """Write the corpus (retire and supersede some); title -> current uid."""
    uids = {}
    for title, text, kind, tags in FACTS:
        uids[title] = services.facts.write(profile, title=title, text=text, kind=kind, tags=tags).fact.uid
    for title in RETIRE:
        services.facts.forget(profile, uids[title])
    for title, text in SUPERSEDE.items():
        uids[title] = services.facts.update(profile, uids[title], text=text).fact.uid
    return uids
