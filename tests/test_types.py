"""The service's types check: `python -m mypy service` (its settings in pyproject.toml, [tool.mypy]) finds nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_nothing() -> None:
    run = subprocess.run([sys.executable, "-m", "mypy", "service"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
