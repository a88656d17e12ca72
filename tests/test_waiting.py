"""bench/lib/waiting.py's until: the first truthy value, a TimeoutError naming what did not happen (with the state
at that moment), and an exception of the condition passed through at once."""

from __future__ import annotations

import pytest

from bench.lib.waiting import until


def test_until_returns_the_first_truthy_value() -> None:
    calls = iter([0, None, "", 7, 8])
    assert until(lambda: next(calls), 5, every=0) == 7


def test_until_names_what_did_not_happen() -> None:
    state = {"n": 0}

    def never() -> bool:
        state["n"] += 1
        return False

    with pytest.raises(TimeoutError, match=r"the node turning green \(checked \d+ times\): not within 0.05 s"):
        until(never, 0.05, every=0.01, what=lambda: f"the node turning green (checked {state['n']} times)")


def test_an_exception_of_the_condition_ends_the_wait() -> None:
    def broken() -> bool:
        raise RuntimeError("the server thread died")

    with pytest.raises(RuntimeError, match="died"):
        until(broken, 60)
