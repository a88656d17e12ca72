"""MEMORY_EMBEDDER_PRECISION=int8, the default: MiniLM's projections quantized at load in numpy, into the shipped
int8 template (service/embedding/int8_graph.py), real model.

Its vectors are close to the fp32 ones but not equal, so they carry a model id of their own: a store switched
from one precision to the other reports its vectors as another model's and re-embeds them. The weights are what
ONNX Runtime's own tool makes, bit for bit, and the vectors agree with the tool's graph's to cosine >= 0.99
(tests/embedding/ort_int8.py runs the tool)."""

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
    return MiniLMEmbedder(Settings())  # the default


@pytest.fixture(scope="module")
def fp32() -> MiniLMEmbedder:
    return MiniLMEmbedder(Settings(embedder_precision="fp32"))


def test_the_default_is_int8_where_an_int8_graph_exists() -> None:
    assert Settings().embedder_precision == "int8"
    assert Settings(embedder="none").embedder_precision == "fp32"  # nothing to quantize: no error either
    assert Settings(embedder_runtime="torch").embedder_precision == "fp32"


def test_the_weights_are_onnx_runtimes_own_and_so_are_the_vectors(tmp_path: Path, int8: MiniLMEmbedder) -> None:
    """The shipped template filled at load against quantize_dynamic run on the fp32 encoder (the test extra's
    onnx): every int8 weight and scale equal, the vectors equal to float noise on ordinary texts."""
    import onnx
    from onnx import numpy_helper

    from service.embedding.bert_graph import INT8_MANIFEST_FILE
    from service.embedding.encoder_graph import initializers
    from service.embedding.model_files import locate
    from service.embedding.onnx_minilm import OnnxMiniLM
    from tests.embedding.ort_int8 import quantize

    source = locate(None)
    reference = tmp_path / "ort-int8.onnx"
    quantize(source, reference)
    theirs = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(reference)).graph.initializer}
    ours = initializers(source, INT8_MANIFEST_FILE)
    pairs = [(name, name.replace(".T.int8", ".T_quantized")) for name in ours if name.endswith(".T.int8")]
    pairs += [(name, name.replace(".T.scale", ".T_scale")) for name in ours if name.endswith(".T.scale")]
    assert len(pairs) == 2 * 36
    for mine, tool in pairs:
        assert ours[mine].dtype == theirs[tool].dtype and np.array_equal(ours[mine], theirs[tool]), mine
    tool_encoder = OnnxMiniLM(reference.read_bytes(), source, 1)
    tool_encoder.batch_size = 1
    tool_vectors, our_vectors = tool_encoder.encode(TEXTS), int8.embed_documents(TEXTS)
    # Equal before ONNX Runtime's graph optimizations; after them the two graphs take different fused kernels and an
    # activation can round the other way: on the labelled set's 400 texts cosine 0.9997 on average, 0.994 at least,
    # and both as close to fp32 (0.9935 on average) -- far closer than int8 is to fp32, so the model id stays.
    assert (tool_vectors * our_vectors).sum(axis=1).min() > 0.99


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


def test_int8_is_for_minilm_on_onnx_runtime_only() -> None:
    for other in ({"embedder_runtime": "torch"}, {"embedder": "none"}):
        with pytest.raises(ValidationError, match="MEMORY_EMBEDDER_PRECISION=int8 quantizes MiniLM on ONNX Runtime"):
            Settings(embedder_precision="int8", **other)
    with pytest.raises(ValidationError, match="precision"):
        Settings(embedder_precision="int4")


def _cli(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.output)


def test_switching_precision_reports_the_other_models_vectors_and_reembeds_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path))
    with build_services(Settings(data_dir=tmp_path, embedder_precision="fp32")) as services:
        services.embedder.embed_documents(["loaded"])  # writes never wait for a loading model
        profile = services.profiles.create("work")
        for n, text in enumerate(TEXTS[:4]):
            services.facts.write(profile, title=f"fact {n}", text=text, kind="project", tags=[])

    with build_services(Settings()) as services:  # the default: int8
        embedder = services.readiness()["checks"]["embedder"]
        assert embedder["stale_vectors"] == {MODEL_ID: 4} and "memory reindex --reembed" in embedder["fix"]
    code, out = _cli("check")
    assert code == 1 and out["differences"]["work"]["facts_without_current_vector"] == 4
    assert out["differences"]["work"]["current_model"] == f"{MODEL_ID}+int8"
    assert out["differences"]["work"]["stored_models"] == {MODEL_ID: 4}

    code, out = _cli("reindex", "--reembed")
    assert code == 0
    assert _cli("check") == (0, {"ok": True, "differences": {},
                                 "embedder": {"model": f"{MODEL_ID}+int8", "precision": "int8"}})
    with build_services(Settings()) as services:
        assert "stale_vectors" not in services.readiness()["checks"]["embedder"]
        found = services.search.search(services.profiles.get("work"), "where does the canonical data live")
        assert found.mode == "hybrid" and found.facts[0].fact.text == TEXTS[3]


def test_weights_of_another_shape_are_the_embedders_error(tmp_path: Path) -> None:
    """Weights that do not fit the int8 graph: one line in the embedder's status, EmbeddingUnavailable on use."""
    from service.embedding.model_files import locate
    from service.errors import EmbeddingUnavailable

    source = locate(None)
    for item in source.iterdir():
        (tmp_path / item.name).symlink_to(item)
    (tmp_path / "config.json").unlink()
    config = json.loads((source / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_size": 512}))
    embedder = MiniLMEmbedder(Settings(), model_dir=tmp_path)
    with pytest.raises(EmbeddingUnavailable, match="hidden_size"):
        embedder.embed_query("anything")
    assert embedder.status()["state"] == "error" and "hidden_size" in embedder.status()["error"]


def test_an_fp32_store_switches_to_the_int8_default_without_downtime(tmp_path: Path) -> None:
    """A store written by a release whose default was fp32, opened with the int8 default (embedded): searches
    answer all along, the background pass (what `memory serve` runs at start-up) re-embeds every fact, and
    /readyz shows what is left and then nothing."""
    import threading

    with build_services(Settings(data_dir=tmp_path, embedder_precision="fp32")) as services:
        services.embedder.embed_documents(["loaded"])
        profile = services.profiles.create("work")
        for n in range(70):
            services.facts.write(profile, title=f"fact {n}", text=f"{TEXTS[n % 4]} (note {n})", kind="project",
                                 tags=[])

    with build_services(Settings(data_dir=tmp_path)) as services:  # the default: int8
        services.embedder.embed_documents(["loaded"])
        embedder = services.readiness()["checks"]["embedder"]
        assert embedder["stale_vectors"] == {MODEL_ID: 70} and "background" in embedder["fix"]
        profile = services.profiles.get("work")
        answers: list[str] = []
        warm = threading.Thread(target=services.backend.capabilities.warm)
        warm.start()
        while warm.is_alive():
            answers.append(services.search.search(profile, "where does the canonical data live").mode)
        warm.join()
        assert answers and set(answers) <= {"hybrid", "lexical", "degraded"}, answers  # never an error
        ready = services.readiness()
        assert "stale_vectors" not in ready["checks"]["embedder"]
        assert ready["checks"]["search"]["facts_without_vector"] == 0
        found = services.search.search(profile, "where does the canonical data live")
        assert found.mode == "hybrid" and TEXTS[3] in found.facts[0].fact.text
