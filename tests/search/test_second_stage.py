"""The second ranking stage through memory_search, with the real model, on SQLite and PostgreSQL: token vectors
are stored with each fact's vector and read back by the index (a store written before them keeps working), a
redaction takes them with the vector, and on a store of chat turns an off-topic question is answered with
matched_count 0 while the questions the chat answers are not."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import sqlalchemy as sa

from service.config import Settings
from service.container import Services, build_services
from service.domain import names
from service.domain.late import MAX_TOKENS
from service.domain.ports import Embedder
from service.domain.redaction import RedactionService
from service.store import vectors
from service.domain.ranking import level
from service.store.tables import FactRow, FactVector

pytestmark = pytest.mark.model

CHAT = [
    ("maria", "Hey Dave! How was your weekend?"),
    ("dave", "Great! I finally fixed the old Mustang's carburetor with my brother."),
    ("maria", "That's awesome! Where did you find the parts?"),
    ("dave", "A junkyard in Detroit had an original one from 1967."),
    ("maria", "I started volunteering at the animal shelter on Saturdays."),
    ("dave", "Nice, which animals do you look after?"),
    ("maria", "Mostly senior dogs, they need walks twice a day."),
    ("dave", "Thanks, that sounds lovely. Where is it located?"),
    ("maria", "Wow, how long did the whole restoration take?"),
]


@pytest.fixture
def stage_services(settings: Settings, minilm: Embedder) -> Iterator[Services]:
    with build_services(settings.model_copy(update={"embedder": "minilm"}), embedder=minilm) as services:
        yield services


def write_chat(services: Services) -> dict[str, str]:
    profile = services.profiles.create("chat")
    return {text: services.facts.write(profile, title=text[:80], text=text, kind="user", tags=[speaker]).fact.uid
            for speaker, text in CHAT}


def test_token_vectors_are_stored_after_the_vector_and_read_back_by_the_index(stage_services: Services) -> None:
    uids = write_chat(stage_services)
    with stage_services.db.read() as session:
        blobs = session.execute(sa.select(FactVector.vector, FactVector.dim)).all()
    assert len(blobs) == len(CHAT)
    for blob, dim in blobs:
        tokens = vectors.tokens_from_bytes(blob, dim)
        assert tokens is not None and 1 <= len(tokens) <= MAX_TOKENS and tokens.codes.shape[1] == dim
    index = stage_services.backend._synced(stage_services.profiles.get("chat").id)  # type: ignore[attr-defined]
    assert all(index.tokens[index.row_of_uid[uid]] is not None for uid in uids.values())


def test_a_store_written_before_token_vectors_still_ranks_without_them(stage_services: Services,
                                                                       settings: Settings, minilm: Embedder) -> None:
    uids = write_chat(stage_services)
    with stage_services.db.write() as session:  # as an older version stored them: the vector's floats only
        for row in session.execute(sa.select(FactVector)).scalars():
            row.vector = bytes(row.vector[: 4 * row.dim])
    with build_services(settings.model_copy(update={"embedder": "minilm"}), embedder=minilm) as fresh:
        found = fresh.search.search(fresh.profiles.get("chat"), "What did Dave fix on his car?")
        assert found.mode == "hybrid" and found.facts[0].fact.uid == uids[CHAT[1][1]]


def test_a_redaction_takes_the_token_vectors_with_the_vector(stage_services: Services) -> None:
    uids = write_chat(stage_services)
    RedactionService(stage_services.store).redact(uids[CHAT[3][1]], reason="a secret",
                                                                           operator="test")
    with stage_services.db.read() as session:
        assert len(session.execute(sa.select(FactVector)).all()) == len(CHAT) - 1


def test_on_a_chat_store_off_topic_questions_match_nothing_and_the_chat_s_own_questions_do(
        stage_services: Services) -> None:
    uids = write_chat(stage_services)
    profile = stage_services.profiles.get("chat")
    for question, answer in [("What did Dave fix with his brother?", CHAT[1][1]),
                             ("How often do the dogs at the shelter need walks?", CHAT[6][1])]:
        found = stage_services.search.search(profile, question)
        assert found.matched_count and uids[answer] in [f.fact.uid for f in found.facts[:3]], question
        assert found.facts[0].score == 1.0
    for off_topic in ["Which region hosts the primary Kubernetes cluster?", "What is the speed of sound in air?",
                      "How long are CI artifacts retained?"]:
        found = stage_services.search.search(profile, off_topic)
        assert (found.matched_count, found.facts) == (0, []), off_topic
    rows = stage_services.query_log.listing(profile, 10)
    assert [r["matched_count"] for r in rows[:3]] == [0, 0, 0]  # every miss is logged as one


def test_a_query_is_embedded_without_the_names_the_store_never_mentions(
        stage_services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """service.domain.names: "Emi" is in no fact of the chat, so the query's vector is made without it; "Dave"
    is (a tag, and Maria's greeting), so it stays. The counts come from the backend, active facts only."""
    uids = write_chat(stage_services)
    profile = stage_services.profiles.get("chat")
    held = stage_services.backend.holding(profile.id, profile.name, ["dave", "emi", "mustang"])
    assert held[0] >= 4 and held[1:] == (0, 1)
    embedded: list[str] = []
    original = stage_services.embedder.embed_query_tokens
    monkeypatch.setattr(stage_services.embedder, "embed_query_tokens",
                        lambda text: (embedded.append(text), original(text))[1])
    found = stage_services.search.search(profile, "What did Emi's friend Dave fix with his brother?")
    assert embedded[-1] == "What did friend Dave fix with his brother?"
    assert found.facts and found.facts[0].fact.uid == uids[CHAT[1][1]]
    stage_services.search.search(profile, "What did Dave fix?")
    assert embedded[-1] == "What did Dave fix?"
    stage_services.facts.forget(profile, uids[CHAT[1][1]])  # the one fact saying "Mustang"
    assert stage_services.backend.holding(profile.id, profile.name, ["mustang"]) == (0,)
    stage_services.search.search(profile, "Which Mustang did Dave restore?")
    assert embedded[-1] == "Which did Dave restore?"


def test_the_gate_reads_the_level_the_stored_vectors_give(stage_services: Services, minilm: Embedder) -> None:
    """The store's off-topic level a search reads: the median over the probe questions (embedded without the
    names the store never mentions) of their closest cosine to an active fact, as the facts' stored vectors
    give it (a forgotten fact left out)."""
    uids = write_chat(stage_services)
    profile = stage_services.profiles.get("chat")
    stage_services.facts.forget(profile, uids[CHAT[1][1]])
    stage_services.search.search(profile, "What did Dave find in Detroit?")
    with stage_services.db.read() as session:
        stored = session.execute(sa.select(FactVector.vector, FactVector.dim).join(
            FactRow, FactRow.id == FactVector.fact_id).where(FactRow.status == "active")).all()
    facts = np.stack([vectors.from_bytes(blob, dim) for blob, dim in stored])
    # the probes as this store's searches embed them: without the names none of its active facts holds
    asked = names.terms(" ".join(level.probes()))
    held = dict(zip(asked, stage_services.backend.holding(profile.id, profile.name, asked)))
    texts = [names.meaning_text(p, lambda terms: [held[t] for t in terms]) for p in level.probes()]
    assert sum(t != p for t, p in zip(texts, level.probes())) >= 10  # "the Sistine Chapel", "Brazil", ...
    probes = np.stack([e.vector for e in minilm.embed_facts(texts)])
    expected = float(np.median(np.maximum((probes @ facts.T).max(axis=1), 0.0)))
    assert len(stored) == len(CHAT) - 1 and 0.0 < expected < 0.6
    assert stage_services.search.levels.last(profile.id) == pytest.approx(expected, abs=1e-5)


def test_late_interaction_reads_the_same_numbers_the_query_embedding_gives(minilm: Embedder) -> None:
    made = minilm.embed_query_tokens("When did Maria start volunteering?")
    again = minilm.embed_query_tokens("When did Maria start volunteering?")  # from the query cache
    assert made.tokens is not None and again.tokens is not None
    assert np.array_equal(made.vector, again.vector) and np.array_equal(made.tokens.codes, again.tokens.codes)
