"""The service's client, built from Settings, against the secured local node (security plugin, demo TLS and
basic auth; the `secured_opensearch` session fixture): what works (password + CA, mTLS, a password file, the
whole mirror) and what each failure says, in the reachability check of /readyz and in the error a caller gets.

The demo node certificate names node-0.example.com, localhost, 127.0.0.1 and ::1; the node listens on
127.0.0.1 only, so the host-name test reaches it through a loopback forwarder on 127.0.0.2, an address the
certificate does not hold.
"""

from __future__ import annotations

import secrets
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import certifi
import pytest

from service.config import Settings
from service.container import build_services
from service.errors import BackendUnavailable
from service.search.opensearch.backend import OpenSearchBackend
from service.search.opensearch.client import make_client, reachability, translated
from service.search.opensearch.connection import CredentialsRefused, PermissionMissing, TLSFailed, Unreachable
from tests.support.clusters import secured_opensearch  # noqa: F401 - the session fixture
from tests.support.opensearch_node import Node

pytestmark = [pytest.mark.opensearch, pytest.mark.secured]


def password() -> str:
    return f"{secrets.token_urlsafe(16)}-Aa1"  # random, so "strong" to the plugin's password rules


def node_settings(node: Node, tmp_path: Path, **values: object) -> Settings:
    """opensearch mode on the secured node as admin, TLS verified against the demo CA; `values` override
    (None removes a setting)."""
    user, secret = node.admin  # type: ignore[misc]
    base: dict[str, object] = {
        "data_dir": tmp_path, "database_url": f"sqlite:///{tmp_path / 'memory.db'}", "embedder": "none",
        "search": "opensearch", "opensearch_url": node.url, "opensearch_ca_certs": str(node.ca_file),
        "opensearch_username": user, "opensearch_password": secret,
        "opensearch_sync_interval": 60.0, "opensearch_timeout": 5.0,
    }
    base.update(values)
    return Settings(**{k: v for k, v in base.items() if v is not None})  # type: ignore[arg-type]


def probe(settings: Settings) -> tuple[bool, str | None]:
    client = make_client(settings)
    try:
        return reachability(client)
    finally:
        client.close()


def failure(settings: Settings, action: str = "info") -> BackendUnavailable:
    """The domain error a call through translated() raises with these settings."""
    client = make_client(settings)
    try:
        with pytest.raises(BackendUnavailable) as caught, translated(action):
            client.info()
        return caught.value
    finally:
        client.close()


@contextmanager
def limited_user(node: Node, cluster_permissions: list[str]) -> Iterator[tuple[str, str]]:
    name, secret, role = f"svc-{secrets.token_hex(4)}", password(), f"svc-{secrets.token_hex(4)}"
    node.create_role(role, cluster_permissions=cluster_permissions)
    node.create_user(name, secret, roles=[role])
    try:
        yield name, secret
    finally:
        node.delete_user(name)
        node.delete_role(role)


