"""CLI output: one JSON object on stdout with --json, friendly text otherwise; errors end with exit 1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console

from pydantic import ValidationError

from service.config import describe_error
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
    """Turn domain errors into one clear line (or a JSON error object) and exit code 1."""
    try:
        yield
    except MemoryServiceError as exc:
        problems = getattr(exc, "problems", None)  # InvalidDocument: each place that is wrong
        if as_json:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if problems is not None:
                error["problems"] = problems
            typer.echo(json.dumps({"error": error}, ensure_ascii=False))
        else:
            headline = getattr(exc, "summary", exc.message)  # the problems follow, one a line
            err_console.print(f"[red]error:[/red] {headline}", highlight=False, soft_wrap=True)
            for problem in problems or []:
                field = f" {problem['field']}" if problem["field"] else ""
                err_console.print(f"  {problem['where']}{field}: {problem['problem']}", highlight=False,
                                  soft_wrap=True, markup=False)
        raise typer.Exit(code=1) from None
    except ValidationError as exc:  # settings refused by validation (a bad MEMORY_* value)
        message = describe_error(exc)
        if as_json:
            typer.echo(json.dumps({"error": {"code": "invalid_configuration", "message": message}}))
        else:
            err_console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from None
