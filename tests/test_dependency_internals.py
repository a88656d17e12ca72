"""The dependencies' non-public parts the service relies on, each pinned to its minor version in pyproject.toml
and checked here, so that an upgrade that moves one fails this file by name instead of failing a request:

- mcp: nothing non-public (the lean tools/call path, service/mcp/exchange.py, and the served tools,
  service/mcp/server.py, use the SDK's public names); pinned all the same, because the lean path must keep
  answering as the SDK's own path does (tests/mcp/test_lean_path.py compares the two);
- typer (service/cli/help_types.py): TyperOption/TyperArgument.display_type_rich, wrapped once; and, for the
  type checker only (service/cli/duplicates.py), `typer._click`, the click TyperGroup's methods are typed with;
- uvicorn (service/api/http_server.py): H11Protocol's `connections` set, `conn`, `loop` and the four
  callbacks the service's protocol overrides.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUARDED = ("mcp", "typer", "uvicorn")


def _declared() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0]: d for d in deps}


@pytest.mark.parametrize("name", GUARDED)
def test_each_guarded_dependency_is_pinned_to_its_minor_version(name: str) -> None:
    spec = _declared()[name]
    low = re.search(r">=(\d+)\.(\d+)", spec)
    high = re.search(r"<(\d+)\.(\d+)", spec)
    assert low and high, f"{spec}: pin >=X.Y,<X.Y+1"
    assert (int(high.group(1)), int(high.group(2))) == (int(low.group(1)), int(low.group(2)) + 1), spec
    installed = tuple(int(p) for p in version(name).split(".")[:2])
    assert installed == (int(low.group(1)), int(low.group(2))), f"{name} {version(name)} is not {spec}"


def test_typer_display_type_rich() -> None:
    from typer.core import TyperArgument, TyperOption

    from service.cli import help_types

    for cls in (TyperOption, TyperArgument):
        assert callable(getattr(cls, "display_type_rich", None)), cls
    help_types.install()
    assert TyperOption.display_type_rich.__module__ == help_types.__name__  # wrapped, once
    help_types.install()
    assert TyperOption.display_type_rich.__module__ == help_types.__name__


def test_uvicorn_h11_protocol() -> None:
    import inspect

    from uvicorn.protocols.http.h11_impl import H11Protocol

    for method in ("connection_made", "data_received", "on_response_complete", "connection_lost"):
        assert method in H11Protocol.__dict__, method
    source = inspect.getsource(H11Protocol.__init__)
    for attribute in ("self.connections", "self.conn", "self.loop"):
        assert attribute in source, attribute


def test_typer_runs_on_its_own_click_whose_types_duplicates_py_names() -> None:
    """service/cli/duplicates.py types TyperGroup.resolve_command with typer._click's Context and Command (under
    TYPE_CHECKING only): the module must exist and TyperGroup derive from its Command."""
    from typer import _click
    from typer.core import TyperGroup

    assert issubclass(TyperGroup, _click.Command)
    assert hasattr(_click, "Context") and hasattr(_click, "Command")
