"""One wait-until for the tests and the benchmarks: poll a condition until it holds or the time is up (never a
fixed sleep standing in for "ready")."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def until(condition: Callable[[], T], within: float, *, every: float = 0.1,
          what: str | Callable[[], str] = "the condition") -> T:
    """The condition's first truthy value, polled every `every` seconds; TimeoutError naming `what` (a text, or a
    function giving one when the time is up: the state to show) when `within` seconds pass first. An exception
    the condition raises ends the wait (a server thread that died says so at once)."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            said = what() if callable(what) else what
            raise TimeoutError(f"{said}: not within {within:g} s")
        time.sleep(every)
