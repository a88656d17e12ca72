"""MiniLM on ONNX Runtime from the shipped graph template: no torch, no `onnx` package, nothing built or
written at start-up, and weights that do not give sentence-transformers' vectors are refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from service.config import Settings
from service.errors import EmbeddingUnavailable
from service.embedding import int8_graph, bert_graph, encoder_graph
from service.embedding.minilm import MiniLMEmbedder
from service.embedding.model_files import bundled_model_dir

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "sentence_transformers", "onnx")


def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data dir shared by the model tests of this session (the embedder writes nothing into it)."""
    path = tmp_path_factory.getbasetemp() / "minilm-data"
    path.mkdir(exist_ok=True)
    return path


def run_python(code: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def model_copy(tmp_path: Path) -> Path:
    """A writable copy of the bundled model folder (symlinks for the big files nobody edits)."""
    source, copy = bundled_model_dir(), tmp_path / "model"
    copy.mkdir()
    for item in source.iterdir():
        if item.is_file():
            (copy / item.name).symlink_to(item) if item.name == "model.safetensors" else shutil.copy(item, copy)
    return copy


def test_loads_without_torch_or_onnx_and_writes_nothing(tmp_path: Path) -> None:
    out = run_python(f"""
        import json, sys
        from pathlib import Path
        from service.config import Settings
        from service.embedding.minilm import MiniLMEmbedder
        statuses = []
        for precision in ("int8", "fp32"):
            embedder = MiniLMEmbedder(Settings(data_dir=Path({str(tmp_path)!r}), embedder_precision=precision))
            vector = embedder.embed_query("loaded here")
            statuses.append(embedder.status())
        print(json.dumps({{"status": statuses, "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
    """)
    assert out["heavy"] == [], f"imported {out['heavy']}"  # the default int8 graph too: no onnx, no torch
    int8, fp32 = out["status"]
    assert int8["runtime"] == "onnx" and int8["graph"] == int8_graph.ORIGIN and int8["precision"] == "int8"
    assert fp32["runtime"] == "onnx" and fp32["graph"] == encoder_graph.ORIGIN
    assert list(tmp_path.iterdir()) == []  # no graph cache, nothing else


def test_the_shipped_templates_are_what_the_builder_writes(tmp_path: Path) -> None:
    """Changing bert_graph.py without `python -m service.embedding.bert_graph` fails here (both templates)."""
    bert_graph.write_template(bundled_model_dir(), tmp_path / "t.onnx", tmp_path / "t.json")
    assert (tmp_path / "t.onnx").read_bytes() == bert_graph.TEMPLATE_FILE.read_bytes()
    assert (tmp_path / "t.json").read_text() == bert_graph.MANIFEST_FILE.read_text()
    bert_graph.write_template(bundled_model_dir(), tmp_path / "i.onnx", tmp_path / "i.json", int8=True)
    assert (tmp_path / "i.onnx").read_bytes() == bert_graph.INT8_TEMPLATE_FILE.read_bytes()
    assert (tmp_path / "i.json").read_text() == bert_graph.INT8_MANIFEST_FILE.read_text()


def test_the_int8_template_holds_no_weights_and_passes_the_onnx_checker() -> None:
    import onnx

    model = onnx.load(str(bert_graph.INT8_TEMPLATE_FILE), load_external_data=False)
    ops = [op.op_type for op in model.graph.node]
    assert ops.count("MatMulInteger") == 36 and ops.count("DynamicQuantizeLinear") == 24 and "MatMul" not in ops
    assert ops.count("MultiHeadAttention") == 6  # the attention: one ONNX Runtime kernel a layer
    external = {t.name for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL}
    listed = {w["name"] for w in encoder_graph.manifest(bert_graph.INT8_MANIFEST_FILE)["weights"]}
    assert external == listed and sum(name.endswith(".T.int8") for name in listed) == 36
    assert bert_graph.INT8_TEMPLATE_FILE.stat().st_size < 60_000  # no weights inside
    weights = encoder_graph.initializers(bundled_model_dir(), bert_graph.INT8_MANIFEST_FILE)  # as the loader does
    for tensor in model.graph.initializer:
        if tensor.name in weights:
            tensor.CopyFrom(onnx.numpy_helper.from_array(weights[tensor.name], tensor.name))
    onnx.checker.check_model(model, full_check=True)


def test_the_template_holds_no_weights_and_passes_the_onnx_checker() -> None:
    import onnx

    model = onnx.load(str(bert_graph.TEMPLATE_FILE), load_external_data=False)
    assert [i.name for i in model.graph.input] == list(bert_graph.INPUTS)
    assert [o.name for o in model.graph.output] == [bert_graph.OUTPUT]
    assert {op.op_type for op in model.graph.node} >= {"LayerNormalization", "Erf", "MultiHeadAttention", "MatMul"}
    assert {op.domain for op in model.graph.node} == {"", bert_graph.RUNTIME_DOMAIN}
    assert model.opset_import[0].version == bert_graph.OPSET
    external = {t.name for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL}
    listed = {w["name"] for w in encoder_graph.manifest()["weights"]}
    assert external == listed and len(listed) == 3 + 2 + 6 * 16  # embeddings, their LayerNorm, 16 per layer
    assert bert_graph.TEMPLATE_FILE.stat().st_size < 100_000  # the graph alone; the 87 MB stay in the package
    inline = sum(len(t.raw_data) for t in model.graph.initializer)
    assert inline < 1_000  # only the small constants (shapes, 1.0, sqrt 2, ...)
    weights = encoder_graph.initializers(bundled_model_dir())  # filled in as the loader does, then checked whole
    for tensor in model.graph.initializer:
        if tensor.name in weights:
            tensor.CopyFrom(onnx.numpy_helper.from_array(weights[tensor.name], tensor.name))
    onnx.checker.check_model(model, full_check=True)  # full_check: shape inference over the whole graph


def test_the_loaded_graph_gives_the_fixture_vectors(tmp_path: Path) -> None:
    """The full check (the 256-token text included); test_reference_vectors.py covers the 33-text fixture."""
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_precision="fp32"))
    assert embedder.embed_documents(["a b c"]).shape == (1, 384)
    assert embedder._model.check() < 1e-5


