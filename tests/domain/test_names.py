"""service.domain.names: a query is embedded without the names no active fact of the profile holds."""

from __future__ import annotations

from collections.abc import Sequence

from service.domain import names


def holding(*held: str):  # type: ignore[no-untyped-def]
    asked: list[list[str]] = []

    def count(terms: list[str]) -> Sequence[int]:
        asked.append(list(terms))
        return [int(term in held) for term in terms]

    count.asked = asked  # type: ignore[attr-defined]
    return count


def test_names_are_capitalised_words_folded_to_one_term_stop_words_left_out() -> None:
    assert names.names("What did Emi's brother tell Paola about PostgreSQL?") == [
        ("Emi's", "emi"), ("Paola", "paola"), ("PostgreSQL", "postgresql")]
    assert names.terms("When did Emi and Emi's dog meet The Beatles?") == ["emi", "beatles"]
    assert names.names("how do we deploy to staging") == []
    assert names.names("JIRA-4412 is blocked") == []  # two terms, jira and 4412: no one name


def test_a_name_the_store_never_mentions_leaves_the_embedded_text() -> None:
    count = holding("paola")
    assert names.meaning_text("What did Emi's brother tell Paola?", count) == "What did brother tell Paola?"
    assert count.asked == [["emi", "paola"]]  # one question for every name of the query


def test_names_the_store_holds_stay_and_a_query_without_names_is_not_asked_about() -> None:
    count = holding("emi", "paola")
    assert names.meaning_text("What did Emi tell Paola?", count) == "What did Emi tell Paola?"
    none = holding()
    assert names.meaning_text("how do we deploy to staging", none) == "how do we deploy to staging"
    assert none.asked == []


def test_a_query_of_names_only_is_embedded_whole() -> None:
    assert names.meaning_text("Emi Paola", holding()) == "Emi Paola"
    assert names.meaning_text("Kubernetes?", holding()) == "Kubernetes?"


def test_only_whole_words_are_dropped() -> None:
    # "Ann" is unknown, "Annabel" and "Ann-Marie" are other words
    assert names.meaning_text("Did Ann meet Annabel and Ann-Marie?", holding("annabel", "ann-marie", "marie")) == \
        "Did meet Annabel and Ann-Marie?"
