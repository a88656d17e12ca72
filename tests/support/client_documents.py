"""Client ID metadata documents served over TLS on loopback, for the OAuth tests: a throwaway CA and a
certificate it signs for localhost and 127.0.0.1 (the `cryptography` package, which the MCP SDK installs
through pyjwt[crypto]), and a small https server (http.server with ssl) answering each path as told."""

from __future__ import annotations

import ipaddress
import json
import ssl
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Certificates:
    ca: Path  # what the service is told to trust (SSL_CERT_FILE)
    cert: Path
    key: Path


def make_certificates(folder: Path) -> Certificates:
    """A CA valid for a day, and a server certificate it signed for localhost and 127.0.0.1."""
    now = datetime.now(timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "memory-service test CA")])

    def builder(subject: x509.Name, public_key: Any) -> x509.CertificateBuilder:
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(public_key)
                .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=5))
                .not_valid_after(now + timedelta(days=1))
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False))

    ca = (builder(ca_name, ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]), key.public_key())
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    found = Certificates(folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    found.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    found.cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    found.key.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))
    return found


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0  # seconds before the answer's first byte
    sized: bool = True  # with Content-Length; without, the body ends when the connection closes


@dataclass
class DocumentServer:
    """What each path answers (set `answers`), and how often each was asked for (`hits`)."""

    port: int
    answers: dict[str, Answer] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    errors: list[BaseException] = field(default_factory=list)  # raised in a handler thread (not printed)

    def url(self, path: str, host: str = "localhost") -> str:
        return f"https://{host}:{self.port}{path}"

    def document(self, path: str, *, host: str = "localhost", headers: dict[str, str] | None = None,
                 **fields: Any) -> str:
        """Serve a client metadata document at `path` whose client_id is its own URL (unless `fields` says
        another); returns that URL."""
        url = self.url(path, host)
        body = {"client_id": url, "client_name": "Document client", "redirect_uris": ["http://127.0.0.1:9/callback"],
                "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"], **fields}
        self.answers[path] = Answer(body=json.dumps({k: v for k, v in body.items() if v is not None}).encode(),
                                    headers={"Content-Type": "application/json", **(headers or {})})
        return url


@contextmanager
def document_server(certificates: Certificates) -> Iterator[DocumentServer]:
    """An https server on 127.0.0.1 (a free port) with the certificate for localhost and 127.0.0.1."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificates.cert, certificates.key)
    state = DocumentServer(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path.split("?", 1)[0]
            state.hits[path] += 1
            answer = state.answers.get(path, Answer(status=404, body=b"{}"))
            time.sleep(answer.delay)
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if answer.sized:
                self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
            return None

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            """Kept, not printed: a handler still writing to a client that gave up (the timeout tests) would
            print into whatever test the worker runs next."""
            state.errors.append(sys.exc_info()[1])  # type: ignore[arg-type]

    httpd = Server(("127.0.0.1", 0), Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)
