"""A store's off-topic level: how close questions it is not about come to its facts.

The gate ("does memory know?") reads how far the closest fact stands above this level, not the closest cosine
alone. A store of small talk has a turn near anything ("Usually salt and red pepper" for the formula of table
salt): there a closest cosine of 0.4 says nothing; in a store of curated engineering notes it says a lot. The
level is measured, not guessed: the probe questions (probes.json, general knowledge no store is about) are
searched against every active fact of the profile, and the level is the median of their closest cosines
(each at least 0). Each probe is embedded as that profile's searches embed a query: without the names the store
never mentions (service.domain.names; the searching side says which, `probe_texts`). docs/benchmarks.md has
what it changes and how it was chosen.

Both backends answer the probes' closest cosines (SearchBackend.closest), and the rule of when to measure again
lives here once, so a store gives the same level, and the same matched_count, on either backend: measured on a
profile's first search and again when an unfiltered search finds its active facts more than SHARE away from the
count last measured at (a search with filters reads the last level; with none yet, it measures).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

QUANTILE = 0.5  # the median probe: what a typical question the store is not about finds
SHARE = 0.1  # measured again when the profile's active facts changed by more than this share
FALLBACK = 0.2  # read when a profile's level cannot be measured (about the labelled set's level)
PROBES_PATH = Path(__file__).with_name("probes.json")


@lru_cache(maxsize=1)
def probes() -> tuple[str, ...]:
    questions = json.loads(PROBES_PATH.read_text(encoding="utf-8"))["questions"]
    return tuple(str(q) for q in questions)


def level_of(closest: np.ndarray) -> float:
    """The level from the probes' closest cosines (each clamped at 0: a probe nothing resembles counts as 0)."""
    if closest.size == 0:
        return 0.0
    return float(np.quantile(np.maximum(closest.astype(np.float64), 0.0), QUANTILE))


def stale(measured_at: int, facts: int) -> bool:
    """The active facts changed by more than SHARE since the level was measured (any change below 1 / SHARE)."""
    return abs(facts - measured_at) > SHARE * measured_at


class StoreLevels:
    """Each profile's level in this process, measured when needed. `probe_vectors` embeds probe texts (each
    text once, on first need; `probe_texts(profile_id, profile)` says which a profile reads); `closest(profile_id,
    profile, vectors)` is the backend's SearchBackend.closest."""

    def __init__(self, probe_vectors: Callable[[list[str]], np.ndarray],
                 closest: Callable[[int, str, np.ndarray], np.ndarray],
                 probe_texts: Callable[[int, str], list[str]] | None = None) -> None:
        self._probe_vectors = probe_vectors
        self._closest = closest
        # the probes as a profile's searches would embed them (service.domain.names: without the names the
        # store never mentions); the probes themselves when not given
        self._probe_texts = probe_texts or (lambda _id, _name: list(probes()))
        self._vectors: dict[str, np.ndarray] = {}  # each probe text's vector, made once per process
        self._levels: dict[int, tuple[float, int]] = {}  # profile id -> (level, active facts when measured)
        self._lock = threading.Lock()

    def level(self, profile_id: int, profile: str, facts: int | None) -> float:
        """The profile's level. `facts`: its active facts, when the search that asks knows them (an unfiltered
        search's scope); None (filtered) reads the last level measured."""
        with self._lock:
            known = self._levels.get(profile_id)
        if known is not None and (facts is None or not stale(known[1], facts)):
            return known[0]
        level = level_of(self._closest(profile_id, profile, self._probes(self._probe_texts(profile_id, profile))))
        measured_at = facts if facts is not None else (known[1] if known is not None else 0)
        with self._lock:
            self._levels[profile_id] = (level, measured_at)
        return level

    def last(self, profile_id: int) -> float:
        """The last level measured for the profile, FALLBACK when none was: what a search reads when the
        backend cannot measure it now."""
        with self._lock:
            known = self._levels.get(profile_id)
        return FALLBACK if known is None else known[0]

    def warm(self, texts: list[str] | None = None) -> None:
        """Embed these probe texts (the probes themselves by default) now rather than at the first search that
        needs them."""
        self._probes(list(probes()) if texts is None else texts)

    def _probes(self, texts: list[str]) -> np.ndarray:
        """The texts' vectors, those not made yet in one batch."""
        with self._lock:
            missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            made = np.asarray(self._probe_vectors(missing), dtype=np.float32)
            with self._lock:
                self._vectors.update(zip(missing, made))
        with self._lock:
            return np.stack([self._vectors[text] for text in texts])
