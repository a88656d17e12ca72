"""The OpenSearch client and the one place where opensearchpy errors become domain errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError, OpenSearchException

from service.config import Settings
from service.errors import BackendUnavailable
from service.search.opensearch.refusals import explain


class IndexMissing(BackendUnavailable):
    """An index or alias the mirror expects is absent (fresh or restarted cluster): it must be (re)built."""


POOL_SIZE = 32  # request threads and the sync worker share the client; urllib3's default of 1 serialises them


def make_client(settings: Settings) -> OpenSearch:
    """One client per process (it pools connections). No transport retries: the outbox is the retry."""
    assert settings.opensearch_url, "MEMORY_OPENSEARCH_URL is required in opensearch mode"
    return OpenSearch(
        hosts=[settings.opensearch_url],
        timeout=settings.opensearch_timeout,
        max_retries=0,
        retry_on_timeout=False,
        pool_maxsize=POOL_SIZE,
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
    """Run opensearchpy calls; any failure leaves as BackendUnavailable (IndexMissing for 404)."""
    try:
        yield
    except NotFoundError as exc:
        raise IndexMissing(f"opensearch {action}: {short(exc)}") from exc
    except OpenSearchException as exc:  # TransportError, ConnectionError, SerializationError, ...
        raise BackendUnavailable(f"opensearch {action}: {short(exc)}") from exc
