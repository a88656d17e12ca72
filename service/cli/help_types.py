"""What `--help` says an option takes: nothing for a flag, a name for a value (TEXT, INTEGER, PATH, …).

typer 0.29's rich help prints the Python annotation instead (`<bool>` beside every flag, `--help` included;
`<str>`, `<list[str]>`), and has no setting for it; this wraps that one method of its parameter classes.
"""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperArgument, TyperOption

NAMES = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "Path": "PATH", "bool": "BOOLEAN", "datetime": "DATETIME"}


def _readable(shown: str) -> str:
    """`<str>` -> TEXT, `<list[str]>` -> TEXT..., a choice `<a|b>` stays a|b."""
    inner = shown.strip("<>")
    listed = re.fullmatch(r"list\[(.+)\]", inner)
    if listed:
        return f"{_readable(listed.group(1))}..."
    return NAMES.get(inner, inner)


def install() -> None:
    def option_type(self: TyperOption, ctx: Any) -> str | None:
        if self.is_flag:
            return None  # a flag takes no value
        shown = original_option(self, ctx)
        return _readable(shown) if shown is not None and self.metavar is None else shown

    def argument_type(self: TyperArgument, ctx: Any) -> str | None:
        shown = original_argument(self, ctx)
        return _readable(shown) if shown is not None and self.metavar is None else shown

    original_option, original_argument = TyperOption.display_type_rich, TyperArgument.display_type_rich
    if getattr(original_option, "__module__", "") != __name__:  # once
        # A deliberate patch of typer's methods (module docstring). TyperArgument inherits the method from typer's
        # private _TyperParameter, whose type its `self` takes: hence also [assignment] on the second line.
        TyperOption.display_type_rich = option_type  # type: ignore[method-assign]  # patching typer (above)
        TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign, assignment]  # idem
