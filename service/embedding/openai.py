"""Embeddings from any OpenAI-compatible endpoint (MEMORY_EMBEDDER=openai): OpenAI, Ollama, vLLM, TEI...

URL: MEMORY_EMBEDDER_URL is the API base that ends just before `/embeddings`, e.g.
`https://api.openai.com/v1` or `http://localhost:11434/v1`; requests go to `{base}/embeddings`.
Nothing is guessed (no `/v1` is added), because some servers mount the API elsewhere. A trailing
slash is ignored, and a URL that already ends in `/embeddings` is used as is.

Behaviour:
- Documents are sent 64 per request; vectors are re-normalised to unit length (float32) because not
  every server normalises. The dimension is learned from the first answer; an answer with another
  dimension later is an error (the stored vectors would no longer be comparable).
- Every failure (connection, timeout, HTTP status, malformed or inconsistent answer) raises
  EmbeddingUnavailable with one line naming the URL and the cause. The API key never appears in
  messages or status.
- `start()` does nothing: a probe would cost a (possibly billed) request at every start and could
  not make the first call any faster. There is nothing to load, so `ready()` is True until a call
  fails, then False until a call succeeds again. Until the first call, `status()` (and so /readyz) checks that
  the endpoint's host and port accept a connection (no request, nothing billed): an endpoint that is not there
  is an error from the start, not "ready". There is no circuit breaker: every embed call
  tries the endpoint, so the service recovers on its own once the endpoint is back. Timeouts use
  MEMORY_EMBEDDER_TIMEOUT for each phase (connect, write, each read).
"""

from __future__ import annotations

import math
import socket
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import numpy as np

from service.errors import EmbeddingUnavailable
from service.domain.late import Embedding
from service.embedding.minilm import QueryCache

if TYPE_CHECKING:
    from service.config import Settings

BATCH_SIZE = 64
PROBE_SECONDS = 10.0  # how long a reachability probe's answer stands (status before the first call)


def embeddings_url(base_url: str) -> str:
    """The `/embeddings` endpoint for an API base URL (see the module docstring)."""
    base = base_url.strip().rstrip("/")
    if base.endswith("/embeddings"):
        return base
    return f"{base}/embeddings"


