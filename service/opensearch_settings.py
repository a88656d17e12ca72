"""The OpenSearch connection's rules (docs/operators.md "Scale-out deployment"): what the Settings validators of
service.config check about MEMORY_OPENSEARCH_* (credentials, TLS files, plain http), each problem naming its
variables and no secret value. Here so that service.config stays one object's module; `s` is its Settings
(not imported: service.config imports this module)."""

from __future__ import annotations

import importlib.util
import re
import ssl
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from service.addresses import is_loopback

AWS_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")


def read_password(path: Path) -> str:
    """The password file's content, less one trailing newline (what `echo` and most secret stores add)."""
    shown = f"MEMORY_OPENSEARCH_PASSWORD_FILE={str(path)!r}"
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{shown}: no such file") from None
    except UnicodeDecodeError:  # its message would quote the file's bytes
        raise ValueError(f"{shown}: not UTF-8 text") from None
    except OSError as exc:
        raise ValueError(f"{shown}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    password = text.removesuffix("\n").removesuffix("\r")
    if not password:
        raise ValueError(f"{shown}: the file is empty")
    return password


def _file_problem(name: str, path: Path) -> str | None:
    shown = f"{name}={str(path)!r}"
    if not path.exists():
        return f"{shown}: no such file"
    if not path.is_file():
        return f"{shown}: not a file"
    try:
        path.open("rb").close()
    except OSError as exc:
        return f"{shown}: cannot be read ({exc.strerror or type(exc).__name__})"
    return None


def _no_passphrase() -> bytes:
    return b""  # an encrypted key fails to load instead of OpenSSL asking on the terminal


def _tls_file_problems(s: Any) -> list[str]:
    problems = []
    if s.opensearch_ca_certs is not None:
        problem = _file_problem("MEMORY_OPENSEARCH_CA_CERTS", s.opensearch_ca_certs)
        if problem is None:
            try:
                ssl.create_default_context(cafile=str(s.opensearch_ca_certs))
            except (ssl.SSLError, ValueError):
                problem = (f"MEMORY_OPENSEARCH_CA_CERTS={str(s.opensearch_ca_certs)!r}: holds no PEM certificate "
                           "(it should hold the CA certificate that signed the cluster's)")
        problems += [problem] if problem else []
    if s.opensearch_client_cert is not None:
        found = [_file_problem(name, path) for name, path in (("MEMORY_OPENSEARCH_CLIENT_CERT", s.opensearch_client_cert),
                                                              ("MEMORY_OPENSEARCH_CLIENT_KEY", s.opensearch_client_key))
                 if path is not None]
        problems += [p for p in found if p]
        if not any(found):
            key = str(s.opensearch_client_key) if s.opensearch_client_key else None
            try:
                ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(str(s.opensearch_client_cert), key,
                                                                        password=_no_passphrase)
            except (ssl.SSLError, ValueError) as exc:
                reason = getattr(exc, "reason", None) or type(exc).__name__
                problems.append(f"MEMORY_OPENSEARCH_CLIENT_CERT={str(s.opensearch_client_cert)!r}"
                                + (f" with MEMORY_OPENSEARCH_CLIENT_KEY={key!r}" if key else "")
                                + f": cannot load a certificate and its key ({reason}); give a PEM certificate and "
                                  "its unencrypted PEM key (in MEMORY_OPENSEARCH_CLIENT_KEY, or in the same file)")
    return problems


def connection_problems(s: Any) -> list[str]:
    """Every rule the OpenSearch connection settings break, each naming its variables (no secret values)."""
    assert s.opensearch_url
    url = urlsplit(s.opensearch_url)
    https = url.scheme == "https"
    user, password, region = s.opensearch_username, s.opensearch_password, s.opensearch_aws_region
    problems = []
    if user and password is None:
        problems.append("MEMORY_OPENSEARCH_USERNAME is set without a password: set MEMORY_OPENSEARCH_PASSWORD "
                        "or MEMORY_OPENSEARCH_PASSWORD_FILE")
    if password is not None and not user:
        problems.append("a password is set (MEMORY_OPENSEARCH_PASSWORD, _PASSWORD_FILE or the URL's user:password@) "
                        "without a user: set MEMORY_OPENSEARCH_USERNAME")
    if region:
        if user or password is not None:
            problems.append("MEMORY_OPENSEARCH_AWS_REGION (SigV4 signing) and MEMORY_OPENSEARCH_USERNAME/_PASSWORD "
                            "are both set: choose one way to authenticate")
        if not AWS_REGION.fullmatch(region):
            problems.append(f"MEMORY_OPENSEARCH_AWS_REGION={region!r}: not an AWS region name (e.g. eu-west-1)")
        if importlib.util.find_spec("botocore") is None:
            problems.append("MEMORY_OPENSEARCH_AWS_REGION needs botocore, which is not installed: install the aws "
                            "extra, `pip install '.[aws]'` in the service's folder")
    credentials = bool(user or password is not None or region)
    if credentials and not https and not is_loopback(url.hostname or "") \
            and not s.opensearch_allow_plaintext_credentials:
        problems.append(f"MEMORY_OPENSEARCH_URL={s.opensearch_url!r} is plain http to a host that is not loopback "
                        "and credentials are set: they would cross the network in clear; use https://, or set "
                        "MEMORY_OPENSEARCH_ALLOW_PLAINTEXT_CREDENTIALS=true if that network is trusted")
    if s.opensearch_client_key is not None and s.opensearch_client_cert is None:
        problems.append("MEMORY_OPENSEARCH_CLIENT_KEY is set without MEMORY_OPENSEARCH_CLIENT_CERT")
    tls = [f"MEMORY_{name.upper()}" for name in ("opensearch_ca_certs", "opensearch_client_cert", "opensearch_client_key")
           if getattr(s, name) is not None]
    if tls and not https:
        problems.append(f"{' and '.join(tls)} {'is' if len(tls) == 1 else 'are'} for TLS but MEMORY_OPENSEARCH_URL "
                        "is http://: use https://")
    elif tls:
        problems += _tls_file_problems(s)
    return problems
