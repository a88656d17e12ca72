"""The ONNX graph of a BERT encoder (all-MiniLM-L6-v2), written from config.json + model.safetensors without torch.

Why this way: the graph is small and fixed (embeddings, N identical encoder layers), so writing it with
`onnx.helper` takes ~60 lines, where exporting it needs torch + transformers (~6 GB installed, 8-13 s per
export). The weights are read with the `safetensors` package's numpy API rather than by parsing the header.

What ships is a template: the graph with every weight left out (each weight initializer is an external
reference, named after its tensor in model.safetensors, `.T` when the graph wants it transposed), plus a
manifest of those weights (service/embedding/data/minilm_encoder.{onnx,json}, ~30 KB). At load,
service/embedding/encoder_graph.py fills them in from model.safetensors through ONNX Runtime's
add_external_initializers, so running needs neither torch nor this module's `onnx` dependency (a test/dev
extra); tests/embedding/test_encoder_graph.py checks the shipped files are what `write_template` writes today:

    python -m service.embedding.bert_graph          # rewrites the four files from the installed weights

The graph maps (input_ids, attention_mask, token_type_ids), int64 [batch, seq], to last_hidden_state,
float32 [batch, seq, hidden], exactly as Hugging Face's BertModel computes it in eval mode: embeddings
(word + absolute position + token type) -> LayerNorm, then per layer self-attention with the padding
mask added to the scores -> dense -> residual -> LayerNorm -> dense -> GELU (erf) -> dense -> residual ->
LayerNorm. Pooling and normalisation stay in numpy (service/embedding/onnx_minilm.py). The pooler head is
not part of last_hidden_state and is left out.

The attention itself (heads split, scaled scores, padding mask, softmax, weighted values, heads merged) is
one node of ONNX Runtime's own operator set, com.microsoft's MultiHeadAttention, over the three projections,
instead of a dozen standard nodes a layer: the same vectors bit for bit, a little sooner (bench/graph_ab.py,
int8: a query ~0.1 ms and a fact ~0.26 ms faster, in three texts of four).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17  # LayerNormalization is an ONNX operator from opset 17 on
RUNTIME_DOMAIN = "com.microsoft"  # ONNX Runtime's own operators (MultiHeadAttention), version 1
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
MASKED = -10000.0  # added to the attention scores of padding; exp() of it is exactly 0 in float32
TEMPLATE_FORMAT = 2  # bump when the template or its manifest changes shape (2: MultiHeadAttention)
WEIGHTS_FILE = "model.safetensors"  # where the left-out weights come from (named in each external reference)
DATA_DIR = Path(__file__).with_name("data")
TEMPLATE_FILE = DATA_DIR / "minilm_encoder.onnx"
MANIFEST_FILE = DATA_DIR / "minilm_encoder.json"
# The int8 encoder (MEMORY_EMBEDDER_PRECISION=int8, the default): the same graph with each projection as ONNX
# Runtime's dynamic quantization writes it (quantize_int8 below), its int8 weights and scales left out too.
INT8_TEMPLATE_FILE = DATA_DIR / "minilm_encoder_int8.onnx"
INT8_MANIFEST_FILE = DATA_DIR / "minilm_encoder_int8.json"
INT8 = 3  # TensorProto.INT8


class UnsupportedModel(ValueError):
    """config.json describes something this builder does not build (not a plain BERT encoder)."""


@dataclass(frozen=True)
class BertConfig:
    layers: int
    hidden: int
    heads: int
    intermediate: int
    eps: float
    max_positions: int

    @classmethod
    def read(cls, model_dir: Path) -> BertConfig:
        raw = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        wanted = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
        for key, value in wanted.items():
            if raw.get(key, value) != value:
                raise UnsupportedModel(f"config.json: {key} is {raw.get(key)!r}, this builder needs {value!r}")
        config = cls(layers=int(raw["num_hidden_layers"]), hidden=int(raw["hidden_size"]),
                     heads=int(raw["num_attention_heads"]), intermediate=int(raw["intermediate_size"]),
                     eps=float(raw["layer_norm_eps"]), max_positions=int(raw["max_position_embeddings"]))
        if config.hidden % config.heads:
            raise UnsupportedModel(f"config.json: hidden_size {config.hidden} is not a multiple of the heads")
        return config


def read_weights(model_dir: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of model.safetensors, keyed without any "bert." prefix."""
    from safetensors.numpy import load_file

    weights = load_file(str(model_dir / "model.safetensors"))
    return {name.removeprefix("bert."): array for name, array in weights.items()}


