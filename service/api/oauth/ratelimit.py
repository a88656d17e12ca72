"""Per-address request limits of the OAuth endpoints, in this process (a replica counts its own requests; the
unused registrations that /register keeps are also capped in the store, across replicas)."""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from starlette.requests import Request

MAX_ADDRESSES = 10_000  # the least recently seen address is forgotten beyond this


@dataclass
class RateLimit:
    """At most `limit` requests per `window` seconds from one client address (a sliding window)."""

    limit: int
    window: float = 60.0
    seen: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    def retry_after(self, request: Request) -> int | None:
        """None when the request may go on (and it is counted); otherwise the seconds until it may."""
        address = request.client.host if request.client else "unknown"
        now = time.monotonic()
        times = self.seen.pop(address, None) or deque()
        while times and times[0] <= now - self.window:
            times.popleft()
        self.seen[address] = times
        if len(self.seen) > MAX_ADDRESSES:
            self.seen.popitem(last=False)
        if len(times) >= self.limit:
            return max(1, math.ceil(times[0] + self.window - now))
        times.append(now)
        return None

    def describe(self, what: str, retry_after: int) -> str:
        return (f"too many {what} from this address (at most {self.limit} a minute): try again in {retry_after} s")


@dataclass
class Limits:
    """One set per app: per address and minute."""

    register: RateLimit = field(default_factory=lambda: RateLimit(10))
    authorize: RateLimit = field(default_factory=lambda: RateLimit(30))
    token: RateLimit = field(default_factory=lambda: RateLimit(60))  # /token and /revoke
    consent: RateLimit = field(default_factory=lambda: RateLimit(30))  # the consent page, shown or answered
