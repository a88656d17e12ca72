"""How the service reaches OpenSearch, and what it means when it cannot.

- `client_options(settings)`: the opensearch-py keyword arguments for the connection settings (docs/operators.md
  "Scale-out deployment"): TLS verified against MEMORY_OPENSEARCH_CA_CERTS (else the default CAs), the host
  name checked unless MEMORY_OPENSEARCH_VERIFY_HOSTNAME=false, a client certificate, basic auth or AWS SigV4.
  The password stays in a SecretStr inside `BasicAuth`, which opensearch-py calls for each request's header:
  opensearch-py's repr() of a client prints its host dicts (where a URL's user:password@ used to end up) and a
  tuple http_auth would sit in its kwargs and as a ready-made header on every connection.
- `classify(exc, action)`: an opensearchpy error as a one-line domain error naming what to fix (which setting,
  which permission, which host:port), a subclass of BackendUnavailable, so callers keep working. Used by
  client.translated(), the one place where opensearchpy errors become domain errors.

The facts a message needs (host:port, which kind of credentials, the CA file) travel on the error itself:
`MirrorConnection` annotates each failure with its `Endpoint` (no secret in it).
"""

from __future__ import annotations

import base64
import errno
import http.client
import re
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from opensearchpy import Urllib3HttpConnection
from opensearchpy.exceptions import (AuthenticationException, AuthorizationException, ConnectionTimeout,
                                     OpenSearchException, TransportError)
from opensearchpy.exceptions import ConnectionError as TransportConnectionError
from pydantic import SecretStr

from service.config import Settings
from service.errors import BackendUnavailable, StartupFailed
from service.search.opensearch.refusals import explain

AWS_SERVICE = "es"  # Amazon OpenSearch Service domains; Serverless ("aoss") cannot take external versions


class CredentialsRefused(BackendUnavailable):
    """401: the cluster does not accept the credentials (or wants some and none are set)."""


class PermissionMissing(BackendUnavailable):
    """403 from the security plugin: the user lacks `permission` (as OpenSearch names it)."""

    def __init__(self, message: str, *, permission: str | None = None) -> None:
        super().__init__(message)
        self.permission = permission


class TLSFailed(BackendUnavailable):
    """The TLS handshake failed: an untrusted CA, a host name the certificate lacks, https to an http port..."""


class Unreachable(BackendUnavailable):
    """No answer: connection refused, a name that does not resolve, a timeout, a closed connection."""


@dataclass(frozen=True)
class Endpoint:
    """What a failure message may say about the connection: never a secret."""

    scheme: str
    host: str
    port: int
    auth: Literal["basic", "aws", "certificate", "none"]
    username: str | None = None
    ca_certs: Path | None = None
    client_cert: Path | None = None
    verify_hostname: bool = True
    timeout: float = 10.0

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @classmethod
    def of(cls, settings: Settings) -> Endpoint:
        assert settings.opensearch_url
        url = urlsplit(settings.opensearch_url)
        https = url.scheme == "https"
        auth: Literal["basic", "aws", "certificate", "none"] = (
            "aws" if settings.opensearch_aws_region else "basic" if settings.opensearch_username
            else "certificate" if settings.opensearch_client_cert else "none")
        return cls(scheme=url.scheme, host=url.hostname or "", port=url.port or (443 if https else 9200), auth=auth,
                   username=settings.opensearch_username, ca_certs=settings.opensearch_ca_certs,
                   client_cert=settings.opensearch_client_cert, verify_hostname=settings.opensearch_verify_hostname,
                   timeout=settings.opensearch_timeout)


class BasicAuth:
    """HTTP basic auth as opensearch-py's callable `http_auth`: the header is made per request, so neither the
    client's nor a connection's attributes (nor any repr) hold the password or its base64."""

    def __init__(self, username: str, password: SecretStr) -> None:
        self.username = username
        self._password = password

    def __call__(self, method: str, url: str, body: Any, headers: Any = None) -> dict[str, str]:
        pair = f"{self.username}:{self._password.get_secret_value()}".encode()  # UTF-8, as the security plugin
        return {"authorization": "Basic " + base64.b64encode(pair).decode("ascii")}

    def __repr__(self) -> str:
        return f"BasicAuth(username={self.username!r}, password='***')"


