"""all-MiniLM-L6-v2 on ONNX Runtime: tokenizer.json + the BERT graph + numpy pooling.

Reproduces what sentence-transformers computes for this model (Transformer -> mean Pooling ->
Normalize) without torch: word pieces from tokenizer.json truncated to sentence_bert_config.json's
max_seq_length (256), `last_hidden_state` from ONNX Runtime, mean over the attention mask, L2
normalisation, float32.

Every encoder is checked before use against vectors that sentence-transformers computed on torch and that
ship with the service (data/minilm_check.json, written by tests/embedding/make_reference_vectors.py):
one that differs by TOLERANCE or more (damaged weights, a builder bug, another model) is refused, so
stored vectors stay comparable. Importing this module imports neither torch nor onnxruntime.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

import numpy as np

from service.domain.late import MAX_TOKENS, TokenVectors, is_content
from service.embedding.model_files import max_seq_length

DIM = 384
BATCH_SIZE = 32
TOLERANCE = 1e-4  # refuse above this; the tests hold the default graph to 1e-5 (it is ~2e-7 in practice)
CHECK_FILE = Path(__file__).with_name("data") / "minilm_check.json"
# The intra-op pool's threads spin between the ops of one run (a sleeping pool is woken ~150 times a text) and stop
# when the run returns: spinning on between calls took the web server's and the database's CPU (write p95 x2).
# bench/embedder_pool.py measures this against a pool that sleeps and one that spins on.
POOL_SPIN_IN_RUN: Mapping[str, str] = MappingProxyType({"session.intra_op.allow_spinning": "1",
                                                       "session.force_spinning_stop": "1"})


class OnnxRefused(Exception):
    """This ONNX graph must not be used (unreadable, from other weights, or wrong vectors)."""


@lru_cache(maxsize=1)
def check_set() -> tuple[tuple[str, ...], np.ndarray]:
    """The shipped check texts and their torch vectors."""
    data = json.loads(CHECK_FILE.read_text(encoding="utf-8"))
    texts = tuple(item["text"] for item in data["items"])
    vectors = np.array([item["vector"] for item in data["items"]], dtype=np.float32)
    return texts, vectors


class OnnxMiniLM:
    """A loaded ONNX session plus tokenizer; `encode` gives L2-normalised float32 rows.

    `graph` is a path to an .onnx file or the serialized model itself (bytes); `initializers` fills in
    the weights it leaves out (external references, by name), as encoder_graph.py does for the shipped one.
    """

    runtime = "onnx"
    origin = ""  # where the graph came from, for status(); set by encoder_graph.open_encoder
    # Texts per session run. A quantized graph scales its activations over the whole input (other texts and
    # their padding included), so it runs one text at a time: a text's vector depends on the text alone.
    batch_size = BATCH_SIZE

    def __init__(self, graph: Path | bytes, model_dir: Path, threads: int,
                 initializers: dict[str, np.ndarray] | None = None,
                 pool: Mapping[str, str] = POOL_SPIN_IN_RUN) -> None:
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
        for key, value in pool.items():
            options.add_session_config_entry(key, value)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # errors only
        if initializers:  # copied into the session at creation; the OrtValues only need to live until then
            values = [ort.OrtValue.ortvalue_from_numpy(array) for array in initializers.values()]
            options.add_external_initializers(list(initializers), values)
        source = graph if isinstance(graph, bytes) else str(graph)
        try:
            self._session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise OnnxRefused(f"onnxruntime cannot load it: {type(exc).__name__}: {_one_line(exc)}") from exc
        names = {i.name for i in self._session.get_inputs()}
        if names != {"input_ids", "attention_mask", "token_type_ids"}:
            raise OnnxRefused(f"unexpected inputs {sorted(names)}")
        self.threads = self._session.get_session_options().intra_op_num_threads

    def metadata(self) -> dict[str, str]:
        return dict(self._session.get_modelmeta().custom_metadata_map)

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.encode_with_tokens(texts, tokens=False)[0]

    def encode_with_tokens(self, texts: list[str], *, tokens: bool = True) -> tuple[np.ndarray, list[TokenVectors | None]]:
        """The pooled, normalised vectors and (`tokens`) each text's content token vectors
        (service.domain.late), from the same run."""
        # One text (every query, every write): encode, not encode_batch, which hands even one text to its thread
        # pool (~0.1 ms more a call in the service, measured with bench/breakdown.py's timeline); same word pieces.
        encodings = ([self._tokenizer.encode(texts[0])] if len(texts) == 1
                     else self._tokenizer.encode_batch(list(texts)))
        lengths = np.array([len(e.ids) for e in encodings])
        out = np.empty((len(texts), DIM), dtype=np.float32)
        pieces: list[TokenVectors | None] = [None] * len(texts)
        order = np.argsort(-lengths, kind="stable")  # similar lengths together: less padding
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
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
            if tokens:
                for r, i in enumerate(rows):
                    pieces[i] = content_tokens(encodings[i].tokens, hidden[r, : lengths[i]])
        return out, pieces

    def check(self, *, quick: bool = False, min_cosine: float | None = None) -> float:
        """Max abs difference from the shipped torch vectors; raises OnnxRefused when it is not usable. With
        `min_cosine` (a quantized encoder), each vector's cosine to its torch vector must reach it instead.

        The short texts are embedded batched and one by one, so a graph that only works for one padding
        layout is caught; the last, longest one (past the 256-token truncation) is embedded on its own (in
        a batch it would pad the others to 256), unless `quick` leaves it out: its pass costs more than the
        rest of the check.
        """
        texts, reference = check_set()
        short = list(texts[:-1])
        single = short if quick else list(texts)
        if min_cosine is not None:
            batched, alone = self.encode(short), np.vstack([self.encode([t]) for t in single])
            cosine = min(float((batched * reference[: len(short)]).sum(axis=1).min()),
                         float((alone * reference[: len(single)]).sum(axis=1).min()))
            if not cosine >= min_cosine:  # also catches NaN
                raise OnnxRefused(f"a vector's cosine to sentence-transformers' is {cosine:.4f} (at least "
                                  f"{min_cosine} wanted)")
            return 1.0 - cosine
        diff = max(float(np.abs(self.encode(short) - reference[: len(short)]).max()),
                   float(np.abs(np.vstack([self.encode([t]) for t in single]) - reference[: len(single)]).max()))
        if not diff < TOLERANCE:  # also catches NaN
            raise OnnxRefused(f"its vectors differ from sentence-transformers' by {diff:.2e} "
                              f"(limit {TOLERANCE:.0e})")
        return diff


def content_tokens(pieces: list[str], hidden: np.ndarray) -> TokenVectors | None:
    """The hidden states of a text's content word pieces (service.domain.late.is_content), each piece once (its
    first occurrence: a title that repeats the text's opening adds nothing to a best match), the first MAX_TOKENS
    of them; None when it has none."""
    seen: set[str] = set()
    keep = []
    for i, piece in enumerate(pieces):
        if piece not in seen and is_content(piece):
            seen.add(piece)
            keep.append(i)
            if len(keep) == MAX_TOKENS:
                break
    return TokenVectors.of(hidden[keep]) if keep else None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
