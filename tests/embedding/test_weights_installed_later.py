"""Missing MiniLM weights (issue 24): `memory serve` says so loudly at start-up, naming what to do, and the
service notices weights installed while it runs (no restart): /readyz turns ready and searches turn hybrid."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from bench.lib.postgres import free_port
from service.config import Settings
from service.embedding import minilm
from service.embedding.minilm import MiniLMEmbedder
from service.embedding.model_files import INSTALL, REQUIRED, bundled_model_dir, install_command
from bench.lib.waiting import until

pytestmark = pytest.mark.model


def _install(folder: Path) -> None:
    for name in REQUIRED:
        shutil.copy(bundled_model_dir() / name, folder / name)


def test_the_install_command_is_this_environments_pip() -> None:
    assert install_command() == f"{sys.executable} -m {INSTALL}"


def test_the_embedder_notices_files_that_appear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm, "RETRY_MISSING_SECONDS", 0.3)
    embedder = MiniLMEmbedder(Settings(data_dir=tmp_path), model_dir=tmp_path)
    embedder.start()
    until(lambda: embedder.status()["state"] == "error", 10, what=lambda: str(embedder.status()))
    assert minilm.NOTICED in embedder.status()["error"]
    _install(tmp_path)
    until(lambda: embedder.status()["state"] == "ready", 30, what=lambda: str(embedder.status()))
    assert embedder.embed_query("where do deploys run").shape == (384,)


def test_serve_warns_loudly_and_turns_ready_once_the_weights_are_there(tmp_path: Path) -> None:
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    port = free_port()
    env = {**os.environ, "MEMORY_DATA_DIR": str(tmp_path), "MEMORY_PORT": str(port), "MEMORY_MODEL_DIR": str(model_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "service", "serve"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    base = f"http://127.0.0.1:{port}"
    try:
        until(lambda: any("MiniLM files missing" in line for line in lines), 30, what=lambda: "".join(lines))
        warning = "".join(lines)
        assert "!" * 78 in warning and f"MEMORY_MODEL_DIR={model_dir}" in warning and minilm.NOTICED in warning
        # Not ready, saying why and that no restart is needed (while a retry runs -- every 5 s -- the reason is
        # "loading" for that moment: the first answer may fall on one).
        ready = until(lambda: (r := _ready(base)) is not None and minilm.NOTICED in r.get("reason", "") and r, 30,
                      what=lambda: f"/readyz naming the missing files: {_ready(base)}")
        assert ready["ready"] is False
        _install(model_dir)  # no restart
        until(lambda: (_ready(base) or {}).get("ready") is True, 60, what=lambda: str(_ready(base)))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    assert sum("MiniLM files missing" in line for line in lines) == 1  # loud once, not on every retry


def _ready(base: str) -> dict | None:
    try:
        return httpx.get(f"{base}/readyz", timeout=2).json()  # type: ignore[no-any-return]
    except httpx.HTTPError:
        return None
