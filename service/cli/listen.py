"""The listening socket of `memory serve`, opened before anything is printed, so that a port in use or an
address the machine does not have is one clear line naming the variable, not a uvicorn traceback after the
banner. uvicorn then serves on this socket."""

from __future__ import annotations

import errno
import socket

from service.config import Settings
from service.errors import StartupFailed


def open_listener(settings: Settings) -> socket.socket:
    bind, port = settings.bind, settings.port
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    try:
        listener = socket.create_server((bind, port), family=family, backlog=2048)  # SO_REUSEADDR, as uvicorn
    except OSError as exc:  # create_server re-raises a failed name lookup as a plain OSError, errno kept
        if exc.errno in (socket.EAI_NONAME, socket.EAI_AGAIN, getattr(socket, "EAI_NODATA", None)):
            message = f"MEMORY_BIND={bind!r}: not an address or a host name this machine resolves"
        elif exc.errno == errno.EADDRINUSE:
            message = (f"MEMORY_PORT={port}: port {port} on {bind} is already in use (another `memory serve`?); "
                       "stop it or choose another MEMORY_PORT")
        elif exc.errno == errno.EADDRNOTAVAIL:
            message = f"MEMORY_BIND={bind!r}: this machine has no such address (use 127.0.0.1, 0.0.0.0 or one of its own)"
        elif exc.errno == errno.EACCES:
            message = f"MEMORY_PORT={port}: permission denied (ports below 1024 need privileges)"
        else:
            message = f"cannot listen on MEMORY_BIND={bind!r} MEMORY_PORT={port}: {exc.strerror or exc}"
        raise StartupFailed(message) from exc
    # Accepted connections inherit it (Linux): without it a response's last small segment waits for the
    # client's delayed ACK (Nagle), ~40 ms per call. uvicorn's own sockets get it from asyncio.
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return listener
