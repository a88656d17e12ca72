"""Late interaction: a fact's token vectors, kept beside its sentence vector, and MaxSim against a query's.

The embedder reads every word piece of a text before it pools them into the sentence vector; the ranking
stage (service.domain.ranking) also compares the query with a fact word piece by word piece: for each of the
query's content pieces, the best cosine to any of the fact's content pieces, averaged (ColBERT's MaxSim, over
all-MiniLM-L6-v2's own last hidden states: no other weights). It finds the fact that says the query's words in
other words ("ingredients" -> "coconut milk, vanilla") better than the pooled vector does.

Content pieces: a text's word pieces without [CLS]/[SEP], punctuation and whole stop words (the lexical rule's
list), each piece once, at most MAX_TOKENS of them. Stored as int8 with one scale per piece (the cosines move by < 0.005),
~7 KB for a fact of twenty content pieces, appended to the fact's vector in the canonical store
(service.store.vectors).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.domain.lexical import STOP_WORDS

MAX_TOKENS = 48  # content pieces kept per text (a long fact's first ones)
_SPECIAL = frozenset({"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"})


def is_content(piece: str) -> bool:
    """A word piece that carries meaning: letters or digits, not a special token, not a whole stop word."""
    if piece in _SPECIAL:
        return False
    word = piece[2:] if piece.startswith("##") else piece
    return word.isalnum() and (piece.startswith("##") or word.lower() not in STOP_WORDS)


@dataclass(frozen=True)
class TokenVectors:
    """Unit-length token vectors as int8 codes times one float32 scale per token."""

    codes: np.ndarray  # int8 (n, dim)
    scales: np.ndarray  # float32 (n,)

    @classmethod
    def of(cls, vectors: np.ndarray) -> TokenVectors:
        """Quantize rows (each normalised to unit length first)."""
        rows = np.asarray(vectors, dtype=np.float32)
        rows = rows / np.clip(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12, None)
        scales = np.clip(np.abs(rows).max(axis=1), 1e-12, None) / 127.0
        codes = np.rint(rows / scales[:, None]).astype(np.int8)
        return cls(codes, scales.astype(np.float32))

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def matrix(self) -> np.ndarray:
        """The token vectors as float32 rows."""
        return self.codes.astype(np.float32) * self.scales[:, None]

    def to_bytes(self) -> bytes:
        """n (uint16, little-endian), then n float32 scales, then n * dim int8 codes."""
        return np.uint16(len(self)).astype("<u2").tobytes() + self.scales.astype("<f4").tobytes() + \
            self.codes.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, dim: int) -> TokenVectors | None:
        """The inverse of to_bytes; None for no bytes or bytes of another shape (never a wrong matrix)."""
        if len(data) < 2:
            return None
        n = int(np.frombuffer(data, dtype="<u2", count=1)[0])
        if len(data) != 2 + 4 * n + n * dim or n == 0:
            return None
        scales = np.frombuffer(data, dtype="<f4", count=n, offset=2).astype(np.float32)
        codes = np.frombuffer(data, dtype=np.int8, count=n * dim, offset=2 + 4 * n).reshape(n, dim)
        return cls(codes, scales)


@dataclass(frozen=True)
class Embedding:
    """What the embedder makes of one text: the sentence vector, and its content token vectors when the
    embedder can give them (MiniLM on ONNX Runtime; None for the others)."""

    vector: np.ndarray
    tokens: TokenVectors | None = None


def maxsim(query: np.ndarray, facts: Sequence[TokenVectors | None]) -> np.ndarray:
    """For each fact, the mean over the query's token vectors (float32 unit rows) of the best cosine to one of
    the fact's; NaN for a fact without token vectors. One matrix product for all the facts together."""
    out = np.full(len(facts), np.nan, dtype=np.float64)
    held: list[int] = []
    kept: list[TokenVectors] = []
    for i, t in enumerate(facts):
        if t is not None and len(t.codes):
            held.append(i)
            kept.append(t)
    if not held or query.shape[0] == 0:
        return out
    codes = np.concatenate([t.codes for t in kept], dtype=np.float32)  # int8 read straight into float32
    sims = codes @ query.T  # (all fact tokens, query tokens): this way round BLAS is ~2x faster for a short query
    sims *= np.concatenate([t.scales for t in kept])[:, None]
    sizes = np.fromiter((len(t.codes) for t in kept), dtype=np.int64, count=len(kept))
    starts = np.concatenate(([0], np.cumsum(sizes[:-1])))
    out[held] = np.maximum.reduceat(sims, starts, axis=0).mean(axis=1)
    return out
