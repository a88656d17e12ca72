"""CLI output: one JSON object on stdout with --json, friendly text otherwise; errors end with exit 1 (a usage
error with 2, as click's)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
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


def plain(data: Any, indent: int = 0) -> list[str]:
    """A report as plain lines for a terminal (never wrapped, nothing escaped): `key: value` for a value, `key:`
    and its items indented below for a mapping or a list of several, `- item` for a list's items."""
    pad = "  " * indent
    if isinstance(data, dict):
        lines = []
        for key, value in data.items():
            if isinstance(value, dict) and value or isinstance(value, list) and not _short(value):
                lines += [f"{pad}{key}:", *plain(value, indent + 1)]
            else:
                lines.append(f"{pad}{key}: {_scalar(value)}")
        return lines
    if isinstance(data, list):
        lines = []
        for item in data:
            if isinstance(item, dict | list):
                inner = plain(item, indent + 1)
                lines += [f"{pad}- {inner[0].strip()}", *inner[1:]] if inner else [f"{pad}-"]
            else:
                lines.append(f"{pad}- {_scalar(item)}")
        return lines
    return [f"{pad}{_scalar(data)}"]


def _short(items: list[Any]) -> bool:
    """A list shown on its key's line: scalars only, each short (ids, a version and a status, ...)."""
    return all(not isinstance(i, dict | list) and len(str(i)) <= 40 for i in items)


def _scalar(value: Any) -> str:
    if isinstance(value, list):  # empty, or a single item
        return ", ".join(_scalar(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "none"
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def echo_plain(data: Any) -> None:
    typer.echo("\n".join(plain(data)))


def emit(as_json: bool, data: dict[str, Any], human: Callable[[], None]) -> None:
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False))
    else:
        human()


@contextmanager
def failures(as_json: bool, flags: Mapping[str, str] | None = None) -> Iterator[None]:
    """Turn domain errors into one clear line (or a JSON error object) and exit code 1; the content is
    service.error_bodies' (as on every face), the envelope the CLI's. `flags`: the settings the command line gave
    (field -> flag), named as typed."""
    try:
        yield
    except MemoryServiceError as exc:
        _fail(as_json, describe(exc))
    except ValidationError as exc:  # settings refused by validation (a bad MEMORY_* value or flag)
        _fail(as_json, ErrorInfo("invalid_configuration", describe_error(exc, flags)))


def _fail(as_json: bool, info: ErrorInfo) -> NoReturn:
    if as_json:
        _echo_error(info)
    else:
        headline, *problems = cli_lines(info)
        err_console.print(f"[red]error:[/red] {escape(headline)}", highlight=False, soft_wrap=True)
        for line in problems:
            err_console.print(line, highlight=False, soft_wrap=True, markup=False)
    raise typer.Exit(code=1) from None


def _echo_error(info: ErrorInfo) -> None:
    typer.echo(json.dumps(cli_body(info), ensure_ascii=False))


def run_with_json_usage_errors(app: typer.Typer) -> NoReturn:
    """Run the app when the command line asks for --json: a usage error (an unknown command or option, a missing
    or malformed argument) is then one JSON error object on stdout, code `usage_error` with the argument's name as
    `param`, and exit code 2 as without --json (where typer prints its usage box on stderr). Runs typer outside
    its standalone mode, which is where click raises these instead of printing them."""
    try:
        returned = app(standalone_mode=False)
    except _USAGE_ERROR as exc:
        _echo_error(ErrorInfo("usage_error", exc.format_message(), _param_of(exc)))
        sys.exit(exc.exit_code)
    except _CLICK_EXCEPTION as exc:  # e.g. a file argument that cannot be opened
        _echo_error(ErrorInfo("invalid_argument", exc.format_message()))
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("Aborted!", highlight=False)
        sys.exit(1)
    sys.exit(returned if isinstance(returned, int) else 0)  # an Exit's code (typer.Exit(code=1) after _fail)


def _click_class(name: str) -> Any:  # a click exception class: read for format_message and exit_code
    """click's exception class of that name, from typer's own click (vendored as a private module since typer
    0.2x, the click package before): both are bases of the public typer.BadParameter."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


_USAGE_ERROR = _click_class("UsageError")
_CLICK_EXCEPTION = _click_class("ClickException")


def _param_of(exc: Exception) -> str | None:
    """The argument or option at fault: a bad or missing one's name, an unknown option as typed."""
    option = getattr(exc, "option_name", None)  # NoSuchOption
    if option:
        return str(option)
    param = getattr(exc, "param", None)
    return param.name if param is not None else None
