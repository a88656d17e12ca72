"""Picks the embedder named by MEMORY_EMBEDDER. Cheap: no model is loaded here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.embedding.disabled import DisabledEmbedder
from service.embedding.minilm import MiniLMEmbedder
from service.embedding.openai import OpenAIEmbedder

if TYPE_CHECKING:
    from service.config import Settings
    from service.domain.ports import Embedder


def build_embedder(settings: Settings) -> Embedder:
    """The embedder for `settings.embedder` ("minilm" | "openai" | "none"); call `start()` to load early."""
    if settings.embedder == "minilm":
        return MiniLMEmbedder(settings)
    if settings.embedder == "openai":
        return OpenAIEmbedder(settings)
    if settings.embedder == "none":
        return DisabledEmbedder()
    raise ValueError(f"unknown embedder {settings.embedder!r} (expected minilm, openai or none)")
