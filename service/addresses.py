"""Host and URL text rules shared by the settings and the faces (pure)."""

from __future__ import annotations

import ipaddress
import re

_USERINFO = re.compile(r"([a-z][a-z0-9+.-]*://)?[^\s/@]+@", re.IGNORECASE)


def mask_userinfo(text: str) -> str:
    """`scheme://user:password@host` -> `scheme://***@host` (also without a scheme)."""
    return _USERINFO.sub(lambda m: f"{m.group(1) or ''}***@", text)


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
