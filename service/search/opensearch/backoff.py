"""Profiles whose documents the cluster refused: each waits on its own before its next delivery, so one
profile's trouble (a rejected document, a mapping error) never holds up another's."""

from __future__ import annotations

import threading
import time

PROFILE_BACKOFF_MAX = 60.0


class ProfileBackoff:
    """Per profile: failures so far, when to retry (doubling from `base` up to a minute), the last reason."""

    def __init__(self, base: float) -> None:
        self.base = base
        self._lock = threading.Lock()
        self._failing: dict[int, tuple[int, float, str]] = {}  # profile id -> (failures, retry at, last error)

    def failed(self, profile_id: int, reason: str) -> None:
        with self._lock:
            failures = self._failing.get(profile_id, (0, 0.0, ""))[0] + 1
            wait = min(PROFILE_BACKOFF_MAX, self.base * 2 ** min(failures - 1, 10))
            self._failing[profile_id] = (failures, time.monotonic() + wait, reason)

    def ok(self, profile_id: int) -> None:
        with self._lock:
            self._failing.pop(profile_id, None)

    def waiting(self, profile_id: int) -> bool:
        with self._lock:
            entry = self._failing.get(profile_id)
            return entry is not None and time.monotonic() < entry[1]

    def failing(self, profile_id: int) -> bool:
        with self._lock:
            return profile_id in self._failing

    def report(self) -> dict[str, str]:
        with self._lock:
            return {str(pid): reason for pid, (_, _, reason) in self._failing.items()}
