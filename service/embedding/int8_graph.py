"""MEMORY_EMBEDDER_PRECISION=int8: the shipped encoder, quantized at load by ONNX Runtime's own tool.

The fp32 encoder (the shipped graph with the weights of model.safetensors, as encoder_graph.py assembles
them) goes through onnxruntime.quantization.quantize_dynamic: int8 weights, one scale per output channel,
for the MatMuls (the attention and feed-forward projections: nearly all of the model's arithmetic), the
activations quantized on each call -- over the whole input, so it embeds one text per call (a text's
vector then depends on the text alone, not on the texts batched with it). Per channel and MatMuls only because the tool's per-tensor default
moved one check text's vector to cosine 0.90 from the fp32 one; this keeps every check text >= 0.989.

It needs the `onnx` package (the [int8] extra), works in a temporary folder, takes about a second of the
model's background load, and writes nothing else: the graph is rebuilt at every load. The quantized
encoder is checked against the shipped torch vectors by cosine (each >= MIN_COSINE) instead of the fp32
encoder's 1e-4 element tolerance. Its vectors are not the fp32 ones, hence a model id of its own: stored
vectors of the other precision count as missing, and `memory reindex --reembed` (or the re-embedding on
search) replaces them.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np

MODEL_SUFFIX = "+int8"  # appended to MiniLM's model id
MIN_COSINE = 0.98
ORIGIN = "shipped graph + model.safetensors, int8 (ONNX Runtime dynamic quantization, per channel)"


class _PreprocessAdvice(logging.Filter):
    """quantize_dynamic logs "Please consider to run pre-processing" on the root logger at every call:
    advice for image models, not for this graph."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def quantized(template: bytes, weights: dict[str, np.ndarray]) -> bytes:
    """The serialized int8 model: the template with its left-out weights filled in, then quantized."""
    import onnx
    from onnx import numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load_from_string(template)
    kept = [i for i in model.graph.initializer if i.name not in weights]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept + [numpy_helper.from_array(a, name) for name, a in weights.items()])
    advice = _PreprocessAdvice()
    logging.getLogger().addFilter(advice)
    try:
        with tempfile.TemporaryDirectory(prefix="memory-int8-") as folder:
            target = Path(folder) / "minilm-int8.onnx"
            quantize_dynamic(model, target, weight_type=QuantType.QInt8, per_channel=True,
                             op_types_to_quantize=["MatMul"])
            return target.read_bytes()
    finally:
        logging.getLogger().removeFilter(advice)
