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
