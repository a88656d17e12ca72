"""What a failed OpenSearch call says (service.search.opensearch.connection.classify, reached through
client.translated), without a cluster: real sockets on loopback for refused, timed-out and non-TLS endpoints,
and the error bodies the security plugin (or a cluster block, or AWS) sends, for 401 and 403. Every message is
one line and names what to fix; each is a BackendUnavailable, so the callers' fallbacks keep working.

The same failures against a real secured node: test_secured_connection.py.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import certifi
import pytest
from opensearchpy.exceptions import AuthenticationException, AuthorizationException, NotFoundError, TransportError

from service.config import Settings
from service.errors import BackendUnavailable
from service.search.opensearch.client import IndexMissing, make_client, reachability, translated
from service.search.opensearch.connection import (CredentialsRefused, Endpoint, PermissionMissing, TLSFailed,
                                                  Unreachable, classify)


def settings(tmp_path: Path, url: str, **values: object) -> Settings:
    return Settings(data_dir=tmp_path, embedder="none", search="opensearch", opensearch_url=url,  # type: ignore[arg-type]
                    **values)


def call_fails(settings: Settings) -> BackendUnavailable:
    client = make_client(settings)
    try:
        with pytest.raises(BackendUnavailable) as caught, translated("info"):
            client.info()
        assert "\n" not in caught.value.message
        reachable, problem = reachability(client, timeout=1.0)  # /readyz's check
        assert not reachable and problem and problem.split(" ")[:3] == caught.value.message.split(" ")[:3]
        return caught.value
    finally:
        client.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def plain_http_port() -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_connection_refused_names_host_and_port(tmp_path: Path) -> None:
    port = closed_port()
    error = call_fails(settings(tmp_path, f"http://127.0.0.1:{port}"))
    assert isinstance(error, Unreachable)
    assert error.message == (f"OpenSearch unreachable at 127.0.0.1:{port}: connection refused (is it running, and "
                             "is MEMORY_OPENSEARCH_URL's port the HTTP port?)")


def test_a_silent_port_is_a_timeout_naming_the_setting(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts (the backlog), never answers
        port = silent.getsockname()[1]
        error = call_fails(settings(tmp_path, f"http://127.0.0.1:{port}", opensearch_timeout=0.5))
    assert isinstance(error, Unreachable)
    assert error.message.startswith(f"OpenSearch at 127.0.0.1:{port} did not answer info within 0.5 s "
                                    "(MEMORY_OPENSEARCH_TIMEOUT)")


def test_https_to_a_plain_http_port(tmp_path: Path, plain_http_port: int) -> None:
    error = call_fails(settings(tmp_path, f"https://127.0.0.1:{plain_http_port}", opensearch_ca_certs=certifi.where()))
    assert isinstance(error, TLSFailed)
    assert error.message.startswith(f"TLS to 127.0.0.1:{plain_http_port} failed (")
    assert error.message.endswith("the port does not seem to speak TLS; if the cluster has TLS off, use http:// in "
                                  "MEMORY_OPENSEARCH_URL")


def test_a_port_that_hangs_up_on_the_tls_handshake(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as rude:
        def hang_up() -> None:
            try:
                while True:
                    conn, _ = rude.accept()
                    conn.recv(16)  # part of the ClientHello, then gone (a reset, or an EOF)
                    conn.close()
            except OSError:
                return

        threading.Thread(target=hang_up, daemon=True).start()
        port = rude.getsockname()[1]
        error = call_fails(settings(tmp_path, f"https://127.0.0.1:{port}", opensearch_ca_certs=certifi.where()))
    assert isinstance(error, (Unreachable, TLSFailed)) and f"127.0.0.1:{port}" in error.message
    assert "use http:// in MEMORY_OPENSEARCH_URL" in error.message and "MEMORY_OPENSEARCH_CLIENT_CERT" in error.message


def test_a_name_that_does_not_resolve(tmp_path: Path) -> None:
    error = call_fails(settings(tmp_path, "http://opensearch.invalid:9200"))  # .invalid never resolves (RFC 2606)
    assert isinstance(error, Unreachable)
    assert error.message == ("OpenSearch unreachable: the name 'opensearch.invalid' does not resolve "
                             "(MEMORY_OPENSEARCH_URL)")


# --- answers of a cluster ---------------------------------------------------------------------------------

def security_403(reason: str) -> AuthorizationException:
    error = {"root_cause": [{"type": "security_exception", "reason": reason}], "type": "security_exception",
             "reason": reason}
    return AuthorizationException(403, "security_exception", {"error": error, "status": 403})


def test_403_names_every_permission_as_the_security_plugin_does() -> None:
    reason = ("no permissions for [indices:data/write/bulk[s], indices:data/write/index] and User [name=memory, "
              "backend_roles=[], requestedTenant=null]")
    error = classify(security_403(reason), "bulk")
    assert isinstance(error, PermissionMissing) and isinstance(error, BackendUnavailable)
    assert error.permission == "indices:data/write/bulk[s], indices:data/write/index"
    assert error.message == ("OpenSearch denied bulk: user 'memory' lacks the permission [indices:data/write/bulk[s], "
                             "indices:data/write/index] (403); grant it to a role mapped to that user")


def test_a_403_that_is_not_a_permission_keeps_its_reason() -> None:
    block = {"error": {"type": "cluster_block_exception",
                       "reason": "index [memory-facts-a.v1] blocked by: [FORBIDDEN/8/index write (api)];"},
             "status": 403}
    error = classify(AuthorizationException(403, "cluster_block_exception", block), "bulk")
    assert not isinstance(error, PermissionMissing)  # a write block answers 403, but no permission is missing
    assert error.message.startswith("opensearch bulk: cluster_block_exception: index [memory-facts-a.v1] blocked by: "
                                    "[FORBIDDEN/8/index write (api)];")
    assert "lift the block" in error.message
    head = classify(AuthorizationException(403, "", ""), "get alias")  # HEAD: no body
    assert head.message == "OpenSearch refused get alias (403, no reason given): the user may lack a permission for it"


def test_401_names_the_settings_of_the_credentials_in_use() -> None:
    def refused(auth: str, **extra: object) -> str:
        exc = AuthenticationException(401, "Unauthorized", "Unauthorized")
        exc.endpoint = Endpoint(scheme="https", host="h", port=9200, auth=auth, **extra)  # type: ignore[attr-defined, arg-type]
        error = classify(exc, "bulk")
        assert isinstance(error, CredentialsRefused)
        return error.message

    assert refused("basic", username="memory") == (
        "OpenSearch refused the credentials of user 'memory' (401 on bulk): check MEMORY_OPENSEARCH_USERNAME and "
        "MEMORY_OPENSEARCH_PASSWORD (or MEMORY_OPENSEARCH_PASSWORD_FILE)")
    assert "refused the AWS SigV4 signature" in refused("aws") and "MEMORY_OPENSEARCH_AWS_REGION" in refused("aws")
    assert "MEMORY_OPENSEARCH_CLIENT_CERT" in refused("certificate", client_cert=Path("/c.pem"))
    assert refused("none").startswith("OpenSearch wants credentials (401 on bulk) and none are set")


def test_other_failures_keep_their_shape() -> None:
    with pytest.raises(IndexMissing), translated("get alias"):
        raise NotFoundError(404, "index_not_found_exception", {})
    error = classify(TransportError(500, "internal_server_error", {}), "bulk")
    assert type(error) is BackendUnavailable and error.message.startswith("opensearch bulk: ")
