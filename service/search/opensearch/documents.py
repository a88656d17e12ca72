"""Index documents built from canonical rows, and the bulk actions that carry them (pure functions).

Every document carries its profile's id (`profile_id`, what queries filter on) and is routed by it: a
profile's documents share a shard of the deployment's shared index, and a search asks that shard only. The
id, not the name, so a renamed profile's documents stay where they are.

A document's external version is the id of the latest outbox row of its entity (0 when it has none, e.g. a
fact written before the mirror existed): a later change always has a larger outbox id, so a replayed or late
delivery of an older state is refused with 409 and changes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from service import clock
from service.domain.ports.records import FactRecord, QueryLogRecord


def routing(profile_id: int) -> str:
    return str(profile_id)


def fact_document(row: FactRecord, vector: np.ndarray | None) -> dict[str, Any]:
    if row.redacted_at is not None:
        return redacted_document(row)
    doc = _fact_fields(row, title=row.title, text=row.text)
    doc["has_vector"] = vector is not None
    if vector is not None:
        doc["embedding"] = [float(x) for x in vector]
    return doc


def redacted_document(row: FactRecord) -> dict[str, Any]:
    """A redacted fact stays in the mirror only as what the stats count (status, kind, tags, timestamps):
    no title, text or embedding, so no search can match it; without `has_vector` it is not "waiting for a
    vector" either (that query asks for has_vector: false)."""
    return _fact_fields(row)


def _fact_fields(row: FactRecord, **words: str) -> dict[str, Any]:
    """The fields of every fact document, with the fact's words (title, text) when it still has them."""
    return {
        "uid": row.uid,
        "fact_id": row.id,
        "profile_id": routing(row.profile_id),
        **words,
        "tags": list(row.tags or []),
        "kind": row.kind,
        "status": row.status,
        "created_at": clock.isoformat(row.created_at),
        "updated_at": clock.isoformat(row.updated_at),
        "retired_at": clock.isoformat(row.retired_at),
        "supersedes": row.supersedes,
        "superseded_by": row.superseded_by,
    }


def query_document(row: QueryLogRecord) -> dict[str, Any]:
    return {
        "log_id": row.id,
        "profile_id": routing(row.profile_id),
        "query": row.query,
        "tags": list(row.tags or []),
        "kind": row.kind,
        "limit": row.limit,
        "matched_count": row.matched_count,
        "returned_count": row.returned_count,
        "inactive_matched": row.inactive_matched,
        "top_uid": row.top_uid,
        "mode": row.mode,
        "latency_ms": float(row.latency_ms),
        "created_at": clock.isoformat(row.created_at),
    }


def index_action(index: str, doc_id: str, version: int, source: dict[str, Any], *,
                 version_type: str = "external") -> dict[str, Any]:
    """One bulk `index` action with external versioning (stale versions are refused with 409), routed by the
    document's profile. `external_gte` also rewrites a document at its own version (a repair: the canonical
    content of a version is what was sent at that version, so rewriting it is safe)."""
    return {
        "_op_type": "index",
        "_index": index,
        "_id": doc_id,
        "_routing": source["profile_id"],
        "version": version,
        "version_type": version_type,
        "_source": source,
    }
