"""What is embedded for a fact: its title and text, led by the tags its words do not say
(service.domain.models.embedding_text) -- on every path that embeds a fact: a write, an update of its tags or
title, `memory reindex --reembed`, an import."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from service.config import Settings
from service.container import Services, build_services
from service.domain.models import embedding_text
from service.domain.portability import export_profile, import_profile
from service.domain.ports import Embedder
from service.domain.profiles import ProfileRef
from service.domain.vectors import VectorMaintenance

TURN = {"title": "Where did you go", "text": "Where did you go last weekend?", "kind": "user"}


def test_a_tag_the_words_do_not_say_leads_the_text() -> None:
    assert embedding_text("Where did you go", "Where did you go last weekend?", ["caroline"]) == \
        "caroline: Where did you go\nWhere did you go last weekend?"


def test_a_tag_the_words_say_is_left_out() -> None:
    assert embedding_text("Trip", "Caroline went hiking last weekend.", ["caroline"]) == \
        "Trip\nCaroline went hiking last weekend."
    # each word of a tag counts: "fahim-khan" is said by "Fahim Khan" (folded as the search folds words)
    assert embedding_text("Call", "Fahim Khan called.", ["fahim-khan"]) == "Call\nFahim Khan called."
    assert embedding_text("Call", "Fahim called.", ["fahim-khan"]) == "fahim-khan: Call\nFahim called."


def test_tags_are_a_set_so_their_order_changes_nothing() -> None:
    one = embedding_text("Deploy", "Friday's release.", ["ops", "billing", "ops"])
    assert one == embedding_text("Deploy", "Friday's release.", ["billing", "ops"]) == \
        "billing, ops: Deploy\nFriday's release."


def test_without_tags_it_is_the_title_and_the_text() -> None:
    assert embedding_text("Test runner", "The user prefers pytest.", []) == "Test runner\nThe user prefers pytest."


@pytest.fixture
def tagged(tmp_path: Path, database_url: str, minilm: Embedder) -> Iterator[tuple[Services, ProfileRef]]:
    with build_services(Settings(data_dir=tmp_path, database_url=database_url, embedder="minilm"),
                        embedder=minilm) as services:
        yield services, services.profiles.create("alpha")


def stored(services: Services, profile: ProfileRef) -> dict[str, np.ndarray]:
    """uid -> the stored vector of each active fact."""
    with services.store.read() as uow:
        uids, matrix, _ = uow.vectors.active_of(profile.id, services.embedder.model_id)
    return dict(zip(uids, matrix))


def expected(services: Services, title: str, text: str, tags: list[str]) -> np.ndarray:
    return services.embedder.embed_facts([embedding_text(title, text, tags)])[0].vector


@pytest.mark.model
def test_every_path_embeds_the_same_text(tagged: tuple[Services, ProfileRef]) -> None:
    services, profile = tagged
    fact = services.facts.write(profile, **TURN, tags=["caroline"]).fact
    with_tag = expected(services, TURN["title"], TURN["text"], ["caroline"])
    without = expected(services, TURN["title"], TURN["text"], [])
    assert float(with_tag @ without) < 0.99  # the tag changes the vector
    assert np.allclose(stored(services, profile)[fact.uid], with_tag, atol=1e-5)

    # an update of the tags alone embeds the fact again (same uid: tags are no new fact)
    services.facts.update(profile, fact.uid, tags=[])
    assert np.allclose(stored(services, profile)[fact.uid], without, atol=1e-5)
    services.facts.update(profile, fact.uid, tags=["caroline"])
    assert np.allclose(stored(services, profile)[fact.uid], with_tag, atol=1e-5)
    # a tag the words already say leaves the vector as it is
    services.facts.update(profile, fact.uid, tags=["caroline", "weekend"])
    assert np.allclose(stored(services, profile)[fact.uid], with_tag, atol=1e-5)
    # a new title is embedded with the tags
    services.facts.update(profile, fact.uid, title="Asked about the weekend")
    titled = expected(services, "Asked about the weekend", TURN["text"], ["caroline", "weekend"])
    assert np.allclose(stored(services, profile)[fact.uid], titled, atol=1e-5)

    # `memory reindex --reembed` embeds what the write did
    before = stored(services, profile)
    assert VectorMaintenance(services.store, services.embedder).embed(profile, everything=True)["embedded"] == 1
    assert np.allclose(stored(services, profile)[fact.uid], before[fact.uid], atol=1e-5)

    # an import embeds each fact with its tags too (the CLI's `memory import`: vectors made, then the import)
    document = export_profile(services.store, profile)
    copy = services.profiles.create("copy")
    made = VectorMaintenance(services.store, services.embedder).embed_document(document)
    import_profile(services.store, copy, document, vectors=made, model=services.embedder.model_id)
    (imported,) = stored(services, copy).values()
    assert np.allclose(imported, titled, atol=1e-5)
