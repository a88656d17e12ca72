"""The console script starts the model before the heavy imports only for a plain `memory serve`."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import early as entry
from service.config import Settings


@pytest.fixture(autouse=True)
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry, "_early", None)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORY_EMBEDDER", "none")


def test_serve_starts_the_embedder_and_serve_takes_it() -> None:
    entry.start_model_early(["serve"])
    assert entry._early is not None
    started = entry._early[1]
    assert entry.early_embedder(Settings()) is started
    assert entry.early_embedder(Settings(embedder="minilm")) is None  # other settings: build anew


@pytest.mark.parametrize("argv", [["serve", "--help"], ["profile", "list"], [], ["check", "serve"]])
def test_nothing_starts_early_for_anything_else(argv: list[str]) -> None:
    entry.start_model_early(argv)
    assert entry._early is None


def test_settings_that_do_not_read_are_left_to_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_PORT", "abc")
    entry.start_model_early(["serve"])  # no exception: serve reports it in its own words
    assert entry._early is None
