"""The embedding model of `memory serve`, started before the rest of the command line is imported (the web
stack, SQLModel, the MCP SDK: ~0.5 s of imports), so that the model and the imports overlap on the machine's
cores. service.cli.entry starts it; `serve` (service.cli.main) takes it over when its settings match."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.config import Settings
    from service.domain.ports import Embedder

_early: tuple[Settings, Embedder] | None = None


def start_model_early(argv: list[str]) -> None:
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
    same = ("embedder", "embedder_url", "embedder_model", "torch_threads", "embedder_runtime", "embedder_precision",
            "data_dir", "model_dir")
    return embedder if all(getattr(started, k, None) == getattr(settings, k, None) for k in same) else None
