"""OpenAIEmbedder against a stub of the embeddings API on a real loopback socket."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from service.config import Settings
from service.errors import EmbeddingUnavailable
from service.embedding.openai import OpenAIEmbedder, embeddings_url

API_KEY = "sk-test-secret-123"


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] | None = None  # None: a valid answer built from the request
    delay: float = 0.0


def vector_for(text: str, dim: int = 4) -> list[float]:
    """A deterministic, deliberately non-normalised vector per text."""
    seed = sum(ord(c) for c in text) + len(text)
    return [float((seed * (i + 3)) % 7 + 1) for i in range(dim)]


def valid_answer(texts: list[str], dim: int = 4, shuffle: bool = True) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": vector_for(t, dim)} for i, t in enumerate(texts)]
    if shuffle:
        data.reverse()  # servers may answer out of order; `index` is what counts
    return {"object": "list", "data": data, "model": "test-model"}


@dataclass
class Stub:
    """An embeddings endpoint whose answer each test chooses via `reply`."""

    url: str
    reply: Callable[[dict[str, Any]], Reply] = lambda body: Reply()
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    errors: list[BaseException] = field(default_factory=list)  # raised in a handler thread (not printed)


@pytest.fixture
def stub() -> Iterator[Stub]:
    holder: dict[str, Stub] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            s = holder["stub"]
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw or b"{}")
            s.requests.append((self.path, dict(self.headers.items()), body))
            reply = s.reply(body)
            if reply.delay:
                s.release.wait(reply.delay)
            payload = reply.body if reply.body is not None else valid_answer(body["input"])
            data = json.dumps(payload).encode() if isinstance(payload, dict) else payload
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (timeout test)

        def log_message(self, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            """Kept, not printed: a handler still running when its test is over (a client that gave up on a
            delayed answer) would print into whatever test the worker runs next, e.g. a CLI test reading
            stdout as JSON."""
            holder["stub"].errors.append(sys.exc_info()[1])  # type: ignore[arg-type]

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    holder["stub"] = Stub(url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    try:
        yield holder["stub"]
    finally:
        holder["stub"].release.set()
        server.shutdown()
        server.server_close()


def make(url: str, *, key: str | None = API_KEY, timeout: float = 2.0, **kwargs: Any) -> OpenAIEmbedder:
    settings = Settings(
        embedder="openai", embedder_url=url, embedder_model="test-model", embedder_api_key=key, embedder_timeout=timeout
    )
    return OpenAIEmbedder(settings, **kwargs)


def expected(texts: list[str], dim: int = 4) -> np.ndarray:
    raw = np.array([vector_for(t, dim) for t in texts], dtype=np.float64)
    return (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)


# -- success ---------------------------------------------------------------------------------


def test_documents_ordered_by_index_normalised_and_dim_learned(stub: Stub) -> None:
    embedder = make(stub.url)
    assert embedder.dim is None
    texts = ["alpha", "beta fact", "gamma"]

    vectors = embedder.embed_documents(texts)

    assert vectors.dtype == np.float32 and vectors.shape == (3, 4)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)
    assert embedder.dim == 4
    assert embedder.model_id == "openai:test-model"
    assert embedder.ready() and embedder.status()["state"] == "ready"


def test_request_shape_and_auth_header(stub: Stub) -> None:
    make(stub.url + "/").embed_documents(["one", "two"])

    path, headers, body = stub.requests[0]
    assert path == "/v1/embeddings"
    assert headers["Authorization"] == f"Bearer {API_KEY}"
    assert body == {"model": "test-model", "input": ["one", "two"]}


def test_no_auth_header_without_key(stub: Stub) -> None:
    make(stub.url, key=None).embed_query("hello")
    assert "Authorization" not in stub.requests[0][1]


def test_documents_are_batched(stub: Stub) -> None:
    texts = [f"fact {i}" for i in range(5)]
    vectors = make(stub.url, batch_size=2).embed_documents(texts)

    assert [len(body["input"]) for _, _, body in stub.requests] == [2, 2, 1]
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)


def test_default_batch_is_64(stub: Stub) -> None:
    vectors = make(stub.url).embed_documents([f"fact {i}" for i in range(130)])
    assert [len(body["input"]) for _, _, body in stub.requests] == [64, 64, 2]
    assert vectors.shape == (130, 4)


def test_empty_document_list_makes_no_request(stub: Stub) -> None:
    assert make(stub.url).embed_documents([]).shape[0] == 0
    assert stub.requests == []


def test_query_cache_hits_and_returns_copies(stub: Stub) -> None:
    embedder = make(stub.url)
    first = embedder.embed_query("which runner?")
    first[:] = 0  # a caller scribbling on its vector must not corrupt the cache
    second = embedder.embed_query("which runner?")

    assert len(stub.requests) == 1
    np.testing.assert_allclose(second, expected(["which runner?"])[0], rtol=1e-6)
    assert second.shape == (4,) and second.dtype == np.float32


def test_status_names_url_without_key(stub: Stub) -> None:
    status = make(stub.url).status()
    assert status["embedder"] == "openai" and status["url"] == stub.url + "/embeddings"
    assert API_KEY not in json.dumps(status)


def test_before_the_first_call_status_says_whether_the_endpoint_is_there(stub: Stub) -> None:
    """Issue 57: /readyz said ready for an endpoint nothing listened on, until a call failed. Before the first
    call, status() tries a connection to the endpoint's host and port (no request: the stub sees none)."""
    there = make(stub.url).status()
    assert there["state"] == "ready" and there["error"] is None and stub.requests == []
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    missing = make(f"http://127.0.0.1:{port}/v1").status()
    assert missing["state"] == "error"
    assert missing["error"] == (f"embedder http://127.0.0.1:{port}/v1/embeddings: not reachable (Connection refused); "
                                "check MEMORY_EMBEDDER_URL and that the server runs")


