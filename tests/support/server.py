"""Real uvicorn servers on free loopback ports, in a thread of the test process: `running` (bench/lib/server.py's,
plain uvicorn) and `serving` (as `memory serve` configures it: service.api.http_server)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from bench.lib.postgres import free_port
from bench.lib.server import running
from service.api.app import create_app
from service.api.http_server import server_config
from service.container import Services
from bench.lib.waiting import until

__all__ = ["running", "serving"]


@contextmanager
def serving(services: Services, **overrides: object) -> Iterator[int]:
    """The app over these services with `memory serve`'s uvicorn configuration; yields the port."""
    port = free_port()
    server = uvicorn.Server(server_config(create_app(services=services), services.settings, host="127.0.0.1",
                                          port=port, **overrides))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until(lambda: server.started or not thread.is_alive(), 20, every=0.02, what="the server starting")
    assert server.started, "the server thread ended before it started"
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)
