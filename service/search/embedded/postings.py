"""Per-word postings of one profile's FTS5 table, in numpy, and FTS5's BM25 computed from them.

FTS5 stays the tokenizer and the source of truth; these arrays only make the lexical pass cheap on large
profiles. Counting terms and scoring BM25 through SQL walks FTS5's position lists row by row (a common
word at 100k facts: tens of thousands of rows, ~10 ms); here a word's rows and weighted frequencies are
read once from FTS5's own vocabulary (fts5vocab, the first time a search needs the word) and kept in step
with every later write, so a search is a few array operations per word.

`length_norm` and `phrase_score` are FTS5's bm25() (fts5_aux.c) operation for operation, so scores are
bit-identical to `bm25(fts, 2.0, 1.0, 1.5)` of the OR query; tests/search/test_index.py compares them exactly.
"""

from __future__ import annotations

import math
import sqlite3

import numpy as np

COLUMNS = ("title", "text", "tags")
WEIGHTS = (2.0, 1.0, 1.5)  # BM25 column weights, in COLUMNS order
TOKENIZE = "porter unicode61 remove_diacritics 2"
_WEIGHT = np.array(WEIGHTS, dtype=np.float64)
_COLUMN_CODE = "CASE col WHEN 'title' THEN 0 WHEN 'text' THEN 1 ELSE 2 END"
_K1, _B = 1.2, 0.75  # FTS5's constants
_STEM_CACHE_MAX = 65_536


class Tokenizer:
    """FTS5's own tokenizer (Porter over unicode61), reached through a contentless scratch table: SQLite
    offers no tokenize() function, and a Python stemmer would not split or stem exactly as FTS5 does."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        db.execute(f"CREATE VIRTUAL TABLE scratch USING fts5(title, text, tags, content='', tokenize='{TOKENIZE}')")
        db.execute("CREATE VIRTUAL TABLE scratch_words USING fts5vocab(scratch, instance)")
        self._stems: dict[str, tuple[str, ...]] = {}

    def words(self, title: str, text: str, tags: str) -> dict[str, float]:
        """Each word (stemmed) of one fact with its weighted frequency: the sum of its columns' weights over
        its occurrences, as FTS5's bm25() adds them up."""
        self._db.execute("INSERT INTO scratch(rowid, title, text, tags) VALUES (1, ?, ?, ?)", (title, text, tags))
        try:
            freqs: dict[str, float] = {}
            for word, column in self._db.execute(f"SELECT term, {_COLUMN_CODE} FROM scratch_words"):
                freqs[word] = freqs.get(word, 0.0) + WEIGHTS[column]
            return freqs
        finally:
            self._clear()

    def stems(self, term: str) -> tuple[str, ...]:
        """The tokens FTS5 makes of a query term: one for a plain word; none or several for the rare
        letters unicode61 (Unicode 6.1) reads as separators."""
        stems = self._stems.get(term)
        if stems is None:
            self._db.execute("INSERT INTO scratch(rowid, title) VALUES (1, ?)", (term,))
            try:
                stems = tuple(w for (w,) in self._db.execute("SELECT term FROM scratch_words ORDER BY offset"))
            finally:
                self._clear()
            if len(self._stems) >= _STEM_CACHE_MAX:
                self._stems.clear()
            self._stems[term] = stems
        return stems

    def forget(self) -> None:
        """Drop the query terms seen so far (a redaction: they may hold the removed words)."""
        self._stems.clear()

    def _clear(self) -> None:
        # 'delete-all' drops the scratch index outright (no delete markers left behind holding a fact's words).
        self._db.execute("INSERT INTO scratch(scratch) VALUES ('delete-all')")