def test_url_rules() -> None:
    assert embeddings_url("http://h:11434/v1") == "http://h:11434/v1/embeddings"
    assert embeddings_url("http://h:11434/v1/") == "http://h:11434/v1/embeddings"
    assert embeddings_url("http://h/v1/embeddings") == "http://h/v1/embeddings"
    status = make("http://user:pw@127.0.0.1:9/v1").status()
    assert status["url"] == "http://127.0.0.1:9/v1/embeddings"


# -- failures --------------------------------------------------------------------------------


def fails(embedder: OpenAIEmbedder, *texts: str) -> str:
    with pytest.raises(EmbeddingUnavailable) as info:
        embedder.embed_documents(list(texts or ["x"]))
    message = str(info.value)
    assert "\n" not in message and API_KEY not in message
    assert not embedder.ready() and embedder.status()["state"] == "error"
    assert embedder.status()["error"] == message
    return message


def test_timeout_is_reported_quickly(stub: Stub) -> None:
    stub.reply = lambda body: Reply(delay=3.0)
    embedder = make(stub.url, timeout=0.3)

    started = time.monotonic()
    message = fails(embedder)

    assert time.monotonic() - started < 1.5
    assert "timed out after 0.3s" in message and stub.url in message


def test_http_500_then_recovery(stub: Stub) -> None:
    stub.reply = lambda body: Reply(status=500, body=b"upstream exploded")
    embedder = make(stub.url)

    message = fails(embedder)
    assert "HTTP 500" in message and "upstream exploded" in message and stub.url in message

    stub.reply = lambda body: Reply()
    embedder.embed_documents(["x"])
    assert embedder.ready() and embedder.status()["error"] is None


def test_key_echoed_by_server_is_redacted(stub: Stub) -> None:
    stub.reply = lambda body: Reply(status=401, body=f"bad key {API_KEY}".encode())
    message = fails(make(stub.url))
    assert "HTTP 401" in message and "***" in message


def test_malformed_json(stub: Stub) -> None:
    stub.reply = lambda body: Reply(body=b"{not json")
    assert "malformed JSON" in fails(make(stub.url))


def test_answer_without_data(stub: Stub) -> None:
    stub.reply = lambda body: Reply(body={"error": "nope"})
    assert "no `data` list" in fails(make(stub.url))


def test_wrong_number_of_vectors(stub: Stub) -> None:
    stub.reply = lambda body: Reply(body=valid_answer(body["input"][:-1]))
    assert "sent 2 texts, got 1 vectors" in fails(make(stub.url), "a", "b")


def test_inconsistent_dims_in_one_answer(stub: Stub) -> None:
    answer = {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0, 2.0, 3.0]}]}
    stub.reply = lambda body: Reply(body=answer)
    assert "inconsistent vector dimensions" in fails(make(stub.url), "a", "b")


def test_dimension_change_between_answers(stub: Stub) -> None:
    embedder = make(stub.url)
    embedder.embed_documents(["a"])
    stub.reply = lambda body: Reply(body=valid_answer(body["input"], dim=8))
    assert "dimension changed from 4 to 8" in fails(embedder)


def test_zero_vector(stub: Stub) -> None:
    stub.reply = lambda body: Reply(body={"data": [{"index": 0, "embedding": [0.0, 0.0, 0.0]}]})
    assert "zero vector" in fails(make(stub.url))


def test_duplicate_indices(stub: Stub) -> None:
    answer = {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 0, "embedding": [1.0, 3.0]}]}
    stub.reply = lambda body: Reply(body=answer)
    assert "not 0..n-1" in fails(make(stub.url), "a", "b")


def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    embedder = make(url)

    with pytest.raises(EmbeddingUnavailable) as info:
        embedder.embed_query("hello")

    assert "connection failed" in str(info.value) and url in str(info.value)
    assert not embedder.ready()
