"""The listening socket of `memory serve`, opened before anything is printed, so that a port in use or an
address the machine does not have is one clear line naming the variable, not a uvicorn traceback after the
banner. uvicorn then serves on this socket."""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping

from service.config import Settings
from service.errors import StartupFailed


def open_listener(settings: Settings, flags: Mapping[str, str] | None = None) -> socket.socket:
    """The socket `memory serve` listens on; a failure names the setting as the user gave it (`flags`: field ->
    the command-line flag typed, e.g. port -> --port; otherwise its MEMORY_* variable)."""
    bind, port = settings.bind, settings.port
    given = flags or {}
    bind_named = f"{given['bind']} {bind!r}" if "bind" in given else f"MEMORY_BIND={bind!r}"
    port_named = f"{given['port']} {port}" if "port" in given else f"MEMORY_PORT={port}"
    port_setting = given.get("port", "MEMORY_PORT")
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    try:
        listener = socket.create_server((bind, port), family=family, backlog=2048)  # SO_REUSEADDR, as uvicorn
    except OSError as exc:  # create_server re-raises a failed name lookup as a plain OSError, errno kept
        if exc.errno in (socket.EAI_NONAME, socket.EAI_AGAIN, getattr(socket, "EAI_NODATA", None)):
            message = f"{bind_named}: not an address or a host name this machine resolves"
        elif exc.errno == errno.EADDRINUSE:
            message = (f"{port_named}: port {port} on {bind} is already in use (another `memory serve`?); "
                       f"stop it or choose another {port_setting}")
        elif exc.errno == errno.EADDRNOTAVAIL:
            message = f"{bind_named}: this machine has no such address (use 127.0.0.1, 0.0.0.0 or one of its own)"
        elif exc.errno == errno.EACCES:
            message = f"{port_named}: permission denied (ports below 1024 need privileges)"
        else:
            message = f"cannot listen on {bind_named} {port_named}: {exc.strerror or exc}"
        raise StartupFailed(message) from exc
    # Accepted connections inherit it (Linux): without it a response's last small segment waits for the
    # client's delayed ACK (Nagle), ~40 ms per call. uvicorn's own sockets get it from asyncio.
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return listener
