"""The reference for the shipped int8 encoder (tests/embedding/test_int8.py): ONNX Runtime's own quantization
tool run on the fp32 encoder, as releases before the shipped int8 template did at load (needs the `onnx` package
of the test extra). `python -m tests.embedding.ort_int8 MODEL_DIR OUT` writes it to OUT."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from service.embedding.bert_graph import TEMPLATE_FILE
from service.embedding.encoder_graph import initializers


def quantize(model_dir: Path, target: Path) -> None:
    import onnx
    from onnx import numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    weights = initializers(model_dir)
    model = onnx.load_from_string(TEMPLATE_FILE.read_bytes())
    kept = [i for i in model.graph.initializer if i.name not in weights]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept + [numpy_helper.from_array(a, name) for name, a in weights.items()])
    # DefaultTensorType: the tool's shape inference cannot type the output of ONNX Runtime's own
    # MultiHeadAttention (the attention output projection's input); it is float32, as every activation here.
    quantize_dynamic(model, target, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"],
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def main(argv: list[str]) -> int:
    # The tool logs "Please consider to run pre-processing" on every call: advice for image models.
    logging.basicConfig(level=logging.ERROR)
    model_dir, target = (Path(a) for a in argv)
    quantize(model_dir, target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
