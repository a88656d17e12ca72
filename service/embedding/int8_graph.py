"""MEMORY_EMBEDDER_PRECISION=int8 (the default): MiniLM with its projections in int8.

The shipped int8 template (data/minilm_encoder_int8.onnx, written by bert_graph.py) is the fp32 encoder with
each projection (attention query/key/value/output, the feed-forward pair: nearly all of the model's
arithmetic) as ONNX Runtime's quantize_dynamic(per_channel=True, weight_type=QInt8) writes it:
DynamicQuantizeLinear on the activation, MatMulInteger with int8 weights, the product scaled back by the
activation's scale times one scale per output column. The int8 weights and their scales are made at load,
in numpy, from model.safetensors (bert_graph.quantize_int8: bit for bit what the tool makes, which
tests/embedding/test_int8.py checks against the tool itself) -- no `onnx` package, no child process,
nothing written or cached: the load takes ~0.15 s more than fp32's.

Activations are quantized over the whole input, so the encoder embeds one text per call (a text's vector
then depends on the text alone, not on the texts batched with it). It is checked against the shipped torch
vectors by cosine (each >= MIN_COSINE) instead of the fp32 encoder's 1e-4 element tolerance. Its vectors are
not the fp32 ones, hence a model id of its own: stored vectors of the other precision count as missing; the
embedded backend re-embeds them in the background, the OpenSearch mirror needs `memory reindex --reembed`.
"""

from __future__ import annotations

MODEL_SUFFIX = "+int8"  # appended to MiniLM's model id
MIN_COSINE = 0.98
ORIGIN = "shipped int8 graph + model.safetensors quantized at load (per channel, as ONNX Runtime's dynamic quantization)"
