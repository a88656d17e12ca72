"""Hybrid search with the real all-MiniLM-L6-v2 model (loaded once per test session)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.ports import Embedder
from service.domain.profiles import ProfileRef
from service.embedding.minilm import MiniLMEmbedder
from service.domain import lexical
from service.search.fusion import fuse

pytestmark = pytest.mark.model

FACTS = [
    ("Test runner", "The user prefers pytest with plain asserts over unittest classes.", "preference", ["python"]),
    ("Mother tongue", "The user is a native Portuguese speaker and writes in English at work.", "user", []),
    ("Billing database", "Invoices are stored in PostgreSQL 16 on billing-db-1.", "project", ["billing"]),
    ("Message broker", "We chose Kafka over RabbitMQ for replayable order events.", "decision", ["kafka"]),
    ("On-call runbook", "The on-call runbook lives at https://wiki.example.com/oncall.", "reference", ["oncall"]),
    ("Embedding study", "MiniLM embeddings beat BM25 alone on paraphrased questions in our benchmark.",
     "research", ["search"]),
]


@pytest.fixture
def hybrid(tmp_path: Path, database_url: str, minilm: Embedder) -> Iterator[tuple[Services, ProfileRef, dict]]:
    services = build_services(Settings(data_dir=tmp_path, database_url=database_url, embedder="minilm"),
                              embedder=minilm)
    profile = services.profiles.create("alpha")
    uids = {}
    for title, text, kind, tags in FACTS:
        uids[title] = services.facts.write(profile, title=title, text=text, kind=kind, tags=tags).fact.uid
    try:
        yield services, profile, uids
    finally:
        services.close()


def test_paraphrase_without_shared_words_finds_its_fact(hybrid) -> None:
    services, profile, uids = hybrid
    query = "which queue technology was selected"
    terms = lexical.informative_terms(query)
    assert terms and not any(t in FACTS[3][0].lower() + FACTS[3][1].lower() for t in terms)  # no shared word
    found = services.search.search(profile, query)
    assert found.mode == "hybrid" and found.matched_count >= 1
    assert found.facts[0].fact.uid == uids["Message broker"]
    assert found.facts[0].vector is not None and found.facts[0].lexical is None


def test_off_topic_query_matches_nothing(hybrid) -> None:
    services, profile, _ = hybrid
    for query in ("best sourdough hydration for pizza", "zorp blenticular frammis", "who won the 1998 world cup",
                  "asdf qwer zxcv", "ekkmn tarbul vossi"):
        found = services.search.search(profile, query)
        assert found.matched_count == 0 and found.facts == [], query


def test_filters_and_retirement_with_vectors(hybrid) -> None:
    services, profile, uids = hybrid
    query = "which message queue did we pick and why"
    assert services.search.search(profile, query).facts[0].fact.uid == uids["Message broker"]
    assert services.search.search(profile, query, kind="preference").facts == [] or all(
        f.fact.kind == "preference" for f in services.search.search(profile, query, kind="preference").facts
    )
    assert all("kafka" in f.fact.tags for f in services.search.search(profile, query, tags=["kafka"]).facts)
    services.facts.forget(profile, uids["Message broker"], reason="moved to NATS")
    after = services.search.search(profile, query)
    assert uids["Message broker"] not in [f.fact.uid for f in after.facts]


def test_served_order_equals_the_pure_fusion(hybrid) -> None:
    services, profile, _ = hybrid
    query = "postgres database for billing invoices"
    found = services.search.search(profile, query, limit=10)
    lexical_scores = {f.fact.uid: f.lexical for f in found.facts if f.lexical is not None}
    vector_scores = {f.fact.uid: f.vector for f in found.facts if f.vector is not None}
    settings = services.settings
    with services.store.read() as uow:
        fact_id = {uid: row.id for uid, row in uow.facts.by_uids(profile.id, [f.fact.uid for f in found.facts]).items()}
    expected = fuse([lexical_scores, vector_scores], [settings.lexical_weight, settings.vector_weight],
                    tie=fact_id.__getitem__)
    assert [uid for uid, _ in expected] == [f.fact.uid for f in found.facts]
    assert [round(s, 6) for _, s in expected] == [round(f.score, 6) for f in found.facts]
    assert all(f.vector is None or f.vector >= settings.min_similarity for f in found.facts)


def test_similar_uses_vectors(hybrid) -> None:
    services, profile, uids = hybrid
    written = services.facts.write(profile, title="Preferred test framework",
                                   text="The user likes pytest and plain assert statements rather than unittest.",
                                   kind="preference", tags=[])
    assert [f.uid for f in written.similar] == [uids["Test runner"]]


def test_vectors_are_stored_with_their_model(hybrid) -> None:
    services, profile, _ = hybrid
    from service.store.vectors import models as vector_models

    with services.db.read() as session:
        assert vector_models(session) == {"sentence-transformers/all-MiniLM-L6-v2+int8": len(FACTS)}  # the default
    vector = services.embedder.embed_query("anything")
    assert vector.dtype == np.float32 and vector.shape == (384,)


def test_a_search_that_does_not_wait_for_the_model_is_degraded_not_wrong(tmp_path: Path) -> None:
    """MEMORY_EMBEDDER_WAIT=0: a search during the load runs at once, lexically (tests/domain/test_embed_gate.py
    and tests/mcp/test_fresh_start.py cover the default, where it waits)."""
    settings = Settings(data_dir=tmp_path, embedder="minilm", embedder_wait=0)
    with build_services(settings, embedder=MiniLMEmbedder(settings)) as services:  # not loaded yet
        profile = services.profiles.create("alpha")
        found = services.search.search(profile, "anything at all")
        assert found.mode == "degraded" and found.matched_count is None
        row = services.query_log.listing(profile)[0]
        assert row["matched_count"] is None and row["mode"] == "degraded"
