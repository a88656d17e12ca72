"""build_embedder picks the implementation named by MEMORY_EMBEDDER, without loading anything."""

from __future__ import annotations

import sys

import pytest

from service.config import Settings
from service.embedding.disabled import DisabledEmbedder
from service.container import build_embedder
from service.embedding.minilm import MiniLMEmbedder
from service.embedding.openai import OpenAIEmbedder


def test_minilm_is_the_default_and_loads_nothing() -> None:
    assert Settings.model_fields["embedder"].default == "minilm"
    embedder = build_embedder(Settings(embedder="minilm"))
    assert isinstance(embedder, MiniLMEmbedder)
    assert embedder.enabled and embedder.dim == 384
    assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2+int8"  # int8 is the default precision
    assert embedder.status()["state"] == "not_loaded" and not embedder.ready()


def test_openai() -> None:
    embedder = build_embedder(Settings(embedder="openai", embedder_url="http://127.0.0.1:9/v1", embedder_model="m"))
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.model_id == "openai:m" and embedder.dim is None


def test_none() -> None:
    embedder = build_embedder(Settings(embedder="none"))
    assert isinstance(embedder, DisabledEmbedder)
    assert not embedder.enabled and embedder.model_id == "none" and embedder.dim is None
    assert embedder.status() == {
        "embedder": "none",
        "state": "disabled",
        "model": "none",
        "note": "lexical search only (MEMORY_EMBEDDER=none)",
    }


def test_disabled_embedder_refuses_to_embed() -> None:
    from service.errors import EmbeddingUnavailable

    embedder = DisabledEmbedder()
    for call in (lambda: embedder.embed_query("q"), lambda: embedder.embed_documents(["d"])):
        with pytest.raises(EmbeddingUnavailable, match=r"embeddings are disabled \(MEMORY_EMBEDDER=none\)"):
            call()


def test_env_variable_selects_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDER", "none")
    assert isinstance(build_embedder(Settings()), DisabledEmbedder)


def test_building_does_not_import_torch() -> None:
    if "torch" in sys.modules:
        pytest.skip("torch already imported by an earlier test in this process")
    build_embedder(Settings(embedder="minilm"))
    assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules
