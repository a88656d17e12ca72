"""Open all-MiniLM-L6-v2 on ONNX Runtime: the shipped graph template, its weights read from model.safetensors.

data/minilm_encoder.onnx is the encoder's graph with every weight left out (written by bert_graph.py);
data/minilm_encoder.json lists those weights. Here they are read from the model folder's
model.safetensors (safetensors' numpy API), transposed where the graph says so, and handed to ONNX Runtime
with SessionOptions.add_external_initializers, which copies them into the session. Nothing is built,
cached or written at start-up, and neither torch nor the `onnx` package is imported.

Every load is checked against vectors sentence-transformers computed on torch (OnnxMiniLM.check): weights
that do not give those vectors (a damaged file, another model in MEMORY_MODEL_DIR) are refused, so stored
vectors stay comparable.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from service.errors import EmbeddingUnavailable
from service.embedding import int8_graph
from service.embedding.bert_graph import (INT8_MANIFEST_FILE, INT8_TEMPLATE_FILE, MANIFEST_FILE, TEMPLATE_FILE,
                                          TEMPLATE_FORMAT, BertConfig, quantize_int8, read_weights)
from service.embedding.onnx_minilm import POOL_SPIN_IN_RUN, OnnxMiniLM, OnnxRefused

log = logging.getLogger(__name__)

ORIGIN = "shipped graph + model.safetensors"


@lru_cache(maxsize=2)
def manifest(path: Path = MANIFEST_FILE) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != TEMPLATE_FORMAT:
        raise EmbeddingUnavailable(f"{path.name} has format {data.get('format')!r}, this code reads "
                                   f"{TEMPLATE_FORMAT}: reinstall the service")
    return data


def initializers(model_dir: Path, listing: Path = MANIFEST_FILE) -> dict[str, np.ndarray]:
    """The left-out weights, by initializer name, as the graph wants them (float32, C order; the int8
    template's projections as bert_graph.quantize_int8 makes them: int8 values and float32 scales).

    Raises EmbeddingUnavailable when `model_dir` holds another architecture or lacks a tensor.
    """
    wanted = manifest(listing)
    try:
        config = asdict(BertConfig.read(model_dir))
    except ValueError as exc:  # UnsupportedModel included
        raise EmbeddingUnavailable(f"cannot use {model_dir}: {exc}") from exc
    if config != wanted["config"]:
        differ = ", ".join(f"{k} {config.get(k)} (graph: {v})" for k, v in wanted["config"].items()
                           if config.get(k) != v)
        raise EmbeddingUnavailable(f"{model_dir}/config.json is not all-MiniLM-L6-v2's: {differ}")
    weights = read_weights(model_dir)
    quantized: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    out: dict[str, np.ndarray] = {}
    for item in wanted["weights"]:
        array = weights.get(item["tensor"])
        if array is None:
            raise EmbeddingUnavailable(f"{model_dir}/model.safetensors has no tensor {item['tensor']!r}")
        array = np.ascontiguousarray(array.T if item["transpose"] else array, dtype=np.float32)
        kind = item.get("quantize")
        if kind is not None:  # the int8 values or the scales of one projection, quantized once for both
            if item["tensor"] not in quantized:
                quantized[item["tensor"]] = quantize_int8(array)
            array = quantized[item["tensor"]][0 if kind == "int8" else 1]
        if list(array.shape) != item["shape"]:
            raise EmbeddingUnavailable(f"{model_dir}/model.safetensors: {item['tensor']} has shape "
                                       f"{list(array.shape)}, the graph wants {item['shape']}")
        out[item["name"]] = np.ascontiguousarray(array)
    return out


def open_encoder(model_dir: Path, threads: int, precision: str = "fp32",
                 pool: Mapping[str, str] = POOL_SPIN_IN_RUN) -> OnnxMiniLM:
    """A checked encoder for the weights in `model_dir`, fp32 or int8 (int8_graph.py), its thread pool set by
    `pool` (ONNX Runtime session config entries; bench/embedder_pool.py compares others). Raises
    EmbeddingUnavailable."""
    try:
        if precision == "int8":
            encoder = OnnxMiniLM(INT8_TEMPLATE_FILE.read_bytes(), model_dir, threads,
                                 initializers(model_dir, INT8_MANIFEST_FILE), pool)
            encoder.batch_size = 1  # see OnnxMiniLM.batch_size
            encoder.check(quick=True, min_cosine=int8_graph.MIN_COSINE)
            encoder.origin = int8_graph.ORIGIN
            return encoder
        encoder = OnnxMiniLM(TEMPLATE_FILE.read_bytes(), model_dir, threads, initializers(model_dir), pool)
        encoder.check(quick=True)
    except OnnxRefused as exc:
        raise EmbeddingUnavailable(f"the weights in {model_dir} do not give all-MiniLM-L6-v2's vectors: {exc}") from exc
    except OSError as exc:
        raise EmbeddingUnavailable(f"cannot read the encoder graph: {exc}") from exc
    encoder.origin = ORIGIN
    return encoder
