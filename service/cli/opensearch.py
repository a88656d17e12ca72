"""`memory opensearch …`: the cluster of the scale-out deployment, for its administrator.

install: put this release's index templates and search pipeline and create the shared indices (with an
  administrator's credentials in MEMORY_OPENSEARCH_*), or `--print` the requests to send by hand; needed
  once per release when the service runs with MEMORY_OPENSEARCH_INSTALL=check.
check:   what keeps the cluster from serving this release (version, plugins, templates, pipeline, indices of
  the per-profile layout of earlier releases), each with what to do; exit 1 when anything does.
role:    the least-privilege role of the service's user, as the security plugin takes it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from service.cli.output import echo_plain, emit, failures
from service.config import Settings
from service.container import build_database, build_embedder, mirror_maintenance, opensearch_role
from service.errors import InvalidInput

app = typer.Typer(help="The OpenSearch cluster of the scale-out deployment: install, check, role.",
                  no_args_is_help=True, pretty_exceptions_show_locals=False)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def _settings() -> Settings:
    settings = Settings()
    if settings.search != "opensearch":
        raise InvalidInput("these commands are for the scale-out deployment: set MEMORY_SEARCH=opensearch and "
                           "MEMORY_OPENSEARCH_URL (and the credentials)", param="MEMORY_SEARCH")
    return settings


@app.command()
def install(
    print_only: Annotated[bool, typer.Option("--print", help="Print the requests instead of sending them.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Put the index templates and the search pipeline, and create the shared indices."""
    with failures(as_json):
        settings = _settings()
        with mirror_maintenance(settings, build_database(settings), build_embedder(settings)) as mirror:
            assert mirror is not None
            if print_only:
                bodies = mirror.bodies()
                typer.echo(json.dumps(bodies, indent=None if as_json else 2, ensure_ascii=False))
                return
            report: dict[str, Any] = mirror.install()
        emit(as_json, report, lambda: echo_plain({"installed": report}))


@app.command()
def check(as_json: JsonOpt = False) -> None:
    """What keeps the cluster from serving this release, with what to do; exit 1 when anything does."""
    with failures(as_json):
        settings = _settings()
        with mirror_maintenance(settings, build_database(settings), build_embedder(settings)) as mirror:
            assert mirror is not None
            problems = mirror.check_cluster()
            version = mirror.cluster_version()
            security = mirror.security_notes() if not mirror.unusable else []
        notes = ([version.note] if version.note else []) + security
        lines = problems or [f"the cluster (OpenSearch {version.number}) can serve this release"]
        emit(as_json, {"ok": not problems, "problems": problems, "version": version.number, "notes": notes},
             lambda: typer.echo("\n".join([*lines, *(f"note: {n}" for n in notes)])))
        if problems:
            raise typer.Exit(code=1)


@app.command()
def role(
    install_mode: Annotated[str | None, typer.Option(
        "--install", help="auto (the service puts its templates) or check (an administrator does); "
                          "default MEMORY_OPENSEARCH_INSTALL (auto).")] = None,
    prefix: Annotated[str | None, typer.Option(
        "--prefix", help="The deployment's MEMORY_OPENSEARCH_PREFIX; default the configured one (memory).")] = None,
    legacy: Annotated[bool, typer.Option(
        "--legacy", help="Also the indices of the per-profile layout of earlier releases (until `memory "
                         "reindex` has moved them).")] = False,
) -> None:
    """Print the least-privilege role of the service's user (PUT _plugins/_security/api/roles/<name>); needs no
    cluster."""
    with failures(False):
        overrides: dict[str, Any] = {"opensearch_prefix": prefix} if prefix is not None else {}
        if install_mode is not None:
            overrides["opensearch_install"] = install_mode
        settings = Settings(**overrides)  # the same validation as the environment's (prefix, install mode)
        typer.echo(json.dumps(opensearch_role(settings, legacy=legacy), indent=2))
