"""The OpenSearch password never leaves the process (issue 25). For each kind of failure -- a wrong password
(given as the settings, or in the URL as before issue 25), the cluster down (a closed port), a user missing
permissions (for the requests; for writing documents, whose refusals land in outbox.last_error) -- a real
service runs in opensearch mode on the secured node (build_services, its background worker included, and the
app on a loopback port), is used through every face, and everything a caller or an operator can see is searched
for the password (as is, URL-quoted, and as the Basic header's base64): the captured logs and output, /readyz
(loopback: full detail) and /healthz, REST and /mcp answers (error bodies included), the dashboard page, the
outbox's last_error, `memory check --json` and `memory reindex --json`, the error the worker's cycle raises,
repr() of the settings and of the client. Each scenario also checks that what was seen names the failure (not
"unreachable" for a refused password).

A crash of the CLI: tests/cli/test_crash_secrets.py.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from service.api.app import create_app
from service.cli.main import app as cli
from service.config import Settings
from service.container import build_services
from service.errors import BackendUnavailable
from service.search.opensearch.backend import OpenSearchBackend
from tests.conftest import make_profile
from tests.support.clusters import secured_opensearch  # noqa: F401 - the session fixture
from tests.support.opensearch_node import Node
from tests.support.server import running

pytestmark = [pytest.mark.opensearch, pytest.mark.secured]

ACCEPT = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
# What a user needs to build the mirror, less writing documents: its bulk items fail one by one (403), so the
# security plugin's reasons reach outbox.last_error. Index patterns "*": whatever names the mirror uses.
NO_WRITES_CLUSTER = ["cluster:monitor/main", "indices:admin/index_template/*", "cluster:admin/search/pipeline/*",
                     "indices:data/write/bulk", "indices:data/read/msearch", "indices:data/read/scroll*"]
NO_WRITES_INDEX = [{"index_patterns": ["*"], "allowed_actions": ["indices:admin/*", "read"]}]


@dataclass
class Scenario:
    settings: Settings
    user: str
    password: str
    expect: str  # what /readyz, the worker's error and the CLI should say instead
    ca: Path
    url: str | None = None  # the URL with user:password@, when the password is given that way


def new_password() -> str:
    return f"{secrets.token_urlsafe(12)}-Pw9/{secrets.token_hex(4)}"  # a '/' so its URL-quoted form differs


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def scenario(kind: str, node: Node, tmp_path: Path) -> Iterator[Scenario]:
    ca = node.ca_file
    assert ca is not None
    base: dict[str, object] = {
        "data_dir": tmp_path, "database_url": f"sqlite:///{tmp_path / 'memory.db'}", "embedder": "none",
        "search": "opensearch", "opensearch_url": node.url, "opensearch_ca_certs": str(ca),
        "opensearch_sync_interval": 60.0, "opensearch_timeout": 5.0,
    }
    if kind == "wrong password":
        password = new_password()
        yield Scenario(Settings(**base, opensearch_username="admin", opensearch_password=password),  # type: ignore[arg-type]
                       "admin", password, "OpenSearch refused the credentials of user 'admin'", ca)
    elif kind == "wrong password in the URL":
        password = new_password()
        base["opensearch_url"] = url = node.url.replace("https://", f"https://admin:{quote(password, safe='')}@")
        yield Scenario(Settings(**base), "admin", password,  # type: ignore[arg-type]
                       "OpenSearch refused the credentials of user 'admin'", ca, url)
    elif kind == "cluster down":
        password = new_password()
        port = closed_port()
        base["opensearch_url"] = f"https://127.0.0.1:{port}"
        yield Scenario(Settings(**base, opensearch_username="admin", opensearch_password=password),  # type: ignore[arg-type]
                       "admin", password, f"OpenSearch unreachable at 127.0.0.1:{port}: connection refused", ca)
    else:  # a user that may GET / only (the requests fail), or build the mirror but not write documents
        user, password, role = f"svc-{secrets.token_hex(4)}", new_password(), f"svc-{secrets.token_hex(4)}"
        if kind == "missing permission (requests)":
            node.create_role(role, cluster_permissions=["cluster:monitor/main"])
            expect = " (403"  # "OpenSearch denied X: user ... lacks the permission [...] (403)", or a HEAD's 403
        else:
            node.create_role(role, cluster_permissions=NO_WRITES_CLUSTER, index_permissions=NO_WRITES_INDEX)
            expect = "no permissions for [indices:data/write/"
        node.create_user(user, password, roles=[role])
        try:
            yield Scenario(Settings(**base, opensearch_username=user, opensearch_password=password),  # type: ignore[arg-type]
                           user, password, expect, ca)
        finally:
            node.delete_user(user)
            node.delete_role(role)


def environment(case: Scenario) -> dict[str, str]:
    """The MEMORY_* variables of the scenario, for the CLI (which reads its own): the password as the service
    got it (a URL's userinfo stays in the URL)."""
    settings = case.settings
    env = {"MEMORY_DATA_DIR": str(settings.data_dir), "MEMORY_DATABASE_URL": str(settings.database_url),
           "MEMORY_EMBEDDER": "none", "MEMORY_SEARCH": "opensearch", "MEMORY_OPENSEARCH_TIMEOUT": "5",
           "MEMORY_OPENSEARCH_CA_CERTS": str(case.ca)}
    if case.url is not None:
        return {**env, "MEMORY_OPENSEARCH_URL": case.url}
    return {**env, "MEMORY_OPENSEARCH_URL": str(settings.opensearch_url),
            "MEMORY_OPENSEARCH_USERNAME": case.user, "MEMORY_OPENSEARCH_PASSWORD": case.password}


def call(tool: str, **arguments: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


@pytest.mark.parametrize("kind", ["wrong password", "wrong password in the URL", "cluster down", "missing permission (requests)",
                                  "missing permission (documents)"])
def test_the_password_never_leaves_the_process(kind: str, secured_opensearch: Node, tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture,
                                               capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, every level: opensearch-py's and urllib3's debug lines too
    seen: dict[str, str] = {}
    with scenario(kind, secured_opensearch, tmp_path) as case:
        with build_services(case.settings) as services:  # starts the sync worker: its first cycle fails and logs
            backend = services.backend
            assert isinstance(backend, OpenSearchBackend)
            alpha = make_profile(services, "alpha")
            uid = services.facts.write(services.profiles.get("alpha"), title="Deploys",
                                       text="Deploys run on Fridays.", kind="project", tags=[]).fact.uid
            try:
                backend.sync_now()
            except BackendUnavailable as exc:  # what the worker logs and keeps as the health's last_error
                seen["worker error"] = f"{exc} {exc!r}"
            seen["repr"] = " ".join([repr(case.settings), repr(services.settings), repr(backend.client),
                                     repr(backend.client.transport.kwargs),
                                     repr(backend.client.transport.get_connection()),
                                     repr(vars(backend.client.transport.get_connection()))])
            headers = {**ACCEPT, **alpha.headers}
            with running(create_app(services=services)) as base:
                answers = {
                    "readyz": httpx.get(f"{base}/readyz"),  # loopback: full detail
                    "healthz": httpx.get(f"{base}/healthz"),
                    "dashboard": httpx.get(f"{base}/ui/"),
                    "facts": httpx.get(f"{base}/api/alpha/facts", headers=headers),
                    "fact": httpx.get(f"{base}/api/alpha/facts/{uid}", headers=headers),
                    "no such fact": httpx.get(f"{base}/api/alpha/facts/f_nope", headers=headers),
                    "stats": httpx.get(f"{base}/api/alpha/stats", headers=headers),
                    "summary": httpx.get(f"{base}/api/alpha/queries/summary", headers=headers),
                    "queries": httpx.get(f"{base}/api/alpha/queries", headers=headers),
                    "profiles": httpx.get(f"{base}/api/profiles", headers=headers),
                    "search": httpx.post(f"{base}/mcp/alpha", headers=headers,
                                         json=call("memory_search", query="deploys friday")),
                    "write": httpx.post(f"{base}/mcp/alpha", headers=headers,
                                        json=call("memory_write", title="Reviews", text="Reviews happen on Monday.",
                                                  kind="project")),
                    "bad tool call": httpx.post(f"{base}/mcp/alpha", headers=headers,
                                                json=call("memory_search", query="")),
                    "unknown tool": httpx.post(f"{base}/mcp/alpha", headers=headers, json=call("memory_nope")),
                }
            seen.update({name: f"{r.status_code} {dict(r.headers)} {r.text}" for name, r in answers.items()})
            with services.db.read() as session:
                seen["outbox"] = json.dumps([row[0] for row in session.execute(sa.text("SELECT last_error FROM outbox"))])
            ready = answers["readyz"].json()
        runner = CliRunner()
        outputs = {}
        for command in (["check", "--json"], ["reindex", "--json"]):
            result = runner.invoke(cli, command, env=environment(case))
            outputs[command[0]] = result.output
            seen[f"memory {' '.join(command)}"] = f"{result.output} {result.exception!r}"
        captured = capfd.readouterr()
        seen["logs"] = caplog.text + " ".join(str(r.args) for r in caplog.records)
        seen["stdout/stderr"] = captured.out + captured.err

        forms = {"password": case.password, "url-quoted": quote(case.password, safe=""),
                 "basic header": base64.b64encode(f"{case.user}:{case.password}".encode()).decode()}
        leaks = [(where, form) for where, text in seen.items() for form, value in forms.items() if value in text]
        assert not leaks, leaks

    # ... and what they saw names the failure
    problems = " ".join(ready["checks"]["search"]["problems"])
    if kind == "missing permission (documents)":  # the mirror is built; the documents are refused one by one
        assert case.expect in seen["outbox"], seen["outbox"]
        return
    assert case.expect in problems and case.expect in seen["worker error"], (problems, seen.get("worker error"))
    assert kind == "cluster down" or "unreachable" not in problems
    for command in ("check", "reindex"):
        answer = json.loads(outputs[command])
        if command == "check" and kind == "missing permission (requests)":  # each denial named by its probe
            assert answer["ok"] is False and any("lacks the cluster permission [" in line
                                                 for line in answer["differences"]["cluster"]), answer
            continue
        error = answer["error"]
        assert error["code"] == "backend_unavailable" and case.expect in error["message"], error
