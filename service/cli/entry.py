"""The `memory` console script. For `memory serve` it starts loading the embedding model before the rest of
the command line (the web stack, SQLModel, the MCP SDK: ~0.5 s of imports) is imported, so that the model and
the imports overlap on the machine's cores; every other command goes straight to the typer app."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.config import Settings
    from service.domain.ports import Embedder

_early: tuple[Settings, Embedder] | None = None


def _start_model_early(argv: list[str]) -> None:
    """Only for a plain `memory serve` whose settings read cleanly; anything else is left to the command."""
    global _early
    if argv[:1] != ["serve"] or any(arg in ("--help", "-h") for arg in argv):
        return
    try:
        from service.config import Settings
        from service.container import build_embedder

        settings = Settings()
        embedder = build_embedder(settings)
    except Exception:  # noqa: BLE001 - `serve` validates again and reports the problem in its own words
        return
    embedder.start()
    _early = (settings, embedder)


def early_embedder(settings: Settings) -> Embedder | None:
    """The embedder started before the imports, when it was built from the same embedding settings."""
    if _early is None:
        return None
    started, embedder = _early
    same = ("embedder", "embedder_url", "embedder_model", "torch_threads", "embedder_runtime", "data_dir",
            "model_dir")
    return embedder if all(getattr(started, k, None) == getattr(settings, k, None) for k in same) else None


def main() -> None:
    _start_model_early(sys.argv[1:])
    from service.cli.main import app

    app()
