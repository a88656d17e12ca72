"""all-MiniLM-L6-v2 on torch with sentence-transformers (MEMORY_EMBEDDER_RUNTIME=torch, the `[torch]` extra).

Not used by default: the ONNX runtime gives the same vectors without torch. It stays as the reference the
committed test vectors were made with, and for whoever prefers torch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from service.domain.late import TokenVectors
from service.errors import EmbeddingUnavailable

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
BATCH_SIZE = 32
EXTRA = "pip install 'memory-service[torch]'"

# Set before sentence_transformers/transformers/huggingface_hub are imported, which read them once.
_OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


class TorchMiniLM:
    """A loaded SentenceTransformer; `encode` gives L2-normalised float32 rows."""

    runtime = "torch"

    def __init__(self, model: Any) -> None:
        self.model = model

    @classmethod
    def load(cls, model_dir: Path, threads: int) -> TorchMiniLM:
        """Load and warm up the model, offline. Raises EmbeddingUnavailable when torch is not installed."""
        if not (model_dir / "modules.json").is_file():
            raise EmbeddingUnavailable(f"cannot load {MODEL_ID}: no sentence-transformers model in {model_dir}")
        os.environ.update(_OFFLINE_ENV)
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"MEMORY_EMBEDDER_RUNTIME=torch needs torch and sentence-transformers ({exc.name} is missing): "
                f"{EXTRA}"
            ) from exc

        hf_logging.disable_progress_bar()
        # Process-wide: applies to threads that first use torch after this point (all embed calls).
        torch.set_num_threads(threads)
        model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        model.eval()
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim != DIM:
            raise EmbeddingUnavailable(f"cannot load {MODEL_ID}: model in {model_dir} has dim {dim}, expected {DIM}")
        # One warm-up pass so the first real query does not pay for lazy initialisation.
        model.encode(["warm up"], batch_size=1, normalize_embeddings=True, show_progress_bar=False)
        return cls(model)

    @property
    def threads(self) -> int:
        import torch

        return torch.get_num_threads()

    def encode_with_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[TokenVectors | None]]:
        """The vectors; no token vectors on this runtime (the ranking stage then leaves late interaction out)."""
        return self.encode(texts), [None] * len(texts)

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            texts,
            batch_size=BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
