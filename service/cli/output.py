"""CLI output: one JSON object on stdout with --json, friendly text otherwise; errors end with exit 1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from pydantic import ValidationError

from service.config import describe_error
from service.error_bodies import ErrorInfo, cli_body, cli_lines, describe
from service.errors import MemoryServiceError

console = Console()
err_console = Console(stderr=True)


def emit(as_json: bool, data: dict[str, Any], human: Callable[[], None]) -> None:
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False))
    else:
        human()


@contextmanager
def failures(as_json: bool) -> Iterator[None]:
    """Turn domain errors into one clear line (or a JSON error object) and exit code 1; the content is
    service.error_bodies' (as on every face), the envelope the CLI's."""
    try:
        yield
    except MemoryServiceError as exc:
        _fail(as_json, describe(exc))
    except ValidationError as exc:  # settings refused by validation (a bad MEMORY_* value)
        _fail(as_json, ErrorInfo("invalid_configuration", describe_error(exc)))


def _fail(as_json: bool, info: ErrorInfo) -> NoReturn:
    if as_json:
        typer.echo(json.dumps(cli_body(info), ensure_ascii=False))
    else:
        headline, *problems = cli_lines(info)
        err_console.print(f"[red]error:[/red] {escape(headline)}", highlight=False, soft_wrap=True)
        for line in problems:
            err_console.print(line, highlight=False, soft_wrap=True, markup=False)
    raise typer.Exit(code=1) from None
