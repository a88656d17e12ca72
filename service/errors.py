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
    """Missing, malformed, unknown or revoked token, or a token of another profile. Always the same answer."""

    code = "unauthorized"


class BackendUnavailable(MemoryServiceError):
    """A dependency (database, search mirror, embedder) cannot be reached right now."""

    code = "backend_unavailable"


class StartupFailed(MemoryServiceError):
    """`memory serve` cannot start as configured (the message names the variable and the value)."""

    code = "startup_failed"
