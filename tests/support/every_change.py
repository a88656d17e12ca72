"""Every domain path that changes a fact, run once in order (issue 56): memory_write, an amend, a supersede, a
forget, curation's resolve, a redaction and an import. Each step returns the state a follower -- another
process's index, the OpenSearch mirror -- must reach by itself, since the domain no longer says what changed:
{uid: status or None for a fact whose words are gone (redacted)}. Used by tests/domain/test_change_ownership.py
(a second process) and tests/opensearch/test_change_ownership_mirror.py (the mirror)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from service.container import Services
from service.domain.portability import export_profile, import_profile
from service.domain.profiles import ProfileRef
from service.domain.redaction import RedactionService

Expected = dict[str, "str | None"]


@dataclass(frozen=True)
class Step:
    name: str
    profile: str
    words: str  # a search for them finds exactly the active facts of `expected` that hold them
    expected: Expected  # uid -> status (None: redacted)


def steps(services: Services) -> Iterator[Step]:
    """Run the paths one at a time; after each, yield what must now hold."""
    alpha = services.profiles.create("alpha")

    def write(title: str, text: str) -> str:
        return services.facts.write(alpha, title=title, text=text, kind="project", tags=["t"]).fact.uid

    zeppelin = write("Zeppelin hangar", "The zeppelin hangar is in Friedrichshafen.")
    yield Step("memory_write", "alpha", "zeppelin hangar", {zeppelin: "active"})

    services.facts.update(alpha, zeppelin, title="Airship hangar", tags=["t", "airship"])
    yield Step("amend", "alpha", "airship hangar", {zeppelin: "active"})

    successor = services.facts.update(alpha, zeppelin, text="The airship hangar moved to Lakehurst.").fact.uid
    yield Step("supersede", "alpha", "airship hangar lakehurst", {zeppelin: "superseded", successor: "active"})

    services.facts.forget(alpha, successor, reason="the hangar closed")
    yield Step("forget", "alpha", "airship hangar lakehurst", {zeppelin: "superseded", successor: "retired"})

    kept = write("Quokka release", "The quokka release ships on Fridays.")
    copy = write("Quokka release again", "The quokka release ships on Fridays, as agreed.")
    services.curation.resolve(alpha, kept, [copy])
    yield Step("resolve", "alpha", "quokka release fridays", {kept: "active", copy: "retired"})

    secret = write("Vault token", "The vault token is tok_marmalade_77.")
    yield Step("memory_write", "alpha", "vault token marmalade", {secret: "active"})
    RedactionService(services.store).redact(secret, reason="a live token", operator="tester")
    yield Step("redact", "alpha", "vault token marmalade", {secret: None})

    beta = services.profiles.create("beta")
    imported = import_profile(services.store, beta, export_profile(services.store, alpha))
    assert imported["imported"] > 0
    copies = {f.title: f.uid for f in services.facts.page(beta, status=None, kind=None, tag=None, limit=50,
                                                          before_id=None)[0]}
    yield Step("import", "beta", "quokka release fridays", {copies["Quokka release"]: "active",
                                                             copies["Quokka release again"]: "retired"})


def follows(services: Services, search_in: Callable[[str], ProfileRef], step: Step,
            found: Callable[[ProfileRef, str], set[str]]) -> None:
    """The follower's search for the step's words finds exactly its active facts (a redacted one: nothing)."""
    wanted = {uid for uid, status in step.expected.items() if status == "active"}
    assert found(search_in(step.profile), step.words) & set(step.expected) == wanted, step.name
