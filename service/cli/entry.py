"""The `memory` console script. For `memory serve` it starts loading the embedding model before the rest of
the command line is imported (service.cli.early); every other command goes straight to the typer app."""

from __future__ import annotations

import sys

from service.cli.early import start_model_early


def main() -> None:
    start_model_early(sys.argv[1:])
    from service import logs
    from service.cli.main import app

    logs.quiet_clients()
    if "--json" in sys.argv[1:]:
        from service.cli.output import run_with_json_usage_errors

        run_with_json_usage_errors(app)  # exits
    else:
        app()
