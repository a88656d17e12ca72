"""The reviewer's dashboard: static files from the package, served at /ui/ (no server-side sessions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from service import contract

STATIC_DIR = Path(__file__).resolve().parent.parent / "ui" / "static"


def mount_ui(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    def _root() -> RedirectResponse:  # a person opening the service's address expects the dashboard
        return RedirectResponse("/ui/", status_code=307)

    @app.get("/ui/contract.json", include_in_schema=False)
    def _contract() -> dict[str, Any]:  # the dashboard's limits and names, from the one place they live
        return contract.for_dashboard()

    @app.get("/ui", include_in_schema=False)
    def _ui_root() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=308)

    app.mount("/ui", StaticFiles(directory=STATIC_DIR, html=True, check_dir=False), name="ui")
