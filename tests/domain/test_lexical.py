"""The lexical match rule shared by both backends."""

from __future__ import annotations

import pytest

from service.domain.lexical import informative_terms, required_terms


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("What database does the billing service use?", ["database", "billing", "service"]),
        ("JIRA-4412", ["jira", "4412"]),
        ("https://grafana.example.com/d/abc", ["https", "grafana", "example", "com", "abc"]),
        ("the THE the", []),
        ("Café déjà vu", ["cafe", "deja", "vu"]),
        ("deploy deploy Deploy deployment", ["deploy", "deployment"]),
        ("snake_case_name", ["snake", "case", "name"]),
    ],
)
def test_informative_terms(query: str, terms: list[str]) -> None:
    assert informative_terms(query) == terms


@pytest.mark.parametrize(("n", "required"), [(0, 0), (1, 1), (2, 2), (3, 2), (4, 2), (5, 3), (6, 3), (9, 5)])
def test_required_terms(n: int, required: int) -> None:
    assert required_terms(n) == required
