"""The readability gate of the semantic half of the match rule (service.search.readable), as a pure function,
and as both backends apply it (embedded here; OpenSearch in tests/opensearch/test_mirror.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain import lexical
from service.search.readable import is_word, semantic_applies
from tests.opensearch.fakes import FakeEmbedder

VOCABULARY = frozenset({"deploy", "deployment", "cluster", "weather", "what", "is", "the", "who", "are", "they"})


def applies(query: str, known: set[str] | None = None, vocabulary: frozenset[str] | None = VOCABULARY) -> bool:
    asked: list[list[str]] = []

    def known_to_memory(terms: list[str]) -> bool:
        asked.append(terms)
        return any(t in (known or set()) for t in terms)

    result = semantic_applies(query, lexical.informative_terms(query), vocabulary, known_to_memory)
    if vocabulary is not None and any(t in vocabulary for t in lexical.informative_terms(query)):
        assert asked == []  # memory is only asked when the model knows no word
    return result


def test_a_word_the_model_knows_is_enough() -> None:
    assert applies("deployment zzqx")
    assert applies("weather")


def test_gibberish_is_not_read_by_meaning() -> None:
    assert not applies("asdf qwer zxcv")
    assert not applies("ekkmn tarbul vossi")


def test_a_word_memory_knows_is_enough() -> None:
    assert applies("keycloak linkerd", known={"linkerd"})
    assert not applies("keycloak linkerd", known=set())


def test_stop_words_only_is_read_but_punctuation_only_is_not() -> None:
    assert applies("who are they")
    assert not applies("??? !!! ...")


def test_without_a_vocabulary_every_query_is_read() -> None:
    assert applies("asdf qwer zxcv", vocabulary=None)
    assert applies("??? !!!", vocabulary=None)


@pytest.fixture
def fake_services(tmp_path: Path, database_url: str) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path, database_url=database_url, embedder="minilm", min_similarity=0.3)
    with build_services(settings, embedder=FakeEmbedder(vocabulary=VOCABULARY)) as services:
        yield services


def test_embedded_backend_counts_no_semantic_match_for_an_unreadable_query(fake_services: Services) -> None:
    profile = fake_services.profiles.create("alpha")
    uid = fake_services.facts.write(profile, title="Deploy with Argo CD", text="Deploys to the k8s cluster.",
                                    kind="project", tags=[]).fact.uid
    # The fake embedder puts "deployxx" on the deploy axis: close by cosine, but no word anyone knows.
    gibberish = fake_services.search.search(profile, "deployxx")
    assert (gibberish.matched_count, gibberish.returned_count, gibberish.mode) == (0, 0, "hybrid")
    row = fake_services.query_log.listing(profile, 1)[0]
    assert row["matched_count"] == 0 and row["mode"] == "hybrid"
    # The same closeness with a known word counts, and so does a word only memory knows ("argo").
    for query in ("deployment", "argo deployxx"):
        found = fake_services.search.search(profile, query)
        assert found.matched_count == 1 and found.facts[0].fact.uid == uid, query
    assert fake_services.search.search(profile, "argo deployxx").facts[0].vector is not None
    # Punctuation only: nothing to read, nothing matched.
    assert fake_services.search.search(profile, "??? !!!").matched_count == 0


def test_an_unreadable_query_is_an_exact_miss_in_hybrid_mode(fake_services: Services) -> None:
    profile = fake_services.profiles.create("alpha")
    fake_services.facts.write(profile, title="Deploy", text="Deploys", kind="project", tags=[])
    backend = fake_services.backend
    from service.domain.ports import SearchRequest

    vector = fake_services.embedder.embed_query("deployxx")
    hits = backend.search(SearchRequest(profile_id=profile.id, profile="alpha", query="deployxx", limit=5,
                                        vector=vector))
    assert (hits.matched_count, hits.inactive_matched, hits.hits, hits.mode) == (0, 0, [], "hybrid")


def test_inflected_and_compound_words_count_gibberish_does_not() -> None:
    vocabulary = frozenset({"dashboard", "token", "time", "out", "micro", "service", "web", "socket", "as"})
    for word in ("dashboards", "tokens", "timeout", "microservices", "websocket"):
        assert is_word(word, vocabulary), word
    for word in ("asdf", "ekkmn", "tarbul", "timex", "outtime1", "1234time", "dashboardz"):
        assert not is_word(word, vocabulary), word
    assert applies("grafana dashboards", vocabulary=vocabulary)
    assert not applies("asdf qwer zxcv", vocabulary=vocabulary)
