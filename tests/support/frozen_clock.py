"""Set the service's clock to a chosen instant (every service module that took `utcnow` from service.clock)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import service.clock


@contextmanager
def frozen_at(moment: datetime) -> Iterator[None]:
    original = service.clock.utcnow
    patched = [m for name, m in list(sys.modules.items())
               if (name == "service" or name.startswith("service.")) and getattr(m, "utcnow", None) is original]
    for module in patched:
        module.utcnow = lambda: moment  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module in patched:
            module.utcnow = original  # type: ignore[attr-defined]
