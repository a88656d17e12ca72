"""Let model work in other threads finish before the interpreter exits, instead of crashing it.

torch and onnxruntime abort the whole process ("terminate called without an active exception",
exit status 134) when the interpreter shuts down while another thread is inside them, e.g. the
daemon thread loading MiniLM (and, on a first start, building its ONNX graph), even when it is only
freeing torch objects. Such work runs inside `model_work()`: at exit we wait for what is running
(at most EXIT_WAIT_S in all), refuse to start more, and let the background loading threads handed
to `join_at_exit` finish.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
from collections.abc import Iterator

from service.errors import EmbeddingUnavailable

EXIT_WAIT_S = 60.0

_running = 0
_exiting = False
_changed = threading.Condition()
_threads: list[threading.Thread] = []


class ProcessExiting(EmbeddingUnavailable):
    """The interpreter is shutting down: no new model work is started."""


def exiting() -> bool:
    return _exiting


def join_at_exit(thread: threading.Thread) -> None:
    """Wait for this (daemon) thread at exit, after the model work."""
    with _changed:
        _threads[:] = [t for t in _threads if t.is_alive()]
        _threads.append(thread)


@contextlib.contextmanager
def model_work() -> Iterator[None]:
    """Marks a stretch of torch/onnxruntime work; raises ProcessExiting once the process is exiting."""
    global _running
    with _changed:
        if _exiting:
            raise ProcessExiting("the process is exiting")
        _running += 1
    try:
        yield
    finally:
        with _changed:
            _running -= 1
            _changed.notify_all()


@atexit.register
def _wait_for_model_work() -> None:
    global _exiting
    deadline = time.monotonic() + EXIT_WAIT_S
    with _changed:
        _exiting = True
        _changed.wait_for(lambda: _running == 0, timeout=EXIT_WAIT_S)
        threads = list(_threads)
    for thread in threads:
        if thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