@pytest.mark.parametrize(("precision", "factor"), [("fp32", 1.5), ("int8", -1.0)])
def test_other_weights_are_refused(precision: str, factor: float, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """E.g. MEMORY_MODEL_DIR holding other weights: stored vectors would stop being comparable. fp32 is held to
    1e-4 per element (a layer's query weights x1.5 is refused); int8, checked by cosine (>= 0.98), refuses
    weights that move the vectors as far as int8 itself does not (a layer's value weights negated)."""
    real = bert_graph.read_weights

    def other_weights(model_dir: Path) -> dict[str, np.ndarray]:
        weights = dict(real(model_dir))
        name = f"encoder.layer.0.attention.self.{'query' if precision == 'fp32' else 'value'}.weight"
        weights[name] = weights[name] * factor
        return weights

    monkeypatch.setattr(encoder_graph, "read_weights", other_weights)
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_precision=precision))
    with pytest.raises(EmbeddingUnavailable, match="do not give all-MiniLM-L6-v2's vectors"):
        embedder.embed_query("x")
    status = embedder.status()
    assert status["state"] == "error" and "sentence-transformers'" in status["error"]
    assert "\n" not in status["error"]


def test_a_missing_tensor_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = bert_graph.read_weights
    gone = "encoder.layer.5.output.dense.bias"
    monkeypatch.setattr(encoder_graph, "read_weights",
                        lambda model_dir: {k: v for k, v in real(model_dir).items() if k != gone})
    with pytest.raises(EmbeddingUnavailable, match=f"no tensor '{gone}'"):
        encoder_graph.initializers(bundled_model_dir())


def test_another_architecture_is_refused_with_what_differs(tmp_path: Path) -> None:
    folder = model_copy(tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 12}))
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path), model_dir=folder)
    with pytest.raises(EmbeddingUnavailable, match=r"not all-MiniLM-L6-v2's: layers 12 \(graph: 6\)"):
        embedder.embed_query("x")


def test_unsupported_config_is_refused(tmp_path: Path) -> None:
    model_dir = bundled_model_dir()
    config = json.loads((model_dir / "config.json").read_text())
    read = bert_graph.BertConfig.read(model_dir)
    assert (read.layers, read.hidden, read.heads, read.intermediate, read.eps) == (6, 384, 12, 1536, 1e-12)
    for key, value in (("model_type", "roberta"), ("hidden_act", "relu"), ("position_embedding_type", "rotary")):
        (tmp_path / "config.json").write_text(json.dumps({**config, key: value}))
        with pytest.raises(bert_graph.UnsupportedModel, match=key):
            bert_graph.BertConfig.read(tmp_path)


def test_exit_during_the_load_waits_for_it(tmp_path: Path) -> None:
    """onnxruntime aborts the process (status 134) if it exits while a thread is inside it. An exit in the
    middle of the background load waits for it instead (and so completes it)."""
    out = run_python(f"""
        import json, threading, time
        from pathlib import Path
        from service.embedding import encoder_graph
        real, began = encoder_graph.initializers, threading.Event()

        def slow(*args, **kwargs):
            began.set()
            time.sleep(0.3)
            return real(*args, **kwargs)

        encoder_graph.initializers = slow
        from service.config import Settings
        from service.embedding.minilm import MiniLMEmbedder
        embedder = MiniLMEmbedder(Settings(data_dir=Path({str(tmp_path)!r})))
        embedder.start()
        assert began.wait(120)
        print(json.dumps({{"state": embedder.status()["state"]}}))
    """)
    assert out["state"] == "loading"  # it exited mid-load, and run_python saw exit status 0


@pytest.mark.parametrize("precision", ["int8", "fp32"])
def test_the_thread_pool_spins_within_a_run_and_stops_after_it(precision: str, tmp_path: Path) -> None:
    """Spinning between a run's nodes (bench/embedder_pool.py: ~1 ms off a query, ~2 ms off a fact), never
    between calls, where it would take the web server's and the database's CPU."""
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_precision=precision))
    embedder.embed_documents(["a b c"])
    options = embedder._model._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "1"
    assert options.get_session_config_entry("session.force_spinning_stop") == "1"
