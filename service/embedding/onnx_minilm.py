"""all-MiniLM-L6-v2 on ONNX Runtime: tokenizer.json + one exported transformer graph + numpy pooling.

Reproduces what sentence-transformers computes for this model (Transformer -> mean Pooling ->
Normalize) without torch: word pieces from the package's tokenizer.json truncated to
sentence_bert_config.json's max_seq_length (256), `last_hidden_state` from ONNX Runtime, mean over
the attention mask, L2 normalisation, float32.

Every exported file carries, in its ONNX metadata, the key of the weights it came from and the
torch vectors of CHECK_TEXTS computed at export time. `open_checked` refuses a file whose key is not
the expected one or whose vectors differ from those by TOLERANCE or more, so a foreign, stale or
damaged file is never used silently. Importing this module imports neither torch nor onnxruntime.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

DIM = 384
BATCH_SIZE = 32
DEFAULT_MAX_SEQ_LENGTH = 256
TOLERANCE = 1e-4  # max abs difference allowed between ONNX and torch vectors

META_SOURCE_KEY = "memory.source_key"
META_CHECK_VECTORS = "memory.check_vectors"  # base64 of float32 little-endian, CHECK_TEXTS x DIM

# Fixed sentences checked at export (against torch) and at every load (against the stored vectors),
# batched and one by one, so a graph that only works for one padding layout is caught. The last one
# is longer than 256 word pieces, so truncation is part of the export check; loads skip it (a full
# 256-token pass costs more than the rest of the check together).
CHECK_TEXTS: tuple[str, ...] = (
    "a",
    "The user prefers pytest with plain asserts over unittest classes.",
    "Déployer via Argo CD — naïve café, 東京, emoji 🚀",
    "Invoices are stored in PostgreSQL 16 on billing-db-1; backups run nightly at 02:00 UTC.",
    " ".join(f"token{i}" for i in range(300)),
)


class OnnxRefused(Exception):
    """This ONNX file must not be used (unreadable, from other weights, or wrong vectors)."""


def max_seq_length(model_dir: Path) -> int:
    """sentence-transformers' max_seq_length for the model (256 for all-MiniLM-L6-v2)."""
    try:
        config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_MAX_SEQ_LENGTH


def encode_vectors(vectors: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(vectors, dtype="<f4").tobytes()).decode("ascii")


def decode_vectors(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").reshape(-1, DIM).astype(np.float32)


class OnnxMiniLM:
    """A loaded ONNX session plus tokenizer; `encode` gives L2-normalised float32 rows."""

    runtime = "onnx"

    def __init__(self, onnx_file: Path, model_dir: Path, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json itself says truncate at 128 and pad to a fixed 128: replace both, as
        # sentence-transformers does (truncate at max_seq_length, pad per batch to the longest).
        tokenizer.enable_truncation(max_seq_length(model_dir))
        tokenizer.no_padding()
        self._tokenizer = tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # errors only
        try:
            self._session = ort.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise OnnxRefused(f"onnxruntime cannot load it: {type(exc).__name__}: {_one_line(exc)}") from exc
        names = {i.name for i in self._session.get_inputs()}
        if names != {"input_ids", "attention_mask", "token_type_ids"}:
            raise OnnxRefused(f"unexpected inputs {sorted(names)}")
        self.threads = self._session.get_session_options().intra_op_num_threads

    def metadata(self) -> dict[str, str]:
        return dict(self._session.get_modelmeta().custom_metadata_map)

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        out = np.empty((len(texts), DIM), dtype=np.float32)
        order = np.argsort(-lengths, kind="stable")  # similar lengths together: less padding
        for start in range(0, len(order), BATCH_SIZE):
            rows = order[start : start + BATCH_SIZE]
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                ids[r, : lengths[i]] = encodings[i].ids
                mask[r, : lengths[i]] = 1
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[rows] = pooled / np.clip(norms, 1e-12, None)
        return out

    def check(self, expected_key: str, reference: np.ndarray | None = None, *, quick: bool = False) -> float:
        """Max abs difference from the reference vectors; raises OnnxRefused when it is not usable.

        `reference` defaults to the torch vectors stored in the file at export time; `quick` leaves
        out the long text.
        """
        meta = self.metadata()
        key = meta.get(META_SOURCE_KEY)
        if key != expected_key:
            raise OnnxRefused(f"it was exported from other weights (key {key!r}, expected {expected_key!r})")
        if reference is None:
            try:
                reference = decode_vectors(meta[META_CHECK_VECTORS])
            except (KeyError, ValueError) as exc:
                raise OnnxRefused("its check vectors are missing or unreadable") from exc
        if reference.shape != (len(CHECK_TEXTS), DIM):
            raise OnnxRefused(f"its check vectors have shape {reference.shape}")
        count = len(CHECK_TEXTS) - 1 if quick else len(CHECK_TEXTS)
        texts, reference = list(CHECK_TEXTS[:count]), reference[:count]
        batched = self.encode(texts)
        single = np.vstack([self.encode([t]) for t in texts])
        diff = float(max(np.abs(batched - reference).max(), np.abs(single - reference).max()))
        if not diff < TOLERANCE:  # also catches NaN
            raise OnnxRefused(f"its vectors differ from torch's by {diff:.2e} (limit {TOLERANCE:.0e})")
        return diff


def open_checked(onnx_file: Path, model_dir: Path, threads: int, expected_key: str) -> OnnxMiniLM:
    encoder = OnnxMiniLM(onnx_file, model_dir, threads)
    encoder.check(expected_key, quick=True)
    return encoder


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]

