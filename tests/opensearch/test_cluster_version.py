"""The cluster's version as the service reports it, on the real node of the session (2.19.1, or 3.5.0 with
OPENSEARCH_TEST_VERSION), and a newer version than this release is tested on: the same node behind a proxy that
changes only the number GET / answers (`VersionProxy`, a stand-in for a cluster that cannot run here, named as
such). A newer major or minor is used all the same, with a note in the log (once), in `memory opensearch check`
and in /readyz; never refused."""

from __future__ import annotations

import http.client
import json
import logging
import os
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from service.cli.main import app
from service.container import build_services
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch.cluster import TESTED_ON
from tests.opensearch.conftest import mirrored_settings
from tests.support import opensearch_node
from tests.support.clusters import Cluster

pytestmark = pytest.mark.opensearch


class VersionProxy:
    """Plain http on loopback in front of a cluster: every request passed on as it came (credentials too), the
    answer to GET / with `version.number` replaced."""

    def __init__(self, upstream: Cluster, number: str) -> None:
        target = urlsplit(upstream.url)
        context = ssl.create_default_context(cafile=upstream.ca_file) if target.scheme == "https" else None

        class Handler(BaseHTTPRequestHandler):
            def _pass(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if context is not None:
                    conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                        target.hostname, target.port, context=context, timeout=30)
                else:
                    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                conn.request(self.command, self.path, body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                if self.command == "GET" and self.path.split("?")[0] == "/" and answer.status == 200:
                    info = json.loads(data)
                    info["version"]["number"] = number
                    data = json.dumps(info).encode()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _pass

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.cluster = Cluster(f"http://127.0.0.1:{self.server.server_address[1]}", upstream.username,
                               upstream.password, None, admin=upstream.admin)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _check(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cluster: Cluster, prefix: str) -> tuple[int, str, dict]:
    for key, value in {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": f"sqlite:///{tmp_path}/memory.db",
                       "MEMORY_EMBEDDER": "none", "MEMORY_SEARCH": "opensearch", **cluster.env(prefix)}.items():
        monkeypatch.setenv(key, value)
    plain = CliRunner().invoke(app, ["opensearch", "check"])
    as_json = CliRunner().invoke(app, ["opensearch", "check", "--json"])
    assert plain.exit_code == as_json.exit_code
    return plain.exit_code, plain.output, json.loads(as_json.output)


def test_the_nodes_version_is_reported_without_a_note(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      real_opensearch: Cluster, prefix: str) -> None:
    with build_services(mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", real_opensearch,
                                          prefix)) as services:
        assert isinstance(services.backend, OpenSearchBackend)
        services.backend.upkeep.prepare()
        status = services.backend.status()
    number = real_opensearch.client().info()["version"]["number"]
    assert (status["state"], status["cluster_version"], status["notes"]) == ("ready", number, [])
    code, printed, answer = _check(monkeypatch, tmp_path, real_opensearch, prefix)
    assert code == 0 and printed.strip() == f"the cluster (OpenSearch {number}) can serve this release"
    assert answer == {"ok": True, "problems": [], "version": number, "notes": []}


def test_a_newer_version_is_used_with_a_note(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, real_opensearch: Cluster,
                                             prefix: str, caplog: pytest.LogCaptureFixture) -> None:
    proxy = VersionProxy(real_opensearch, "3.6.0")
    note = (f"OpenSearch 3.6.0 is newer than the versions this release is tested on ({TESTED_ON}): it is used all "
            "the same; `memory check` compares the mirror with the canonical store")
    try:
        with build_services(mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", proxy.cluster,
                                              prefix)) as services:
            with caplog.at_level(logging.WARNING):
                alpha = services.profiles.create("alpha")
                services.facts.write(alpha, title="Deploys", text="Argo CD syncs the cluster.", kind="project", tags=[])
                assert isinstance(services.backend, OpenSearchBackend)
                services.backend.sync_now()
                services.backend.client.indices.refresh(index=f"{prefix}-facts")
                found = services.search.search(alpha, "argo deploys")
                services.search.search(alpha, "argo cluster")
            assert (found.mode, found.matched_count) == ("lexical", 1)  # served by the cluster, not refused
            status = services.backend.status()
            assert (status["state"], status["cluster_version"], status["notes"]) == ("ready", "3.6.0", [note])
            assert [r.getMessage() for r in caplog.records if "newer than" in r.getMessage()] == [note]  # once
        code, printed, answer = _check(monkeypatch, tmp_path, proxy.cluster, prefix)
        assert code == 0
        assert printed.splitlines() == ["the cluster (OpenSearch 3.6.0) can serve this release", f"note: {note}"]
        assert answer == {"ok": True, "problems": [], "version": "3.6.0", "notes": [note]}
    finally:
        proxy.close()


def test_the_test_node_runs_the_version_asked_for(real_opensearch: Cluster) -> None:
    """OPENSEARCH_TEST_VERSION picks the local node's version (default 2.19.1); a cluster of OPENSEARCH_URL is
    whatever it is."""
    if os.environ.get("OPENSEARCH_URL"):
        pytest.skip("the cluster of OPENSEARCH_URL is not the local node")
    admin = real_opensearch.client(admin=real_opensearch.admin is not None)
    assert admin.info()["version"]["number"] == opensearch_node.VERSION
    plugins = {p["component"] for p in admin.cat.plugins(format="json")}
    assert plugins == {"opensearch-knn", "opensearch-neural-search"} | (
        {"opensearch-security"} if opensearch_node.SECURITY_PLUGIN_AVAILABLE else set())
