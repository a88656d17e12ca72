"""What the cluster said when it refused something, as one line with what to do (pure).

A bulk item's or an _msearch item's error, or the body of a refused request: `{"type": …, "reason": …}`. The
advice never points at a command that would fail for the same reason (a rebuild creates indices, so it is not
the advice for a full shard budget or a write block).
"""

from __future__ import annotations

import re
from typing import Any


# The shard-limit refusal: 2.x says "… maximum shards open", 3.x names the shard pool, "… maximum LOCAL_ONLY shards
# open" (or REMOTE_CAPABLE, whose budget is a setting of its own); `text` is lower-cased.
_SHARD_BUDGET = re.compile(r"maximum (?:(?P<pool>local_only|remote_capable) )?shards open")


def explain(error: Any) -> str:
    """One line: OpenSearch's own words (type: reason), then what to do about it."""
    if isinstance(error, dict) and isinstance(error.get("error"), dict):
        error = error["error"]
    if not isinstance(error, dict):
        return " ".join(str(error).split())[:400]
    kind = str(error.get("type", "error"))
    reason = " ".join(str(error.get("reason", "")).split())
    cause = error.get("caused_by")
    if isinstance(cause, dict) and cause.get("reason") and kind in ("mapper_parsing_exception", "search_phase_execution_exception"):
        reason = f"{reason} ({cause.get('type')}: {' '.join(str(cause['reason']).split())})"
    said = f"{kind}: {reason}"[:300]
    return f"{said}{_advice(kind, reason)}"


def squatting(name: str) -> str:
    """What to do about an index that bears an alias's own name (the sync's refusal and `memory check` say it)."""
    return (f"an index is named {name}, the alias's own name (a write reached the cluster before the alias existed, "
            f"with action.auto_create_index on): it holds only mirror copies; delete it (DELETE /{name}, as a cluster "
            "administrator) and the service creates the alias and refills it from the canonical store")


def _advice(kind: str, reason: str) -> str:
    text = reason.lower()
    if kind == "cluster_block_exception" and "read-only-allow-delete" in text:
        return (" -- the disk of a node passed the flood-stage watermark: free disk space, then lift the block "
                "(PUT <index>/_settings {\"index.blocks.read_only_allow_delete\": null}); deliveries resume by themselves")
    if kind == "cluster_block_exception":
        return (" -- the index is blocked for writes (index.blocks.write or read_only): lift the block; deliveries "
                "resume by themselves")
    budget = _SHARD_BUDGET.search(text)
    if budget or "max_shards_per_node" in text:
        setting = ("cluster.max_remote_capable_shards_per_node" if budget and budget["pool"] == "remote_capable"
                   else "cluster.max_shards_per_node")
        return (f" -- the cluster's shard budget is spent ({setting} or cluster.routing.allocation.total_shards_limit, "
                "shared with everything on the cluster): raise it or free shards; this deployment needs "
                "2 × shards × (1 + replicas) of them")
    if kind in ("strict_dynamic_mapping_exception", "mapper_parsing_exception", "document_parsing_exception"):
        return (" -- a document does not fit the index's mapping (an index built by another release?): `memory "
                "opensearch check`, then `memory reindex` rebuilds it with this release's template")
    if "limit of total fields" in text or "mapping" in text and "limit" in text:
        return " -- a mapping limit of the index was reached: `memory reindex` rebuilds it with this release's template"
    if kind == "es_rejected_execution_exception" or "too_many_requests" in text:
        return " -- the cluster is overloaded (its queue is full): the outbox retries with backoff"
    if kind == "security_exception":
        permission = re.search(r"no permissions for \[([^\]]+)\]", reason)
        if permission:
            return (f" -- the service's user lacks {permission.group(1)}: grant it (docs/operators.md, least privilege; "
                    "`memory opensearch role` prints the role)")
    if kind == "invalid_alias_name_exception" and "same name as the alias" in text:
        squatter = re.search(r"invalid alias name \[([^\]]+)\]", text)
        return " -- " + squatting(squatter.group(1) if squatter else "<alias>")
    if kind in ("index_not_found_exception", "alias_not_found_exception"):
        return " -- the index is gone: the service creates it again and refills it from the canonical store"
    return ""
