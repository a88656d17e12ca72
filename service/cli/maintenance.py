"""Maintenance commands: reindex (re-embed; rebuild the OpenSearch mirror), check, export, import.

In opensearch mode (MEMORY_SEARCH=opensearch) reindex and check also do the mirror's work; the logic lives
in service.search.opensearch.maintenance, built by service.container; this module only calls it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress, TaskID

from service.cli.output import console, echo_plain, emit, failures
from service.config import Settings, unknown_variables
from service.container import build_database, build_embedder, build_store, mirror_maintenance
from service.domain import portability
from service.domain.profiles import ProfileService
from service.domain.vectors import VectorMaintenance
from service.errors import BackendUnavailable

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def _targets(profiles: ProfileService, name: str | None) -> list[str]:
    return [profiles.get(name).name] if name else [p.name for p in profiles.every()]


def _vector_tools() -> tuple[Settings, Any, ProfileService, Any, VectorMaintenance]:
    """What reindex and check work with: settings, the canonical store, profiles, the embedder, vectors."""
    settings = Settings()
    db = build_database(settings)
    store = build_store(settings, db)
    embedder = build_embedder(settings)
    return settings, db, ProfileService(store), embedder, VectorMaintenance(store, embedder)


def ticker(progress: Progress, task: TaskID) -> Callable[[int, int], None]:
    """A progress callback (done, total) driving one rich task."""

    def tick(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return tick


def register(app: typer.Typer) -> None:
    @app.command()
    def reindex(
        profile: Annotated[str | None, typer.Argument(help="Profile (default: all).")] = None,
        reembed: Annotated[bool, typer.Option("--reembed", help="Re-embed every fact with the current embedder.")]
        = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Embed facts that lack a vector of the current embedder (all facts with --reembed); in opensearch
        mode, then rebuild the deployment's shared indices and swap their aliases (with a profile: send that
        profile's documents again instead)."""
        with failures(as_json):
            settings, db, profiles, embedder, maintenance = _vector_tools()
            report: dict[str, Any] = {}
            with mirror_maintenance(settings, db, embedder) as mirror, \
                    Progress(console=console, disable=as_json, transient=False) as progress:
                for name in _targets(profiles, profile):
                    ref = profiles.get(name)
                    tick = ticker(progress, progress.add_task(f"embedding {name}", total=None))
                    report[name] = maintenance.embed(ref, everything=reembed, progress=tick)
                    if mirror is not None and profile is not None:
                        report[name]["mirror"] = mirror.resend(
                            ref, progress=ticker(progress, progress.add_task(f"mirroring {name}", total=None)))
                result: dict[str, Any] = {"reindexed": report}
                if mirror is not None and profile is None:
                    result["mirror"] = mirror.rebuild(
                        progress=ticker(progress, progress.add_task("rebuilding the mirror", total=None)))
            emit(as_json, result, lambda: echo_plain({"done": result}))

    @app.command()
    def check(
        profile: Annotated[str | None, typer.Argument(help="Profile (default: all).")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Compare the canonical store with the search index; exit 1 if they differ."""
        with failures(as_json):
            settings, db, profiles, embedder, maintenance = _vector_tools()
            problems: dict[str, Any] = {}
            with mirror_maintenance(settings, db, embedder) as mirror:
                cluster = mirror.check_cluster() if mirror is not None else []
                if cluster:
                    problems["cluster"] = cluster
                for name in _targets(profiles, profile):
                    ref = profiles.get(name)
                    found = maintenance.check(ref)
                    if mirror is not None and mirror.unusable:  # its advice (reindex) could not help
                        found["mirror"] = "not compared: the cluster cannot be used (see cluster)"
                    elif mirror is not None:
                        found = {**found, **mirror.check(ref)}
                    if found:
                        problems[name] = found
            status = embedder.status()
            model = {"model": status.get("model"), "precision": status.get("precision")}
            named = f"{model['model']}" + (f" ({model['precision']})" if model["precision"] else "")

            unknown = unknown_variables()

            def human() -> None:
                if problems:
                    echo_plain(problems)
                else:
                    typer.echo("no differences")
                typer.echo(f"embedder: {named}")
                for line in unknown:  # a misspelt setting: this check may have read another store than meant
                    typer.echo(f"warning: {line}")

            named_too = {"unknown_variables": unknown} if unknown else {}
            emit(as_json, {"ok": not problems, "differences": problems, "embedder": model, **named_too}, human)
            if problems:
                raise typer.Exit(code=1)

    @app.command()
    def export(profile: str, as_json: JsonOpt = False) -> None:
        """Print a whole profile as one JSON document: every fact (all statuses, revisions) and the query log."""
        with failures(as_json):
            store = build_store(Settings())
            ref = ProfileService(store).get(profile)
            typer.echo(json.dumps(portability.export_profile(store, ref), ensure_ascii=False))

    @app.command(name="import")
    def import_(profile: str, file: Path, as_json: JsonOpt = False) -> None:
        """Load a profile exported by `memory export` (facts and query log; rows already there skipped; uids of
        another profile of this store get new ones, so an export can be copied into another profile). Facts are
        embedded first (progress bar), so they are stored, and mirrored, with their vectors."""
        with failures(as_json):
            settings, db, profiles, embedder, vectors = _vector_tools()
            store = build_store(settings, db)
            ref = profiles.get(profile)
            document = portability.read_document(file)
            with Progress(console=console, disable=as_json, transient=False) as progress:
                made = vectors.embed_document(document, ticker(progress, progress.add_task("embedding", total=None)))
            result: dict[str, Any] = dict(portability.import_profile(store, ref, document, vectors=made,
                                                                     model=embedder.model_id))
            result["embedded"] = len(made)
            if settings.search == "opensearch":
                with mirror_maintenance(settings, db, embedder) as mirror:
                    assert mirror is not None
                    try:
                        result["mirror"] = mirror.deliver(ref)
                    except BackendUnavailable as exc:  # the import stands; the mirror catches up later
                        result["mirror"] = f"not updated ({exc.message}); the running service delivers it"
            emit(as_json, {"profile": profile, **result},
                 lambda: console.print(f"imported {result['imported']} facts ({result['uids_remapped']} under "
                                       f"new uids; skipped {result['skipped']}; {result['embedded']} embedded), "
                                       f"{result['queries_imported']} query-log rows "
                                       f"(skipped {result['queries_skipped']}, "
                                       f"renumbered {result['queries_renumbered']})"))
