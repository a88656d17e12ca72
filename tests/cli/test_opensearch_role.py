"""`memory opensearch role` prints the least-privilege role for a prefix with no cluster configured (issue 37)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from service.cli.main import app


def test_the_role_prints_without_a_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_SEARCH", raising=False)
    monkeypatch.delenv("MEMORY_OPENSEARCH_URL", raising=False)
    result = CliRunner().invoke(app, ["opensearch", "role", "--prefix", "team-a", "--install", "check"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["index_permissions"][0]["index_patterns"] == ["team-a-facts", "team-a-facts.*", "team-a-queries",
                                                              "team-a-queries.*"]
    assert "indices:admin/index_template/put" not in body["cluster_permissions"]


def test_a_bad_prefix_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_SEARCH", raising=False)
    result = CliRunner().invoke(app, ["opensearch", "role", "--prefix", "Team A"])
    assert result.exit_code == 1 and "MEMORY_OPENSEARCH_PREFIX" in result.output and "Traceback" not in result.output