class MirrorConnection(Urllib3HttpConnection):
    """opensearch-py's urllib3 connection; a failure leaves with the Endpoint it happened on (`.endpoint`) and
    the request's timeout (`.timeout_s`), for `classify`."""

    def __init__(self, *args: Any, endpoint: Endpoint | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.endpoint = endpoint

    def perform_request(self, method: str, url: str, params: Any = None, body: Any = None, timeout: Any = None,
                        ignore: Any = (), headers: Any = None) -> Any:
        try:
            return super().perform_request(method, url, params, body, timeout, ignore, headers)
        except OpenSearchException as exc:
            exc.endpoint = self.endpoint  # type: ignore[attr-defined]  # context carried on opensearch-py's exception
            exc.timeout_s = timeout or self.timeout  # type: ignore[attr-defined]  # (read back with getattr)
            raise

    def __repr__(self) -> str:
        return f"<MirrorConnection: {self.host}>"


def aws_auth(region: str) -> Any:
    """SigV4 signing for Amazon OpenSearch Service, with botocore's default credential chain (environment,
    ~/.aws, container or instance role; refreshed as they expire)."""
    from botocore.session import get_session  # the [aws] extra; Settings refuses the region without it
    from opensearchpy import Urllib3AWSV4SignerAuth

    credentials = get_session().get_credentials()
    if credentials is None:
        raise StartupFailed("MEMORY_OPENSEARCH_AWS_REGION is set but botocore finds no AWS credentials (environment "
                            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws, a container or instance "
                            "role)")
    return Urllib3AWSV4SignerAuth(credentials, region, AWS_SERVICE)


def client_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for opensearchpy.OpenSearch: hosts, TLS, authentication, MirrorConnection."""
    assert settings.opensearch_url, "MEMORY_OPENSEARCH_URL is required in opensearch mode"
    endpoint = Endpoint.of(settings)
    options: dict[str, Any] = {"hosts": [settings.opensearch_url], "connection_class": MirrorConnection,
                               "endpoint": endpoint}
    if endpoint.scheme == "https":
        options.update(use_ssl=True, verify_certs=True)
        if settings.opensearch_ca_certs is not None:
            options["ca_certs"] = str(settings.opensearch_ca_certs)
        if settings.opensearch_client_cert is not None:
            options["client_cert"] = str(settings.opensearch_client_cert)
            if settings.opensearch_client_key is not None:
                options["client_key"] = str(settings.opensearch_client_key)
        if not settings.opensearch_verify_hostname:
            options["ssl_assert_hostname"] = False  # the chain is still verified against the CA
    if settings.opensearch_aws_region:
        options["http_auth"] = aws_auth(settings.opensearch_aws_region)
    elif settings.opensearch_username and settings.opensearch_password is not None:
        options["http_auth"] = BasicAuth(settings.opensearch_username, settings.opensearch_password)
    return options


# --- failures ------------------------------------------------------------------------------------------------

PERMISSION = re.compile(r"no permissions for \[(.*?)\](?: and |$)")
USER = re.compile(r"User \[name=([^,\]]+)")
UNTRUSTED = {2, 18, 19, 20, 21}  # X509_V_ERR_: no issuer cert, self-signed (leaf / in chain), local issuer, leaf
NAME_MISMATCH = {62, 64}  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH
CLIENT_CERT_REFUSED = ("CERTIFICATE_REQUIRED", "BAD_CERTIFICATE", "UNKNOWN_CA", "CERTIFICATE_UNKNOWN",
                       "ACCESS_DENIED", "HANDSHAKE_FAILURE")
NOT_TLS = ("WRONG_VERSION_NUMBER", "HTTP_REQUEST", "PACKET_LENGTH_TOO_LONG", "RECORD_LAYER_FAILURE")


def classify(exc: OpenSearchException, action: str) -> BackendUnavailable:
    """The domain error for an opensearchpy failure (404 excepted: client.translated keeps that IndexMissing)."""
    endpoint: Endpoint | None = getattr(exc, "endpoint", None)
    if isinstance(exc, AuthenticationException):
        return CredentialsRefused(_refused(endpoint, action))
    if isinstance(exc, AuthorizationException):
        reason = _reason(exc)
        if _error_type(exc) == "cluster_block_exception":  # a write block answers 403 too: not a permission
            return BackendUnavailable(f"opensearch {action}: {explain(exc.info)}")
        found = PERMISSION.search(reason)
        if found:
            user = USER.search(reason)
            who = f"user {user.group(1)!r}" if user else "the user"
            return PermissionMissing(f"OpenSearch denied {action}: {who} lacks the permission [{found.group(1)}] "
                                     "(403); grant it to a role mapped to that user", permission=found.group(1))
        hint = ("; check the AWS credentials' IAM policy and MEMORY_OPENSEARCH_AWS_REGION"
                if endpoint is not None and endpoint.auth == "aws" else "")
        if not reason.strip():  # a HEAD request (exists): the answer has no body to name the permission
            return PermissionMissing(f"OpenSearch refused {action} (403, no reason given): the user may lack a "
                                     f"permission for it{hint}")
        return PermissionMissing(f"OpenSearch refused {action} (403): {_line(reason)}{hint}")
    if isinstance(exc, ConnectionTimeout):
        where = endpoint.address if endpoint else "the cluster"
        seconds = getattr(exc, "timeout_s", None)
        within = f" within {seconds:g} s" if isinstance(seconds, (int, float)) else ""
        if endpoint is not None and seconds == endpoint.timeout:
            within += " (MEMORY_OPENSEARCH_TIMEOUT)"
        return Unreachable(f"OpenSearch at {where} did not answer {action}{within}: an overloaded cluster, or an "
                           "address that accepts connections but is not OpenSearch's HTTP port?")
    if isinstance(exc, TransportConnectionError):  # SSLError is one too
        return _connection_failure(exc, endpoint, action)
    if _error_type(exc):  # the cluster answered with an error body: what it said, and what to do
        return BackendUnavailable(f"opensearch {action}: {explain(getattr(exc, 'info', None))}")
    return BackendUnavailable(f"opensearch {action}: {_line(str(exc))}")


def _error_type(exc: OpenSearchException) -> str | None:
    info = getattr(exc, "info", None)
    error = info.get("error") if isinstance(info, dict) else None
    return str(error.get("type")) if isinstance(error, dict) and error.get("type") else None


def _refused(endpoint: Endpoint | None, action: str) -> str:
    auth = endpoint.auth if endpoint else "basic"
    if auth == "basic":
        who = f" of user {endpoint.username!r}" if endpoint and endpoint.username else ""
        return (f"OpenSearch refused the credentials{who} (401 on {action}): check MEMORY_OPENSEARCH_USERNAME and "
                "MEMORY_OPENSEARCH_PASSWORD (or MEMORY_OPENSEARCH_PASSWORD_FILE)")
    if auth == "aws":
        return (f"OpenSearch refused the AWS SigV4 signature (401 on {action}): check the AWS credentials and "
                "MEMORY_OPENSEARCH_AWS_REGION")
    if auth == "certificate":
        return (f"OpenSearch refused the client certificate as credentials (401 on {action}): check "
                "MEMORY_OPENSEARCH_CLIENT_CERT (the cluster must map its subject to a user), or set "
                "MEMORY_OPENSEARCH_USERNAME and MEMORY_OPENSEARCH_PASSWORD")
    return (f"OpenSearch wants credentials (401 on {action}) and none are set: set MEMORY_OPENSEARCH_USERNAME and "
            "MEMORY_OPENSEARCH_PASSWORD (or _PASSWORD_FILE), or MEMORY_OPENSEARCH_CLIENT_CERT")


def _connection_failure(exc: OpenSearchException, endpoint: Endpoint | None, action: str) -> BackendUnavailable:
    where = endpoint.address if endpoint else "the cluster"
    chain = list(_causes(exc))
    verify = next((e for e in chain if isinstance(e, ssl.SSLCertVerificationError)), None)
    if verify is not None:
        return _certificate_refused(verify, endpoint, where)
    tls = next((e for e in chain if isinstance(e, ssl.SSLError)), None)
    if tls is not None:
        reason = str(getattr(tls, "reason", None) or "").upper()
        if any(code in reason for code in NOT_TLS):
            return TLSFailed(f"TLS to {where} failed ({reason.lower() or 'no TLS answer'}): the port does not seem to "
                             "speak TLS; if the cluster has TLS off, use http:// in MEMORY_OPENSEARCH_URL")
        if isinstance(tls, ssl.SSLEOFError) or "EOF" in reason:
            return TLSFailed(f"TLS to {where} failed: the server closed the connection during the handshake; it may "
                             "not speak TLS on this port (then use http:// in MEMORY_OPENSEARCH_URL), or want a client "
                             "certificate (MEMORY_OPENSEARCH_CLIENT_CERT)")
        if any(code in reason for code in CLIENT_CERT_REFUSED):
            if endpoint is not None and endpoint.client_cert is not None:
                return TLSFailed(f"TLS to {where} failed: the cluster refused the client certificate "
                                 f"({reason.lower()}): check MEMORY_OPENSEARCH_CLIENT_CERT={str(endpoint.client_cert)!r} "
                                 "and _CLIENT_KEY (the cluster must trust the CA that signed it)")
            return TLSFailed(f"TLS to {where} failed ({reason.lower()}): the cluster may require a client "
                             "certificate: set MEMORY_OPENSEARCH_CLIENT_CERT and MEMORY_OPENSEARCH_CLIENT_KEY")
        return TLSFailed(f"TLS to {where} failed: {_line(str(tls))}")
    if any(isinstance(e, socket.gaierror) for e in chain):
        host = endpoint.host if endpoint else "the host"
        return Unreachable(f"OpenSearch unreachable: the name {host!r} does not resolve (MEMORY_OPENSEARCH_URL)")
    refused = any(isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == errno.ECONNREFUSED
                  for e in chain)
    if refused:
        return Unreachable(f"OpenSearch unreachable at {where}: connection refused (is it running, and is "
                           "MEMORY_OPENSEARCH_URL's port the HTTP port?)")
    if any(isinstance(e, TimeoutError) for e in chain):
        return Unreachable(f"OpenSearch unreachable at {where}: no connection within the timeout "
                           "(MEMORY_OPENSEARCH_TIMEOUT); a firewall or a wrong address?")
    dropped = any(isinstance(e, (http.client.RemoteDisconnected, ConnectionResetError, http.client.BadStatusLine))
                  for e in chain)
    if dropped and endpoint is not None and endpoint.scheme == "http":
        return Unreachable(f"OpenSearch at {where} closed the connection without an answer to a plain-http request: "
                           "if the cluster speaks TLS, use https:// in MEMORY_OPENSEARCH_URL")
    if dropped:
        return Unreachable(f"OpenSearch at {where} closed the connection without an answer ({action}): if that port "
                           "does not speak TLS, use http:// in MEMORY_OPENSEARCH_URL; if it wants a client "
                           "certificate, set MEMORY_OPENSEARCH_CLIENT_CERT")
    inner = next((e for e in reversed(chain) if not isinstance(e, TransportError)), exc)
    return Unreachable(f"OpenSearch unreachable at {where} ({action}): {_line(str(inner))}")


def _certificate_refused(error: ssl.SSLCertVerificationError, endpoint: Endpoint | None,
                         where: str) -> TLSFailed:
    code, detail = error.verify_code, error.verify_message or str(error)
    if code in UNTRUSTED:
        if endpoint is not None and endpoint.ca_certs is not None:
            return TLSFailed(f"TLS to {where} failed: the cluster's certificate is not signed by the CA in "
                             f"MEMORY_OPENSEARCH_CA_CERTS={str(endpoint.ca_certs)!r} ({detail}); point it at the CA "
                             "that signed the cluster's certificate")
        return TLSFailed(f"TLS to {where} failed: the cluster's certificate is not signed by a CA this machine "
                         f"trusts ({detail}); set MEMORY_OPENSEARCH_CA_CERTS to the cluster's CA certificate (PEM)")
    if code in NAME_MISMATCH or "mismatch" in detail.lower():
        host = endpoint.host if endpoint else "this host"
        return TLSFailed(f"TLS to {where} failed: the cluster's certificate is not valid for {host!r} ({detail}); "
                         "connect by a name the certificate holds, or set MEMORY_OPENSEARCH_VERIFY_HOSTNAME=false "
                         "(the certificate is still checked against the CA)")
    if code in (9, 10):  # X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CERT_HAS_EXPIRED
        return TLSFailed(f"TLS to {where} failed: the cluster's certificate {detail} (check its dates and this "
                         "machine's clock)")
    return TLSFailed(f"TLS to {where} failed: the cluster's certificate was refused ({detail})")


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception and everything under it: causes, contexts, urllib3's `reason`, opensearch-py's `info`."""
    todo, seen = [exc], set()
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        nested = [current.__cause__, current.__context__, getattr(current, "reason", None),
                  getattr(current, "info", None), *getattr(current, "args", ())]
        todo.extend(e for e in nested if isinstance(e, BaseException))


def _reason(exc: TransportError) -> str:
    info = exc.info if isinstance(exc.info, dict) else {}
    error = info.get("error")
    if isinstance(error, dict):
        causes = error.get("root_cause") or [{}]
        return str(error.get("reason") or causes[0].get("reason") or error.get("type") or "")
    return str(error or info.get("message") or info.get("Message") or exc.error)


def _line(text: str) -> str:
    return " ".join(text.split())[:300]
