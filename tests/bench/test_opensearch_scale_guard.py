"""bench/opensearch_scale.py prints a ratio only when OpenSearch served the OpenSearch run (issue 35: it once
printed 0.53 with every search answered from the canonical store). The rule alone, on the counts a run collects;
the real run is tests/bench/test_benchmarks_run.py::test_opensearch_scale_runs."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.opensearch_scale import NotServed, served_by_opensearch


def test_every_search_hybrid_and_counted_by_the_cluster_passes() -> None:
    served_by_opensearch(Counter(hybrid=12), searched=60, indices=2)


@pytest.mark.parametrize(("modes", "searched", "indices", "said"), [
    (Counter(hybrid=10, degraded=2), 60, 2, "2 of 12 searches answered 2 degraded"),
    (Counter(degraded=12), 0, 2, "12 of 12 searches answered 12 degraded"),
    (Counter(hybrid=12), 0, 2, "the cluster counted 0 searches on the facts index for 12 memory_search calls"),
    (Counter(hybrid=12), 60, 0, "the deployment has no index on the cluster"),
])
def test_a_run_opensearch_did_not_serve_gets_no_ratio(modes: Counter[str], searched: int, indices: int,
                                                     said: str) -> None:
    with pytest.raises(NotServed, match="refused to print a ratio") as refused:
        served_by_opensearch(modes, searched=searched, indices=indices)
    assert said in str(refused.value)
