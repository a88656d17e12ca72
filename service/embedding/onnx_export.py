"""One-off export of all-MiniLM-L6-v2's transformer to ONNX with torch.onnx.export.

Only this module (and the torch fallback) imports torch, and only when an export is needed: on the
first start with a given version of the weights. The graph maps (input_ids, attention_mask,
token_type_ids) to last_hidden_state with dynamic batch and sequence axes; pooling and normalisation
stay in numpy (service/embedding/onnx_minilm.py).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

OPSET = 17


def export_onnx(model_dir: Path, target: Path, metadata: dict[str, str]) -> None:
    """Write the ONNX graph of the model in `model_dir` to `target`, with `metadata`, flushed to disk.

    `target` should be a temporary name: the caller verifies the file before renaming it into place.
    """
    import onnx
    import torch
    from transformers import AutoModel

    # Eager attention: the SDPA path decides on the mask with Python branches that tracing would freeze.
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager", local_files_only=True)
    model.eval()

    class Encoder(torch.nn.Module):
        # token_type_ids is an explicit input: left implicit, the exporter bakes in BERT's buffered
        # zeros wrongly and the outputs are off by ~1.0.
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    # Two rows of different lengths, so the traced graph sees real padding.
    ids = torch.tensor([[101, 7592, 2088, 102, 0, 0], [101, 7592, 2088, 2088, 2088, 102]])
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about Python branches on shapes
        torch.onnx.export(
            Encoder(model),
            (ids, mask, torch.zeros_like(ids)),
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "seq"} for name in [*names, "last_hidden_state"]},
            opset_version=OPSET,
            dynamo=False,
        )

    proto = onnx.load(str(target))
    metadata = {**metadata, "memory.torch_version": torch.__version__, "memory.opset": str(OPSET)}
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(proto)
    onnx.save(proto, str(target))
    with open(target, "rb") as handle:
        os.fsync(handle.fileno())
