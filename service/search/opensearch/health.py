"""Reachability of the cluster, as last seen: a failure keeps the request path off OpenSearch for a
while (doubling with each consecutive failure, up to a minute), so writes and searches never queue behind
connection timeouts while the cluster is down. The background worker keeps probing and reports success."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import Any

from service import clock

MAX_QUIET = 60.0


class Health:
    def __init__(self, quiet_seconds: float) -> None:
        self.quiet_seconds = quiet_seconds  # after a first failure, the request path skips the cluster this long
        self._failures = 0
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._retry_at = 0.0
        self._last_error: str | None = None

    def ok(self) -> None:
        with self._lock:
            self._down_since, self._retry_at, self._failures = None, 0.0, 0

    def failed(self, reason: str) -> None:
        with self._lock:
            now = time.time()
            if self._down_since is None:
                self._down_since = now
            quiet = min(MAX_QUIET, self.quiet_seconds * 2 ** min(self._failures, 10))
            self._failures += 1
            self._retry_at = time.monotonic() + quiet
            self._last_error = reason

    def usable(self) -> bool:
        """False just after a failure: answer from the canonical store instead of waiting on the cluster."""
        with self._lock:
            return self._down_since is None or time.monotonic() >= self._retry_at

    @property
    def down(self) -> bool:
        with self._lock:
            return self._down_since is not None

    def report(self) -> dict[str, Any]:
        with self._lock:
            down_since = self._down_since
            return {
                "reachable": down_since is None,
                "down_since": clock.isoformat(datetime.fromtimestamp(down_since, tz=timezone.utc))
                if down_since else None,
                "last_error": self._last_error,
            }
