"""The start-up check of the cluster (issue 25), on answers a test node cannot give: only OpenSearch 2.19.1
and 3.5.0 with both plugins run here, so an older or newer version, Elasticsearch and a node without a plugin are
stand-ins
(`ClusterAnswers`, a fake of the two requests the check makes, named as such). Each problem is one line that
names the fix; the real node's clean check runs in tests/opensearch/test_least_privilege.py."""

from __future__ import annotations

from typing import Any

import pytest

from service.search.opensearch.cluster import TESTED_ON, plugin_problems, read_version, version_problems


class ClusterAnswers:
    """A fake cluster: what GET / and GET _nodes/plugins answer (nothing else is asked)."""

    def __init__(self, number: str = "2.19.1", distribution: str = "opensearch",
                 plugins: tuple[str, ...] = ("opensearch-knn", "opensearch-neural-search")) -> None:
        self.version = {"number": number, "distribution": distribution}
        self.nodes = self
        self._plugins = plugins

    def info(self, **_: Any) -> dict[str, Any]:
        return {"version": self.version}

    def info_plugins(self) -> dict[str, Any]:
        return {"nodes": {"n1": {"plugins": [{"name": name} for name in self._plugins]},
                          "n2": {"plugins": [{"name": name} for name in self._plugins[:1]]}}}


class _Nodes:
    def __init__(self, answers: ClusterAnswers) -> None:
        self.answers = answers

    def info(self, metric: str) -> dict[str, Any]:
        assert metric == "plugins"
        return self.answers.info_plugins()


def fake(**kwargs: Any) -> Any:
    answers = ClusterAnswers(**kwargs)
    answers.nodes = _Nodes(answers)  # type: ignore[assignment]
    return answers


@pytest.mark.parametrize(("number", "distribution", "expected"), [
    ("2.19.1", "opensearch", []),
    ("3.5.0", "opensearch", []),
    ("2.17.1", "opensearch", ["OpenSearch 2.17.1 is older than 2.19.0, which the hybrid query needs "
                              "(pagination_depth): upgrade the cluster to 2.19.0 or later"]),
    ("8.15.0", "elasticsearch", ["the cluster is elasticsearch 8.15.0, not OpenSearch: the service needs OpenSearch "
                                 "≥ 2.19.0 with the k-NN and neural-search plugins"]),
])
def test_the_version_is_checked(number: str, distribution: str, expected: list[str]) -> None:
    assert version_problems(fake(number=number, distribution=distribution)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("number", ["2.19.0", "2.19.4", "3.0.0", "3.3.2", "3.5.0"])
def test_a_tested_version_gets_no_note(number: str) -> None:
    version = read_version(fake(number=number))  # type: ignore[arg-type]
    assert (version.number, version.problems, version.note) == (number, [], None)


@pytest.mark.parametrize("number", ["3.6.0", "3.10.1", "4.0.0", "2.20.0"])
def test_a_newer_major_or_minor_is_used_with_a_note(number: str) -> None:
    version = read_version(fake(number=number))  # type: ignore[arg-type]
    assert version.problems == []  # never refused
    assert version.note == (f"OpenSearch {number} is newer than the versions this release is tested on "
                            f"({TESTED_ON}): it is used all the same; `memory check` compares the mirror with the "
                            "canonical store")
    assert TESTED_ON == "2.19.x and 3.x up to 3.5"


def test_a_plugin_missing_on_one_node_is_named_with_the_fix() -> None:
    problems = plugin_problems(fake(), vectors=True)  # type: ignore[arg-type]
    assert problems == ["the cluster lacks the neural-search plugin (opensearch-neural-search): install it on every "
                        "node, or run with MEMORY_EMBEDDER=none (lexical search only)"]
    assert plugin_problems(fake(), vectors=False) == []  # type: ignore[arg-type]  # BM25 needs neither
