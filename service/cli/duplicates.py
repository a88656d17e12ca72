"""`memory duplicates PROFILE [--json]` and `memory duplicates resolve PROFILE --keep UID --retire UID ...`:
the near-duplicate groups of a profile (service.domain.curation) and retiring the extra facts of one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:  # for mypy only, never imported at run time: typer's own copy of click, the types TyperGroup's
    from typer import _click  # methods take (guarded: tests/test_dependency_internals.py)

from service.cli.output import emit, failures
from service.clock import isoformat
from service.config import Settings
from service.container import build_curation, build_store
from service.domain.curation import CurationService, DuplicateReport
from service.domain.profiles import ProfileService

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


class _ProfileFirst(TyperGroup):
    """`memory duplicates PROFILE` runs the hidden `show` command; `memory duplicates resolve ...` its own."""

    def resolve_command(self, ctx: _click.Context, args: list[str]) -> tuple[str | None, _click.Command | None,
                                                                             list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "show", self.commands["show"], args
        return super().resolve_command(ctx, args)


def _open(name: str) -> tuple[Any, CurationService]:
    """The profile named and the curation service, over one store."""
    settings = Settings()
    store = build_store(settings)
    return ProfileService(store).get(name), build_curation(settings, store)


def report_dict(profile: str, report: DuplicateReport) -> dict[str, Any]:
    return {"profile": profile, "threshold": report.threshold, "compared": report.compared,
            "without_vector": report.without_vector,
            "groups": [{"similarity": round(g.similarity, 4), "closest": list(g.closest), "keep": g.keep,
                        "command": g.command, "facts": [f.model_dump(mode="json") for f in g.facts]}
                       for g in report.groups]}


def _print(profile: str, report: DuplicateReport) -> None:
    left_out = f"; {report.without_vector} without a vector left out" if report.without_vector else ""
    typer.echo(f"{len(report.groups)} group(s) of near-duplicates in {profile} (cosine >= {report.threshold}, "
               f"{report.compared} active facts compared{left_out})")
    for number, group in enumerate(report.groups, 1):
        typer.echo(f"\n{number}. closest pair {group.similarity:.3f}")
        for fact in group.facts:
            mark = "keep" if fact.uid == group.keep else "    "
            last = isoformat(fact.last_recalled_at) if fact.last_recalled_at else "never"
            typer.echo(f"  {mark} {fact.uid}  {fact.title}  (recalled {fact.recalled_count}, last {last}; "
                       f"written {isoformat(fact.created_at)})")
        typer.echo(f"  {group.command}")


def register(app: typer.Typer) -> None:
    dup_app = typer.Typer(cls=_ProfileFirst, no_args_is_help=True, pretty_exceptions_show_locals=False,
                          help="Near-duplicate facts of a profile. `memory duplicates PROFILE [--threshold T] "
                               "[--json]` lists the groups (T: cosine 0.5-1, default MEMORY_SIMILAR_THRESHOLD); "
                               "`memory duplicates resolve PROFILE --keep UID --retire UID [--retire UID ...]` "
                               "retires the others.")
    app.add_typer(dup_app, name="duplicates")

    @dup_app.command("show", hidden=True)
    def show(
        profile: Annotated[str, typer.Argument(help="The profile.")],
        threshold: Annotated[float | None, typer.Option(
            min=0.5, max=1.0, help="Cosine at or above which facts are near-duplicates (default "
                                   "MEMORY_SIMILAR_THRESHOLD).")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """The groups of near-duplicate active facts, each with the command that resolves it."""
        with failures(as_json):
            ref, curation = _open(profile)
            report = curation.duplicates(ref, threshold)
            emit(as_json, report_dict(ref.name, report), lambda: _print(ref.name, report))

    @dup_app.command("resolve")
    def resolve(
        profile: Annotated[str, typer.Argument(help="The profile.")],
        keep: Annotated[str, typer.Option("--keep", help="The fact to keep (stays active).")],
        retire: Annotated[list[str], typer.Option("--retire", help="A fact to retire as its duplicate "
                                                                   "(repeatable).")],
        as_json: JsonOpt = False,
    ) -> None:
        """Retire the --retire facts as duplicates of --keep, all or none (each reason names the kept fact)."""
        with failures(as_json):
            ref, curation = _open(profile)
            retired = curation.resolve(ref, keep, retire)
            emit(as_json, {"profile": ref.name, "kept": keep, "retired": [f.uid for f in retired]},
                 lambda: typer.echo(f"kept {keep}; retired {', '.join(f.uid for f in retired)} "
                                    f"(reason: {retired[0].retire_reason})"))
