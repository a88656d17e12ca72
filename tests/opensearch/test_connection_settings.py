"""The OpenSearch connection settings (issue 25), without a cluster: what start-up refuses, in one line naming
the variables and never a secret; where a URL's user:password@ goes; what the client is built with.

The failures of a real connection (401, 403, TLS) run against the secured node in test_secured_connection.py.
"""

from __future__ import annotations

import base64
from pathlib import Path

import certifi
import pytest
from pydantic import SecretStr, ValidationError

from service.config import Settings, describe_error
from service.search.opensearch.client import make_client
from service.search.opensearch.connection import BasicAuth, MirrorConnection, client_options

SECRET = "Zebra-Quartz-7731-s3cr3t"  # distinctive: any occurrence in an output is this password


def settings(tmp_path: Path, **values: object) -> Settings:
    base: dict[str, object] = {"data_dir": tmp_path, "embedder": "none", "search": "opensearch"}
    return Settings(**{**base, **values})  # type: ignore[arg-type]


def refusal(tmp_path: Path, **values: object) -> str:
    with pytest.raises(ValidationError) as caught:
        settings(tmp_path, **values)
    message = describe_error(caught.value)
    assert "\n" not in message and message.startswith("invalid configuration: ")
    for shown in (message, str(caught.value), repr(caught.value)):  # hide_input_in_errors: no value in str()
        assert SECRET not in shown, shown
    return message


# --- plain http and credentials ---------------------------------------------------------------------------

def test_credentials_over_plain_http_to_another_host_are_refused(tmp_path: Path) -> None:
    for values in ({"opensearch_url": "http://search.internal:9200", "opensearch_username": "memory",
                    "opensearch_password": SECRET},
                   {"opensearch_url": f"http://memory:{SECRET}@search.internal:9200"},
                   {"opensearch_url": "http://10.0.0.7:9200", "opensearch_username": "memory",
                    "opensearch_password": SECRET}):
        message = refusal(tmp_path, **values)
        assert "is plain http to a host that is not loopback" in message
        assert "use https://" in message and "MEMORY_OPENSEARCH_ALLOW_PLAINTEXT_CREDENTIALS=true" in message


def test_credentials_over_plain_http_to_loopback_are_allowed(tmp_path: Path) -> None:
    for host in ("localhost", "127.0.0.1", "127.8.9.10", "[::1]", "opensearch.localhost"):
        s = settings(tmp_path, opensearch_url=f"http://{host}:9200", opensearch_username="memory",
                     opensearch_password=SECRET)
        assert s.opensearch_password is not None and s.opensearch_password.get_secret_value() == SECRET


def test_the_plaintext_opt_in_allows_them(tmp_path: Path) -> None:
    s = settings(tmp_path, opensearch_url="http://search.internal:9200", opensearch_username="memory",
                 opensearch_password=SECRET, opensearch_allow_plaintext_credentials=True)
    assert s.opensearch_url == "http://search.internal:9200"


def test_plain_http_without_credentials_needs_no_opt_in(tmp_path: Path) -> None:
    assert settings(tmp_path, opensearch_url="http://search.internal:9200").opensearch_username is None


# --- userinfo, files, conflicts ---------------------------------------------------------------------------

def test_a_urls_userinfo_moves_out_of_the_url(tmp_path: Path) -> None:
    s = settings(tmp_path, opensearch_url="https://mem%40ory:p%3Ass%40word@search.internal:9200/prefix")
    assert s.opensearch_url == "https://search.internal:9200/prefix"  # stored without it
    assert s.opensearch_username == "mem@ory"  # percent-decoded, as opensearch-py did
    assert s.opensearch_password == SecretStr("p:ss@word")
    assert "p:ss@word" not in repr(s) and "p%3Ass" not in repr(s)


def test_userinfo_and_the_separate_settings_conflict(tmp_path: Path) -> None:
    for extra in ({"opensearch_username": "other"}, {"opensearch_password": SECRET},
                  {"opensearch_password_file": str(tmp_path / "pw")}):
        message = refusal(tmp_path, opensearch_url=f"https://memory:{SECRET}@search.internal:9200", **extra)
        assert "MEMORY_OPENSEARCH_URL holds user:password@" in message and "give the credentials once" in message


