"""`memory grant code|list|revoke`: the OAuth grants of a profile (service.domain.oauth.grants)."""

from __future__ import annotations

from typing import Annotated

import typer

from service.cli.output import console, emit, failures
from service.clock import isoformat
from service.config import Settings
from service.container import build_store
from service.domain.oauth.grants import GrantInfo, GrantService

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def _grants() -> GrantService:
    return GrantService(build_store(Settings()))


def _line(info: GrantInfo) -> str:
    state = "active" if info.revoked_at is None else f"revoked {isoformat(info.revoked_at)} ({info.revoke_reason})"
    approved = f"token {info.approved_with}" if info.approved_with else "a consent code"
    name = info.client_name or "(no name)"
    return (f"{info.grant_id}  {name!r} -> {', '.join(info.redirect_hosts)}  approved {isoformat(info.created_at)} "
            f"with {approved}  last token {isoformat(info.last_issued_at) or '-'}  {state}")


def register(app: typer.Typer) -> None:
    grant_app = typer.Typer(help="OAuth grants of hosted MCP clients (MEMORY_OAUTH=on): consent codes, list, revoke.",
                            no_args_is_help=True, pretty_exceptions_show_locals=False)
    app.add_typer(grant_app, name="grant")

    @grant_app.command("code")
    def code(profile: str, as_json: JsonOpt = False) -> None:
        """A single-use code for the consent page (valid 10 minutes), typed there instead of the profile's token."""
        with failures(as_json):
            settings = Settings()
            issued = GrantService(build_store(settings)).consent_code(profile)
            data = {"profile": issued.profile, "code": issued.code, "expires_at": isoformat(issued.expires_at)}

            def human() -> None:
                console.print(f"consent code for profile {issued.profile} (single use, valid until "
                              f"{isoformat(issued.expires_at)}):", highlight=False, soft_wrap=True)
                console.print(issued.code, highlight=False, soft_wrap=True)
                if not settings.oauth:
                    console.print("note: MEMORY_OAUTH is not on, so the service shows no consent page yet",
                                  highlight=False, soft_wrap=True)

            emit(as_json, data, human)

    @grant_app.command("list")
    def list_grants(profile: str, as_json: JsonOpt = False) -> None:
        """The profile's grants, newest first (revoked ones too)."""
        with failures(as_json):
            found = _grants().listing(profile)
            emit(as_json, {"profile": profile, "grants": [g.to_dict() for g in found]},
                 lambda: console.print("\n".join(_line(g) for g in found) or f"no grants for {profile}",
                                       highlight=False, soft_wrap=True, markup=False))

    @grant_app.command("revoke")
    def revoke(grant_id: str, as_json: JsonOpt = False) -> None:
        """Revoke a grant by its id (see `memory grant list`): its tokens stop working at once."""
        with failures(as_json):
            info = _grants().revoke(grant_id, reason="revoked with memory grant revoke")
            emit(as_json, {"revoked": True, "grant": info.to_dict()},
                 lambda: console.print(f"revoked {info.grant_id} of profile {info.profile}", highlight=False))
