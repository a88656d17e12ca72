"""MEMORY_EMBEDDER_PRECISION=int8: MiniLM quantized at load (service/embedding/int8_graph.py), real model.

Its vectors are close to the fp32 ones but not equal, so they carry a model id of their own: a store switched
from one precision to the other reports its vectors as another model's and re-embeds them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from service.cli.main import app
from service.config import Settings
from service.container import build_services
from service.embedding.int8_graph import MIN_COSINE
from service.embedding.minilm import MODEL_ID, MiniLMEmbedder
from service.embedding.onnx_minilm import check_set

TEXTS = ["the deploy runbook lives in the wiki", "The user prefers pytest with plain asserts", "東京の天気",
         "PostgreSQL 16 is the canonical store; OpenSearch mirrors it", "a"]


@pytest.fixture(scope="module")
def int8() -> MiniLMEmbedder:
    return MiniLMEmbedder(Settings(embedder_precision="int8"))


@pytest.fixture(scope="module")
def fp32() -> MiniLMEmbedder:
    return MiniLMEmbedder(Settings())


def test_int8_vectors_are_unit_close_to_fp32_and_have_their_own_model_id(int8: MiniLMEmbedder,
                                                                        fp32: MiniLMEmbedder) -> None:
    quantized, full = int8.embed_documents(TEXTS), fp32.embed_documents(TEXTS)
    assert quantized.shape == (len(TEXTS), 384) and quantized.dtype == np.float32
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
    cosines = (quantized * full).sum(axis=1)
    assert cosines.min() >= MIN_COSINE and not np.allclose(quantized, full, atol=1e-4)  # close, not the same
    texts, reference = check_set()  # the load's own check: every shipped text against torch's vector
    assert ((int8.embed_documents(list(texts[:-1])) * reference[:-1]).sum(axis=1) >= MIN_COSINE).all()
    # One text per run: a vector does not depend on the texts embedded with it (activations are quantized
    # over the whole input), so a fact re-embedded in a batch of 32 keeps the vector it was written with.
    assert np.allclose(int8.embed_query(TEXTS[0]), quantized[0], atol=1e-6)
    assert np.allclose(int8.embed_documents(TEXTS[:1])[0], quantized[0], atol=1e-6)
    assert int8.model_id == f"{MODEL_ID}+int8" != fp32.model_id == MODEL_ID
    status = int8.status()
    assert status["precision"] == "int8" and status["model"] == int8.model_id and "int8" in status["graph"]
    assert fp32.status()["precision"] == "fp32"


def test_int8_is_for_minilm_on_onnx_runtime_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for other in ({"embedder_runtime": "torch"}, {"embedder": "none"}):
        with pytest.raises(ValidationError, match="MEMORY_EMBEDDER_PRECISION=int8 quantizes MiniLM on ONNX Runtime"):
            Settings(embedder_precision="int8", **other)
    with pytest.raises(ValidationError, match="precision"):
        Settings(embedder_precision="int4")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnx" else real(name, *a))
    with pytest.raises(ValidationError, match=r"needs the onnx package.*pip install '\.\[int8\]'"):
        Settings(embedder_precision="int8")


def _cli(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.output)


def test_switching_precision_reports_the_other_models_vectors_and_reembeds_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path))
    services = build_services(Settings(data_dir=tmp_path))
    try:
        services.embedder.embed_documents(["loaded"])  # writes never wait for a loading model
        profile = services.profiles.create("work")
        for n, text in enumerate(TEXTS[:4]):
            services.facts.write(profile, title=f"fact {n}", text=text, kind="project", tags=[])
    finally:
        services.close()

    monkeypatch.setenv("MEMORY_EMBEDDER_PRECISION", "int8")
    services = build_services(Settings())
    try:
        embedder = services.readiness()["checks"]["embedder"]
        assert embedder["stale_vectors"] == {MODEL_ID: 4} and embedder["fix"] == "memory reindex --reembed"
    finally:
        services.close()
    code, out = _cli("check")
    assert code == 1 and out["differences"]["work"]["facts_without_current_vector"] == 4
    assert out["differences"]["work"]["current_model"] == f"{MODEL_ID}+int8"
    assert out["differences"]["work"]["stored_models"] == {MODEL_ID: 4}

    code, out = _cli("reindex", "--reembed")
    assert code == 0
    assert _cli("check") == (0, {"ok": True, "differences": {}})
    services = build_services(Settings())
    try:
        assert "stale_vectors" not in services.readiness()["checks"]["embedder"]
        found = services.search.search(services.profiles.get("work"), "where does the canonical data live")
        assert found.mode == "hybrid" and found.facts[0].fact.text == TEXTS[3]
    finally:
        services.close()


def test_a_quantization_that_fails_is_reported_as_the_embedders_error(tmp_path: Path) -> None:
    """Quantizing runs in a child process: its failure (here, weights of another shape) reaches the embedder's
    status as one line, and embedding raises EmbeddingUnavailable rather than anything of the child's."""
    from service.embedding.model_files import locate
    from service.errors import EmbeddingUnavailable

    source = locate(None)
    for item in source.iterdir():
        (tmp_path / item.name).symlink_to(item)
    (tmp_path / "config.json").unlink()
    config = json.loads((source / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_size": 512}))
    embedder = MiniLMEmbedder(Settings(embedder_precision="int8"), model_dir=tmp_path)
    with pytest.raises(EmbeddingUnavailable, match="cannot quantize the encoder to int8: .*hidden_size"):
        embedder.embed_query("anything")
    assert embedder.status()["state"] == "error" and "hidden_size" in embedder.status()["error"]
