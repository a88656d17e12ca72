"""MiniLM on ONNX Runtime: the graph is built from the weights without torch, cached once, reused, and
refused when it does not give sentence-transformers' vectors.

The real build runs once per session into a temporary data dir shared with test_minilm.py. Tests that
need another build patch `bert_graph.build_model` or copy that good file.
"""

from __future__ import annotations

import json
import logging
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
from service.embedding import bert_graph
from service.embedding.minilm import DIM, MiniLMEmbedder
from service.embedding.model_files import bundled_model_dir
from service.embedding.onnx_minilm import META_SOURCE_KEY, OnnxMiniLM
from service.embedding.onnx_store import BUILD_FORMAT, build_lock, onnx_path, source_key

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "sentence_transformers")


def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data dir (and so the built ONNX graph) shared by the model tests of this session."""
    path = tmp_path_factory.getbasetemp() / "minilm-data"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_data_dir(tmp_path_factory)


@pytest.fixture(scope="session")
def onnx_embedder(data_dir: Path) -> MiniLMEmbedder:
    embedder = MiniLMEmbedder(Settings(data_dir=data_dir))
    embedder.embed_query("load")
    return embedder


@pytest.fixture(scope="session")
def good_file(onnx_embedder: MiniLMEmbedder, data_dir: Path) -> Path:
    path = onnx_path(data_dir, source_key(bundled_model_dir()))
    assert path.is_file()
    return path


@pytest.fixture
def count_builds(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Counts graph builds (the real builder still runs)."""
    calls: list[Path] = []
    real = bert_graph.build_model

    def counting(model_dir: Path, metadata: dict[str, str] | None = None) -> Any:
        calls.append(model_dir)
        return real(model_dir, metadata)

    monkeypatch.setattr(bert_graph, "build_model", counting)
    return calls


def run_python(code: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


LOAD_AND_REPORT = """
    import json, sys
    from pathlib import Path
    from service.config import Settings
    from service.embedding.minilm import MiniLMEmbedder
    embedder = MiniLMEmbedder(Settings(data_dir=Path({data_dir!r})))
    vector = embedder.embed_query({text!r})
    heavy = [m for m in {heavy!r} if m in sys.modules]
    print(json.dumps({{"status": embedder.status(), "heavy": heavy, "vector": vector.tolist()}}))
"""


def test_the_graph_is_built_without_torch_and_cached(tmp_path: Path) -> None:
    code = LOAD_AND_REPORT.format(data_dir=str(tmp_path), text="built here", heavy=HEAVY)
    first = run_python(code)
    assert first["heavy"] == [], f"imported {first['heavy']}"
    assert first["status"]["runtime"] == "onnx" and first["status"]["graph"] == "built"
    second = run_python(code)
    assert second["heavy"] == [] and second["status"]["graph"] == "cache"
    np.testing.assert_allclose(second["vector"], first["vector"], rtol=0, atol=1e-7)


def test_the_cached_graph_is_named_by_the_weights_and_complete(good_file: Path, data_dir: Path) -> None:
    key = source_key(bundled_model_dir())
    assert good_file.name == f"all-MiniLM-L6-v2-{key}.onnx" and len(key) == 16
    assert good_file.stat().st_size > 80 * 2**20
    expected = (good_file.name, good_file.name + ".lock")
    leftovers = [p.name for p in (data_dir / "models").iterdir() if p.name not in expected]
    assert leftovers == []  # no temporary or refused files
    meta = OnnxMiniLM(good_file, bundled_model_dir(), 1).metadata()
    assert meta[META_SOURCE_KEY] == key and meta["memory.build_format"] == BUILD_FORMAT


def test_a_second_embedder_reuses_the_cached_graph(good_file: Path, data_dir: Path, count_builds: list[Path],
                                                   onnx_embedder: MiniLMEmbedder) -> None:
    before = good_file.stat().st_mtime_ns
    again = MiniLMEmbedder(Settings(data_dir=data_dir))
    np.testing.assert_allclose(again.embed_query("reuse"), onnx_embedder.embed_query("reuse"), atol=1e-7)
    assert again.status()["graph"] == "cache" and count_builds == []
    assert good_file.stat().st_mtime_ns == before


def test_waits_for_a_build_in_progress(good_file: Path, tmp_path: Path) -> None:
    """A process that finds the build lock taken waits, then uses the file the builder produced."""
    target = onnx_path(tmp_path, source_key(bundled_model_dir()))
    code = LOAD_AND_REPORT.format(data_dir=str(tmp_path), text="after the lock", heavy=HEAVY)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with build_lock(target):
        child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=3)  # blocked on the lock, not building on its own
        shutil.copyfile(good_file, target)  # what the builder would do before unlocking
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 0, stderr[-3000:]
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["status"]["graph"] == "cache"


def test_file_with_another_key_in_its_name_is_ignored(good_file: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    foreign = models / "all-MiniLM-L6-v2-0123456789abcdef.onnx"
    foreign.write_bytes(b"not a model")
    shutil.copyfile(good_file, models / good_file.name)
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path))
    embedder.embed_query("x")
    assert embedder.status()["graph"] == "cache"
    assert foreign.read_bytes() == b"not a model"  # left alone


def _retag(good_file: Path, target: Path) -> None:
    """A valid graph whose metadata says it came from other weights."""
    import onnx

    proto = onnx.load(str(good_file))
    for entry in proto.metadata_props:
        if entry.key == META_SOURCE_KEY:
            entry.value = "ffffffffffffffff"
    onnx.save(proto, str(target))


