"""What a search's candidates need of the canonical store (the fact, its vector, its token vectors), kept in
memory by the mirror document's version, so that a fact ranked before is not read again.

A fact document's version (service.search.opensearch.documents) is the id of the latest outbox row of its fact:
every change of the fact row -- an amend, a retirement, a vector stored -- writes a new one. So (fact id,
version) names one state of the fact, and what was read for it never needs reading again. A miss is read from
the canonical store in one statement for all the missing facts, as before; the canonical store is never behind
the mirror, so a kept entry is never older than the document the cluster answered with (while a delivery is in
flight it may be newer, as a read of the canonical store would be).

Bounded by bytes (MEMORY_OPENSEARCH_CANDIDATE_CACHE_MB; 0 turns it off), least recently used first out. A
fact read without a vector is not kept (its vector may arrive). A redacted fact (`memory redact`, from any
process) is dropped at the mirror worker's next cycle and never kept again (`forget_redacted`), so its words
and vectors stay nowhere in the server's memory, as the embedded index drops them at its next sync. Vectors
a `memory reindex` rewrites in place (the same model) change no version, as they change nothing the embedded
backend's indexes follow either: both backends see them after a restart.

A dict in insertion order under a lock, rather than a cache package: the one operation needed is "take these
keys, put those", and the service has no such dependency.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from service.domain.late import Embedding
from service.domain.models import Fact

# (profile id, fact ids) -> (fact, stored vectors) of each fact the canonical store has: one read for the pool
FactsWithVectors = Callable[[int, list[int]], dict[int, tuple[Fact, Embedding | None]]]
# record id -> (record id, fact id) of every redaction recorded after it, in order (MirrorSource.redactions_after)
RedactionsAfter = Callable[[int], list[tuple[int, int]]]
Entry = tuple[Fact, Embedding | None]

# Bytes an entry's objects take beyond its words and arrays' data: ~1,450 for a Fact (tracemalloc over 2,000
# of them), a few hundred for the Embedding and its arrays' headers.
_OVERHEAD = 2_000


def entry_bytes(fact: Fact, made: Embedding) -> int:
    """What one kept entry holds in memory, roughly: the fact's words and fields, its vector, its token codes."""
    words = len(fact.title) + len(fact.text) + sum(len(t) for t in fact.tags)
    tokens = made.tokens.codes.nbytes + made.tokens.scales.nbytes if made.tokens is not None else 0
    return _OVERHEAD + words + int(made.vector.nbytes) + tokens


class CandidateCache:
    def __init__(self, read: FactsWithVectors, redactions_after: RedactionsAfter, *, max_bytes: int) -> None:
        self.read, self.redactions_after = read, redactions_after
        self.max_bytes = max_bytes
        self._redacted: set[int] = set()  # fact ids: never kept
        self._redactions_seen = 0
        self._entries: OrderedDict[tuple[int, int], tuple[Entry, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def facts_with_vectors(self, profile_id: int, versions: Sequence[tuple[int, int]]) -> dict[int, Entry]:
        """The fact and stored vectors of each (fact id, document version): kept ones from memory, the others
        read in one statement (a fact the canonical store does not have is left out, as the read leaves it)."""
        if self.max_bytes <= 0:
            return self.read(profile_id, [fact_id for fact_id, _ in versions])
        out: dict[int, Entry] = {}
        wanted: dict[int, int] = {}
        with self._lock:
            for key in versions:
                kept = self._entries.get(key)
                if kept is None:
                    wanted[key[0]] = key[1]
                else:
                    self._entries.move_to_end(key)
                    out[key[0]] = kept[0]
            self.hits += len(out)
            self.misses += len(wanted)
        if not wanted:
            return out
        read = self.read(profile_id, list(wanted))
        out.update(read)
        with self._lock:
            for fact_id, (fact, made) in read.items():
                if made is not None:
                    self._keep((fact_id, wanted[fact_id]), (fact, made), entry_bytes(fact, made))
        return out

    def forget_redacted(self) -> None:
        """Drop the entries of the facts redacted since the last call, and keep none of them again (a search
        that read one just before its redaction committed may put it after this call: refused then)."""
        found = self.redactions_after(self._redactions_seen)
        if not found:
            return
        with self._lock:
            self._redacted.update(fact_id for _, fact_id in found)
            for key in [key for key in self._entries if key[0] in self._redacted]:
                self._bytes -= self._entries.pop(key)[1]
            self._redactions_seen = found[-1][0]

    def _keep(self, key: tuple[int, int], entry: Entry, size: int) -> None:
        if size > self.max_bytes or key[0] in self._redacted:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        self._entries[key] = (entry, size)
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._bytes -= dropped

    def report(self) -> dict[str, int]:
        with self._lock:
            return {"entries": len(self._entries), "bytes": self._bytes, "max_bytes": self.max_bytes,
                    "hits": self.hits, "misses": self.misses}
