"""A throwaway server run from a terminal until Ctrl-C, SIGTERM or SIGHUP (`make postgres`, `make opensearch`)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def serve_until_stopped(start: Callable[[], T], announce: Callable[[T], None], stop: Callable[[T], None]) -> int:
    """start(), announce() what started, sleep until one of SIGNALS, then stop() it; 0. SIGINT is handled
    explicitly: a process started in the background of a shell without job control (`make opensearch &` in a
    script, a CI step) inherits SIGINT ignored, and Python then leaves it ignored. The signals are ignored while
    stop() runs, so a second Ctrl-C does not cut the clean stop short. What start() raises is the caller's."""
    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    for sig in SIGNALS:
        signal.signal(sig, interrupt)
    started: list[T] = []
    try:
        started.append(start())
        announce(started[0])
        while True:
            signal.pause()
    except KeyboardInterrupt:
        return 0
    finally:
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        if started:
            stop(started[0])
