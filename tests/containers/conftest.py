"""Fixtures of the container tests: the Docker CLI, and the service's image built from the Dockerfile."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
IMAGE = "memory-service:test"


def docker(*args: str, timeout: float = 900, check: bool = True, env: dict[str, str] | None = None,
           cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, **(env or {})})
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n"
                             f"{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="session")
def engine() -> None:
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        message = "no Docker engine answers: `make test-containers` starts one"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def image(engine: None) -> dict:
    """The Dockerfile built as IMAGE (its FROM, python:3.11-slim, is the stand-in images.py builds); its inspect
    record."""
    started = time.monotonic()
    docker("build", "-t", IMAGE, ".", timeout=1800)
    print(f"docker build: {time.monotonic() - started:.0f} s")
    return json.loads(docker("image", "inspect", IMAGE).stdout)[0]
