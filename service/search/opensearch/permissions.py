"""Every permission of the service's role (role.py), tried on the deployment's own names with cheap, harmless
calls, so that a missing one is named up front instead of surfacing as degraded searches or a stuck outbox.

Each probe is a request the security plugin must authorize before it does anything, built so that, once
authorized, it changes nothing: a read, a search matching nothing, a delete of an index or an alias that does
not exist, a write conditioned on a sequence number no document has (a version conflict), an index creation
under a name that is taken (the alias). A 403 is a denial; any other answer (200, 404, 400, 409) means the
action was allowed. Probes that could create an index (a write, a create) run only when the deployment's alias
exists, and the writes carry `require_alias` besides: a write to a missing name would auto-create an index of
that name, which then blocks the alias for good -- and another replica may be creating the indices that very
moment (the facts alias there, the query log's not yet). The template and pipeline puts of
MEMORY_OPENSEARCH_INSTALL=auto are not tried (a put is not harmless): the install at start-up names them.

Denied on every index action while cluster actions pass: the role was most likely made for another prefix, and
the report says so (`MEMORY_OPENSEARCH_PREFIX`), rather than a dozen separate lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import AuthenticationException, NotFoundError, OpenSearchException, TransportError

from service.search.opensearch.connection import classify
from service.search.opensearch.documents import routing
from service.search.opensearch.templates import Names

PROBE_ID = "memory-permission-probe"  # a document id no deployment writes
PROBE_ROUTING = routing(0)  # no profile has id 0
NOTHING: dict[str, Any] = {"size": 0, "query": {"match_none": {}}}


@dataclass(frozen=True)
class Denial:
    """`permission` (as the role names it) was refused on `on` (an index pattern, or "cluster")."""

    permission: str
    on: str
    said: str = ""

    @property
    def index(self) -> bool:
        return self.on != "cluster"


@dataclass(frozen=True)
class Probe:
    permission: str
    on: str  # "cluster", or the name the call is made on
    call: Callable[[OpenSearch], Any]
    needs_alias: bool = False  # creates or writes: only where the alias exists (no auto-created index)


def _raw(method: str, path: str, **kwargs: Any) -> Callable[[OpenSearch], Any]:
    return lambda client: client.transport.perform_request(method, path, **kwargs)


def _item_denials(answer: dict[str, Any], key: str, names: list[str], permission: str) -> list[Denial]:
    """An _msearch's or a _bulk's items refused one by one (the request itself was allowed)."""
    denials = []
    for item, name in zip(answer.get(key, []), names, strict=False):
        if key == "items":
            item = next(iter(item.values()), {})
        if int(item.get("status", 200)) == 403:
            error = item.get("error") or {}
            denials.append(Denial(permission, name, str(error.get("reason", "")) if isinstance(error, dict) else ""))
    return denials


def _search_each(names: Names) -> Callable[[OpenSearch], list[Denial]]:
    aliases = [names.facts, names.queries]

    def call(client: OpenSearch) -> list[Denial]:
        lines: list[dict[str, Any]] = []
        for alias in aliases:
            lines += [{"index": alias}, NOTHING]
        return _item_denials(client.msearch(body=lines), "responses", aliases, "indices:data/read/search*")
    return call


def _write_each(names: Names) -> Callable[[OpenSearch], list[Denial]]:
    """A bulk of index operations conditioned on a sequence number no document has: a version conflict each."""
    aliases = [names.facts, names.queries]

    def call(client: OpenSearch) -> list[Denial]:
        lines: list[dict[str, Any]] = []
        for alias in aliases:
            lines += [{"index": {"_index": alias, "_id": PROBE_ID, "routing": PROBE_ROUTING, "if_seq_no": 0,
                                 "if_primary_term": 1}}, {}]
        return _item_denials(client.bulk(body=lines, params={"require_alias": "true"}), "items", aliases,
                             "indices:data/write/bulk*")
    return call


def _scroll(names: Names) -> Callable[[OpenSearch], list[Denial]]:
    """A scroll opened on the facts (a search), read once and cleared: `memory check` reads a profile so."""

    def call(client: OpenSearch) -> list[Denial]:
        try:
            opened = client.search(index=names.facts, body={**NOTHING, "size": 1}, scroll="10s")
        except TransportError as exc:
            if exc.status_code in (403, 404):  # the search itself refused (its own probe names it), or no index
                return []
            raise classify(exc, "the permission check") from exc
        scroll_id = opened.get("_scroll_id")
        if not scroll_id:
            return []
        denials = []
        for permission, call_ in (("indices:data/read/scroll", lambda: client.scroll(scroll_id=scroll_id,
                                                                                     scroll="10s")),
                                  ("indices:data/read/scroll/clear", lambda: client.clear_scroll(
                                      scroll_id=scroll_id))):
            denial = _denied(permission, "cluster", call_)
            if denial is not None:
                denials.append(denial)
        return denials
    return call


def _denied(permission: str, on: str, call: Callable[[], Any]) -> Denial | None:
    try:
        call()
    except AuthenticationException as exc:  # 401: no permission question can be answered
        raise classify(exc, "the permission check") from exc
    except TransportError as exc:
        if exc.status_code == 403 and _error_type(exc) != "cluster_block_exception":
            return Denial(permission, on, _reason(exc))
        if isinstance(exc.status_code, int):  # 404, 400, 409...: authorized, then harmlessly refused
            return None
        raise classify(exc, "the permission check") from exc
    except OpenSearchException as exc:  # unreachable, TLS...: the reachability check names it
        raise classify(exc, "the permission check") from exc
    return None


def _error_type(exc: TransportError) -> str | None:
    info = exc.info if isinstance(exc.info, dict) else {}
    error = info.get("error")
    return str(error.get("type")) if isinstance(error, dict) else None


def _reason(exc: TransportError) -> str:
    info = exc.info if isinstance(exc.info, dict) else {}
    error = info.get("error")
    return " ".join(str(error.get("reason", "")).split()) if isinstance(error, dict) else ""


def probes(names: Names) -> list[Probe]:
    """The role's permissions (role.py), each with a call that needs it; item-level ones return their denials."""
    facts = names.facts
    spare = f"{facts}.{PROBE_ID}"  # matches `<prefix>-facts.*`, never created
    conditioned = {"if_seq_no": "0", "if_primary_term": "1", "routing": PROBE_ROUTING, "require_alias": "true"}
    return [
        Probe("cluster:monitor/main", "cluster", lambda c: c.info()),
        Probe("cluster:monitor/nodes/info", "cluster", lambda c: c.nodes.info(metric="plugins")),
        Probe("indices:admin/index_template/get", "cluster", _raw("GET", f"/_index_template/{facts}")),
        Probe("cluster:admin/search/pipeline/get", "cluster", _raw("GET", f"/_search/pipeline/{names.pipeline}")),
        Probe("indices:data/read/msearch", "cluster", _search_each(names)),
        Probe("indices:data/write/bulk", "cluster", _write_each(names), needs_alias=True),
        Probe("indices:data/read/scroll", "cluster", _scroll(names)),
        Probe("indices:admin/aliases/get", facts, _raw("GET", f"/{facts}/_alias")),
        Probe("indices:admin/get", facts, _raw("GET", f"/{facts}")),
        Probe("indices:admin/mappings/get", facts, _raw("GET", f"/{facts}/_mapping")),
        Probe("indices:admin/refresh*", facts, _raw("POST", f"/{facts}/_refresh")),
        Probe("indices:data/read/search*", facts, _raw("POST", f"/{facts}/_search", body=NOTHING)),
        Probe("indices:data/read/get", facts, _raw("GET", f"/{facts}/_doc/{PROBE_ID}",
                                                   params={"routing": PROBE_ROUTING})),
        Probe("indices:data/write/index", facts, _raw("PUT", f"/{facts}/_doc/{PROBE_ID}", params=conditioned,
                                                      body={}), needs_alias=True),
        Probe("indices:admin/create", facts, _raw("PUT", f"/{facts}"), needs_alias=True),  # taken by the alias
        Probe("indices:admin/delete", f"{facts}.*", _raw("DELETE", f"/{spare}")),
        Probe("indices:admin/aliases", f"{facts}.*", _raw("POST", "/_aliases", body={
            "actions": [{"remove": {"index": spare, "alias": facts}}]})),
    ]