class _Posting:
    """One word's rows (ascending) and weighted frequencies, with room to grow at the end."""

    __slots__ = ("rows", "freqs", "n")

    def __init__(self, rows: np.ndarray, freqs: np.ndarray) -> None:
        # int32 rows and float32 frequencies (sums of 2.0, 1.0 and 1.5: exact in float32): 8 bytes a pair.
        self.rows, self.freqs, self.n = rows.astype(np.int32), freqs.astype(np.float32), rows.size

    def put(self, row: int, freq: float) -> None:
        at = int(np.searchsorted(self.rows[: self.n], row))
        if at < self.n and self.rows[at] == row:
            self.freqs[at] = freq
            return
        if self.n == self.rows.size:
            capacity = max(8, self.n * 2)
            self.rows = np.resize(self.rows, capacity)
            self.freqs = np.resize(self.freqs, capacity)
        self.rows[at + 1 : self.n + 1] = self.rows[at : self.n].copy()  # a new fact's row is last: no move
        self.freqs[at + 1 : self.n + 1] = self.freqs[at : self.n].copy()
        self.rows[at], self.freqs[at] = row, freq
        self.n += 1

    def drop(self, row: int) -> None:
        at = int(np.searchsorted(self.rows[: self.n], row))
        if at < self.n and self.rows[at] == row:
            self.rows[at : self.n - 1] = self.rows[at + 1 : self.n].copy()
            self.freqs[at : self.n - 1] = self.freqs[at + 1 : self.n].copy()
            self.n -= 1


class Postings:
    """The postings of the words searches have asked for so far; the others are read from FTS5 on demand."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        db.execute("CREATE VIRTUAL TABLE fts_words USING fts5vocab(fts, instance)")
        self._built: dict[str, _Posting] = {}

    def __bool__(self) -> bool:
        """Whether any word is built (so writes have postings to keep in step)."""
        return bool(self._built)

    def of(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding the word (ascending, 0-based) and its weighted frequency in each."""
        posting = self._built.get(word)
        if posting is None:
            posting = self._read(word)
            if posting.n:  # a word no fact holds is not kept (it may be a redacted fact's)
                self._built[word] = posting
        return posting.rows[: posting.n], posting.freqs[: posting.n]

    def _read(self, word: str) -> _Posting:
        # One comma-joined string of rowid*4+column per occurrence, parsed by numpy (a tuple per occurrence
        # through the sqlite3 module costs several times as much).
        (joined,) = self._db.execute(
            f"SELECT group_concat(doc * 4 + {_COLUMN_CODE}) FROM fts_words WHERE term = ?", (word,)
        ).fetchone()
        if not joined:
            return _Posting(np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
        packed = np.fromstring(joined, dtype=np.int64, sep=",")
        per_row = np.bincount((packed >> 2) - 1, weights=_WEIGHT[packed & 3])
        rows = np.flatnonzero(per_row)
        return _Posting(rows, per_row[rows])

    def add(self, row: int, words: dict[str, float]) -> None:
        """A fact's words entered the FTS5 table at this row."""
        for word, freq in words.items():
            posting = self._built.get(word)
            if posting is not None:
                posting.put(row, freq)

    def remove(self, row: int, words: dict[str, float]) -> None:
        """A fact's words left the FTS5 table at this row; a word no row holds any more is forgotten."""
        for word in words:
            posting = self._built.get(word)
            if posting is not None:
                posting.drop(row)
                if posting.n == 0:
                    del self._built[word]


def length_norm(doc_len: np.ndarray, n_rows: int, n_tokens: int) -> np.ndarray:
    """BM25's length factor k1 * (1 - b + b * D / avgdl) of each scored row (D: its tokens, all columns)."""
    avgdl = float(n_tokens) / float(n_rows) if n_rows else 1.0
    return _K1 * (1 - _B + _B * doc_len.astype(np.float64) / avgdl)


def phrase_score(freq: np.ndarray, hits: int, n_rows: int, norm: np.ndarray) -> np.ndarray:
    """One phrase's part of FTS5's bm25() in each scored row (freq: its weighted frequency there; hits: how
    many rows of the table hold it). fts5Bm25Function's operations in its order, so the doubles are FTS5's;
    it sums the parts phrase by phrase, from 0.0, and returns the negated sum."""
    idf = math.log((n_rows - hits + 0.5) / (hits + 0.5))  # math.log: the C library's log, as FTS5's
    if idf <= 0.0:
        idf = 1e-6
    return idf * ((freq * (_K1 + 1.0)) / (freq + norm))
