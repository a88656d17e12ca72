"""Real uvicorn servers on free loopback ports, in a thread of the test process: `running` (bench/lib/server.py's,
plain uvicorn) and `serving` (as `memory serve` configures it: service.api.http_server)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from bench.lib.postgres import free_port
from bench.lib.server import running
from service.api.app import create_app
from service.api.http_server import server_config
from service.container import Services

__all__ = ["running", "serving"]


@contextmanager
def serving(services: Services, **overrides: object) -> Iterator[int]:
    """The app over these services with `memory serve`'s uvicorn configuration; yields the port."""
    port = free_port()
    server = uvicorn.Server(server_config(create_app(services=services), services.settings, host="127.0.0.1",
                                          port=port, **overrides))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        assert thread.is_alive() and time.time() < deadline
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)
