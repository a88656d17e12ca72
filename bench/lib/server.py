"""Running the service for a benchmark: `memory serve` in its own process (as deployed), or the app in a
uvicorn thread of this process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from fastapi import FastAPI

from bench.lib.postgres import free_port
from bench.lib.waiting import until

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def running(app: FastAPI) -> Iterator[str]:
    """The app on a free loopback port, served by uvicorn in a thread of this process; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", access_log=False)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until(lambda: server.started or not thread.is_alive(), 20, every=0.02, what="the server starting")
    if not server.started:
        raise RuntimeError("server did not start: its thread ended")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def served(data_dir: Path, env: dict[str, str], *, warm_search: str = "embedded", profiles: int = 1,
           within: float = 180.0) -> Iterator[tuple[str, int]]:
    """`memory serve` in its own process (the client does not share its GIL), with these MEMORY_* variables.
    Waits (up to `within` seconds) until the embedder is loaded and the search index is warm (embedded: `profiles`
    profiles loaded; opensearch: indices built and backfilled), so the timings are those of a running service.
    Yields (base URL, pid)."""
    port = free_port()
    full_env = {**os.environ, "MEMORY_DATA_DIR": str(data_dir), "MEMORY_PORT": str(port), **env}
    proc = subprocess.Popen([sys.executable, "-m", "service", "serve"], env=full_env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}"
    try:
        def ready_now() -> bool:
            if proc.poll() is not None:
                raise RuntimeError("memory serve exited before it became ready")
            try:
                checks = httpx.get(f"{base_url}/readyz", timeout=2).json()["checks"]
                search = checks["search"]
                warm = (search.get("profiles_loaded") or 0) >= profiles if warm_search == "embedded" else (
                    search.get("state") == "ready" and search.get("outbox", {}).get("pending") == 0)
                return bool(checks["embedder"]["state"] in ("ready", "disabled") and warm)
            except (httpx.HTTPError, KeyError, ValueError):
                return False

        until(ready_now, within, every=0.2, what="memory serve becoming ready")
        yield base_url, proc.pid
    finally:
        proc.terminate()
        proc.wait(30)
