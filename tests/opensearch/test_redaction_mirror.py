"""`memory redact` in opensearch mode: through the outbox the mirror loses the fact's words and vector and
the searches' words, keeps what the stats count (they still come from the mirror, unchanged), and the
rebuild leaves no index that ever held them. On osmem and on the real node, SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opensearchpy import OpenSearch, helpers
from typer.testing import CliRunner

from service.cli.main import app
from service.config import Settings
from service.container import Services, open_mirror_maintenance
from tests.opensearch.conftest import settle
from tests.support.clusters import Cluster

SECRET = "tok_SECRET_9f8e7d6c"


def mirror_text(client: OpenSearch, prefix: str) -> str:
    client.indices.refresh(index=f"{prefix}-*")
    docs = [hit["_source"] for hit in helpers.scan(client, index=f"{prefix}-*", query={"query": {"match_all": {}}})]
    return json.dumps(docs).casefold()


def aggregates(services: Services) -> dict[str, Any]:
    p = services.profiles.get("alpha")
    summary = services.query_log.sourced_summary(p, 30)
    stats = services.stats.sourced_stats(p, 30)
    body = summary.body
    for item in body["top_queries"]:
        item.pop("query")
    body["top_queries"].sort(key=lambda q: (-q["count"], -q["zero_match"]))
    for item in body["top_facts"]:
        item.pop("title")
    return {"summary": body, "stats": stats.body, "sources": (summary.source, stats.source)}


def test_the_mirror_loses_the_words(os_services: Services, os_client: OpenSearch, os_settings: Settings,
                                    os_cluster: Cluster, os_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    p = os_services.profiles.create("alpha")
    uid = os_services.facts.write(p, title="Deploy token", text=f"The deploy bot uses {SECRET} as its token.",
                                  kind="reference", tags=["deploy"]).fact.uid
    os_services.facts.write(p, title="Editor", text="Prefers vim.", kind="preference", tags=["tools"])
    os_services.facts.forget(p, uid, reason="rotated")
    for query in (SECRET, "vim", f"is {SECRET} still valid"):
        os_services.search.search(p, query)
    settle(os_services)
    assert SECRET.casefold() in mirror_text(os_client, os_prefix)  # the scan below can fail
    before = aggregates(os_services)
    assert before["sources"] == ("opensearch", "opensearch")

    env = {"MEMORY_DATA_DIR": str(os_settings.data_dir), "MEMORY_DATABASE_URL": os_settings.database_url or "",
           "MEMORY_EMBEDDER": "none", "MEMORY_SEARCH": "opensearch", **os_cluster.env(os_prefix)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    # First without --match: the fact's words go, the searches holding only the secret stay, and the report
    # names the long word they share with the removed text.
    first = CliRunner().invoke(app, ["redact", uid, "--reason", "a live token", "--operator", "alice", "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.output)
    assert report["queries_redacted"] == 0 and report["mirror"]["delivered"] >= 1
    assert report["sharing_long_words"] == [{"word": SECRET.casefold(), "searches": 2}]
    settle(os_services)
    assert SECRET.casefold() in mirror_text(os_client, os_prefix)
    # Then again with --match: the searches go too, in the store and (outbox, rebuild) in the mirror.
    result = CliRunner().invoke(app, ["redact", uid, "--reason", "a live token", "--operator", "alice",
                                      "--match", SECRET, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["extended"] and report["queries_redacted"] == 2 and report["mirror"]["delivered"] >= 2
    assert report["redaction"]["queries_redacted"] == 2
    assert len(report["mirror"]["rebuilt"]) == 2  # fresh indices; the ones that held the words are deleted

    settle(os_services)
    text = mirror_text(os_client, os_prefix)
    assert SECRET.casefold() not in text and "the deploy bot uses" not in text
    assert "prefers vim" in text
    doc = os_client.get(index=f"{os_prefix}-facts", id=uid, routing=str(p.id))["_source"]
    assert "title" not in doc and "text" not in doc and "embedding" not in doc
    assert (doc["status"], doc["kind"], doc["tags"]) == ("retired", "reference", ["deploy"])
    found = os_services.search.search(p, SECRET)
    assert (found.matched_count, os_services.query_log.listing(p, 1)[0]["inactive_matched"]) == (0, 0)

    settle(os_services)
    after = aggregates(os_services)
    assert after["sources"] == ("opensearch", "opensearch")  # the mirror still agrees with the store
    # The search made just now is one more row; the rest is as before.
    after["summary"]["totals"]["searches"] -= 1
    after["summary"]["totals"]["zero_match"] -= 1
    assert after["stats"] == before["stats"]
    assert after["summary"]["totals"]["distinct_queries"] == before["summary"]["totals"]["distinct_queries"] + 1
    assert open_mirror_maintenance(os_settings, os_services.db, os_services.embedder).check(p) == {}
