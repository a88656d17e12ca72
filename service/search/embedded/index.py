"""One profile's in-process search index: SQLite FTS5 (BM25, Porter stemming) plus a vector matrix.

It is a derived cache of the canonical store (rebuilt from it at will), holding every fact of the profile
whatever its status, so a search can also tell how many retired or superseded facts would have matched.
Row i of the arrays is FTS5 rowid i + 1.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from dataclasses import dataclass

import numpy as np

from service.contract import KINDS

_KIND_CODE = {k: i for i, k in enumerate(KINDS)}
_BM25_WEIGHTS = (2.0, 1.0, 1.5)  # title, text, tags


@dataclass(frozen=True)
class IndexedFact:
    fact_id: int
    uid: str
    title: str
    text: str
    kind: str
    tags: tuple[str, ...]
    active: bool
    vector: np.ndarray | None  # unit length, or None when not embedded (yet)
    present: bool = True  # False once redacted: the row stays a hole (no words, no vector, never matched)


def _grow(array: np.ndarray, size: int) -> np.ndarray:
    if size <= array.shape[0]:
        return array
    capacity = max(size, array.shape[0] * 2, 64)
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown


class ProfileIndex:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.synced_seq = 0
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("PRAGMA secure_delete=ON")  # a redacted fact's words are zeroed, not left in free pages
        self._db.execute(
            "CREATE VIRTUAL TABLE fts USING fts5(title, text, tags, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        self.size = 0
        self.row_of: dict[int, int] = {}
        self.row_of_uid: dict[str, int] = {}
        self.uids: list[str] = []
        self.fact_ids: list[int] = []
        self.tags_of: list[frozenset[str]] = []
        self.tag_rows: dict[str, set[int]] = {}
        self.kind = np.zeros(0, dtype=np.int8)
        self.active = np.zeros(0, dtype=bool)
        self.present = np.zeros(0, dtype=bool)
        self.has_vector = np.zeros(0, dtype=bool)
        self.matrix: np.ndarray | None = None
        self.missing_vectors: set[int] = set()

    # --- maintenance ------------------------------------------------------------------------------

    def upsert(self, fact: IndexedFact) -> None:
        row = self.row_of.get(fact.fact_id)
        if row is None:
            row = self.size
            self.size += 1
            self.row_of[fact.fact_id] = row
            self.row_of_uid[fact.uid] = row
            self.uids.append(fact.uid)
            self.fact_ids.append(fact.fact_id)
            self.tags_of.append(frozenset())
            self.kind = _grow(self.kind, self.size)
            self.active = _grow(self.active, self.size)
            self.present = _grow(self.present, self.size)
            self.has_vector = _grow(self.has_vector, self.size)
        if not fact.present:
            self._remove(row, fact)
            return
        self.present[row] = True
        self._db.execute(
            "REPLACE INTO fts(rowid, title, text, tags) VALUES (?, ?, ?, ?)",
            (row + 1, fact.title, fact.text, " ".join(fact.tags)),
        )
        for tag in self.tags_of[row] - set(fact.tags):
            self.tag_rows[tag].discard(row)
        for tag in fact.tags:
            self.tag_rows.setdefault(tag, set()).add(row)
        self.tags_of[row] = frozenset(fact.tags)
        self.kind[row] = _KIND_CODE.get(fact.kind, -1)
        self.active[row] = fact.active
        if fact.vector is not None:
            self.set_vector(row, fact.vector)
        elif not self.has_vector[row]:
            self.missing_vectors.add(row)

    def _remove(self, row: int, fact: IndexedFact) -> None:
        """A redacted fact leaves this in-memory search index (derived; the canonical row stays, redacted): its
        words, vector and tags go; its row number stays unused."""
        self._db.execute("DELETE FROM fts WHERE rowid = ?", (row + 1,))
        for tag in self.tags_of[row]:
            self.tag_rows[tag].discard(row)
        self.tags_of[row] = frozenset()
        self.row_of_uid.pop(fact.uid, None)
        self.present[row] = self.active[row] = self.has_vector[row] = False
        self.kind[row] = -1
        if self.matrix is not None and row < self.matrix.shape[0]:
            self.matrix[row] = 0.0
        self.missing_vectors.discard(row)

    def set_vector(self, row: int, vector: np.ndarray) -> None:
        if self.matrix is None or self.matrix.shape[1] != vector.shape[0]:
            if self.matrix is not None:  # another dimension: every old vector is unusable now
                self.drop_vectors()
            self.matrix = np.zeros((max(64, self.size), vector.shape[0]), dtype=np.float32)
        self.matrix = _grow(self.matrix, self.size)
        self.matrix[row] = vector
        self.has_vector[row] = True
        self.missing_vectors.discard(row)

    def drop_vectors(self) -> None:
        """Forget all vectors (the embedder changed); they are re-made from the canonical store."""
        self.matrix = None
        self.has_vector[:] = False
        self.missing_vectors = {int(r) for r in np.nonzero(self.present[: self.size])[0]}

    # --- queries ----------------------------------------------------------------------------------

    def filter_mask(self, kind: str | None, tags: tuple[str, ...]) -> np.ndarray:
        """Rows passing the kind and tag filters (a fact must carry all the tags), any status; never a
        redacted fact's row."""
        mask = self.present[: self.size].copy()
        if kind is not None:
            mask &= self.kind[: self.size] == _KIND_CODE.get(kind, -2)
        for tag in tags:
            rows = self.tag_rows.get(tag)
            tag_mask = np.zeros(self.size, dtype=bool)
            if rows:
                tag_mask[np.fromiter(rows, dtype=np.int64, count=len(rows))] = True
            mask &= tag_mask
        return mask

    def term_counts(self, terms: list[str]) -> np.ndarray:
        """For each row, how many of the terms (Porter-stemmed by FTS5) it contains in any column."""
        counts = np.zeros(self.size, dtype=np.int32)
        for term in terms:
            cursor = self._db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (f'"{term}"',))
            rows = np.fromiter(itertools.chain.from_iterable(cursor), dtype=np.int64)
            counts[rows - 1] += 1
        return counts

    def bm25(self, terms: list[str], rows: np.ndarray) -> np.ndarray:
        """BM25 of the OR of the terms (higher is better) for the given rows (ascending), in their order.

        FTS5 still walks every partial match of the OR query, but `+rowid IN (...)` (the `+` keeps SQLite
        from handing the list to FTS5 as a lookup per row) filters before bm25() runs, so only the given
        rows -- the facts that passed the match rule -- are scored: on a large profile most partial matches
        are not.
        """
        scores = np.zeros(rows.size, dtype=np.float64)
        if not terms or rows.size == 0:
            return scores
        expression = " OR ".join(f'"{t}"' for t in terms)
        cursor = self._db.execute(
            "SELECT rowid, bm25(fts, ?, ?, ?) FROM fts WHERE fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))",
            (*_BM25_WEIGHTS, expression, json.dumps((rows + 1).tolist())),
        )
        pairs = np.fromiter(itertools.chain.from_iterable(cursor), dtype=np.float64).reshape(-1, 2)
        scores[np.searchsorted(rows, pairs[:, 0].astype(np.int64) - 1)] = -pairs[:, 1]  # FTS5: lower is better
        return scores

    def similarities(self, vector: np.ndarray) -> np.ndarray | None:
        """Cosine similarity of every row to the vector (rows without a vector get -inf)."""
        if self.matrix is None or self.matrix.shape[1] != vector.shape[0]:
            return None
        sims = self.matrix[: self.size] @ vector.astype(np.float32, copy=False)
        sims[~self.has_vector[: self.size]] = -np.inf
        return sims

    def text_of(self, row: int) -> tuple[str, str]:
        title, text = self._db.execute("SELECT title, text FROM fts WHERE rowid = ?", (row + 1,)).fetchone()
        return str(title), str(text)

    def close(self) -> None:
        self._db.close()