def test_the_conflict_names_each_variable_set_too_in_a_sentence(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text(SECRET)
    url = f"https://memory:{SECRET}@search.internal:9200"
    one = refusal(tmp_path, opensearch_url=url, opensearch_password_file=str(tmp_path / "pw"))
    assert "holds user:password@ and MEMORY_OPENSEARCH_PASSWORD_FILE is set too:" in one
    two = refusal(tmp_path, opensearch_url=url, opensearch_username="other",
                  opensearch_password_file=str(tmp_path / "pw"))
    assert "and MEMORY_OPENSEARCH_USERNAME and MEMORY_OPENSEARCH_PASSWORD_FILE are set too:" in two


def test_the_environment_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    password_file = tmp_path / "opensearch-password"
    password_file.write_text(SECRET + "\n")
    for name, value in {"SEARCH": "opensearch", "OPENSEARCH_URL": "https://search.internal:9200",
                        "OPENSEARCH_USERNAME": "memory", "OPENSEARCH_PASSWORD_FILE": str(password_file),
                        "OPENSEARCH_CA_CERTS": certifi.where(), "OPENSEARCH_VERIFY_HOSTNAME": "false",
                        "OPENSEARCH_CLIENT_CERT": "", "EMBEDDER": "none", "DATA_DIR": str(tmp_path)}.items():
        monkeypatch.setenv(f"MEMORY_{name}", value)
    s = Settings()
    assert s.opensearch_password == SecretStr(SECRET)  # the file's content, less its trailing newline
    assert s.opensearch_verify_hostname is False and s.opensearch_client_cert is None  # "" is unset
    assert s.opensearch_ca_certs == Path(certifi.where())
    assert SECRET not in repr(s)


def test_password_and_password_file_conflict(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text(SECRET)
    message = refusal(tmp_path, opensearch_url="https://search.internal:9200", opensearch_username="memory",
                      opensearch_password=SECRET, opensearch_password_file=str(tmp_path / "pw"))
    assert "MEMORY_OPENSEARCH_PASSWORD and MEMORY_OPENSEARCH_PASSWORD_FILE are both set" in message


def test_a_missing_or_empty_password_file_is_refused(tmp_path: Path) -> None:
    message = refusal(tmp_path, opensearch_url="https://search.internal:9200", opensearch_username="memory",
                      opensearch_password_file=str(tmp_path / "nope"))
    assert f"MEMORY_OPENSEARCH_PASSWORD_FILE='{tmp_path / 'nope'}': no such file" in message
    (tmp_path / "empty").write_text("\n")
    assert "the file is empty" in refusal(tmp_path, opensearch_url="https://search.internal:9200",
                                          opensearch_username="memory", opensearch_password_file=str(tmp_path / "empty"))


def test_a_user_without_a_password_and_the_reverse(tmp_path: Path) -> None:
    assert "MEMORY_OPENSEARCH_USERNAME is set without a password" in refusal(
        tmp_path, opensearch_url="https://search.internal:9200", opensearch_username="memory")
    assert "without a user: set MEMORY_OPENSEARCH_USERNAME" in refusal(
        tmp_path, opensearch_url="https://search.internal:9200", opensearch_password=SECRET)
    assert "MEMORY_OPENSEARCH_USERNAME is set without a password" in refusal(
        tmp_path, opensearch_url="https://memory@search.internal:9200")


def test_tls_files_are_checked_at_start_up(tmp_path: Path) -> None:
    url = "https://search.internal:9200"
    assert f"MEMORY_OPENSEARCH_CA_CERTS='{tmp_path / 'ca.pem'}': no such file" in refusal(
        tmp_path, opensearch_url=url, opensearch_ca_certs=str(tmp_path / "ca.pem"))
    (tmp_path / "not-a-cert.pem").write_text("hello\n")
    assert "holds no PEM certificate" in refusal(tmp_path, opensearch_url=url,
                                                 opensearch_ca_certs=str(tmp_path / "not-a-cert.pem"))
    assert "MEMORY_OPENSEARCH_CLIENT_KEY is set without MEMORY_OPENSEARCH_CLIENT_CERT" in refusal(
        tmp_path, opensearch_url=url, opensearch_client_key=str(tmp_path / "not-a-cert.pem"))
    assert f"MEMORY_OPENSEARCH_CLIENT_CERT='{tmp_path / 'kirk.pem'}': no such file" in refusal(
        tmp_path, opensearch_url=url, opensearch_client_cert=str(tmp_path / "kirk.pem"))
    message = refusal(tmp_path, opensearch_url=url, opensearch_client_cert=certifi.where())  # certificates, no key
    assert "cannot load a certificate and its key" in message
    message = refusal(tmp_path, opensearch_url="http://search.internal:9200", opensearch_ca_certs=certifi.where())
    assert "MEMORY_OPENSEARCH_CA_CERTS is for TLS but MEMORY_OPENSEARCH_URL is http://" in message


def test_aws_region_rules(tmp_path: Path) -> None:
    url = "https://search-memory.eu-west-1.es.amazonaws.com"
    assert "not an AWS region name" in refusal(tmp_path, opensearch_url=url, opensearch_aws_region="Ireland")
    assert "choose one way to authenticate" in refusal(tmp_path, opensearch_url=url, opensearch_aws_region="eu-west-1",
                                                       opensearch_username="memory", opensearch_password=SECRET)


def test_a_bad_url_is_shown_without_its_userinfo(tmp_path: Path) -> None:
    message = refusal(tmp_path, opensearch_url=f"memory:{SECRET}@search.internal:9200")  # no scheme
    assert "MEMORY_OPENSEARCH_URL='***@search.internal:9200'" in message
    assert "port is not a number" in refusal(tmp_path, opensearch_url=f"https://memory:{SECRET}@search.internal:x")


def test_describe_error_masks_secret_fields(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as caught:
        settings(tmp_path, opensearch_url="https://search.internal:9200", opensearch_username="memory",
                 opensearch_password=["not", SECRET], embedder_api_key=[SECRET])
    message = describe_error(caught.value)
    assert "MEMORY_OPENSEARCH_PASSWORD='***'" in message and "MEMORY_EMBEDDER_API_KEY='***'" in message
    assert SECRET not in message and SECRET not in str(caught.value)


# --- what the client is built with ------------------------------------------------------------------------

def test_the_client_holds_the_password_where_no_repr_shows_it(tmp_path: Path) -> None:
    s = settings(tmp_path, opensearch_url=f"https://memory:{SECRET}@search.internal:9200",
                 opensearch_ca_certs=certifi.where(), opensearch_verify_hostname=False)
    client = make_client(s)
    try:
        connection = client.transport.get_connection()
        assert isinstance(connection, MirrorConnection)
        assert isinstance(connection.http_auth, BasicAuth)
        header = "Basic " + base64.b64encode(f"memory:{SECRET}".encode()).decode()
        assert connection.http_auth("GET", "https://search.internal:9200/", None) == {"authorization": header}
        assert "authorization" not in connection.headers  # made per request, not kept ready on the connection
        shown = " ".join([repr(client), repr(client.transport.kwargs), repr(client.transport.hosts),
                          repr(connection), repr(vars(connection)), repr(s)])
        assert SECRET not in shown and header.split()[1] not in shown, shown
        assert repr(client) == "<OpenSearch([{'host': 'search.internal', 'port': 9200, 'use_ssl': True}])>"
        # VERIFY_HOSTNAME=false: no host name check, the chain still verified against the CA
        assert connection.pool.assert_hostname is False and connection.pool.cert_reqs == "CERT_REQUIRED"
    finally:
        client.close()


def test_tls_options_follow_the_settings(tmp_path: Path) -> None:
    s = settings(tmp_path, opensearch_url="https://search.internal:9200", opensearch_ca_certs=certifi.where())
    options = client_options(s)
    assert options["use_ssl"] is True and options["verify_certs"] is True
    assert options["ca_certs"] == certifi.where() and "ssl_assert_hostname" not in options  # checked by default
    assert "http_auth" not in options
    plain = client_options(settings(tmp_path, opensearch_url="http://localhost:9200"))
    assert "use_ssl" not in plain and "ca_certs" not in plain


def test_every_connection_setting_is_in_the_scale_out_table() -> None:
    """docs/operators.md, "Scale-out deployment": a row of its settings table names each connection setting
    (tests/test_docs.py checks that every setting is in exactly one table)."""
    operators = (Path(__file__).resolve().parents[2] / "docs" / "operators.md").read_text()
    section = operators.split("\n## Scale-out deployment", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `MEMORY_OPENSEARCH_")]
    connection = ("opensearch_url", "opensearch_username", "opensearch_password", "opensearch_password_file",
                  "opensearch_ca_certs", "opensearch_client_cert", "opensearch_client_key",
                  "opensearch_verify_hostname", "opensearch_aws_region", "opensearch_allow_plaintext_credentials")
    assert set(connection) <= set(Settings.model_fields)
    for field in connection:
        name = f"MEMORY_{field.upper()}"
        assert any(f"`{name}`" in row for row in rows), name
