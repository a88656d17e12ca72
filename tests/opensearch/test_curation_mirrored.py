"""Curation signals in OpenSearch mode (issue 39): memory_write's `similar` comes from the cluster's k-NN, the
groups from the canonical store's vectors, and both agree; the recall counts are the canonical query log's
whichever backend served the searches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.container import Services, build_services
from service.domain.ports import Embedder
from tests.curation.test_curation_signals import FACTS, POSTGRES_QUERIES
from tests.opensearch.conftest import mirrored_settings, settle
from tests.search.conftest import minilm  # noqa: F401 - the session's loaded model
from tests.support.clusters import Cluster

pytestmark = pytest.mark.opensearch


@pytest.fixture
def mirrored(tmp_path: Path, database_url: str, real_opensearch: Cluster, prefix: str,
             minilm: Embedder) -> Iterator[Services]:  # noqa: F811
    with build_services(mirrored_settings(tmp_path, database_url, real_opensearch, prefix, embedder="minilm"),
                        embedder=minilm) as services:
        yield services


def test_similar_pairs_group_and_counts_hold_in_opensearch_mode(mirrored: Services) -> None:
    services = mirrored
    profile = services.profiles.create("alpha")
    uid, similar = {}, {}
    for key, (title, text, kind) in FACTS.items():
        written = services.facts.write(profile, title=title, text=text, kind=kind, tags=[])
        uid[key], similar[key] = written.fact.uid, [f.uid for f in written.similar]
        settle(services)  # the next write's `similar` asks the cluster, which then holds this fact
    assert similar["A2"] == [uid["A1"]] and similar["B2"] == [uid["B1"]]

    for query in POSTGRES_QUERIES:
        outcome = services.search.search(profile, query, limit=1)
        assert [s.fact.uid for s in outcome.facts] == [uid["C"]] and outcome.mode == "hybrid"
    settle(services)
    facts = services.store.facts_by_uid(profile.id, list(uid.values()))
    counts = {f.uid: (f.recalled_count, f.last_recalled_at) for f in services.curation.reviewed(profile,
                                                                                               list(facts.values()))}
    assert counts[uid["C"]][0] == 3 and counts[uid["C"]][1] is not None
    assert counts[uid["D"]] == (0, None)

    report = services.curation.duplicates(profile)
    groups = sorted(sorted(f.uid for f in g.facts) for g in report.groups)
    assert groups == sorted([sorted([uid["A1"], uid["A2"]]), sorted([uid["B1"], uid["B2"]])])
    services.curation.resolve(profile, uid["B1"], [uid["B2"]])
    settle(services)
    found = services.search.search(profile, "which package manager does the frontend use")
    assert uid["B2"] not in [s.fact.uid for s in found.facts] and uid["B1"] in [s.fact.uid for s in found.facts]
    assert [sorted(f.uid for f in g.facts) for g in services.curation.duplicates(profile).groups] == [
        sorted([uid["A1"], uid["A2"]])]
