"""The real all-MiniLM-L6-v2, loaded once for this module from the bundled package, offline.

The default runtime is ONNX (the shipped graph, weights from model.safetensors); the session fixture
loads it with the network blocked.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.lib.waiting import until
from service.config import Settings
from service.errors import EmbeddingUnavailable
from service.embedding.minilm import DIM, MODEL_ID, MiniLMEmbedder

LOAD_TIMEOUT = 120.0


class NetworkAttempted(AssertionError):
    pass


def _no_network(*args: Any, **kwargs: Any) -> Any:
    raise NetworkAttempted(f"network access during model load: {args!r}")


def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data dir (and so the built ONNX graph) shared by the model tests of this session."""
    path = tmp_path_factory.getbasetemp() / "minilm-data"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One embedder, loaded via start() with every way out to the network blocked."""
    data_dir = shared_data_dir(tmp_path_factory)
    embedder = MiniLMEmbedder(Settings(embedder="minilm", torch_threads=1, data_dir=data_dir))
    before = embedder.status()["state"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _no_network)
        mp.setattr(socket.socket, "connect_ex", _no_network)
        mp.setattr(socket, "create_connection", _no_network)
        mp.setattr(socket, "getaddrinfo", _no_network)
        started = time.monotonic()
        embedder.start()
        start_returned_after = time.monotonic() - started
        during = embedder.status()["state"]
        deadline = time.monotonic() + LOAD_TIMEOUT
        while not embedder.ready() and embedder.status()["state"] != "error" and time.monotonic() < deadline:
            time.sleep(0.05)

    yield {
        "threads": embedder._model.threads if embedder.ready() else None,
        "data_dir": data_dir,
        "embedder": embedder,
        "before": before,
        "during": during,
        "start_returned_after": start_returned_after,
    }


@pytest.fixture
def embedder(loaded: dict[str, Any]) -> MiniLMEmbedder:
    emb = loaded["embedder"]
    assert emb.ready(), f"model did not load: {emb.status()}"
    return emb


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.model
def test_start_loads_in_background_without_network(loaded: dict[str, Any]) -> None:
    emb = loaded["embedder"]
    assert loaded["before"] == "not_loaded"
    assert loaded["during"] in ("loading", "ready")
    assert loaded["start_returned_after"] < 1.0  # start() must not block on the load
    assert emb.ready(), emb.status()  # NetworkAttempted would have made the load fail


@pytest.mark.model
def test_status_fields(embedder: MiniLMEmbedder) -> None:
    status = embedder.status()
    assert status["embedder"] == "minilm" and status["state"] == "ready"
    assert status["model"] == embedder.model_id == MODEL_ID + "+int8" == "sentence-transformers/all-MiniLM-L6-v2+int8"
    assert status["dim"] == 384 and status["error"] is None and status["precision"] == "int8"  # the default
    assert status["runtime"] == "onnx" and status["graph"].startswith("shipped int8 graph")  # the default runtime
    embedder.start()  # a second start is a no-op
    assert embedder.status()["state"] == "ready"


@pytest.mark.model
def test_threads_applied(loaded: dict[str, Any]) -> None:
    assert loaded["threads"] == 1  # torch_threads is also ONNX Runtime's intra-op thread count


@pytest.mark.model
def test_documents_shape_dtype_norm(embedder: MiniLMEmbedder) -> None:
    texts = [f"fact number {i} about the project" for i in range(40)]  # more than one batch of 32
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (40, DIM) and embedder.dim == 384
    assert vectors.dtype == np.float32 and vectors.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed_documents([]).shape == (0, DIM)


@pytest.mark.model
def test_deterministic(embedder: MiniLMEmbedder) -> None:
    a = embedder.embed_documents(["The user likes pytest for tests"])[0]
    b = embedder.embed_documents(["The user likes pytest for tests"])[0]
    np.testing.assert_allclose(a, b, atol=1e-6)


@pytest.mark.model
def test_paraphrase_closer_than_unrelated(embedder: MiniLMEmbedder) -> None:
    query = embedder.embed_query("which test runner does the user prefer")
    related, unrelated = embedder.embed_documents(
        ["The user likes pytest for tests", "The billing database runs Postgres 15"]
    )
    assert cos(query, related) > cos(query, unrelated) + 0.1


@pytest.mark.model
def test_query_matches_document_vector(embedder: MiniLMEmbedder) -> None:
    text = "deploys go through the staging cluster first"
    np.testing.assert_allclose(embedder.embed_query(text), embedder.embed_documents([text])[0], atol=1e-5)


@pytest.mark.model
def test_query_cache(embedder: MiniLMEmbedder) -> None:
    text = "query cache check"
    first = embedder.embed_query(text)
    hits = embedder.status()["query_cache"]["hits"]
    first[:] = 0.0  # must not reach the cache
    second = embedder.embed_query(text)
    assert embedder.status()["query_cache"]["hits"] == hits + 1
    assert second.shape == (DIM,) and second.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(second), 1.0, atol=1e-5)
    np.testing.assert_array_equal(second, embedder.embed_query(text))


@pytest.mark.model
def test_concurrent_callers_get_consistent_vectors(embedder: MiniLMEmbedder) -> None:
    texts = [f"concurrent fact {i}" for i in range(8)]
    reference = embedder.embed_documents(texts)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(embedder.embed_documents(texts))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for result in results:
        np.testing.assert_allclose(result, reference, atol=1e-5)


@pytest.mark.model
def test_concurrent_first_calls_share_one_load(embedder: MiniLMEmbedder, loaded: dict[str, Any]) -> None:
    fresh = MiniLMEmbedder(Settings(embedder="minilm", torch_threads=1, data_dir=loaded["data_dir"]))
    loads = 0
    real_load = fresh._load

    def counting_load() -> Any:
        nonlocal loads
        loads += 1
        return real_load()

    fresh._load = counting_load  # type: ignore[method-assign]
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(fresh.embed_query("shared load"))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert loads == 1 and len(results) == 3 and fresh.ready()
    np.testing.assert_allclose(results[0], embedder.embed_query("shared load"), atol=1e-5)


def test_broken_model_folder_raises_clearly(tmp_path: Path) -> None:
    broken = MiniLMEmbedder(Settings(embedder="minilm", data_dir=tmp_path), model_dir=tmp_path)
    with pytest.raises(EmbeddingUnavailable, match="MiniLM files missing in"):
        broken.embed_query("x")
    status = broken.status()
    assert status["state"] == "error" and "config.json, model.safetensors" in status["error"]
    assert not broken.ready()
    with pytest.raises(EmbeddingUnavailable):  # remembered, not retried
        broken.embed_documents(["x"])


def test_start_with_broken_folder_ends_in_error(tmp_path: Path) -> None:
    broken = MiniLMEmbedder(Settings(embedder="minilm", data_dir=tmp_path), model_dir=tmp_path)
    broken.start()
    until(lambda: broken.status()["state"] != "loading", 5, every=0.01,
          what=lambda: f"the load of a broken folder ending ({broken.status()})")
    assert broken.status()["state"] == "error" and not broken.ready()
