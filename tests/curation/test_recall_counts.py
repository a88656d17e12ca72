"""Recall counts stay the query log's own: a redaction rewrites queries, never what they returned; an imported
log counts for the facts it names; a fact never returned has no count."""

from __future__ import annotations

from service.container import Services
from service.domain.redaction import RedactionService
from tests.conftest import ProfileAccess


def _counts(services: Services, profile: str, uids: list[str]) -> dict[str, int]:
    ref = services.profiles.get(profile)
    facts = services.store.facts_by_uid(ref.id, uids)
    return {f.uid: f.recalled_count for f in services.curation.reviewed(ref, list(facts.values()))}


def test_a_redaction_keeps_the_counts(services: Services, alpha: ProfileAccess) -> None:
    ref = services.profiles.get("alpha")
    kept = services.facts.write(ref, title="Build cache", text="The CI build cache lives in the artifacts bucket.",
                                kind="reference", tags=None).fact.uid
    secret = services.facts.write(ref, title="Vault token", text="The vault unseal phrase is purple-elephant-42.",
                                  kind="reference", tags=None).fact.uid
    for query in ("where is the CI build cache", "purple-elephant-42 and the build cache", "build cache bucket"):
        services.search.search(ref, query, limit=5)
    before = _counts(services, "alpha", [kept, secret])
    assert before[kept] == 3 and before[secret] >= 1

    result = RedactionService(services.store).redact(secret, reason="a secret", operator="test", also=["purple-elephant-42"],
                                                     dry_run=False)
    assert result.changed and result.queries >= 1  # the search naming the phrase was rewritten
    assert _counts(services, "alpha", [kept, secret]) == before


def test_counts_belong_to_their_profile(services: Services, alpha: ProfileAccess, beta: ProfileAccess) -> None:
    a, b = services.profiles.get("alpha"), services.profiles.get("beta")
    mine = services.facts.write(a, title="Alpha pager rota", text="Alpha's pager rota changes on Mondays.",
                                kind="project", tags=None).fact.uid
    services.facts.write(b, title="Beta pager rota", text="Beta's pager rota changes on Fridays.", kind="project",
                         tags=None)
    services.search.search(b, "pager rota", limit=5)
    assert _counts(services, "alpha", [mine]) == {mine: 0}
    assert [f.recalled_count for f in services.curation.reviewed(b, services.facts.recent(b))] == [1]
