"""Domain errors. They know nothing about HTTP or MCP; each face maps them in one table."""

from __future__ import annotations


class MemoryServiceError(Exception):
    """Base class of every error the service reports to a caller."""

    code = "error"

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


class InvalidInput(MemoryServiceError):
    """The caller sent something outside the contract (bad kind, too long, bad profile name...)."""

    code = "invalid_parameter"


class NotFound(MemoryServiceError):
    """No such fact or profile, as far as this caller may know."""

    code = "not_found"


class Conflict(MemoryServiceError):
    """The request is well-formed but the current state forbids it (superseded/retired fact, existing profile)."""

    code = "conflict"


class Unauthorized(MemoryServiceError):
    """Missing, malformed, unknown or revoked token, or a token of another profile: always the same answer
    (docs/reviewers.md, "REST API": a token cannot probe which profiles exist, and the caller learns nothing from
    the case)."""

    code = "unauthorized"


class OAuthRefusal(InvalidInput):
    """An OAuth request refused (MEMORY_OAUTH=on): `error` is the OAuth error code the protocol answers with
    (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8707 `invalid_target`); the message is its one line."""

    code = "oauth_refused"

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error


class BackendUnavailable(MemoryServiceError):
    """A dependency (database, search mirror, embedder) cannot be reached right now."""

    code = "backend_unavailable"


class EmbeddingUnavailable(BackendUnavailable):
    """The embedder cannot produce vectors right now (not loaded yet, endpoint down, timeout, bad answer).

    The domain catches it and goes on without a vector (a write is embedded later, a search runs degraded);
    it reaches a face only if a caller does not."""


class InvalidDocument(InvalidInput):
    """A document to import breaks rules in one or more places; `problems` lists each (where, field, problem)."""

    def __init__(self, problems: list[dict[str, str]]) -> None:
        first = problems[0] if problems else {"where": "", "field": "", "problem": ""}
        self.summary = f"the document has {len(problems)} problem(s), nothing was imported"
        super().__init__(f"{self.summary}; first: {first['where']} {first['field']}: {first['problem']}")
        self.problems = problems


class StartupFailed(MemoryServiceError):
    """`memory serve` cannot start as configured (the message names the variable and the value)."""

    code = "startup_failed"
