"""Where the built ONNX graph lives, and getting a checked one: reuse it, or build it once.

    <data_dir>/models/all-MiniLM-L6-v2-<key>.onnx        the graph in use (86 MB)
    <data_dir>/models/all-MiniLM-L6-v2-<key>.onnx.lock   serialises builds between processes
    <data_dir>/models/all-MiniLM-L6-v2-<key>.refused-<time>-<pid>.onnx  a file refused at load, set aside

Why a cache rather than a build at every start: on the 2-core reference box, building the graph from
model.safetensors (service/embedding/bert_graph.py) and opening it takes 0.8-1.6 s and briefly holds
the weights three times; opening the cached file takes 0.15-0.3 s (bench/embedder.py prints both).

<key> hashes model.safetensors, config.json and BUILD_FORMAT, so other weights or a changed builder get
a new file and never meet an old graph. Files are written under a temporary name and renamed into place
only after their vectors matched the shipped sentence-transformers vectors, so a crash or a concurrent
reader never sees half a model. When the data dir cannot be written, the graph is built in memory at
every start instead (and status says why).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from service.errors import EmbeddingUnavailable
from service.embedding.exit_guard import ProcessExiting, exiting
from service.embedding.onnx_minilm import META_SOURCE_KEY, OnnxMiniLM, OnnxRefused

log = logging.getLogger(__name__)

STEM = "all-MiniLM-L6-v2"
BUILD_FORMAT = "2"  # bump when bert_graph.py changes what it builds (1 was the torch export)
LOCK_TIMEOUT_S = 120.0


def source_key(model_dir: Path) -> str:
    """Short hash of the weights, the model config and the build format (~0.07 s for the 87 MB of weights)."""
    digest = hashlib.sha256()
    for name in ("model.safetensors", "config.json"):
        with open(model_dir / name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"|")
    digest.update(f"format={BUILD_FORMAT}".encode())
    return digest.hexdigest()[:16]


def onnx_path(data_dir: Path, key: str) -> Path:
    return data_dir / "models" / f"{STEM}-{key}.onnx"


def set_aside(path: Path, label: str) -> Path:
    """Rename `path` out of the way (never delete it) and return the new name."""
    stamp = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    aside = path.with_name(f"{path.name.removesuffix('.onnx')}.{label}-{stamp}.onnx")
    os.replace(path, aside)
    return aside


@contextlib.contextmanager
def build_lock(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Exclusive across processes (and threads) for builds of `path`; a no-op without fcntl."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: the atomic rename still keeps readers safe
            yield
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if exiting():
                    raise ProcessExiting("the process is exiting") from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"another process has held {handle.name} for over {timeout:.0f}s") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def load_or_build(model_dir: Path, data_dir: Path, threads: int) -> OnnxMiniLM:
    """A checked ONNX encoder: the cached graph, or one built now. Raises EmbeddingUnavailable.

    The encoder's `origin` says which: "cache", "built", or "built in memory (...)".
    """
    key = source_key(model_dir)
    path = onnx_path(data_dir, key)
    if path.is_file():  # the common case: no lock needed to read a file that is only ever renamed in
        try:
            return _open(path, model_dir, threads, key, quick=True)
        except OnnxRefused:
            pass  # handled below, under the lock, in case another process is replacing it right now
    try:
        with build_lock(path):
            if path.is_file():
                try:
                    return _open(path, model_dir, threads, key, quick=True)
                except OnnxRefused as exc:
                    aside = set_aside(path, "refused")
                    log.warning("refused %s: %s; moved it to %s and building the graph again", path, exc, aside.name)
            for stale in path.parent.glob(f".{path.name}.tmp-*"):  # left by a build that was killed
                stale.unlink(missing_ok=True)
            return _build_into(path, model_dir, threads, key)
    except OSError as exc:  # read-only or full data dir: build in memory, every start
        reason = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        log.warning("cannot cache the ONNX graph under %s (%s); building it in memory", path.parent, reason)
        encoder = _checked(OnnxMiniLM(_serialized(model_dir, key), model_dir, threads), key, model_dir)
        encoder.origin = f"built in memory (cannot cache it: {reason})"
        return encoder


def _open(path: Path, model_dir: Path, threads: int, key: str, *, quick: bool) -> OnnxMiniLM:
    encoder = OnnxMiniLM(path, model_dir, threads)
    encoder.check(key, quick=quick)
    encoder.origin = "cache"
    return encoder


def _serialized(model_dir: Path, key: str) -> bytes:
    from service.embedding.bert_graph import build_model

    model = build_model(model_dir, {META_SOURCE_KEY: key, "memory.build_format": BUILD_FORMAT})
    return bytes(model.SerializeToString())


def _checked(encoder: OnnxMiniLM, key: str, model_dir: Path) -> OnnxMiniLM:
    try:
        encoder.check(key)
    except OnnxRefused as exc:
        raise EmbeddingUnavailable(
            f"the graph built from {model_dir} does not give all-MiniLM-L6-v2's vectors: {exc}"
        ) from exc
    return encoder


def _build_into(path: Path, model_dir: Path, threads: int, key: str) -> OnnxMiniLM:
    started = time.perf_counter()
    data = _serialized(model_dir, key)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        encoder = _checked(OnnxMiniLM(data, model_dir, threads), key, model_dir)  # the bytes just written
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    encoder.origin = "built"
    log.info("built the ONNX graph of %s in %.1fs: %s (%.0f MB)", STEM, time.perf_counter() - started, path,
             len(data) / 2**20)
    return encoder