def _perturb(good_file: Path, target: Path) -> None:
    """Right metadata, wrong numbers: one weight matrix is scaled."""
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(good_file))
    for init in proto.graph.initializer:
        array = numpy_helper.to_array(init)
        if array.dtype == np.float32 and array.ndim == 2 and array.shape == (DIM, DIM):
            init.CopyFrom(numpy_helper.from_array(array * 1.5, init.name))
            break
    onnx.save(proto, str(target))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other-weights", "wrong-numbers"])
def test_bad_file_under_our_name_is_set_aside_and_built_again(
    damage: str, good_file: Path, tmp_path: Path, count_builds: list[Path], caplog: pytest.LogCaptureFixture
) -> None:
    target = onnx_path(tmp_path, source_key(bundled_model_dir()))
    target.parent.mkdir(parents=True)
    if damage == "garbage":
        target.write_bytes(b"\x00garbage" * 1000)
    elif damage == "truncated":
        target.write_bytes(good_file.read_bytes()[: 40 * 2**20])
    elif damage == "other-weights":
        _retag(good_file, target)
    else:
        _perturb(good_file, target)
    bad_bytes = target.read_bytes()
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path))
    with caplog.at_level(logging.WARNING):
        vector = embedder.embed_query("survives a bad file")
    assert embedder.status()["graph"] == "built" and len(count_builds) == 1
    (aside,) = target.parent.glob(f"{target.stem}.refused-*.onnx")
    assert aside.read_bytes() == bad_bytes  # kept for inspection, not deleted
    assert target.read_bytes() == good_file.read_bytes()  # the build is deterministic
    assert any("refused" in r.getMessage() for r in caplog.records)
    assert vector.shape == (DIM,)


def test_a_build_that_gives_other_vectors_is_refused(good_file: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """E.g. MEMORY_MODEL_DIR holding other weights: stored vectors would stop being comparable."""
    real = bert_graph.read_weights

    def other_weights(model_dir: Path) -> dict[str, np.ndarray]:
        weights = dict(real(model_dir))
        name = "encoder.layer.0.attention.self.query.weight"
        weights[name] = weights[name] * 1.5
        return weights

    monkeypatch.setattr(bert_graph, "read_weights", other_weights)
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path))
    with pytest.raises(EmbeddingUnavailable, match="does not give all-MiniLM-L6-v2's vectors"):
        embedder.embed_query("x")
    status = embedder.status()
    assert status["state"] == "error" and "differ from sentence-transformers'" in status["error"]
    assert "\n" not in status["error"]
    models = tmp_path / "models"
    assert [p.name for p in models.iterdir() if not p.name.endswith(".lock")] == []  # nothing kept


def test_unwritable_data_dir_builds_in_memory(tmp_path: Path, onnx_embedder: MiniLMEmbedder) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    embedder = MiniLMEmbedder(Settings(data_dir=blocker))  # models/ cannot be created under a file
    vector = embedder.embed_query("in memory")
    status = embedder.status()
    assert status["state"] == "ready" and status["graph"].startswith("built in memory (cannot cache it: ")
    np.testing.assert_allclose(vector, onnx_embedder.embed_query("in memory"), atol=1e-7)


def test_the_built_graph_passes_the_onnx_checker(good_file: Path) -> None:
    import onnx

    model = onnx.load(str(good_file))
    onnx.checker.check_model(model, full_check=True)  # full_check: shape inference over the whole graph
    assert [i.name for i in model.graph.input] == list(bert_graph.INPUTS)
    assert [o.name for o in model.graph.output] == [bert_graph.OUTPUT]
    assert {op.op_type for op in model.graph.node} >= {"LayerNormalization", "Erf", "Softmax", "MatMul"}
    assert model.opset_import[0].version == bert_graph.OPSET


def test_unsupported_config_is_refused_before_building(tmp_path: Path) -> None:
    model_dir = bundled_model_dir()
    config = json.loads((model_dir / "config.json").read_text())
    for key, value in (("model_type", "roberta"), ("hidden_act", "relu"), ("position_embedding_type", "rotary")):
        (tmp_path / "config.json").write_text(json.dumps({**config, key: value}))
        with pytest.raises(bert_graph.UnsupportedModel, match=key):
            bert_graph.BertConfig.read(tmp_path)
    read = bert_graph.BertConfig.read(model_dir)
    assert (read.layers, read.hidden, read.heads, read.intermediate, read.eps) == (6, 384, 12, 1536, 1e-12)


def test_exit_during_first_start_build_waits_for_it(tmp_path: Path) -> None:
    """onnxruntime aborts the process (status 134) if it exits while a thread is inside it. An exit in the
    middle of the background build waits for it instead (and so completes it)."""
    out = run_python(f"""
        import json, threading, time
        from pathlib import Path
        from service.embedding import bert_graph
        real_build, began = bert_graph.build_model, threading.Event()

        def build(*args, **kwargs):
            began.set()
            time.sleep(0.3)
            return real_build(*args, **kwargs)

        bert_graph.build_model = build
        from service.config import Settings
        from service.embedding.minilm import MiniLMEmbedder
        embedder = MiniLMEmbedder(Settings(data_dir=Path({str(tmp_path)!r})))
        embedder.start()
        assert began.wait(120)
        print(json.dumps({{"state": embedder.status()["state"]}}))
    """)
    assert out["state"] == "loading"  # it exited mid-load, and run_python saw exit status 0
    models = tmp_path / "models"
    assert [p.name for p in models.glob("*.onnx")] == [onnx_path(tmp_path, source_key(bundled_model_dir())).name]
    assert not list(models.glob(".*tmp-*"))
