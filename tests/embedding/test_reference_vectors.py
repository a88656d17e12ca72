"""The default embedder gives the vectors sentence-transformers (torch) gives, so stored vectors stay valid.

tests/embedding/data/reference_vectors.json was made on torch by make_reference_vectors.py; where torch
and sentence-transformers are installed (the `[torch]` extra), a second test compares live.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from service.config import Settings
from service.errors import EmbeddingUnavailable
from service.embedding.minilm import DIM, MiniLMEmbedder
from service.embedding.model_files import bundled_model_dir
from tests.embedding.make_reference_vectors import CHECK, CHECK_TEXTS, FIXTURE, REFERENCE_TEXTS
from tests.embedding.test_encoder_graph import shared_data_dir

pytestmark = pytest.mark.model

TOLERANCE = 1e-5
TORCH_MISSING = next((name for name in ("torch", "sentence_transformers") if importlib.util.find_spec(name) is None),
                     None)


def load(path: Path) -> tuple[list[str], list[int], np.ndarray]:
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    return ([i["text"] for i in items], [i["tokens"] for i in items],
            np.array([i["vector"] for i in items], dtype=np.float32))


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> MiniLMEmbedder:
    return MiniLMEmbedder(Settings(data_dir=shared_data_dir(tmp_path_factory), embedder_precision="fp32"))


def test_the_fixture_covers_what_it_says() -> None:
    texts, tokens, vectors = load(FIXTURE)
    assert texts == REFERENCE_TEXTS and len(texts) >= 30
    assert vectors.shape == (len(texts), DIM)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert {256, 257} <= set(tokens) and max(tokens) > 1000  # the max-length edge, one past it, far past it
    assert min(tokens) == 2 and "a" in texts  # [CLS] [SEP] only, and one letter
    assert load(CHECK)[0] == CHECK_TEXTS  # the vectors the service checks every graph against


def test_the_fp32_embedder_matches_the_torch_vectors(embedder: MiniLMEmbedder) -> None:
    texts, _, reference = load(FIXTURE)
    batched = embedder.embed_documents(texts)
    single = np.vstack([embedder.embed_query(text) for text in texts])
    assert embedder.status()["runtime"] == "onnx"
    diff = max(float(np.abs(batched - reference).max()), float(np.abs(single - reference).max()))
    assert diff < TOLERANCE, f"max abs diff {diff:.2e}"


@pytest.mark.skipif(TORCH_MISSING is not None, reason=f"live cross-check needs the [torch] extra ({TORCH_MISSING} "
                                                      "is not installed); the committed fixture is checked above")
def test_the_fp32_embedder_matches_sentence_transformers_live(embedder: MiniLMEmbedder) -> None:
    from sentence_transformers import SentenceTransformer

    texts = REFERENCE_TEXTS + [f"fact {i}: the billing service caches results in Redis" for i in range(40)]
    model = SentenceTransformer(str(bundled_model_dir()), device="cpu", local_files_only=True)
    reference = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    diff = float(np.abs(embedder.embed_documents(texts) - reference).max())
    assert diff < TOLERANCE, f"max abs diff {diff:.2e}"


@pytest.mark.skipif(TORCH_MISSING is not None, reason=f"MEMORY_EMBEDDER_RUNTIME=torch needs the [torch] extra "
                                                      f"({TORCH_MISSING} is not installed)")
def test_torch_runtime_gives_the_same_vectors(tmp_path: Path) -> None:
    texts, _, reference = load(FIXTURE)
    on_torch = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_runtime="torch"))
    diff = float(np.abs(on_torch.embed_documents(texts) - reference).max())
    assert on_torch.status()["runtime"] == "torch" and "graph" not in on_torch.status()
    assert diff < TOLERANCE and not (tmp_path / "models").exists()  # builds nothing


@pytest.mark.skipif(TORCH_MISSING is None, reason="torch is installed here")
def test_torch_runtime_without_torch_says_what_to_install(tmp_path: Path) -> None:
    on_torch = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_runtime="torch"))
    with pytest.raises(EmbeddingUnavailable, match=r"pip install 'memory-service\[torch\]'"):
        on_torch.embed_query("x")
    assert on_torch.status()["state"] == "error"
