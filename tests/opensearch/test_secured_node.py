"""The secured local node (security plugin, demo configuration) does what a team's own cluster would:
TLS that verifies against its CA and nothing else, no anonymous access, users and roles made at run time,
and a least-privilege user confined to its index pattern. The ground the OpenSearch suite will later run on
as such a user (issue 25); nothing of the service runs here.

The node: the `secured_opensearch` session fixture (tests/support/clusters.py), local route only.
"""

from __future__ import annotations

import secrets
import signal
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opensearchpy import OpenSearch
from opensearchpy.exceptions import (AuthenticationException, AuthorizationException, ConnectionError,
                                     NotFoundError, SSLError)

from tests.support.clusters import secured_opensearch  # noqa: F401 - the session fixture
from tests.support.opensearch_node import HOST, VERSION, Node

pytestmark = [pytest.mark.opensearch, pytest.mark.secured]


def password() -> str:
    return f"{secrets.token_urlsafe(16)}-Aa1"  # random, so "strong" to the plugin's zxcvbn check


@dataclass
class Team:
    user: str
    password: str
    role: str
    pattern: str


@pytest.fixture
def team(secured_opensearch: Node) -> Iterator[Team]:
    """A least-privilege user made by the test as admin: read and write its own index pattern, nothing else."""
    suffix = secrets.token_hex(4)
    team = Team(user=f"team-{suffix}", password=password(), role=f"team-{suffix}-rw", pattern=f"team-{suffix}-*")
    # A single-document index runs as a one-item bulk: the cluster-level bulk permission is needed too.
    secured_opensearch.create_role(
        team.role, cluster_permissions=["cluster:monitor/main", "indices:data/write/bulk"],
        index_permissions=[{"index_patterns": [team.pattern],
                            "allowed_actions": ["crud", "create_index", "indices:admin/refresh*"]}])
    secured_opensearch.create_user(team.user, team.password, roles=[team.role])
    try:
        yield team
    finally:
        secured_opensearch.delete_user(team.user)
        secured_opensearch.delete_role(team.role)


def client(node: Node, **options: object) -> OpenSearch:
    return OpenSearch(**{**node.client_options(), **options})


def test_an_anonymous_request_gets_401(secured_opensearch: Node) -> None:
    anonymous = OpenSearch(hosts=[secured_opensearch.url], use_ssl=True, verify_certs=True,
                           ca_certs=str(secured_opensearch.ca_file))
    with pytest.raises(AuthenticationException) as caught:
        anonymous.info()
    assert caught.value.status_code == 401
    status, _ = secured_opensearch.request("GET", "/", auth=("admin", "wrong-Password-1"))
    assert status == 401
    for user in ("kibanaserver", "readall", "logstash"):  # demo users with published passwords: taken out
        assert secured_opensearch.request("GET", "/", auth=(user, user))[0] == 401


def test_admin_over_https_verifies_against_the_demo_ca(secured_opensearch: Node) -> None:
    assert secured_opensearch.url.startswith(f"https://{HOST}:")
    admin = client(secured_opensearch)
    assert admin.info()["version"]["number"] == VERSION
    assert admin.cluster.health()["status"] == "green"
    # Verification is real: without the demo CA (the client's default CAs only) the handshake fails.
    with pytest.raises(SSLError):
        OpenSearch(hosts=[secured_opensearch.url], http_auth=secured_opensearch.admin, use_ssl=True,
                   verify_certs=True, max_retries=0).info()


def test_the_admin_certificate_authenticates_over_mtls(secured_opensearch: Node) -> None:
    options = secured_opensearch.client_options(client_cert=True)
    assert "http_auth" not in options
    kirk = OpenSearch(**options)
    info = kirk.transport.perform_request("GET", "/_plugins/_security/authinfo")
    assert info["user_name"] == "CN=kirk,OU=client,O=client,L=test,C=de"


