"""`memory redact UID --reason "..."`: the operator removes a fact's words (service.domain.redaction).

In opensearch mode the change is pushed through the outbox at once, then the deployment's shared indices are
rebuilt (`memory reindex`), so no old index segment keeps the words (--no-rebuild skips that step).
"""

from __future__ import annotations

import getpass
from typing import Annotated, Any

import typer

from service.cli.output import console, emit, failures
from service.config import Settings
from service.container import build_database, build_embedder, build_store, mirror_maintenance
from service.domain.profiles import ProfileService
from service.domain.redaction import RedactionResult, RedactionService
from service.errors import BackendUnavailable


def default_operator() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (getpass raises several kinds)
        return "operator"


def register(app: typer.Typer) -> None:
    @app.command()
    def redact(
        uid: Annotated[str, typer.Argument(help="The fact's uid.")],
        reason: Annotated[str, typer.Option("--reason", help="Why (kept with the fact, shown in its history).")],
        operator: Annotated[str | None, typer.Option("--operator", help="Who redacts (default: the OS user).")]
        = None,
        match: Annotated[list[str] | None, typer.Option(
            "--match", help="Also redact searches containing this string (case-insensitive, at least 4 "
                            "characters; repeatable).")] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change; change nothing.")] = False,
        no_rebuild: Annotated[bool, typer.Option(
            "--no-rebuild", help="opensearch mode: skip rebuilding the mirror's indices afterwards.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    ) -> None:
        """Replace a fact's title and text (and its old titles) with a marker, drop its vector and index
        entries, redact the searches that contained its words, retire it if active; record who and why."""
        with failures(as_json):
            settings = Settings()
            db = build_database(settings)
            mirrored = settings.search == "opensearch"
            service = RedactionService(build_store(settings, db))
            result = service.redact(uid, reason=reason, operator=operator or default_operator(),
                                    also=list(match or []), dry_run=dry_run)
            report: dict[str, Any] = result.to_dict()
            if mirrored and result.changed:
                report["mirror"] = _mirror(settings, db, result, rebuild=not no_rebuild)
            emit(as_json, report, lambda: _print(result, report.get("mirror")))


def _mirror(settings: Settings, db: Any, result: RedactionResult, *, rebuild: bool) -> dict[str, Any] | str:
    ref = ProfileService(build_store(settings, db)).get(result.profile)
    with mirror_maintenance(settings, db, build_embedder(settings)) as maintenance:
        assert maintenance is not None  # opensearch mode
        try:
            pushed = maintenance.mirror.push(ref.id)
            out: dict[str, Any] = {"delivered": pushed.delivered}
            if rebuild:
                out["rebuilt"] = maintenance.rebuild()["indices"]
            return out
        except BackendUnavailable as exc:  # the redaction stands; the outbox delivers it when the cluster is back
            return f"not updated ({exc.message}); the outbox delivers it later; then run: memory reindex {ref.name}"


def _print(result: RedactionResult, mirror: Any) -> None:
    if not result.changed:
        for note in result.notes:
            console.print(f"{result.uid}: {note}", highlight=False, soft_wrap=True)
        if result.dry_run and not result.already:
            console.print(f"would redact {result.uid} ({result.status}, profile {result.profile}): its title and "
                          f"text, {result.revisions} earlier title(s), {result.queries} query-log row(s)",
                          highlight=False, soft_wrap=True)
        return
    record = result.record or {}
    if result.extended:
        console.print(f"redacted {result.queries} more query-log row(s) of {result.uid} (profile {result.profile}); "
                      f"{record.get('queries_redacted')} in all", highlight=False, soft_wrap=True)
    else:
        console.print(
            f"redacted {result.uid} (profile {result.profile}, now {result.status}): title and text, "
            f"{result.revisions} earlier title(s), {result.queries} query-log row(s); vector "
            f"{'dropped' if result.vector_dropped else 'none'}. By {record.get('operator')} at "
            f"{record.get('redacted_at')}: {record.get('reason')}. SHA-256 of the removed text: "
            f"{record.get('text_sha256')}", highlight=False, soft_wrap=True)
    if mirror is not None:
        console.print(f"mirror: {mirror}", highlight=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"note: {note}", highlight=False, soft_wrap=True)
