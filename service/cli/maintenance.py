"""Maintenance commands: reindex (re-embed), check, export, import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from service.cli.output import console, emit, failures
from service.config import Settings
from service.container import build_database, build_embedder
from service.domain import portability
from service.domain.profiles import ProfileService
from service.domain.vectors import VectorMaintenance

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def _targets(profiles: ProfileService, name: str | None) -> list[str]:
    return [profiles.get(name).name] if name else [p.name for p in profiles.list()]


def register(app: typer.Typer) -> None:
    @app.command()
    def reindex(
        profile: Annotated[str | None, typer.Argument(help="Profile (default: all).")] = None,
        reembed: Annotated[bool, typer.Option("--reembed", help="Re-embed every fact with the current embedder.")]
        = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Embed facts that lack a vector of the current embedder (all facts with --reembed)."""
        with failures(as_json):
            settings = Settings()
            db = build_database(settings)
            profiles = ProfileService(db)
            maintenance = VectorMaintenance(db, build_embedder(settings))
            report = {}
            with Progress(console=console, disable=as_json, transient=False) as progress:
                for name in _targets(profiles, profile):
                    ref = profiles.get(name)
                    task = progress.add_task(f"embedding {name}", total=None)

                    def tick(done: int, total: int, task: int = task) -> None:
                        progress.update(task, completed=done, total=total)

                    report[name] = maintenance.embed(ref, everything=reembed, progress=tick)
            emit(as_json, {"reindexed": report}, lambda: console.print(f"done: {report}"))

    @app.command()
    def check(
        profile: Annotated[str | None, typer.Argument(help="Profile (default: all).")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Compare the canonical store with the search index; exit 1 if they differ."""
        with failures(as_json):
            settings = Settings()
            db = build_database(settings)
            profiles = ProfileService(db)
            maintenance = VectorMaintenance(db, build_embedder(settings))
            problems = {}
            for name in _targets(profiles, profile):
                found = maintenance.check(profiles.get(name))
                if found:
                    problems[name] = found
            emit(as_json, {"ok": not problems, "differences": problems},
                 lambda: console.print("no differences" if not problems else json.dumps(problems, indent=2)))
            if problems:
                raise typer.Exit(code=1)

    @app.command()
    def export(profile: str, as_json: JsonOpt = False) -> None:
        """Print every fact of a profile (all statuses, revisions) as one JSON document."""
        with failures(as_json):
            db = build_database(Settings())
            ref = ProfileService(db).get(profile)
            typer.echo(json.dumps(portability.export_profile(db, ref), ensure_ascii=False))

    @app.command(name="import")
    def import_(profile: str, file: Path, as_json: JsonOpt = False) -> None:
        """Load facts exported by `memory export` into a profile (uids kept; already present ones skipped)."""
        with failures(as_json):
            db = build_database(Settings())
            ref = ProfileService(db).get(profile)
            document = portability.read_document(file)
            result = portability.import_profile(db, ref, document)
            emit(as_json, {"profile": profile, **result},
                 lambda: console.print(f"imported {result['imported']} facts, skipped {result['skipped']}"))
