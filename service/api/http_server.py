"""How `memory serve` runs uvicorn: connection limits, a request-head timeout, the h11 head size, and the
access log with tokens redacted. What this does not cover (request smuggling forms h11 tolerates, TLS, rate
limits) is a reverse proxy's job: README, "Network and proxies"."""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.api.access_log import log_config
from service.api.limits import MAX_HEAD_BYTES
from service.config import Settings

# h11 buffers an incomplete request head up to this size and drops the connection beyond it; it is larger
# than the limits the app answers with 414/431 (service.api.limits), so those are answered, not reset.
H11_MAX_HEAD = MAX_HEAD_BYTES + 1024 * 1024


class HeadTimeoutH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-head timeout: uvicorn itself has none (timeout_keep_alive only
    closes idle keep-alive connections), so a client trickling header bytes would hold a connection forever."""

    head_timeout: float = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._head_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and self.conn.their_state is h11.IDLE:
            self._arm()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(self.head_timeout, self._expire)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _expire(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def protocol_class(head_timeout: float) -> type[HeadTimeoutH11Protocol]:
    return type("HeadTimeoutH11Protocol", (HeadTimeoutH11Protocol,), {"head_timeout": head_timeout})


def server_config(app: Any, settings: Settings, **overrides: Any) -> uvicorn.Config:
    options: dict[str, Any] = {
        "host": settings.bind, "port": settings.port, "log_level": "info", "proxy_headers": True,
        "http": protocol_class(settings.head_timeout), "h11_max_incomplete_event_size": H11_MAX_HEAD,
        "limit_concurrency": settings.max_connections, "timeout_keep_alive": settings.keep_alive_timeout,
        "log_config": log_config(),
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)
