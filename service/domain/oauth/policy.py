"""The OAuth server's numbers and rules that do not need the store: lifetimes, limits, which redirect URIs
a client may register, and the resource URLs (RFC 8707) of the service's MCP endpoints."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import urlsplit

from service.addresses import is_loopback
from service.contract import PROFILE_NAME

CODE_LIFETIME = timedelta(seconds=60)  # authorization codes
ACCESS_LIFETIME = timedelta(hours=1)
REFRESH_LIFETIME = timedelta(days=30)  # from its issue; every refresh issues a new one (rotation)
REQUEST_LIFETIME = timedelta(minutes=10)  # a pending authorization request (the consent page)
CONSENT_CODE_LIFETIME = timedelta(minutes=10)  # `memory grant code PROFILE`
CONSENT_ATTEMPTS = 5  # wrong tokens or codes per request; then the request is closed
UNUSED_CLIENT_LIFETIME = timedelta(hours=24)  # a registration no grant was made for expires
MAX_UNUSED_CLIENTS = 1000  # live registrations waiting for their first grant; beyond, /register says 429
MAX_REDIRECT_URIS = 10
MAX_URI = 2000
MAX_STATE = 1000
MAX_CLIENT_NAME = 200
PKCE_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")  # base64url of a SHA-256, no padding (RFC 7636 §4.2)


def redirect_uri_problem(uri: str) -> str | None:
    """Why a redirect URI cannot be registered, or None: https, or http on a loopback host (RFC 8252 §7.3);
    absolute, no fragment, no user info. Requests must then name it exactly."""
    if len(uri) > MAX_URI:
        return f"redirect URI over {MAX_URI} characters"
    parts = urlsplit(uri)
    if parts.scheme == "http" and not is_loopback(parts.hostname or ""):
        return f"redirect URI {uri!r} is http:// to a host that is not loopback: use https://"
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return f"redirect URI {uri!r} is not an https:// URL (or http:// on loopback)"
    if parts.fragment or "#" in uri:
        return f"redirect URI {uri!r} has a fragment (RFC 6749 §3.1.2)"
    if parts.username is not None or parts.password is not None:
        return f"redirect URI {uri!r} carries user info"
    return None


class Resources:
    """The resource URLs of this service's MCP endpoints: `{issuer}/mcp/{profile}` (one per profile) and
    `{issuer}/mcp` (any profile; the grant names it). A token's audience is exactly one of them."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    @property
    def root(self) -> str:
        return f"{self.issuer}/mcp"

    def of(self, profile: str | None) -> str:
        return self.root if profile is None else f"{self.root}/{profile}"

    def metadata_url(self, profile: str | None) -> str:
        """Where the protected resource metadata of that resource is (RFC 9728 §3.1)."""
        return f"{self.issuer}/.well-known/oauth-protected-resource/mcp" + ("" if profile is None else f"/{profile}")

    def profile_of(self, resource: str) -> str | None:
        """The profile a resource URL names ("" for {issuer}/mcp); None when it is not one of ours. Scheme and
        host compare without case and one trailing slash is ignored (the SDK's client adds neither)."""
        parts = urlsplit(resource.strip())
        if f"{parts.scheme.lower()}://{parts.netloc.lower()}" != self.issuer or parts.query or parts.fragment:
            return None
        path = parts.path[:-1] if parts.path.endswith("/") else parts.path
        if path == "/mcp":
            return ""
        name = path.removeprefix("/mcp/")
        return name if path.startswith("/mcp/") and PROFILE_NAME.fullmatch(name) else None

    def canonical(self, resource: str) -> str | None:
        """The resource as the service writes it (what tokens are bound to), or None when it is not ours."""
        profile = self.profile_of(resource)
        return None if profile is None else self.of(profile or None)
