"""One profile's in-process search index: SQLite FTS5 (BM25, Porter stemming) plus a vector matrix.

FTS5 tokenizes and holds the words; the lexical pass reads them through numpy postings (postings.py) that
score exactly as FTS5's bm25() does.

It is a derived cache of the canonical store (rebuilt from it at will), holding every fact of the profile
whatever its status, so a search can also tell how many retired or superseded facts would have matched, and
each fact itself (the domain value, as of the change the index synced to), handed back with the hits so that
a search reads nothing more from the store.
Row i of the arrays is FTS5 rowid i + 1.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading

import numpy as np

from service.contract import KINDS
from service.domain.late import TokenVectors
from service.domain.wording import FactWords, read_words
from service.domain.models import Fact
from service.domain.ports.sources import ChangedFact
from service.domain.window import ANY, Window, micros
from service.search.embedded.postings import TOKENIZE, WEIGHTS, Postings, Tokenizer, length_norm, phrase_score

_KIND_CODE = {k: i for i, k in enumerate(KINDS)}


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (big-endian, 7 bits a byte, a 9th byte of 8), as FTS5 writes fts_docsize."""
    values, value, length = [], 0, 0
    for byte in blob:
        length += 1
        if length == 9:
            values.append((value << 8) | byte)
            value = length = 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            values.append((value << 7) | byte)
            value = length = 0
    return values


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
        self.loaded = False  # its first sync (the profile's whole store) is done: /readyz counts it loaded
        # (uid, change number) of the last fact this process's write pushed in (EmbeddedSearch.written)
        self.pushed: tuple[str, int] | None = None
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("PRAGMA secure_delete=ON")  # a redacted fact's words are zeroed, not left in free pages
        self._db.execute(f"CREATE VIRTUAL TABLE fts USING fts5(title, text, tags, tokenize = '{TOKENIZE}')")
        self._tokenizer = Tokenizer(self._db)
        self._postings = Postings(self._db)
        self._doc_len = np.zeros(0, dtype=np.int64)  # tokens per row (all columns), 0 when not in FTS5
        self._rows_in_fts = 0
        self._tokens_in_fts = 0
        self.size = 0
        self.row_of: dict[int, int] = {}
        self.row_of_uid: dict[str, int] = {}
        self.uids: list[str] = []
        self.fact_ids: list[int] = []
        self.tags_of: list[frozenset[str]] = []
        self.facts: list[Fact | None] = []  # row -> the fact as synced (handed back with its hits), None once redacted
        self.tag_rows: dict[str, set[int]] = {}
        self.kind = np.zeros(0, dtype=np.int8)
        self.updated = np.zeros(0, dtype=np.int64)  # updated_at, microseconds since the epoch (a window's field)
        self.active = np.zeros(0, dtype=bool)
        self.present = np.zeros(0, dtype=bool)
        self.has_vector = np.zeros(0, dtype=bool)
        self.matrix: np.ndarray | None = None
        self.tokens: list[TokenVectors | None] = []  # row -> content token vectors (service.domain.late)
        self.words: list[FactWords | None] = []  # row -> what the ranking stage reads of its words
        self.missing_vectors: set[int] = set()

    # --- maintenance ------------------------------------------------------------------------------

    def upsert(self, fact: ChangedFact) -> None:
        row = self.row_of.get(fact.fact_id)
        if row is None:
            row = self.size
            self.size += 1
            self.row_of[fact.fact_id] = row
            self.row_of_uid[fact.uid] = row
            self.uids.append(fact.uid)
            self.fact_ids.append(fact.fact_id)
            self.tags_of.append(frozenset())
            self.facts.append(None)
            self.tokens.append(None)
            self.words.append(None)
            self.kind = _grow(self.kind, self.size)
            self.updated = _grow(self.updated, self.size)
            self.active = _grow(self.active, self.size)
            self.present = _grow(self.present, self.size)
            self.has_vector = _grow(self.has_vector, self.size)
            self._doc_len = _grow(self._doc_len, self.size)
        if not fact.present:
            self._remove(row, fact)
            return
        content = (fact.title, fact.text, " ".join(fact.tags))
        if not self.present[row] or self._content(row) != content:  # a status change leaves the words alone
            self._forget_words(row)
            self._db.execute("INSERT INTO fts(rowid, title, text, tags) VALUES (?, ?, ?, ?)", (row + 1, *content))
            (sizes,) = self._db.execute("SELECT sz FROM fts_docsize WHERE id = ?", (row + 1,)).fetchone()
            self._doc_len[row] = sum(_varints(sizes))
            self._rows_in_fts += 1
            self._tokens_in_fts += int(self._doc_len[row])
            if self._postings:
                self._postings.add(row, self._tokenizer.words(*content))
            self.words[row] = read_words(fact.title, fact.text, tuple(fact.tags))
        self.present[row] = True
        self.facts[row] = fact.fact
        for tag in self.tags_of[row] - set(fact.tags):
            self.tag_rows[tag].discard(row)
        for tag in fact.tags:
            self.tag_rows.setdefault(tag, set()).add(row)
        self.tags_of[row] = frozenset(fact.tags)
        self.kind[row] = _KIND_CODE.get(fact.kind, -1)
        if fact.fact is not None:
            self.updated[row] = micros(fact.fact.updated_at)
        self.active[row] = fact.active
        if fact.vector is not None:
            self.set_vector(row, fact.vector, fact.tokens)
        elif not self.has_vector[row]:
            self.missing_vectors.add(row)

    def _remove(self, row: int, fact: ChangedFact) -> None:
        """A redacted fact leaves this in-memory search index (derived; the canonical row stays, redacted): its
        words, vector, tags and copy of the fact go; its row number stays unused. FTS5 keeps a deleted row's
        words in its segments until they are merged: 'optimize' merges them now (secure_delete zeroes the freed
        pages), so no copy of the words stays in this process's memory either; a redaction is rare, so its cost
        is too."""
        self.facts[row] = None
        self.tokens[row] = None
        self.words[row] = None
        if self._forget_words(row):  # (a fact first seen redacted never had words here)
            self._db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
            self._tokenizer.forget()
        for tag in self.tags_of[row]:
            self.tag_rows[tag].discard(row)
        self.tags_of[row] = frozenset()
        self.row_of_uid.pop(fact.uid, None)
        self.present[row] = self.active[row] = self.has_vector[row] = False
        self.kind[row] = -1
        if self.matrix is not None and row < self.matrix.shape[0]:
            self.matrix[row] = 0.0
        self.missing_vectors.discard(row)

    def _content(self, row: int) -> tuple[str, str, str]:
        title, text, tags = self._db.execute("SELECT title, text, tags FROM fts WHERE rowid = ?", (row + 1,)).fetchone()
        return str(title), str(text), str(tags)

    def _forget_words(self, row: int) -> bool:
        """Take the row's words out of FTS5 (this derived index only) and out of the postings; False when
        it had none there."""
        if not self.present[row]:
            return False
        if self._postings:
            self._postings.remove(row, self._tokenizer.words(*self._content(row)))
        # the in-memory search index only (a derived copy); the canonical fact row is never deleted
        self._db.execute("DELETE FROM fts WHERE rowid = ?", (row + 1,))
        self._rows_in_fts -= 1
        self._tokens_in_fts -= int(self._doc_len[row])
        self._doc_len[row] = 0
        self.present[row] = False
        return True

    def set_vector(self, row: int, vector: np.ndarray, tokens: TokenVectors | None = None) -> None:
        if self.matrix is None or self.matrix.shape[1] != vector.shape[0]:
            if self.matrix is not None:  # another dimension: every old vector is unusable now
                self.drop_vectors()
            self.matrix = np.zeros((max(64, self.size), vector.shape[0]), dtype=np.float32)
        self.matrix = _grow(self.matrix, self.size)
        self.matrix[row] = vector
        self.tokens[row] = tokens
        self.has_vector[row] = True
        self.missing_vectors.discard(row)

    def drop_vectors(self) -> None:
        """Forget all vectors (the embedder changed); they are re-made from the canonical store."""
        self.matrix = None
        self.tokens = [None] * len(self.tokens)
        self.has_vector[:] = False
        self.missing_vectors = {int(r) for r in np.nonzero(self.present[: self.size])[0]}

    # --- queries ----------------------------------------------------------------------------------

    def filter_mask(self, kind: str | None, tags: tuple[str, ...], window: Window = ANY) -> np.ndarray:
        """Rows passing the kind, tag and time-window filters (a fact must carry all the tags; its updated_at
        inside the window, both ends included), any status; never a redacted fact's row."""
        mask = self.present[: self.size].copy()
        if kind is not None:
            mask &= self.kind[: self.size] == _KIND_CODE.get(kind, -2)
        if window.since is not None:
            mask &= self.updated[: self.size] >= micros(window.since)
        if window.until is not None:
            mask &= self.updated[: self.size] <= micros(window.until)
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
            counts[self.rows_with(term)] += 1
        return counts

    def bm25(self, terms: list[str], rows: np.ndarray) -> np.ndarray:
        """FTS5's BM25 of the OR of the terms (higher is better) for the given rows (ascending), in their order:
        the same doubles as `bm25(fts, 2.0, 1.0, 1.5)` of that query, computed for those rows only -- on a
        large profile most rows holding some of the words do not pass the match rule."""
        scores = np.zeros(rows.size, dtype=np.float64)
        if not terms or rows.size == 0:
            return scores
        norm = length_norm(self._doc_len[rows], self._rows_in_fts, self._tokens_in_fts)
        for term in terms:  # FTS5 adds the phrases' parts in the query's order, from 0.0
            stems = self._tokenizer.stems(term)
            if len(stems) != 1:
                scores += self._fts_phrase_score(term, rows)
                continue
            holding, freqs = self._postings.of(stems[0])
            at = np.searchsorted(holding, rows)
            found = at < holding.size
            found[found] = holding[at[found]] == rows[found]
            freq = np.zeros(rows.size, dtype=np.float64)
            freq[found] = freqs[at[found]]
            scores += phrase_score(freq, holding.size, self._rows_in_fts, norm)
        return scores

    def rows_with(self, term: str) -> np.ndarray:
        """The rows holding the term (Porter-stemmed by FTS5), any status."""
        stems = self._tokenizer.stems(term)
        if len(stems) == 1:
            return self._postings.of(stems[0])[0]
        # Several tokens make a phrase (or none, which matches nothing): FTS5 answers, as one string.
        (joined,) = self._db.execute(
            "SELECT group_concat(rowid) FROM fts WHERE fts MATCH ?", (f'"{term}"',)
        ).fetchone()
        return np.fromstring(joined, dtype=np.int64, sep=",") - 1 if joined else np.zeros(0, dtype=np.int64)

    def _fts_phrase_score(self, term: str, rows: np.ndarray) -> np.ndarray:
        """A multi-token phrase's part of the BM25 sum, from FTS5: of a one-phrase query bm25() returns
        exactly -(0.0 + that part)."""
        part = np.zeros(rows.size, dtype=np.float64)
        cursor = self._db.execute(
            "SELECT rowid, bm25(fts, ?, ?, ?) FROM fts WHERE fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))",
            (*WEIGHTS, f'"{term}"', json.dumps((rows + 1).tolist())),
        )
        pairs = np.fromiter(itertools.chain.from_iterable(cursor), dtype=np.float64).reshape(-1, 2)
        part[np.searchsorted(rows, pairs[:, 0].astype(np.int64) - 1)] = -pairs[:, 1]
        return part

    def similarities(self, vector: np.ndarray) -> np.ndarray | None:
        """Cosine similarity of every row to the vector (rows without a vector get -inf)."""
        if self.matrix is None or self.matrix.shape[1] != vector.shape[0]:
            return None
        sims = self.matrix[: self.size] @ vector.astype(np.float32, copy=False)
        sims[~self.has_vector[: self.size]] = -np.inf
        return sims

    def closest(self, vectors: np.ndarray) -> np.ndarray:
        """Each vector's highest cosine to an active row with a vector, at least 0.0 (SearchBackend.closest)."""
        # one search's similarities per vector (a matrix-matrix product grew the server's peak memory by ~10 MB at
        # 10,000 facts: the BLAS's own buffers); rows without a vector are -inf there, inactive ones left out here
        active = self.active[: self.size]
        best = []
        for vector in vectors:
            sims = self.similarities(vector)
            best.append(float(np.where(active, sims, 0.0).max()) if sims is not None and sims.size else 0.0)
        return np.maximum(np.array(best, dtype=np.float32), 0.0)

    def text_of(self, row: int) -> tuple[str, str]:
        title, text = self._db.execute("SELECT title, text FROM fts WHERE rowid = ?", (row + 1,)).fetchone()
        return str(title), str(text)

    def forget_queries(self) -> None:
        """Drop the query terms' stems kept (SearchBackend.forget_queries)."""
        self._tokenizer.forget()

    def close(self) -> None:
        self._db.close()
