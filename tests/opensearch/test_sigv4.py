"""AWS SigV4 signing for Amazon OpenSearch Service (MEMORY_OPENSEARCH_AWS_REGION), without AWS: AWS cannot run
here, so the service's client, built from Settings, talks to `FakeAwsEndpoint`, a loopback HTTP server that
only records what arrives and answers like a cluster's GET /. The credentials are fake and static (environment
variables botocore's default chain reads; instance metadata turned off). Checked: the request carries an
AWS4-HMAC-SHA256 Authorization header for the region and the service "es", and its signature is the one
botocore computes for that request with the fake secret; the secret key shows nowhere.

Needs botocore (the `[aws]` extra, part of `[test]`): skipped without it, a failure under CI.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from service.config import Settings
from service.errors import StartupFailed
from service.search.opensearch.client import make_client, reachability, translated
from service.search.opensearch.connection import PermissionMissing

try:
    import botocore  # noqa: F401
except ImportError:  # pragma: no cover - the [test] extra installs it
    if os.environ.get("CI"):
        raise
    pytest.skip("botocore is not installed (pip install '.[aws]')", allow_module_level=True)

ACCESS_KEY = "AKIAFAKEFAKEFAKE0001"
SECRET_KEY = "fake/Secret+Key-for-the-SigV4-test-0000"
REGION = "eu-west-1"


@dataclass
class FakeAwsEndpoint:
    """A stand-in for an Amazon OpenSearch Service domain: records each request (method, path, headers,
    body) and answers GET / like a cluster, or `status` with an AWS-style body when set."""

    requests: list[dict[str, object]] = field(default_factory=list)
    status: int = 200
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> None:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                endpoint.requests.append({"method": "GET", "path": self.path, "headers": dict(self.headers.items()),
                                          "body": self.rfile.read(length)})
                body = (json.dumps({"version": {"number": "2.19.0", "distribution": "opensearch"}})
                        if endpoint.status == 200 else
                        json.dumps({"message": "User: arn:aws:iam::000000000000:user/fake is not authorized to "
                                               "perform: es:ESHttpGet"}))
                self.send_response(endpoint.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def fake_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeAwsEndpoint]:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never ask an instance metadata service
    endpoint = FakeAwsEndpoint()
    endpoint.start()
    try:
        yield endpoint
    finally:
        endpoint.stop()


def aws_settings(tmp_path: Path, url: str) -> Settings:
    return Settings(data_dir=tmp_path, embedder="none", search="opensearch", opensearch_url=url,  # type: ignore[arg-type]
                    opensearch_aws_region=REGION)


def test_requests_are_signed_with_sigv4_for_the_region_and_service(fake_aws: FakeAwsEndpoint, tmp_path: Path) -> None:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    client = make_client(aws_settings(tmp_path, fake_aws.url))
    try:
        assert client.info()["version"]["number"] == "2.19.0"
        shown = repr(client) + repr(client.transport.kwargs) + repr(vars(client.transport.get_connection()))
    finally:
        client.close()
    (request,) = fake_aws.requests
    headers = {k.lower(): v for k, v in request["headers"].items()}  # type: ignore[union-attr]
    authorization = headers["authorization"]
    found = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=(\S+), SignedHeaders=(\S+), Signature=([0-9a-f]{64})",
                         authorization)
    assert found, authorization
    access, date, region, service, terminal = found.group(1).split("/")
    assert (access, region, service, terminal) == (ACCESS_KEY, REGION, "es", "aws4_request")
    assert date == headers["x-amz-date"][:8]
    assert {"host", "x-amz-date", "x-amz-content-sha256"} <= set(found.group(2).split(";"))
    assert headers["x-amz-content-sha256"] == hashlib.sha256(b"").hexdigest()

    # The signature is the one botocore computes for this request with the fake secret (so the secret signed it).
    again = AWSRequest(method="GET", url=f"{fake_aws.url}/",
                       headers={name: headers[name] for name in found.group(2).split(";")})
    again.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "es", REGION)
    expected = signer.signature(signer.string_to_sign(again, signer.canonical_request(again)), again)
    assert found.group(3) == expected
    assert SECRET_KEY not in shown and SECRET_KEY not in json.dumps(request, default=str)


def test_an_iam_refusal_names_the_aws_settings(fake_aws: FakeAwsEndpoint, tmp_path: Path) -> None:
    fake_aws.status = 403
    client = make_client(aws_settings(tmp_path, fake_aws.url))
    try:
        with pytest.raises(PermissionMissing) as caught, translated("info"):
            client.info()
        reachable, problem = reachability(client)  # /readyz's check says the same, not "unreachable"
        assert reachable is False and problem == caught.value.message.replace(" info ", " the reachability check ")
    finally:
        client.close()
    assert caught.value.message == (
        "OpenSearch refused info (403): User: arn:aws:iam::000000000000:user/fake is not authorized to perform: "
        "es:ESHttpGet; check the AWS credentials' IAM policy and MEMORY_OPENSEARCH_AWS_REGION")


def test_no_aws_credentials_is_one_line(fake_aws: FakeAwsEndpoint, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(StartupFailed) as caught:
        make_client(aws_settings(tmp_path, fake_aws.url))
    assert "MEMORY_OPENSEARCH_AWS_REGION is set but botocore finds no AWS credentials" in caught.value.message
