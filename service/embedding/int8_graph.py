"""MEMORY_EMBEDDER_PRECISION=int8: the shipped encoder, quantized at load by ONNX Runtime's own tool.

The fp32 encoder (the shipped graph with the weights of model.safetensors, as encoder_graph.py assembles
them) goes through onnxruntime.quantization.quantize_dynamic: int8 weights, one scale per output channel,
for the MatMuls (the attention and feed-forward projections: nearly all of the model's arithmetic), the
activations quantized on each call -- over the whole input, so it embeds one text per call (a text's
vector then depends on the text alone, not on the texts batched with it). Per channel and MatMuls only
because the tool's per-tensor default moved one check text's vector to cosine 0.90 from the fp32 one.

The quantization runs in a child process (service.embedding.int8_quantize): building and quantizing the
fp32 model peaks at several hundred MB, which would otherwise stay the service's high-water mark. It needs
the `onnx` package (the [int8] extra), works in a temporary folder, takes a few seconds of the model's
background load and writes nothing else: the graph is rebuilt at every load. The quantized encoder is
checked against the shipped torch vectors by cosine (each >= MIN_COSINE) instead of the fp32 encoder's
1e-4 element tolerance. Its vectors are not the fp32 ones, hence a model id of its own: stored vectors of
the other precision count as missing, and `memory reindex --reembed` (or the re-embedding on search)
replaces them.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from service.errors import EmbeddingUnavailable

MODEL_SUFFIX = "+int8"  # appended to MiniLM's model id
MIN_COSINE = 0.98
ORIGIN = "shipped graph + model.safetensors, int8 (ONNX Runtime dynamic quantization, per channel)"
TIMEOUT_SECONDS = 300


def quantized(model_dir: Path) -> bytes:
    """The serialized int8 encoder for the weights in `model_dir`. Raises EmbeddingUnavailable."""
    with tempfile.TemporaryDirectory(prefix="memory-int8-") as folder:
        target = Path(folder) / "minilm-int8.onnx"
        try:
            done = subprocess.run([sys.executable, "-m", "service.embedding.int8_quantize", str(model_dir),
                                   str(target)], capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EmbeddingUnavailable(f"cannot quantize the encoder to int8: {exc}") from exc
        if done.returncode != 0 or not target.exists():
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            raise EmbeddingUnavailable("cannot quantize the encoder to int8: "
                                       + (lines[-1][:300] if lines else f"exit code {done.returncode}"))
        return target.read_bytes()
