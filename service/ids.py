"""Identifiers and secrets: fact uids, token ids, tokens and their hashes."""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_PREFIX = "mem_"


def new_fact_uid() -> str:
    """Opaque, URL-safe, never reused (128 random bits)."""
    return "f_" + secrets.token_urlsafe(16).replace("-", "x").replace("_", "y")


def new_token_id() -> str:
    return "tok_" + secrets.token_hex(6)


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_hash(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("ascii"), b.encode("ascii"))


# OAuth (MEMORY_OAUTH=on). Every secret starts with TOKEN_PREFIX, so the access log's redaction of `mem_…`
# query values hides them too; the second part says what it is (and what a leaked one in a log was).
ACCESS_TOKEN_PREFIX = TOKEN_PREFIX + "oat_"  # OAuth access token (1 h)
REFRESH_TOKEN_PREFIX = TOKEN_PREFIX + "ort_"  # OAuth refresh token (rotated on use)
AUTH_CODE_PREFIX = TOKEN_PREFIX + "oac_"  # authorization code (60 s, single use)
CONSENT_CODE_PREFIX = TOKEN_PREFIX + "gc_"  # `memory grant code PROFILE` (10 min, single use)


def new_secret(prefix: str) -> str:
    """An OAuth token, code or consent code: the prefix and 256 random bits (stored as hash_token)."""
    return prefix + secrets.token_urlsafe(32)


def new_grant_id() -> str:
    return "grt_" + secrets.token_hex(8)


def new_request_id() -> str:
    """A pending authorization request (the consent page's address): not a secret, just unguessable."""
    return "req_" + secrets.token_urlsafe(18)


def new_client_secret() -> str:
    return TOKEN_PREFIX + "ocs_" + secrets.token_urlsafe(32)