def quantize_int8(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 weights, float32 scales) of a [in, out] projection, exactly as onnxruntime.quantization's
    quantize_dynamic(per_channel=True, weight_type=QInt8) makes them (tests/embedding/test_int8.py compares):
    one symmetric scale per output column, (max - min) / 254 of the column's range widened to hold 0 and made
    symmetric, values rounded half to even and clipped to [-127, 127]. Numpy, so no `onnx` at run time."""
    low = np.minimum(weight.min(axis=0), 0).astype(np.float32)
    high = np.maximum(weight.max(axis=0), 0).astype(np.float32)
    reach = np.maximum(np.abs(low), np.abs(high))
    scale = ((reach - (-reach)) / np.float32(254)).astype(np.float32)
    scale[scale == 0] = np.float32(1.0)  # an all-zero column
    values = np.clip(np.round(weight / scale), -127, 127).astype(np.int8)
    return values, scale


def build_template(model_dir: Path, *, int8: bool = False) -> tuple[Any, dict[str, Any]]:
    """The encoder of `model_dir` with its weights left out (an onnx.ModelProto), and its manifest.

    The manifest lists each left-out weight: its initializer `name`, the safetensors `tensor` it is read
    from, whether it is `transpose`d, and its `shape` in the graph; plus the config it was built for.
    """
    import onnx

    config = BertConfig.read(model_dir)
    model = onnx.ModelProto(ir_version=8, producer_name="memory-service bert_graph")  # IR 8: onnxruntime >= 1.10
    model.opset_import.add(domain="", version=OPSET)
    model.opset_import.add(domain=RUNTIME_DOMAIN, version=1)
    builder = _GraphBuilder(config, read_weights(model_dir), model.graph, int8=int8)
    builder.build()  # built in place
    entry = model.metadata_props.add()
    entry.key, entry.value = "memory.template_format", str(TEMPLATE_FORMAT)
    manifest = {"format": TEMPLATE_FORMAT, "config": asdict(config), "inputs": list(INPUTS), "output": OUTPUT,
                "weights": builder.left_out}
    return model, manifest


def write_template(model_dir: Path, template: Path = TEMPLATE_FILE, manifest: Path = MANIFEST_FILE, *,
                   int8: bool = False) -> None:
    """Write the template (deterministic bytes) and its manifest (sorted JSON) for `model_dir`'s weights."""
    model, listing = build_template(model_dir, int8=int8)
    template.write_bytes(model.SerializeToString(deterministic=True))
    manifest.write_text(json.dumps(listing, indent=1, sort_keys=True) + "\n", encoding="utf-8")