@dataclass
class Findings:
    """What the probes found: the denials, and which index permissions were tried at all."""

    denied: list[Denial] = field(default_factory=list)
    tried_index: set[str] = field(default_factory=set)
    tried_cluster: int = 0


def denials(client: OpenSearch, names: Names) -> Findings:
    """Every permission of the role the cluster refuses this user on this deployment's names (no denial: all
    granted). Raises BackendUnavailable when the cluster cannot be asked (unreachable, refused credentials)."""
    alias_exists = _alias_exists(client, names.facts)
    found = Findings()
    for probe in probes(names):
        if probe.needs_alias and not alias_exists:
            continue
        answer: list[Any] = []
        denial = _denied(probe.permission, probe.on, lambda: answer.append(probe.call(client)))  # called at once
        if probe.on == "cluster":
            found.tried_cluster += 1
        else:
            found.tried_index.add(probe.permission)
        if denial is not None:
            found.denied.append(denial)
        elif answer and isinstance(answer[0], list):
            found.denied += answer[0]
            found.tried_index.add({"indices:data/read/msearch": "indices:data/read/search*",
                                   "indices:data/write/bulk": "indices:data/write/bulk*"}.get(probe.permission, ""))
    found.tried_index.discard("")
    return found


def _alias_exists(client: OpenSearch, alias: str) -> bool:
    try:
        return bool(client.indices.get_alias(index=alias))  # named by its index: HEAD _alias/<name> asks all
    except NotFoundError:
        return False
    except TransportError as exc:
        if exc.status_code == 403:  # cannot tell: leave the creating probes out
            return False
        raise classify(exc, "the permission check") from exc
    except OpenSearchException as exc:
        raise classify(exc, "the permission check") from exc


