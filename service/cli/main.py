"""The `memory` command line: serve, profiles, tokens, and maintenance of the search index."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from service.cli import duplicates, grants, help_types, maintenance, redact
from service.cli import opensearch as opensearch_cli
from service.cli.output import console, emit, err_console, failures
from service.config import Settings, unknown_variables
from service.container import build_database, build_embedder, build_profiles, build_store, mirror_maintenance
from service.domain.profiles import ProfileService
from service.errors import StartupFailed

help_types.install()
# An unexpected crash prints typer's traceback without local variables: they may hold a password (settings, a
# URL, a client's options); its lines and the exception's message stay.
QUIET_CRASH: dict[str, Any] = {"pretty_exceptions_show_locals": False}
app = typer.Typer(help="Agent memory service.", no_args_is_help=True, add_completion=False, **QUIET_CRASH)
profile_app = typer.Typer(help="Create, list and rename profiles.", no_args_is_help=True, **QUIET_CRASH)
token_app = typer.Typer(help="Issue, list and revoke bearer tokens.", no_args_is_help=True, **QUIET_CRASH)
app.add_typer(profile_app, name="profile")
app.add_typer(token_app, name="token")
app.add_typer(opensearch_cli.app, name="opensearch")
maintenance.register(app)
redact.register(app)
grants.register(app)
duplicates.register(app)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def _profiles() -> ProfileService:
    settings = Settings()
    return build_profiles(settings, build_store(settings))[0]


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address (default MEMORY_BIND).")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port (default MEMORY_PORT).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the service (REST, MCP at /mcp/{profile}, health checks)."""
    from service import logs
    from service.cli.early import early_embedder
    from service.cli.listen import open_listener
    from service.container import build_embedder

    overrides: dict[str, Any] = {k: v for k, v in {"bind": host, "port": port}.items() if v is not None}
    flags = {k: flag for k, flag in {"bind": "--host", "port": "--port"}.items() if k in overrides}  # named as typed
    with failures(as_json, flags):
        settings = Settings(**overrides)
        unknown = unknown_variables()
        if unknown and settings.unknown_settings == "refuse":
            raise StartupFailed(f"{'; '.join(unknown)} (fix the name, or MEMORY_UNKNOWN_SETTINGS=warn to start anyway)")
        listener = open_listener(settings, flags)  # before the banner: a bad address or a busy port is one line
        logs.configure()  # before the MCP server is built (it would install its own rich handler)
        embedder = early_embedder(settings) or build_embedder(settings)  # started by service.cli.early if it could
        embedder.start()  # loads in the background while the web stack imports and starts (no-op if started)
        import uvicorn

        from service.api.app import create_app
        from service.api.http_server import raise_open_files_limit, server_config

        raise_open_files_limit(settings.max_connections)
        application = create_app(settings, embedder=embedder, preload_embedder=True)
        if as_json:
            typer.echo(json.dumps({"serving": settings.base_url, "database": application.state.services.db.dialect,
                                   "database_at": settings.database_named(), "search": settings.search_named(),
                                   **({"unknown_variables": unknown} if unknown else {})}))
        else:
            for line in unknown:
                err_console.print(f"warning: {line}", soft_wrap=True, highlight=False, markup=False)
            console.print(f"memory service on {settings.base_url}: MCP at {settings.base_url}/mcp/<profile>, "
                          f"dashboard at {settings.base_url}/ui/ (database {settings.database_named()}, search "
                          f"{settings.search_named()})", soft_wrap=True, highlight=False, markup=False)
            if settings.oauth:
                console.print(f"OAuth sign-in for hosted clients (claude.ai, ChatGPT) is on: issuer {settings.issuer}",
                              soft_wrap=True, highlight=False)
        uvicorn.Server(server_config(application, settings)).run(sockets=[listener])


@profile_app.command("create")
def profile_create(name: str, as_json: JsonOpt = False) -> None:
    """Create a profile (a partition of the store with its own tokens)."""
    with failures(as_json):
        ref = _profiles().create(name)
        emit(as_json, {"profile": ref.name, "created": True},
             lambda: console.print(f"created profile {ref.name}; next: memory token issue {ref.name}"))


@profile_app.command("list")
def profile_list(as_json: JsonOpt = False) -> None:
    """List profiles."""
    with failures(as_json):
        refs = _profiles().every()
        data = {"profiles": [{"name": r.name, "created_at": r.created_at.isoformat()} for r in refs]}
        emit(as_json, data, lambda: console.print("\n".join(r.name for r in refs) or "no profiles yet"))


