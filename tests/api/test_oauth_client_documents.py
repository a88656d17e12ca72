"""MEMORY_OAUTH=on with client ID metadata documents (a client_id that is an https URL): the metadata says so,
the MCP SDK's client signs in with a document served over TLS on loopback (the service trusts the test CA
through SSL_CERT_FILE; MEMORY_OAUTH_CLIENT_METADATA_ALLOW_PRIVATE=true lets it fetch from loopback), and
what is refused: the document's rules, the fetch's limits, the addresses, the redirects."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.config import Settings
from service.container import Services, build_store
from service.domain.oauth import clients, documents, policy
from service.domain.oauth.clients import ClientRegistry
from service.store.oauth import SqlOAuthRows
from tests.conftest import ProfileAccess, make_profile
from tests.support.client_documents import Answer, Certificates, DocumentServer, document_server, make_certificates
from tests.support.mcp_client import call
from tests.support.oauth import (
    CALLBACK, Browser, MemoryStorage, approved, authorize_url, callback_params, oauth_mcp, oauth_server, pkce,
    sdk_auth,
)

Live = tuple[str, Services, ProfileAccess, DocumentServer]


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def docs(certificates: Certificates, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocumentServer]:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.ca))  # read when the service is built
    with document_server(certificates) as server:
        yield server


@contextmanager
def _live(tmp_path: Path, database_url: str, docs: DocumentServer, allow_private: bool = True) -> Iterator[Live]:
    with oauth_server(tmp_path, database_url, oauth_client_metadata_allow_private=allow_private) as (base, services):
        yield base, services, make_profile(services, "alpha"), docs


@pytest.fixture
def live(tmp_path: Path, database_url: str, docs: DocumentServer) -> Iterator[Live]:
    """SQLite and PostgreSQL (the sign-in)."""
    with _live(tmp_path, database_url, docs) as found:
        yield found


@pytest.fixture
def on_sqlite(tmp_path: Path, docs: DocumentServer) -> Iterator[Live]:
    """SQLite only (the refusals)."""
    with _live(tmp_path, f"sqlite:///{tmp_path / 'memory.db'}", docs) as found:
        yield found


def _authorize(base: str, client_id: str, redirect: str = CALLBACK) -> httpx.Response:
    _, challenge = pkce()
    return httpx.get(authorize_url(base, client_id, challenge, f"{base}/mcp/alpha", redirect=redirect), timeout=30)


def _refused(answer: httpx.Response, *words: str) -> str:
    """A refusal shown to the person, never sent to a redirect URI: its description."""
    assert answer.status_code == 400 and "location" not in answer.headers, answer.text
    assert answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert body["error"] == "invalid_client", body
    for word in words:
        assert word in body["error_description"], body
    return str(body["error_description"])


# --- discovery and a whole sign-in --------------------------------------------------------------------


def test_the_metadata_says_client_id_metadata_documents_are_supported(on_sqlite: Live) -> None:
    base = on_sqlite[0]
    document = httpx.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert document["client_id_metadata_document_supported"] is True
    assert document["registration_endpoint"] == f"{base}/register"  # dynamic registration stays


@pytest.mark.anyio
async def test_the_sdk_client_signs_in_with_its_metadata_document(live: Live) -> None:
    base, services, alpha, docs = live
    client_id = docs.document("/oauth/client.json", client_name="Document client",
                              headers={"Cache-Control": "max-age=600"})
    browser, storage = Browser(alpha.token), MemoryStorage()
    auth = sdk_auth(f"{base}/mcp/alpha", browser, storage, client_metadata_url=client_id)
    async with oauth_mcp(f"{base}/mcp/alpha", auth) as client:
        written = await call(client, "memory_write", title="Shell", text="The user's shell is fish.", kind="preference")
        found = await call(client, "memory_search", query="fish shell")
        assert [f["uid"] for f in found["facts"]] == [written["fact"]["uid"]]
        assert storage.client is not None and storage.client.client_id == client_id  # never registered
        auth.context.token_expiry_time = time.time() - 1  # the hour is over: the SDK refreshes as that client
        assert (await call(client, "memory_search", query="fish"))["returned_count"] == 1
    page = browser.pages[0].text  # the app shown by its client_id's host, the name it gives only beside it
    host = f"localhost:{docs.port}"
    assert f'data-testid="client-host">{host}</strong>' in page and f"The app at <strong" in page
    assert "Document client" in page and client_id in page
    (grant,) = services.grants.listing("alpha")
    assert grant.client_id == client_id and grant.client_name == "Document client" and grant.active
    assert grant.redirect_hosts == ["127.0.0.1:9"]
    again = Browser(alpha.token)  # a second sign-in: the document is kept (max-age), not fetched again
    verifier, challenge = pkce()
    back = callback_params(again.sign_in(authorize_url(base, client_id, challenge, f"{base}/mcp/alpha")))
    assert docs.hits["/oauth/client.json"] == 1
    tokens = httpx.post(f"{base}/token", data={
        "grant_type": "authorization_code", "code": back["code"], "redirect_uri": CALLBACK, "client_id": client_id,
        "code_verifier": verifier, "resource": f"{base}/mcp/alpha"})
    assert tokens.status_code == 200, tokens.text
    revoked = httpx.post(f"{base}/revoke", data={"token": tokens.json()["refresh_token"], "client_id": client_id})
    assert revoked.status_code == 200
    assert [g.active for g in services.grants.listing("alpha")] == [False, True]
    registered = approved(base, alpha.token, f"{base}/mcp/alpha")  # dynamic registration works beside it
    assert registered.exchange(base).status_code == 200


# --- what a document must say -------------------------------------------------------------------------


@pytest.mark.parametrize(("fields", "words"), [
    ({"client_id": "https://localhost/elsewhere.json"}, ("is not the URL it was fetched from",)),
    ({"token_endpoint_auth_method": "client_secret_post"}, ("needs a shared secret",)),
    ({"token_endpoint_auth_method": "client_secret_basic"}, ("needs a shared secret",)),
    ({"client_secret": "s3cret"}, ("holds a client_secret",)),
    ({"token_endpoint_auth_method": "private_key_jwt"}, ("only public clients",)),
    ({"redirect_uris": "http://127.0.0.1:9/callback"}, ("redirect_uris must be",)),
    ({"redirect_uris": ["http://evil.example/cb"]}, ("not loopback",)),
    ({"grant_types": ["client_credentials"]}, ("authorization_code",)),
])
def test_a_document_that_breaks_the_rules_is_refused_and_not_kept(on_sqlite: Live, fields: dict,
                                                                  words: tuple[str, ...]) -> None:
    base, services, _, docs = on_sqlite
    client_id = docs.document("/client.json", **fields)
    _refused(_authorize(base, client_id), *words)
    _refused(_authorize(base, client_id), *words)
    assert docs.hits["/client.json"] == 2  # an invalid document is never cached
    assert services.grants.listing("alpha") == []


def test_the_redirect_uri_must_be_one_the_document_lists(on_sqlite: Live) -> None:
    base, _, alpha, docs = on_sqlite
    client_id = docs.document("/client.json", redirect_uris=[CALLBACK, "https://app.example/cb"])
    for other in (CALLBACK + "/", "http://127.0.0.1:10/callback", "https://evil.example/cb"):
        answer = _authorize(base, client_id, redirect=other)
        assert answer.status_code == 400 and "location" not in answer.headers, other
        assert "not registered" in answer.json()["error_description"]
    listed = _authorize(base, client_id, redirect="https://app.example/cb")
    assert listed.status_code == 302 and "/authorize/consent" in listed.headers["location"]


def test_a_client_id_url_must_be_https_with_a_path(on_sqlite: Live) -> None:
    base, _, _, docs = on_sqlite
    docs.document("/client.json")
    for url, words in ((f"http://localhost:{docs.port}/client.json", "must be https://"),
                       (f"https://localhost:{docs.port}/", "has no path"),
                       (f"https://localhost:{docs.port}/client.json#x", "fragment"),
                       (f"https://user:pw@localhost:{docs.port}/client.json", "user info"),
                       (f"https://localhost:{docs.port}/a/../client.json", ". or .. segments")):
        _refused(_authorize(base, url), words)
    assert docs.hits == {}


# --- the fetch: addresses, redirects, size, time ------------------------------------------------------


def test_loopback_and_private_addresses_are_not_fetched_by_default(tmp_path: Path, docs: DocumentServer) -> None:
    with _live(tmp_path, f"sqlite:///{tmp_path / 'memory.db'}", docs, allow_private=False) as (base, _, _, _):
        for host in ("localhost", "127.0.0.1"):
            client_id = docs.document("/client.json", host=host)
            _refused(_authorize(base, client_id), "resolves to 127.0.0.1", "special-use address")
    assert docs.hits == {}  # refused before any connection


@pytest.mark.parametrize("target", ["https://127.0.0.2:{port}/client.json", "https://localhost:{port}/other.json"])
def test_redirects_are_not_followed(on_sqlite: Live, target: str) -> None:
    base, _, _, docs = on_sqlite
    docs.document("/other.json")
    docs.answers["/moved.json"] = Answer(status=302, headers={"Location": target.format(port=docs.port)})
    _refused(_authorize(base, docs.url("/moved.json")), "redirect", "not followed")
    assert docs.hits["/other.json"] == 0


@pytest.mark.parametrize("sized", [True, False])
def test_a_document_over_5_kb_is_refused(on_sqlite: Live, sized: bool) -> None:
    base, _, _, docs = on_sqlite
    url = docs.url("/big.json")
    body = json.dumps({"client_id": url, "redirect_uris": [CALLBACK], "client_name": "x" * 6000}).encode()
    docs.answers["/big.json"] = Answer(body=body, sized=sized)
    _refused(_authorize(base, url), f"over {documents.MAX_BYTES} bytes")


@pytest.mark.parametrize(("answer", "words"), [
    (Answer(status=404, body=b"{}"), "HTTP 404"),
    (Answer(body=b"<html></html>", headers={"Content-Type": "text/html"}), "not JSON"),
    (Answer(body=b"{not json"), "not JSON"),
])
def test_an_answer_that_is_no_document_is_refused(on_sqlite: Live, answer: Answer, words: str) -> None:
    base, _, _, docs = on_sqlite
    docs.answers["/client.json"] = answer
    _refused(_authorize(base, docs.url("/client.json")), words)


def test_a_slow_server_is_given_up_on(on_sqlite: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    base, _, _, docs = on_sqlite
    monkeypatch.setattr(documents, "FETCH_TIMEOUT", 1.0)
    url = docs.document("/client.json")
    docs.answers["/client.json"].delay = 4
    started = time.monotonic()
    _refused(_authorize(base, url), "no whole answer within 1 s")
    assert time.monotonic() - started < 3


def test_a_host_that_does_not_resolve_is_refused(on_sqlite: Live) -> None:
    _refused(_authorize(on_sqlite[0], "https://no-such-host.invalid/client.json"), "does not resolve")


def test_new_document_clients_count_toward_the_cap_on_unused_clients(on_sqlite: Live,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    base, _, _, docs = on_sqlite
    monkeypatch.setattr(policy, "MAX_UNUSED_CLIENTS", 0)
    answer = _authorize(base, docs.document("/client.json"))
    assert answer.status_code == 429 and answer.json()["error"] == "temporarily_unavailable"


# --- the rules, pure ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "allowed", "with_setting"), [
    ("93.184.215.14", True, True), ("2606:4700::1111", True, True),
    ("127.0.0.1", False, True), ("::1", False, True), ("10.1.2.3", False, True), ("192.168.0.1", False, True),
    ("172.16.0.1", False, True), ("169.254.169.254", False, True), ("fe80::1", False, True),
    ("fd00::1", False, True), ("100.64.0.1", False, True), ("::ffff:10.0.0.1", False, True),
    ("2002:7f00:1::1", False, True), ("64:ff9b::a00:1", False, True),
    ("224.0.0.1", False, False), ("ff02::1", False, False), ("0.0.0.0", False, False),
])
def test_which_addresses_are_fetched(address: str, allowed: bool, with_setting: bool) -> None:
    assert (documents.address_problem(address, allow_private=False) is None) is allowed
    assert (documents.address_problem(address, allow_private=True) is None) is with_setting


@pytest.mark.parametrize(("url", "words"), [
    ("https://app.example/oauth/client.json", None), ("https://app.example:8443/c?v=1", None),
    ("HTTPS://app.example/c", "must be https://"), ("https://app.example:x/c", "port"),
    ("https://äpp.example/c", "non-ASCII"), ("https://app.example/a c", "spaces"),
    ("https://app.example/" + "x" * policy.MAX_URI, "over 2000 characters"), ("https:///c", "no host"),
])
def test_which_client_id_urls_are_fetched(url: str, words: str | None) -> None:
    problem = documents.url_problem(url)
    assert problem is None if words is None else words in str(problem)


@pytest.mark.parametrize(("cache_control", "expires", "seconds"), [
    (None, None, documents.CACHE_DEFAULT), ("max-age=600", None, 600), ("public, max-age=0", None, 30),
    ("no-store", None, 30), ("no-cache, max-age=600", None, 30), ("max-age=999999999", None, 86400),
    (None, "Wed, 01 Jan 2031 00:10:00 GMT", 600), (None, "0", 30),
])
def test_how_long_a_document_is_kept(cache_control: str | None, expires: str | None, seconds: int) -> None:
    assert documents.cache_seconds(cache_control, expires, "Wed, 01 Jan 2031 00:00:00 GMT") == seconds


# --- two replicas -------------------------------------------------------------------------------------


def test_two_replicas_adopting_one_new_document_client_at_once_keep_one_row(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two service processes over one database, each its own store (engine, connections): replica B stores the
    client between replica A's read ("no such client") and its insert. A must not fail (it answered a sign-in
    with a 500 on the unique constraint): it rolls back and updates B's row. On SQLite a writing transaction
    takes the write lock at BEGIN, so B waits for A instead; the outcome is the same one row."""
    url = "https://client.example/oauth/client.json"
    registration = {"client_id": url, "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none",
                    "client_name": "Replica test"}
    replica_a, replica_b = ClientRegistry(build_store(settings)), ClientRegistry(build_store(settings))
    key = clients.stored_id(url)
    reads: list[bool] = []
    original = SqlOAuthRows.client

    def client(rows: SqlOAuthRows, client_id: str) -> Any:
        found = original(rows, client_id)
        if client_id == key and threading.current_thread() is threading.main_thread():
            reads.append(found is None)
            if len(reads) == 2 and settings.database_url.startswith("postgresql"):  # A's read inside its write
                other = threading.Thread(target=replica_b.adopt, args=({**registration, "client_name": "B"},))
                other.start()
                other.join(timeout=30)
                assert not other.is_alive()
        return found

    monkeypatch.setattr(SqlOAuthRows, "client", client)
    replica_a.adopt(registration)
    monkeypatch.undo()

    assert reads[:2] == [True, True], reads
    assert replica_a.get(url) == replica_b.get(url) == {**registration, "client_id": url}  # A's document, kept
    with replica_a.store.read() as uow:
        assert uow.oauth.unused_clients_since(datetime(2000, 1, 1, tzinfo=timezone.utc)) == 1
