"""What the cluster's refusals become (service.search.opensearch.refusals, pure): OpenSearch's own words, then
what to do. Each version's wording of the same refusal is recognised (2.19 and 3.x differ on the shard limit);
test_cluster_faults.py::test_a_spent_shard_budget_is_named provokes it on the real node of either version."""

from __future__ import annotations

import pytest

from service.search.opensearch.refusals import explain

# As the nodes word it (ShardLimitValidator.checkShardLimit): 2.19.1, then 3.5.0's two shard pools.
SHARD_LIMIT = {
    "2.19": "Validation Failed: 1: this action would add [2] total shards, but this cluster currently has "
            "[1]/[1] maximum shards open;",
    "3.x local": "Validation Failed: 1: this action would add [1] total LOCAL_ONLY shards, but this cluster "
                 "currently has [1]/[1] maximum LOCAL_ONLY shards open;",
    "3.x remote": "Validation Failed: 1: this action would add [1] total REMOTE_CAPABLE shards, but this cluster "
                  "currently has [4]/[4] maximum REMOTE_CAPABLE shards open;",
}


@pytest.mark.parametrize("wording", ["2.19", "3.x local"])
def test_a_spent_shard_budget_names_the_setting_whatever_the_version(wording: str) -> None:
    line = explain({"type": "validation_exception", "reason": SHARD_LIMIT[wording]})
    assert line.startswith("validation_exception: Validation Failed: 1: this action would add")
    assert "shard budget is spent (cluster.max_shards_per_node" in line
    assert "memory reindex" not in line  # a rebuild creates indices: it would fail the same way


def test_the_remote_capable_pool_names_its_own_setting() -> None:
    line = explain({"type": "validation_exception", "reason": SHARD_LIMIT["3.x remote"]})
    assert "shard budget is spent (cluster.max_remote_capable_shards_per_node" in line


def test_a_validation_failure_of_another_kind_gets_no_shard_advice() -> None:
    line = explain({"type": "validation_exception", "reason": "Validation Failed: 1: index name is too long;"})
    assert "shard" not in line


def test_an_index_squatting_the_alias_name_is_named_with_its_fix() -> None:
    line = explain({"type": "invalid_alias_name_exception", "reason": "Invalid alias name [mt-1-queries], an index "
                                                                      "exists with the same name as the alias"})
    assert line.startswith("invalid_alias_name_exception: Invalid alias name [mt-1-queries]")
    assert "delete it (DELETE /mt-1-queries" in line and "refills it from the canonical store" in line