@profile_app.command("rename")
def profile_rename(old: str, new: str, as_json: JsonOpt = False) -> None:
    """Rename a profile: facts, query log and tokens are kept; tokens keep working under the new name."""
    with failures(as_json):
        settings = Settings()
        db = build_database(settings)
        renamed = ProfileService(build_store(settings, db)).rename(old, new)
        data: dict[str, Any] = renamed.to_dict()
        if settings.search == "opensearch":
            data["mirror"] = _move_mirror(settings, db, renamed.profile)
        url = f"{settings.base_url}/mcp/{new}"

        def human() -> None:
            tokens = (f"its {renamed.tokens} active token(s) are kept and keep working under the new name: point "
                      f"clients at {url} (and /api/{new}/...); the old URLs now answer 401"
                      if renamed.tokens else f"it has no active token (issue one with: memory token issue {new})")
            console.print(f"renamed profile {old} to {new}: facts and query log are kept; {tokens}.",
                          highlight=False, soft_wrap=True)
            if "mirror" in data:
                console.print(f"mirror: {data['mirror']}", highlight=False, soft_wrap=True)

        emit(as_json, data, human)


def _move_mirror(settings: Settings, db: Any, profile: Any) -> dict[str, Any] | str:
    """opensearch mode: the mirror's documents carry the profile's id, not its name, so they stay as they are;
    the rename's outbox row is marked followed now (the running service would at its next sync)."""
    with mirror_maintenance(settings, db, build_embedder(settings)) as mirror:
        assert mirror is not None
        return {"renames_followed": mirror.mirror.settle_renames(), "documents": "unchanged (keyed by profile id)"}


@token_app.command("issue")
def token_issue(
    profile: str,
    as_json: JsonOpt = False,
    alias: Annotated[str, typer.Option(help="Client-side alias used in the printed registration.")] = "memory",
) -> None:
    """Issue a bearer token for a profile. It is shown once; only its hash is stored."""
    with failures(as_json):
        settings = Settings()
        issued = ProfileService(build_store(settings)).issue_token(profile)
        url = f"{settings.base_url}/mcp/{issued.profile}"
        data = {"profile": issued.profile, "token_id": issued.token_id, "token": issued.token, "url": url}

        def human() -> None:
            registration = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {issued.token}"}}
            env_var = f"{alias.upper().replace('-', '_')}_TOKEN"
            console.print(f"token {issued.token_id} for profile {issued.profile} (shown once, store it now):")
            console.print(issued.token, highlight=False, soft_wrap=True)
            console.print("\nClaude Code (run once):", style="bold")
            console.print(
                f'claude mcp add --transport http {alias} {url} --header "Authorization: Bearer {issued.token}"',
                highlight=False, soft_wrap=True,
            )
            console.print("\nCodex (~/.codex/config.toml, and the token in the environment Codex starts in):",
                          style="bold", soft_wrap=True)
            console.print(f'[mcp_servers.{alias}]\nurl = "{url}"\nbearer_token_env_var = "{env_var}"',
                          highlight=False, soft_wrap=True, markup=False)
            console.print(f"export {env_var}={issued.token}", highlight=False, soft_wrap=True)
            console.print("\nJSON (Cursor ~/.cursor/mcp.json, a project's .mcp.json, other clients' mcpServers):",
                          style="bold", soft_wrap=True)
            console.print(json.dumps({"mcpServers": {alias: registration}}, indent=2), highlight=False,
                          soft_wrap=True)
            if settings.oauth:
                console.print("\nclaude.ai, Claude Desktop, ChatGPT (OAuth): add a custom connector with this URL; on "
                              "the sign-in page paste this token, or a code from: memory grant code "
                              f"{issued.profile}", style="bold", soft_wrap=True, highlight=False, markup=False)
            console.print("\nCheck it works (lists the five tools):", style="bold", soft_wrap=True)
            console.print(
                f"curl -s {url} -H 'Authorization: Bearer {issued.token}' -H 'Content-Type: application/json' "
                "-H 'Accept: application/json, text/event-stream' "
                """-d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'""",
                highlight=False, soft_wrap=True, markup=False,
            )

        emit(as_json, data, human)


@token_app.command("list")
def token_list(profile: str, as_json: JsonOpt = False) -> None:
    """List a profile's tokens (ids and state; tokens themselves are never stored)."""
    with failures(as_json):
        tokens = _profiles().tokens(profile)
        data = {"profile": profile, "tokens": [t.to_dict() for t in tokens]}

        def human() -> None:
            for t in tokens:
                state = "active" if t.revoked_at is None else f"revoked {t.revoked_at.isoformat()}"
                console.print(f"{t.token_id}  created {t.created_at.isoformat()}  {state}")
            if not tokens:
                console.print(f"no tokens for {profile}; issue one with: memory token issue {profile}")

        emit(as_json, data, human)


@token_app.command("revoke")
def token_revoke(token_id: str, as_json: JsonOpt = False) -> None:
    """Revoke a token by its id (see `memory token list`), and the OAuth grants approved with it."""
    with failures(as_json):
        info = _profiles().revoke_token(token_id)
        grants_note = f" and {info.grants_revoked} OAuth grant(s) approved with it" if info.grants_revoked else ""
        emit(as_json, {"revoked": True, **info.to_dict()},
             lambda: console.print(f"revoked {info.token_id} of profile {info.profile}{grants_note}"))
