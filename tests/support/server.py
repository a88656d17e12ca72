"""A real uvicorn server on a free loopback port, in a thread of the test process (bench/lib/server.py's)."""

from __future__ import annotations

from bench.lib.server import running

__all__ = ["running"]
