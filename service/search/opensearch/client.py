"""The OpenSearch client and the one place where opensearchpy errors become domain errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError, OpenSearchException

from service.config import Settings
from service.errors import BackendUnavailable
from service.search.opensearch.connection import classify, client_options
from service.search.opensearch.refusals import explain


class IndexMissing(BackendUnavailable):
    """An index or alias the mirror expects is absent (fresh or restarted cluster): it must be (re)built."""


POOL_SIZE = 32  # request threads and the sync worker share the client; urllib3's default of 1 serialises them
PROBE_TIMEOUT = 2.0  # seconds: /readyz must answer quickly even when the cluster does not


def make_client(settings: Settings) -> OpenSearch:
    """One client per process (it pools connections). No transport retries: the outbox is the retry.
    TLS and credentials: service.search.opensearch.connection (no secret reaches the client's repr)."""
    return OpenSearch(
        timeout=settings.opensearch_timeout,
        max_retries=0,
        retry_on_timeout=False,
        pool_maxsize=POOL_SIZE,
        **client_options(settings),
    )


def short(exc: BaseException) -> str:
    """A one-line reason, for logs, status and outbox.last_error (500 chars max): what the cluster said, with
    what to do, when it answered with an error body."""
    info = getattr(exc, "info", None)
    if isinstance(info, dict) and isinstance(info.get("error"), dict):
        return explain(info)[:500]
    text = " ".join(str(exc).split())
    return text[:500] or type(exc).__name__


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Run opensearchpy calls; any failure leaves as BackendUnavailable (IndexMissing for 404), one line naming
    what to fix: CredentialsRefused (401), PermissionMissing (403, the permission as OpenSearch names it),
    TLSFailed, Unreachable (see connection.classify)."""
    try:
        yield
    except NotFoundError as exc:
        raise IndexMissing(f"opensearch {action}: {short(exc)}") from exc
    except OpenSearchException as exc:  # TransportError, ConnectionError, SerializationError, ...
        raise classify(exc, action) from exc


def reachability(client: OpenSearch, timeout: float = PROBE_TIMEOUT) -> tuple[bool, str | None]:
    """(True, None) when the cluster answers GET / with these credentials; else (False, why), e.g. refused
    credentials or an untrusted certificate, not only "unreachable" (opensearch-py's ping() says False to all)."""
    try:
        with translated("the reachability check"):
            client.info(request_timeout=timeout)
    except BackendUnavailable as exc:
        return False, exc.message
    return True, None