def test_a_least_privilege_user_stays_in_its_index_pattern(secured_opensearch: Node, team: Team) -> None:
    user = client(secured_opensearch, http_auth=(team.user, team.password))
    own = team.pattern.replace("*", "facts")
    user.indices.create(index=own, body={"settings": {"number_of_replicas": 0}})
    user.index(index=own, id="1", body={"title": "deploys run on kubernetes"}, refresh=True)
    hits = user.search(index=own, body={"query": {"match": {"title": "kubernetes"}}})["hits"]
    assert hits["total"]["value"] == 1

    admin = client(secured_opensearch)
    other = f"other-{secrets.token_hex(4)}"
    admin.indices.create(index=other, body={"settings": {"number_of_replicas": 0}})
    try:
        for attempt in (lambda: user.search(index=other, body={"query": {"match_all": {}}}),
                        lambda: user.index(index=other, body={"title": "x"}),
                        lambda: user.indices.create(index=f"{other}-2"),
                        lambda: user.indices.delete(index=other),
                        lambda: user.search(index=".opendistro_security")):
            with pytest.raises(AuthorizationException) as caught:
                attempt()
            assert caught.value.status_code == 403
    finally:
        admin.indices.delete(index=other)
        admin.indices.delete(index=own)

    secured_opensearch.delete_user(team.user)
    with pytest.raises(AuthenticationException):
        user.info()


def test_a_user_holds_only_what_its_roles_grant(secured_opensearch: Node) -> None:
    """No implicit grants (the demo's own_index mapping for every user is taken out): a user whose only
    role is empty may not even bulk or msearch, nor touch an index named like itself."""
    name, secret, role = f"bare-{secrets.token_hex(4)}", password(), f"empty-{secrets.token_hex(4)}"
    secured_opensearch.create_role(role)
    secured_opensearch.create_user(name, secret, roles=[role])
    try:
        bare = client(secured_opensearch, http_auth=(name, secret))
        for attempt in (bare.info,
                        lambda: bare.bulk(body=[{"index": {"_index": name, "_id": "1"}}, {"a": 1}]),
                        lambda: bare.msearch(body=[{"index": name}, {"query": {"match_all": {}}}]),
                        lambda: bare.indices.create(index=name)):
            with pytest.raises(AuthorizationException):
                attempt()
        users = secured_opensearch.request("GET", "/_plugins/_security/api/internalusers")[1]
        assert set(users) == {"admin", name}
    finally:
        secured_opensearch.delete_user(name)
        secured_opensearch.delete_role(role)
    assert secured_opensearch.request("GET", f"/_plugins/_security/api/internalusers/{name}")[0] == 404
    assert secured_opensearch.request("GET", f"/_plugins/_security/api/roles/{role}")[0] == 404


def test_failed_logins_leave_the_cluster_green(secured_opensearch: Node) -> None:
    """The demo's audit log is off (its index wants a replica: a single node would stay yellow, a restart
    never green); and a write still creates no index, as on the open node."""
    assert secured_opensearch.request("GET", "/", auth=("nobody", "wrong-Password-1"))[0] == 401
    admin = client(secured_opensearch)
    with pytest.raises(NotFoundError):
        admin.index(index=f"memory-{secrets.token_hex(4)}", body={"a": 1})
    assert admin.cluster.health()["status"] == "green"
    assert admin.indices.get(index="security-auditlog-*") == {}  # a pattern: exists() would say True


def test_plain_http_to_the_port_fails(secured_opensearch: Node) -> None:
    plain = secured_opensearch.url.replace("https://", "http://")
    with pytest.raises(ConnectionError):
        OpenSearch(hosts=[plain], http_auth=secured_opensearch.admin, max_retries=0).info()
    with pytest.raises(OSError):  # urllib: no HTTP answer at all
        urllib.request.urlopen(plain + "/", timeout=10).read()


def test_a_stopped_secured_node_starts_again_on_its_data(secured_opensearch: Node, team: Team) -> None:
    """As the outage tests do with the open node: SIGKILL, start on the same data and port; the security
    index (users, roles, mappings) is back, and so is green (last in this file: it restarts the session's node)."""
    secured_opensearch.stop(sig=signal.SIGKILL)
    secured_opensearch.start()
    user = client(secured_opensearch, http_auth=(team.user, team.password))
    assert user.info()["version"]["number"] == VERSION
    assert client(secured_opensearch).cluster.health()["status"] == "green"
