"""How `memory serve` runs uvicorn: connection limits that slow clients cannot exhaust, a request-head timeout,
closes that do not reset, the h11 head size, and the access log with tokens redacted. What this does not
cover (request smuggling forms h11 tolerates, TLS, per-address limits) is a reverse proxy's job: docs/operators.md,
"Network and proxies".

Written over uvicorn's h11 protocol because uvicorn has none of it: no head timeout (timeout_keep_alive only
closes idle keep-alive connections), `limit_concurrency` counts connections that have not sent a request yet
(300 clients trickling a request head a byte at a time made every other caller a 503), and a close with unread
request bytes in the socket is a TCP reset that loses the response the client has not read yet.
"""

from __future__ import annotations

import asyncio
import json
import resource
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.api.access_log import log_config
from service.api.limits import MAX_HEAD_BYTES
from service.config import Settings
from service.error_bodies import ErrorInfo, rest_body

# h11 buffers an incomplete request head up to this size and drops the connection beyond it; it is larger
# than the limits the app answers with 414/431 (service.api.limits), so those are answered, not reset.
H11_MAX_HEAD = MAX_HEAD_BYTES + 1024 * 1024
LINGER_SECONDS = 2.0  # after a close, unread request bytes are read and dropped for at most this long
LINGER_BYTES = 16 * 1024 * 1024  # ... and at most this many; beyond either, the socket is closed as it is
_FULL_BODY = json.dumps(rest_body(503, ErrorInfo("unavailable", "too many connections at once; try again"))).encode()
FULL = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(_FULL_BODY), _FULL_BODY))


class LingeringTransport:
    """The connection's transport, whose close() is a lingering close: the response already written is sent,
    the write side is shut (FIN), and what the client still sends is read and dropped until it closes too
    (or LINGER_SECONDS / LINGER_BYTES pass). Closing a socket with unread bytes makes the kernel send a reset,
    and the client then loses the response it had not read yet (a 413, a 400 on a malformed request)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self.lingering = False
        self._dropped = 0
        self._timer: asyncio.TimerHandle | None = None

    def __getattr__(self, name: str) -> Any:  # everything else is the transport's own
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def close(self) -> None:
        if self.is_closing():
            return
        self.lingering = True
        transport = self._transport
        if not transport.can_write_eof():
            transport.close()
            return
        transport.write_eof()  # FIN once the buffered response is sent
        transport.resume_reading()
        self._timer = self._loop.call_later(LINGER_SECONDS, transport.close)

    def drop(self, data: bytes) -> None:
        """Bytes that arrived after close(): read and dropped (a reset only past the bounds)."""
        self._dropped += len(data)
        if self._dropped > LINGER_BYTES:
            self._transport.close()

    def closed(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class ServiceH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the service's connection rules (module docstring)."""

    head_timeout: float = 10.0
    max_connections: int = 1000

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's own H11Protocol narrows it
        self._head_timer: asyncio.TimerHandle | None = None
        self.waiting_since: float | None = self.loop.time()
        self.lingering = LingeringTransport(transport, self.loop)
        super().connection_made(self.lingering)  # type: ignore[arg-type]  # LingeringTransport wraps a Transport, duck-typed
        if len(self.connections) > self.max_connections and not self._make_room():
            self.lingering.write(FULL)
            self.lingering.close()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.lingering.lingering:
            self.lingering.drop(data)
            return
        if self._head_timer is None and self.conn.their_state is h11.IDLE:
            self._arm()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()
            self.waiting_since = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE:  # kept alive: waiting for the next request head
            self.waiting_since = self.loop.time()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.lingering.closed()
        super().connection_lost(exc)

    def _make_room(self) -> bool:
        """Over the connection limit: close the connection that has waited longest for a request head (an idle
        keep-alive one, or a client trickling its head), never one with a request in progress."""
        waiting = [c for c in self.connections if isinstance(c, ServiceH11Protocol) and c is not self
                   and c.waiting_since is not None and not c.lingering.is_closing()]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c.waiting_since or 0.0)
        oldest.lingering.close()
        oldest.connections.discard(oldest)  # its place is free now, whatever its socket does while it lingers
        return True

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(self.head_timeout, self._expire)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _expire(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.lingering.is_closing():
            self.lingering.close()


def protocol_class(settings: Settings) -> type[ServiceH11Protocol]:
    return type("ServiceH11Protocol", (ServiceH11Protocol,),
                {"head_timeout": settings.head_timeout, "max_connections": settings.max_connections})


def raise_open_files_limit(connections: int) -> None:
    """Each connection is a file descriptor: lift the soft limit towards the hard one when it is too low."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + 256  # the database, the model's files, logs
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def server_config(app: Any, settings: Settings, **overrides: Any) -> uvicorn.Config:
    options: dict[str, Any] = {
        "host": settings.bind, "port": settings.port, "log_level": "info", "proxy_headers": True,
        "http": protocol_class(settings), "h11_max_incomplete_event_size": H11_MAX_HEAD,
        "timeout_keep_alive": settings.keep_alive_timeout, "log_config": log_config(),
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)
