"""Two processes that need the node's distribution at once build it once (tests/support/opensearch/build.py).

On a fresh machine both pytest-xdist workers start their node together: before the lock, each laid out the
tree in a directory of its own and then replaced the finished tree with it, so the second removed the first's
jars while the first's security demo installer ran from them (NoClassDefFoundError, one worker's tests all in
error). Nothing is built here: the laying out is replaced by a stand-in that takes its time."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

import pytest

from tests.support.opensearch import build as distribution


def test_the_lock_excludes_another_holder_until_released(tmp_path: Path) -> None:
    lock = tmp_path / "cache" / ".opensearch.lock"
    with distribution.one_at_a_time(lock):
        with open(lock, "a+b") as other, pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with open(lock, "a+b") as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again


def test_builds_at_once_lay_the_tree_out_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    final = tmp_path / "opensearch-x"
    laid_out: list[str] = []

    def lay_out(target: Path, stamp: str, *_: object, **__: object) -> Path:
        laid_out.append(threading.current_thread().name)
        time.sleep(0.5)  # long enough for the other thread to reach the lock meanwhile
        target.mkdir()
        (target / ".complete").write_text(stamp, encoding="utf-8")
        return target

    monkeypatch.setattr(distribution, "home", lambda secured=False: final)
    monkeypatch.setattr(distribution, "neural_search_zip", lambda: None)
    monkeypatch.setattr(distribution, "security_plugin_zip", lambda: None)
    monkeypatch.setattr(distribution, "java_home", lambda: tmp_path)
    monkeypatch.setattr(distribution, "_lay_out", lay_out)
    got: list[Path] = []
    workers = [threading.Thread(target=lambda: got.append(distribution.build(lambda _: None)), name=f"w{i}")
               for i in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
    assert got == [final, final]
    assert len(laid_out) == 1, laid_out
    assert distribution.build(lambda _: None) == final and len(laid_out) == 1  # complete: not laid out again
