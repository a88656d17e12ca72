"""Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, the MCP authorization spec's
preferred way for a client to identify itself): the client_id is an https URL, and the JSON document served
there names the client and its redirect URIs. The rules, pure: which URLs are fetched, which addresses they may
resolve to, what a document must say, how long it is kept. The fetch is service.api.oauth.client_documents.
"""

from __future__ import annotations

import ipaddress
import json
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from service.clock import utcnow
from service.domain.oauth import policy
from service.errors import OAuthRefusal

MAX_BYTES = 5 * 1024  # read at most this much of a document (the draft's recommended limit); more is refused
FETCH_TIMEOUT = 5.0  # seconds for the whole fetch: resolving the host, connecting, TLS, the answer
CACHE_MIN = 30  # seconds a fetched document is kept at least, whatever its headers say (no-store too)
CACHE_MAX = 24 * 3600  # ... and at most
CACHE_DEFAULT = 300  # when its answer says nothing about caching
MAX_CACHED = 1000  # documents kept per process; beyond, the least recently used is dropped
PUBLIC = "none"  # the one token endpoint auth method a document may name here
SHARED_SECRET_METHODS = ("client_secret_post", "client_secret_basic", "client_secret_jwt")
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # IPv4 addresses behind the well-known NAT64 prefix (RFC 6052)


def is_document_client_id(client_id: str) -> bool:
    """A client_id that names a metadata document (a URL), not one this service issued at /register (a UUID,
    never with a scheme)."""
    return client_id[:8].lower().startswith(("https://", "http://"))


def refused(url: str, why: str) -> OAuthRefusal:
    return OAuthRefusal("invalid_client", f"client metadata document {url[:300]!r}: {why}")


def url_problem(url: str) -> str | None:
    """Why this client_id URL is not fetched, or None: https with a host and a path, no user info, no fragment,
    no `.` or `..` segments (draft §3)."""
    if len(url) > policy.MAX_URI:
        return f"the URL is over {policy.MAX_URI} characters"
    if any(c <= " " or c == "\x7f" for c in url) or not url.isascii():
        return "the URL holds spaces, control or non-ASCII characters (percent-encode them; IDNA for a host)"
    parts = urlsplit(url)
    if not url.startswith("https://"):
        return "a client_id URL must be https://"
    try:
        parts.port
    except ValueError:
        return "the URL's port is not a number"
    if not parts.hostname:
        return "the URL has no host"
    if parts.username is not None or parts.password is not None:
        return "the URL carries user info"
    if parts.fragment or "#" in url:
        return "the URL has a fragment"
    if parts.path in ("", "/"):
        return "the URL has no path (the document is served at a path, e.g. /oauth/client.json)"
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        return "the URL's path has . or .. segments"
    return None


def address_problem(address: str, *, allow_private: bool) -> str | None:
    """Why a client_id host that resolved to `address` is not connected to, or None. Refused: every address that
    is not global unicast (private, loopback, link-local, shared, reserved, documentation, multicast, ...; RFC 6890),
    also when it is wrapped in IPv6 (IPv4-mapped, 6to4, NAT64). `allow_private` lets the non-global unicast ones
    through (MEMORY_OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: tests and development only)."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (
            ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in NAT64 else None)
        ip = embedded or ip
    if ip.is_multicast or ip.is_unspecified:
        return f"it resolves to {address}, a multicast or unspecified address"
    if ip.is_global or allow_private:
        return None
    return (f"it resolves to {address}, a private, loopback, link-local or other special-use address, which is "
            "not fetched (MEMORY_OAUTH_CLIENT_METADATA_ALLOW_PRIVATE=true allows it, for tests only)")


def is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def registration_of(url: str, body: bytes) -> dict[str, Any]:
    """The registration a fetched document makes (the shape /register keeps, without a secret), or OAuthRefusal
    saying what is wrong with it. Only public clients: a shared secret cannot be agreed through a document (draft
    §4.1), and this service has no key-based client authentication."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise refused(url, "the answer is not JSON") from None
    if not isinstance(document, dict):
        raise refused(url, "the document is not a JSON object")
    if document.get("client_id") != url:
        raise refused(url, f"its client_id {str(document.get('client_id'))[:300]!r} is not the URL it was fetched "
                           "from (they must be the same string)")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise refused(url, "it holds a client_secret, which a metadata document must not")
    method = document.get("token_endpoint_auth_method", PUBLIC)
    if method in SHARED_SECRET_METHODS:
        raise refused(url, f"token_endpoint_auth_method {method!r} needs a shared secret, which a metadata "
                           "document cannot have: use none")
    if method != PUBLIC:
        raise refused(url, f"token_endpoint_auth_method {str(method)[:60]!r} is not supported here: only public "
                           "clients (none, with PKCE)")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise refused(url, "redirect_uris must be a non-empty array of URLs")
    if len(uris) > policy.MAX_REDIRECT_URIS:
        raise refused(url, f"at most {policy.MAX_REDIRECT_URIS} redirect_uris")
    for uri in uris:
        problem = policy.redirect_uri_problem(uri)
        if problem is not None:
            raise refused(url, problem)
    name = document.get("client_name")
    if name is not None and (not isinstance(name, str) or len(name) > policy.MAX_CLIENT_NAME):
        raise refused(url, f"client_name must be a string of at most {policy.MAX_CLIENT_NAME} characters")
    grant_types = document.get("grant_types", ["authorization_code", "refresh_token"])
    if not isinstance(grant_types, list) or "authorization_code" not in grant_types:
        raise refused(url, "grant_types must include authorization_code")
    response_types = document.get("response_types", ["code"])
    if not isinstance(response_types, list) or "code" not in response_types:
        raise refused(url, "response_types must include code")
    registration = {"client_id": url, "redirect_uris": uris, "token_endpoint_auth_method": PUBLIC,
                    "grant_types": [g for g in grant_types if g in ("authorization_code", "refresh_token")],
                    "response_types": ["code"]}
    return registration if name is None else {**registration, "client_name": name}


def cache_seconds(cache_control: str | None, expires: str | None, date: str | None) -> int:
    """How long a fetched document is kept: its answer's `Cache-Control: max-age` (else `Expires` against
    `Date`), within [CACHE_MIN, CACHE_MAX]; CACHE_MIN for no-store and no-cache, CACHE_DEFAULT when it says
    nothing. (Hand-written: two header fields of RFC 9111, for which no library is a dependency here.)"""
    directives = {}
    for part in (cache_control or "").split(","):
        key, _, value = part.strip().partition("=")
        directives[key.strip().lower()] = value.strip().strip('"')
    seconds: float | None = None
    if "no-store" in directives or "no-cache" in directives:
        seconds = 0
    elif directives.get("max-age", "").isdigit():
        seconds = int(directives["max-age"])
    elif expires:
        seconds = _expires_in(expires, date)
    if seconds is None:
        return CACHE_DEFAULT
    return int(min(max(seconds, CACHE_MIN), CACHE_MAX))


def _expires_in(expires: str, date: str | None) -> float:
    try:
        until = parsedate_to_datetime(expires)
        now = parsedate_to_datetime(date) if date else utcnow()
    except (TypeError, ValueError):
        return 0  # an invalid Expires means already expired (RFC 9111 §5.3)
    if until.tzinfo is None or now.tzinfo is None:
        return 0
    return (until - now).total_seconds()
