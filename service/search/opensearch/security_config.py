"""What the cluster's security plugin is set to do that changes how the service reads its answers.

`do_not_fail_on_forbidden: true` (the plugin's config.yml, `config.dynamic`) answers a search the user may not
make with empty results instead of a 403. The service would then take a missing read permission for "memory does
not know" (matched_count 0), and the permission probes (permissions.py) could not see it on searches. It is read
from the plugin's config where the service's user may read it (the security REST API: an administrator's role);
a least-privilege user may not, so it is also seen from the plugin's answer to one search naming the deployment's
facts alias and a name outside its patterns that no deployment creates: off, the whole search is refused (403);
on, the forbidden name is left out and the search answers (measured on 2.19.1 with the plugin's demo config). A
search naming only forbidden indices is refused either way, so the service's own single-alias requests still
fail loudly; what the setting hides is a name left out of a request naming several, or a pattern. Anything else
(the alias not created yet, a user allowed everything: index not found) tells nothing, and nothing is said.
"""

from __future__ import annotations

from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError, OpenSearchException, TransportError

from service.search.opensearch.templates import Names

CONFIG = "/_plugins/_security/api/securityconfig"
PROBE = "memory-security-probe.never-created"  # starts with no deployment's prefix pattern (`<prefix>-…`)


def security_notes(client: OpenSearch, names: Names) -> list[str]:
    """Notes on the security config for `memory opensearch check` (empty when nothing needs saying)."""
    on = _configured(client)
    how = "the plugin's config says so"
    if on is None:
        on, how = _observed(client, names), "a search naming an index this user may not read answered without it"
    if not on:
        return []
    return [f"the cluster's security plugin has do_not_fail_on_forbidden: true ({how}): a request naming "
            f"several indices, or a pattern, answers with those this user may read and silently leaves out the "
            f"others, so a missing read permission on part of {', '.join(names.index_patterns())} would look like "
            f"fewer results (searches that 'do not know', summaries that count less), not an error. Grant the "
            f"role exactly as `memory opensearch role --prefix {names.prefix}` prints it, or set "
            f"do_not_fail_on_forbidden: false in the plugin's config.yml"]


def _configured(client: OpenSearch) -> bool | None:
    """The setting as the plugin's config holds it; None when this user may not read the config (or there is
    no security plugin)."""
    try:
        answer: Any = client.transport.perform_request("GET", CONFIG)
    except (TransportError, OpenSearchException):  # 401/403: not this user's to read; 400/404: no plugin
        return None
    dynamic = answer.get("config", {}).get("dynamic", {}) if isinstance(answer, dict) else {}
    return bool(dynamic.get("do_not_fail_on_forbidden", False)) if isinstance(dynamic, dict) else None


def _observed(client: OpenSearch, names: Names) -> bool | None:
    """True when a search naming the deployment's facts alias and an index this user may not read answers."""
    try:
        client.transport.perform_request("POST", f"/{names.facts},{PROBE}/_search",
                                         body={"size": 0, "query": {"match_none": {}}})
    except NotFoundError:  # the user may read that name (a broad role): nothing to tell
        return None
    except TransportError as exc:
        return False if exc.status_code == 403 else None
    except OpenSearchException:
        return None
    return True
