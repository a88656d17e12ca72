"""Token vectors (service.domain.late): stored small and read back as stored, and MaxSim as defined."""

from __future__ import annotations

import numpy as np
import pytest

from service.domain.late import TokenVectors, is_content, maxsim


def unit_rows(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_token_vectors_round_trip_through_bytes_and_stay_within_a_quantization_step() -> None:
    rows = unit_rows(5)
    tokens = TokenVectors.of(rows * 3.0)  # normalised on the way in
    back = TokenVectors.from_bytes(tokens.to_bytes(), 8)
    assert back is not None and np.array_equal(back.codes, tokens.codes) and np.array_equal(back.scales, tokens.scales)
    assert np.abs(back.matrix() - rows).max() <= float(tokens.scales.max()) / 2 + 1e-7


@pytest.mark.parametrize("data", [b"", b"\x01", TokenVectors.of(unit_rows(2)).to_bytes()[:-1], b"\x00\x00"])
def test_bytes_of_another_shape_are_no_token_vectors(data: bytes) -> None:
    assert TokenVectors.from_bytes(data, 8) is None


def test_maxsim_is_the_mean_over_query_tokens_of_the_best_cosine_and_nan_without_tokens() -> None:
    query, a, b = unit_rows(3, seed=1), unit_rows(4, seed=2), unit_rows(2, seed=3)
    ta, tb = TokenVectors.of(a), TokenVectors.of(b)
    found = maxsim(query, [ta, None, tb])
    expected = [float((query @ t.matrix().T).max(axis=1).mean()) for t in (ta, tb)]
    assert found[0] == pytest.approx(expected[0], abs=1e-6) and found[2] == pytest.approx(expected[1], abs=1e-6)
    assert np.isnan(found[1])
    assert np.isnan(maxsim(np.zeros((0, 8), dtype=np.float32), [ta])).all()


def test_content_pieces_are_words_and_word_parts_not_stop_words_specials_or_punctuation() -> None:
    assert [p for p in ["[CLS]", "what", "did", "caroline", "paint", "##ing", "?", "the", "2023", "[SEP]"]
            if is_content(p)] == ["caroline", "paint", "##ing", "2023"]