@contextmanager
def forwarder(bind: str, target: tuple[str, int]) -> Iterator[int]:
    """A TCP forwarder on `bind` (a free port) to `target`; yields the port."""
    try:
        server = socket.create_server((bind, 0))
    except OSError as exc:
        pytest.skip(f"cannot listen on {bind}: {exc}")
    stop = threading.Event()

    def pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def accept() -> None:
        while not stop.is_set():
            try:
                inbound, _ = server.accept()
            except OSError:
                return
            outbound = socket.create_connection(target)
            for a, b in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(target=pipe, args=(a, b), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        server.close()


# --- what works -------------------------------------------------------------------------------------------

def test_username_password_and_the_ca_run_the_whole_mirror(secured_opensearch: Node, tmp_path: Path) -> None:
    settings = node_settings(secured_opensearch, tmp_path)
    assert probe(settings) == (True, None)
    with build_services(settings) as services:
        backend = services.backend
        assert isinstance(backend, OpenSearchBackend)
        alpha = services.profiles.create("alpha")
        services.facts.write(alpha, title="Deploys", text="Deploys run on Fridays after the review.",
                             kind="project", tags=["ops"])
        backend.sync_now()
        backend.client.indices.refresh(index="memory-*")
        found = services.search.search(alpha, "deploys friday")
        assert found.matched_count == 1 and found.mode != "degraded"
        status = backend.status()
        assert status["state"] == "ready" and status["reachable"] is True and status["problems"] == []


def test_mtls_with_the_admin_client_certificate(secured_opensearch: Node, tmp_path: Path) -> None:
    cert, key = secured_opensearch.admin_cert  # type: ignore[misc]
    settings = node_settings(secured_opensearch, tmp_path, opensearch_username=None, opensearch_password=None,
                             opensearch_client_cert=str(cert), opensearch_client_key=str(key))
    assert probe(settings) == (True, None)
    client = make_client(settings)
    try:
        info = client.transport.perform_request("GET", "/_plugins/_security/authinfo")
        assert info["user_name"] == "CN=kirk,OU=client,O=client,L=test,C=de"  # the certificate, no password
    finally:
        client.close()


def test_the_password_from_a_file(secured_opensearch: Node, tmp_path: Path) -> None:
    user, secret = secured_opensearch.admin  # type: ignore[misc]
    path = tmp_path / "opensearch-password"
    path.write_text(secret + "\n")  # as `echo` writes it
    path.chmod(0o600)
    settings = node_settings(secured_opensearch, tmp_path, opensearch_password=None, opensearch_password_file=str(path))
    assert probe(settings) == (True, None)


def test_a_urls_userinfo_still_works(secured_opensearch: Node, tmp_path: Path) -> None:
    user, secret = secured_opensearch.admin  # type: ignore[misc]
    url = secured_opensearch.url.replace("https://", f"https://{user}:{secret}@")
    settings = node_settings(secured_opensearch, tmp_path, opensearch_url=url, opensearch_username=None,
                             opensearch_password=None)
    assert settings.opensearch_url == secured_opensearch.url
    assert probe(settings) == (True, None)


# --- what each failure says -------------------------------------------------------------------------------

def test_a_wrong_password_is_refused_credentials_not_unreachable(secured_opensearch: Node, tmp_path: Path) -> None:
    settings = node_settings(secured_opensearch, tmp_path, opensearch_password=password())
    expected = ("OpenSearch refused the credentials of user 'admin' (401 on {}): check MEMORY_OPENSEARCH_USERNAME "
                "and MEMORY_OPENSEARCH_PASSWORD (or MEMORY_OPENSEARCH_PASSWORD_FILE)")
    assert probe(settings) == (False, expected.format("the reachability check"))
    error = failure(settings)
    assert isinstance(error, CredentialsRefused) and error.message == expected.format("info")

    with build_services(settings) as services:
        backend = services.backend
        assert isinstance(backend, OpenSearchBackend)
        with pytest.raises(CredentialsRefused):
            backend.sync_now()  # what the worker runs: its log line and the health's last_error say the same
        status = backend.status()
        assert status["state"] == "degraded" and status["reachable"] is False
        assert status["problems"][0].startswith(expected.format("the reachability check"))  # then what it means
        assert status["last_error"].startswith("OpenSearch refused the credentials of user 'admin' (401 on ")
        assert not any("unreachable" in problem for problem in status["problems"])
        assert services.readiness()["checks"]["search"]["problems"] == status["problems"]


def test_no_credentials_at_all(secured_opensearch: Node, tmp_path: Path) -> None:
    settings = node_settings(secured_opensearch, tmp_path, opensearch_username=None, opensearch_password=None)
    reachable, problem = probe(settings)
    assert not reachable and problem is not None
    assert problem.startswith("OpenSearch wants credentials (401 on the reachability check) and none are set")


def test_a_missing_permission_is_named_as_opensearch_names_it(secured_opensearch: Node, tmp_path: Path) -> None:
    with limited_user(secured_opensearch, ["cluster:monitor/main"]) as (user, secret):
        settings = node_settings(secured_opensearch, tmp_path, opensearch_username=user, opensearch_password=secret)
        assert probe(settings) == (True, None)  # GET / is allowed: the cluster is reachable, the user is not enough
        client = make_client(settings)
        try:
            with pytest.raises(PermissionMissing) as caught, translated("bulk"):
                client.bulk(body=[{"index": {"_index": "memory-facts-alpha", "_id": "1"}}, {"title": "x"}])
        finally:
            client.close()
        assert caught.value.permission == "indices:data/write/bulk"
        assert caught.value.message == (f"OpenSearch denied bulk: user {user!r} lacks the permission "
                                        "[indices:data/write/bulk] (403); grant it to a role mapped to that user")

        with build_services(settings) as services:
            backend = services.backend
            assert isinstance(backend, OpenSearchBackend)
            services.profiles.create("alpha")
            with pytest.raises(PermissionMissing) as cycle:
                backend.sync_now()  # the first thing the mirror needs that this user may not do
            assert cycle.value.permission and cycle.value.permission.split(":")[0] in ("indices", "cluster")
            status = backend.status()
            assert status["state"] == "degraded" and status["reachable"] is False
            denied = [line for line in status["problems"] if line.startswith("OpenSearch denied ")]
            assert denied and f"lacks the permission [{cycle.value.permission}]" in denied[0]
            # and every other permission of the role it lacks, named up front by the probes (permissions.py)
            assert any("lacks the cluster permission [indices:data/read/msearch]" in line
                       for line in status["problems"]), status["problems"]


def test_no_ca_setting_names_it(secured_opensearch: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    settings = node_settings(secured_opensearch, tmp_path, opensearch_ca_certs=None)
    error = failure(settings)
    assert isinstance(error, TLSFailed)
    assert error.message == (
        f"TLS to 127.0.0.1:{secured_opensearch.port} failed: the cluster's certificate is not signed by a CA this "
        "machine trusts (unable to get local issuer certificate); set MEMORY_OPENSEARCH_CA_CERTS to the cluster's "
        "CA certificate (PEM)")
    reachable, problem = probe(settings)
    assert not reachable and problem is not None and "set MEMORY_OPENSEARCH_CA_CERTS" in problem


def test_a_wrong_ca_file_names_it(secured_opensearch: Node, tmp_path: Path) -> None:
    settings = node_settings(secured_opensearch, tmp_path, opensearch_ca_certs=certifi.where())  # public CAs only
    error = failure(settings)
    assert isinstance(error, TLSFailed)
    assert (f"the cluster's certificate is not signed by the CA in MEMORY_OPENSEARCH_CA_CERTS="
            f"{certifi.where()!r}") in error.message


def test_hostname_verification_and_its_switch(secured_opensearch: Node, tmp_path: Path) -> None:
    context = ssl.create_default_context(cafile=str(secured_opensearch.ca_file))
    with socket.create_connection(("127.0.0.1", secured_opensearch.port)) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        names = {value for _, value in tls.getpeercert()["subjectAltName"]}  # type: ignore[index]
    assert "127.0.0.1" in names and "127.0.0.2" not in names  # the demo certificate's names

    with forwarder("127.0.0.2", ("127.0.0.1", secured_opensearch.port)) as port:
        url = f"https://127.0.0.2:{port}"
        error = failure(node_settings(secured_opensearch, tmp_path, opensearch_url=url))
        assert isinstance(error, TLSFailed)
        assert error.message.startswith(f"TLS to 127.0.0.2:{port} failed: the cluster's certificate is not valid for "
                                        "'127.0.0.2'")
        assert "set MEMORY_OPENSEARCH_VERIFY_HOSTNAME=false" in error.message
        assert probe(node_settings(secured_opensearch, tmp_path, opensearch_url=url,
                                   opensearch_verify_hostname=False)) == (True, None)
        # the switch skips the name only: the chain is still verified against the CA
        error = failure(node_settings(secured_opensearch, tmp_path, opensearch_url=url,
                                      opensearch_verify_hostname=False, opensearch_ca_certs=certifi.where()))
        assert isinstance(error, TLSFailed) and "not signed by the CA" in error.message


def test_plain_http_to_the_tls_port(secured_opensearch: Node, tmp_path: Path) -> None:
    url = secured_opensearch.url.replace("https://", "http://")  # credentials over http: allowed, loopback
    error = failure(node_settings(secured_opensearch, tmp_path, opensearch_url=url, opensearch_ca_certs=None))
    assert isinstance(error, Unreachable)
    assert error.message == (f"OpenSearch at 127.0.0.1:{secured_opensearch.port} closed the connection without an "
                             "answer to a plain-http request: if the cluster speaks TLS, use https:// in "
                             "MEMORY_OPENSEARCH_URL")