def problems(found: Findings, names: Names) -> list[str]:
    """One line per denial (the permission, where, what to do); a role made for another prefix as one line."""
    if not found.denied:
        return []
    fix = f"`memory opensearch role --prefix {names.prefix}` prints the role this deployment needs"
    patterns = ", ".join(names.index_patterns())
    index = [d for d in found.denied if d.index]
    cluster = [d for d in found.denied if not d.index]
    lines = []
    if index and {d.permission for d in index} >= found.tried_index and not cluster:
        lines.append(f"the OpenSearch user may use none of this deployment's indices ({patterns}) although its role "
                     f"grants the cluster permissions: was the role made for another prefix? MEMORY_OPENSEARCH_PREFIX "
                     f"is {names.prefix!r}: set it to the prefix the role names, or grant the role's index "
                     f"permissions on these patterns ({fix})")
        index = []
    for denial in cluster:
        lines.append(f"the OpenSearch user lacks the cluster permission [{denial.permission}]: grant it ({fix})")
    for denial in _unique(index):
        lines.append(f"the OpenSearch user lacks [{denial.permission}] on {denial.on} (MEMORY_OPENSEARCH_PREFIX="
                     f"{names.prefix!r}): grant it on {patterns}; if the role grants it on other patterns, it was "
                     f"made for another prefix ({fix})")
    return lines


def _unique(found: list[Denial]) -> list[Denial]:
    seen: set[tuple[str, str]] = set()
    out: list[Denial] = []
    for d in found:
        if (d.permission, d.on) not in seen:
            seen.add((d.permission, d.on))
            out.append(d)
    return out