def _redact_url(url: str) -> str:
    """The URL without user:password@, fit for logs and /readyz."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


class OpenAIEmbedder:
    """Client of `POST {base}/embeddings` with body {"model": ..., "input": [...]}."""

    enabled = True

    def __init__(self, settings: Settings, *, batch_size: int = BATCH_SIZE) -> None:
        if not settings.embedder_url:
            raise ValueError("MEMORY_EMBEDDER=openai needs MEMORY_EMBEDDER_URL")
        self._url = embeddings_url(settings.embedder_url)
        self._shown_url = _redact_url(self._url)
        self._model = settings.embedder_model
        self._api_key = settings.embedder_api_key or None
        self._timeout = settings.embedder_timeout
        self._batch_size = batch_size
        self.model_id = f"openai:{settings.embedder_model}"
        self._dim: int | None = None
        self._last_error: str | None = None
        self._lock = threading.Lock()  # guards _dim, _last_error and lazy client creation
        self._client: httpx.Client | None = None
        self._cache = QueryCache()
        self._probed: tuple[float, str | None] | None = None  # (monotonic time, what _unreachable found)

    @property
    def dim(self) -> int | None:
        return self._dim

    def start(self) -> None:
        """Nothing to load (see the module docstring)."""

    def ready(self) -> bool:
        return self._last_error is None

    def forget_queries(self) -> None:
        self._cache.clear()

    def status(self) -> dict[str, Any]:
        error = self._last_error
        if error is None and self._dim is None:  # nothing asked of it yet: is the endpoint there at all?
            error = self._unreachable()
        return {
            "embedder": "openai",
            "state": "ready" if error is None else "error",
            "model": self.model_id,
            "url": self._shown_url,
            "dim": self._dim,
            "error": error,
            "query_cache": {"size": len(self._cache), "hits": self._cache.hits, "misses": self._cache.misses},
        }

    def _unreachable(self) -> str | None:
        """Why the endpoint cannot be reached (a TCP connection to its host and port, no request: nothing billed),
        or None; the answer is kept PROBE_SECONDS, so /readyz polled often does not knock every time. Before the
        first call this is all /readyz can know: it would otherwise say ready for an endpoint that is not there."""
        now = time.monotonic()
        with self._lock:
            if self._probed is not None and now - self._probed[0] < PROBE_SECONDS:
                return self._probed[1]
        parts = urlsplit(self._url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            with socket.create_connection((parts.hostname or "", port), timeout=min(self._timeout, 2.0)):
                found = None
        except OSError as exc:
            found = (f"embedder {self._shown_url}: not reachable ({exc.strerror or type(exc).__name__}); "
                     "check MEMORY_EMBEDDER_URL and that the server runs")
        with self._lock:
            self._probed = (now, found)
        return found

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self._dim or 0), dtype=np.float32)
        texts = list(texts)
        parts = [self._request(texts[i : i + self._batch_size]) for i in range(0, len(texts), self._batch_size)]
        return np.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_query_tokens(text).vector

    def embed_query_tokens(self, text: str) -> Embedding:
        """The vector alone: the embeddings API gives no token vectors."""
        return self._cache.get_or_compute(text, lambda t: Embedding(self._request([t])[0]))

    def embed_facts(self, texts: list[str]) -> list[Embedding]:
        return [Embedding(vector) for vector in self.embed_documents(texts)]

    def vocabulary(self) -> frozenset[str] | None:
        """The embeddings API does not publish one: every query is read by meaning."""
        return None

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    # -- one request -------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                headers = {"Content-Type": "application/json"}
                if self._api_key:
                    headers["Authorization"] = f"Bearer {self._api_key}"
                self._client = httpx.Client(timeout=httpx.Timeout(self._timeout), headers=headers)
            return self._client

    def _request(self, texts: list[str]) -> np.ndarray:
        try:
            vectors = self._post(texts)
        except EmbeddingUnavailable as exc:
            with self._lock:
                self._last_error = str(exc)
            raise
        with self._lock:
            self._last_error = None
        return vectors

    def _post(self, texts: list[str]) -> np.ndarray:
        try:
            response = self._http().post(self._url, json={"model": self._model, "input": texts})
        except httpx.TimeoutException as exc:
            raise self._unavailable(f"timed out after {self._timeout:g}s ({type(exc).__name__})") from exc
        except httpx.ConnectError as exc:
            raise self._unavailable(f"connection failed: {_one_line(exc)}") from exc
        except httpx.HTTPError as exc:
            raise self._unavailable(f"request failed: {type(exc).__name__}: {_one_line(exc)}") from exc
        if not response.is_success:
            body = _one_line(response.text)[:200]
            raise self._unavailable(f"HTTP {response.status_code}" + (f": {body}" if body else ""))
        try:
            payload = response.json()
        except ValueError as exc:
            raise self._unavailable(f"malformed JSON in answer: {_one_line(exc)}") from exc
        return self._vectors(payload, len(texts))

    def _vectors(self, payload: Any, expected: int) -> np.ndarray:
        """The answer's vectors in input order, unit length, float32; validated before use."""
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise self._unavailable("malformed answer: no `data` list")
        if len(data) != expected:
            raise self._unavailable(f"wrong number of vectors: sent {expected} texts, got {len(data)} vectors")
        rows: list[tuple[int, Any]] = []
        for position, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise self._unavailable(f"malformed answer: data[{position}] has no `embedding` list")
            index = item.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool):
                raise self._unavailable(f"malformed answer: data[{position}].index is not an integer")
            rows.append((index, item["embedding"]))
        rows.sort(key=lambda row: row[0])
        if [index for index, _ in rows] != list(range(expected)):
            raise self._unavailable("malformed answer: `index` values are not 0..n-1")
        dims = {len(embedding) for _, embedding in rows}
        if len(dims) != 1:
            raise self._unavailable(f"inconsistent vector dimensions in one answer: {sorted(dims)}")
        try:
            matrix = np.asarray([embedding for _, embedding in rows], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise self._unavailable("malformed answer: embeddings are not lists of numbers") from exc
        dim = matrix.shape[1]
        if dim == 0:
            raise self._unavailable("empty vectors in answer")
        if not np.isfinite(matrix).all():
            raise self._unavailable("non-finite values in vectors")
        norms = np.linalg.norm(matrix, axis=1)
        if (norms == 0).any() or not all(math.isfinite(n) for n in norms):
            raise self._unavailable("zero vector in answer (cannot be normalised)")
        with self._lock:
            if self._dim is None:
                self._dim = dim
            elif self._dim != dim:
                raise self._unavailable(f"vector dimension changed from {self._dim} to {dim}")
        return np.ascontiguousarray(matrix / norms[:, None], dtype=np.float32)

    def _unavailable(self, cause: str) -> EmbeddingUnavailable:
        message = f"embedder {self._shown_url}: {cause}"
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return EmbeddingUnavailable(message)


def _one_line(value: object) -> str:
    return " ".join(str(value).split())[:300]