class _GraphBuilder:
    """Collects nodes and initializers; one method per block of BertModel."""

    def __init__(self, config: BertConfig, weights: dict[str, np.ndarray], graph: Any, *, int8: bool = False) -> None:
        self.config = config
        self.int8 = int8
        self._quantized: dict[str, tuple[str, str, str]] = {}  # an activation's DynamicQuantizeLinear outputs
        self.weights = weights
        self.graph = graph  # the model's own GraphProto: initializers go straight in, no copy of the weights
        self.graph.name = "bert_encoder"
        self.nodes: list[Any] = []
        self._count = 0
        self._shared: dict[str, str] = {}
        self.left_out: list[dict[str, Any]] = []  # the manifest's "weights"

    # -- small helpers -------------------------------------------------------------------------

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, hint: str, array: np.ndarray) -> str:
        from onnx import helper

        name = self._name(hint)
        tensor = self.graph.initializer.add()
        tensor.name = name
        tensor.data_type = helper.np_dtype_to_tensor_dtype(array.dtype)
        tensor.dims.extend(array.shape)
        tensor.raw_data = np.asarray(array, dtype=array.dtype.newbyteorder("<")).tobytes(order="C")
        return name

    def small(self, hint: str, value: Any, dtype: Any) -> str:
        """A small constant, one initializer however often it is used."""
        if hint not in self._shared:
            self._shared[hint] = self.const(hint, np.array(value, dtype))
        return self._shared[hint]

    def weight(self, key: str, *, transpose: bool = False, quantize: str | None = None) -> str:
        """A weight of model.safetensors, left out of the graph: an external reference the loader fills in.
        quantize: "int8" (its int8 values) or "scale" (its per-column scales), as quantize_int8 makes them."""
        from onnx import TensorProto

        if key not in self.weights:
            raise UnsupportedModel(f"{WEIGHTS_FILE} has no tensor {key!r}")
        shape = list(self.weights[key].shape[::-1] if transpose else self.weights[key].shape)
        name = f"{key}.T" if transpose else key
        item: dict[str, Any] = {"tensor": key, "transpose": transpose}
        if quantize is not None:
            name, item["quantize"] = f"{name}.{quantize}", quantize
            shape = shape if quantize == "int8" else shape[1:]
        tensor = self.graph.initializer.add()
        tensor.name = name
        tensor.data_type = INT8 if quantize == "int8" else TensorProto.FLOAT
        tensor.dims.extend(shape)
        tensor.data_location = TensorProto.EXTERNAL
        location = tensor.external_data.add()
        location.key, location.value = "location", WEIGHTS_FILE
        self.left_out.append({"name": name, **item, "shape": shape})
        return name

    def ops(self, op_type: str, inputs: list[str], count: int) -> list[str]:
        """A node with several outputs."""
        from onnx import helper

        base = self._name(op_type.lower())
        outs = [f"{base}_{i}" for i in range(count)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=base))
        return outs

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, domain: str = "", **attrs: Any) -> str:
        from onnx import helper

        out = self._name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def linear(self, x: str, prefix: str) -> str:
        """x @ W.T + b, with W given transposed (torch's Linear keeps it [out, in]). int8: the nodes ONNX
        Runtime's quantize_dynamic writes for it -- x quantized per call (DynamicQuantizeLinear, once per
        activation however many projections read it), MatMulInteger with W's int8 values, then the product
        cast back and scaled by x's scale times W's column scales."""
        if not self.int8:
            product = self.op("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)])
            return self.op("Add", [product, self.weight(f"{prefix}.bias")])
        if x not in self._quantized:
            values, scale, zero = self.ops("DynamicQuantizeLinear", [x], 3)
            self._quantized[x] = (values, scale, zero)
        values, scale, zero = self._quantized[x]
        weight = self.weight(f"{prefix}.weight", transpose=True, quantize="int8")
        columns = self.weights[f"{prefix}.weight"].shape[0]
        zeros = self.small(f"int8_zeros_{columns}", np.zeros(columns, np.int8), np.int8)
        scales = self.op("Mul", [scale, self.weight(f"{prefix}.weight", transpose=True, quantize="scale")])
        product = self.op("MatMulInteger", [values, weight, zero, zeros])
        scaled = self.op("Mul", [self.op("Cast", [product], to=1), scales])  # 1: FLOAT
        return self.op("Add", [scaled, self.weight(f"{prefix}.bias")])

    def layer_norm(self, x: str, prefix: str) -> str:
        return self.op("LayerNormalization", [x, self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")],
                       axis=-1, epsilon=self.config.eps)

    # -- the model -----------------------------------------------------------------------------

    def build(self) -> None:
        from onnx import TensorProto, helper

        hidden = self.embeddings()
        mask = self.op("Cast", ["attention_mask"], to=6)  # INT32: MultiHeadAttention's key padding mask (1 = keep)
        for i in range(self.config.layers):
            hidden = self.encoder_layer(hidden, mask, f"encoder.layer.{i}")
        self.nodes.append(helper.make_node("Identity", [hidden], [OUTPUT], name=OUTPUT))
        self.graph.node.extend(self.nodes)
        self.graph.input.extend(helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in INPUTS)
        self.graph.output.append(
            helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "seq", self.config.hidden]))

    def embeddings(self) -> str:
        words = self.op("Gather", [self.weight("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
        types = self.op("Gather", [self.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], axis=0)
        # Positions 0..seq-1: the first `seq` rows of the table, seq taken from the input's shape.
        seq = self.op("Gather", [self.op("Shape", ["input_ids"]), self.small("one", 1, np.int64)], axis=0)
        positions = self.op("Slice", [self.weight("embeddings.position_embeddings.weight"),
                                      self.small("zero", [0], np.int64),
                                      self.op("Unsqueeze", [seq, self.small("axis0", [0], np.int64)])])
        summed = self.op("Add", [self.op("Add", [words, types]), positions])
        return self.layer_norm(summed, "embeddings.LayerNorm")

    def encoder_layer(self, x: str, mask: str, prefix: str) -> str:
        att = f"{prefix}.attention"
        q, k, v = (self.linear(x, f"{att}.self.{name}") for name in ("query", "key", "value"))
        # softmax(q k^T / sqrt(head_dim) + MASKED where the key is padding) v, per head, heads merged back
        context = self.op("MultiHeadAttention", [q, k, v, "", mask], domain=RUNTIME_DOMAIN,
                          num_heads=self.config.heads, mask_filter_value=MASKED,
                          scale=1.0 / math.sqrt(self.config.hidden // self.config.heads))
        attended = self.layer_norm(self.op("Add", [self.linear(context, f"{att}.output.dense"), x]),
                                   f"{att}.output.LayerNorm")
        inner = self.gelu(self.linear(attended, f"{prefix}.intermediate.dense"))
        return self.layer_norm(self.op("Add", [self.linear(inner, f"{prefix}.output.dense"), attended]),
                               f"{prefix}.output.LayerNorm")

    def gelu(self, x: str) -> str:
        """0.5 * x * (1 + erf(x / sqrt(2))), BERT's exact GELU."""
        erf = self.op("Erf", [self.op("Div", [x, self.small("sqrt2", math.sqrt(2.0), np.float32)])])
        plus = self.op("Add", [erf, self.small("one_f", 1.0, np.float32)])
        return self.op("Mul", [self.op("Mul", [x, plus]), self.small("half", 0.5, np.float32)])


if __name__ == "__main__":  # python -m service.embedding.bert_graph [MODEL_DIR]
    from service.embedding.model_files import locate

    source = locate(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    write_template(source)
    write_template(source, INT8_TEMPLATE_FILE, INT8_MANIFEST_FILE, int8=True)
    print(f"wrote {TEMPLATE_FILE}, {INT8_TEMPLATE_FILE} and their manifests from {source}")
