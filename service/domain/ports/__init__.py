"""Ports: what the domain needs from an embedder, a search backend and the canonical store.

Both search backends (embedded, opensearch) implement SearchBackend and are held to the same
behaviour by one contract suite, tests/search/test_backend_contract.py (every test runs on each backend; the
mirrored ones are also compared hit by hit with the embedded one). The embedder is shared by both, so a
query is embedded once. The canonical store is behind CanonicalStore (ports/canonical.py: units of work and
their members; ports/records.py: the rows they hand back), implemented by service.store.sql.SqlStore.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np

from service.domain.late import Embedding, TokenVectors
from service.domain.window import ANY, Window
from service.domain.wording import FactWords
from service.domain.models import Fact, ProfileRef
from service.domain.ports.sources import ChangedFact
from service.errors import EmbeddingUnavailable  # noqa: F401 - what the embedder port raises


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    `model_id` identifies the vectors' space (stored with each vector; a change means re-embedding).
    `enabled` is False only for the `none` embedder (lexical-only search).
    """

    enabled: bool
    model_id: str

    @property
    def dim(self) -> int | None:
        """Vector dimension, None until known (a remote embedder learns it from its first answer)."""

    def start(self) -> None:
        """Begin loading in the background (called by `memory serve`); never blocks."""

    def ready(self) -> bool:
        """True when embed_* can answer without loading first."""

    def status(self) -> dict[str, Any]:
        """For /readyz: at least {"embedder": name, "state": "ready"|"loading"|"error"|"disabled", "model": ...}."""

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row unit length. Loads the model if needed. Raises EmbeddingUnavailable."""

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32 unit vector; recent queries are cached. Raises EmbeddingUnavailable."""

    def embed_query_tokens(self, text: str) -> Embedding:
        """The query's vector and, when the embedder gives them, its content token vectors (service.domain.late);
        cached with embed_query's. Raises EmbeddingUnavailable."""

    def embed_facts(self, texts: list[str]) -> list[Embedding]:
        """Each fact's vector (as embed_documents) and content token vectors when the embedder gives them, from
        the same run. Raises EmbeddingUnavailable."""

    def vocabulary(self) -> frozenset[str] | None:
        """The words the model reads as words (service.search.readable), or None when it does not say."""

    def forget_queries(self) -> None:
        """Drop the recent queries kept with their vectors (a redaction may have removed their words)."""


@dataclass(frozen=True)
class SearchRequest:
    profile_id: int
    profile: str
    query: str
    limit: int
    kind: str | None = None
    tags: tuple[str, ...] = ()
    window: Window = ANY  # bounds on the facts' updated_at (service.domain.window), applied before the ranking
    vector: np.ndarray | None = None  # the query's embedding; None when the embedder is off or failed
    # Or the embedding still being computed: query_vector() waits for it (None if it failed).
    pending_vector: Callable[[], np.ndarray | None] | None = field(default=None, compare=False, repr=False)
    # The query's names (service.domain.names.terms) whose active facts the backend counts within this search and
    # hands back as SearchHits.names_held (a backend whose Capabilities.names_with_search is on); () asks nothing.
    names: tuple[str, ...] = ()

    def query_vector(self) -> np.ndarray | None:
        """The query's embedding. A backend asks for it as late as it can: the embedded backend runs its
        lexical pass while the model (which releases the GIL) embeds the query on the other core."""
        if self.vector is None and self.pending_vector is not None:
            return self.pending_vector()
        return self.vector


@dataclass(frozen=True)
class Hit:
    uid: str
    fact_id: int
    score: float
    lexical: float | None = None  # raw BM25 score of the lexical sub-query, None when not in that list
    vector: float | None = None  # cosine similarity, None when not in the vector list
    # The fact itself when the backend holds it (the embedded index, at the change it was synced to); None:
    # the domain reads it from the canonical store (service.domain.hits).
    fact: Fact | None = None


class Candidate(NamedTuple):
    """A fact of a search's candidate pool: what the second ranking stage (service.domain.ranking) reads of it.
    A named tuple: a search builds ~60 of them, at a third of a frozen dataclass's cost."""

    uid: str
    fact_id: int
    cosine: float | None  # to the query; None when the fact has no vector
    by_words: bool  # it matches by the lexical rule
    by_meaning: bool  # it matches by meaning (cosine >= MEMORY_MIN_SIMILARITY, for a query that can be read)
    tokens: TokenVectors | None = None  # its content token vectors, when stored
    fact: Fact | None = None  # as Hit.fact: None when the domain reads it from the canonical store
    words: FactWords | None = None  # what the stage reads of its words, when the backend keeps them


@dataclass(frozen=True)
class Pool:
    """The candidates of a hybrid search -- the best MEMORY_RERANK_DEPTH active facts by meaning and as many by
    words, in fact-id order -- and the counts the second stage weighs them with."""

    candidates: list[Candidate]
    scope: int  # active facts passing the search's filters
    term_df: tuple[int, ...]  # for each informative term of the query: how many of those hold it
    by_words: int  # how many of those match by the lexical rule


@dataclass(frozen=True)
class SearchHits:
    """What a backend found. `matched_count` is exact or None (never a guess). A hybrid search with a query vector
    and exact counts hands over its `pool` for the second ranking stage (which orders it, and may find that
    memory does not know); `hits` are then empty. Otherwise `hits` are ranked by the shared fusion."""

    matched_count: int | None
    inactive_matched: int | None
    hits: list[Hit]
    mode: str  # "hybrid" | "lexical" | "degraded": service.search.mode
    # A few of the retired/superseded facts that matched (at most contract.INACTIVE_SHOWN, closest first), so a miss
    # where memory once knew says which facts it knew; empty when the count is unknown.
    inactive_uids: list[str] = field(default_factory=list)
    pool: Pool | None = None
    # How many active facts hold each of request.names, in order; None when the search did not count them (it then
    # used no query vector, or it was asked nothing).
    names_held: tuple[int, ...] | None = None



@dataclass(frozen=True)
class Sourced:
    """An aggregate answer and where it came from: `source` names the store that answered ("opensearch",
    or the canonical store's dialect when the mirror could not be trusted, then with the `reason`); None
    when only the canonical store exists. The REST face turns it into its X-Memory-Source header."""

    body: dict[str, Any]
    source: str | None = None
    reason: str | None = None  # "mirror-lagging" | "mirror-unavailable"


class AggregateMirror(Protocol):
    """Answers the summary and the stats from a search backend's mirror, checked against the canonical store
    (`canonical` computes the canonical answer, used when the mirror cannot be trusted)."""

    def query_summary(self, profile: ProfileRef, days: int, canonical: Callable[[], dict[str, Any]]) -> Sourced: ...

    def store_stats(self, profile: ProfileRef, days: int, canonical: Callable[[], dict[str, Any]]) -> Sourced: ...


@dataclass(frozen=True)
class Capabilities:
    """What a search backend offers beyond SearchBackend: declared once by the backend, read once at start-up
    by service.container, which hands each part to whoever uses it (never discovered per request)."""

    # Summary and stats from the backend's own copy (opensearch); None: the canonical store answers them.
    aggregates: AggregateMirror | None = None
    # Builds in-process indexes ahead of the first search (embedded); run in the background by `memory serve`.
    warm: Callable[[], None] | None = None
    # The backend counts a search's names (SearchRequest.names) in the same round trip as the search
    # (opensearch): a search then embeds its query as written and searches again, without the names no active
    # fact holds, only when there are such names -- instead of asking `holding` first, a round trip of its own
    # before every search naming someone. False: `holding` is cheap (in process) and asked first.
    names_with_search: bool = False

    @property
    def mirrored(self) -> bool:
        """The backend keeps a copy of the canonical data elsewhere (aggregates may come from it)."""
        return self.aggregates is not None


class SearchBackend(Protocol):
    name: str
    capabilities: Capabilities

    def search(self, request: SearchRequest) -> SearchHits:
        """Active facts of the profile matching the request, best first, at most request.limit of them."""

    def similar(self, profile_id: int, profile: str, uid: str, limit: int) -> list[Hit]:
        """Active facts most similar to fact `uid` (itself excluded), above the similarity threshold."""

    def closest(self, profile_id: int, profile: str, vectors: np.ndarray) -> np.ndarray:
        """For each row of `vectors` (unit rows), its highest cosine to an active fact of the profile, at least
        0.0 (0.0 when no active fact has a vector): what the store's off-topic level is measured with
        (service.domain.ranking.level). Raises BackendUnavailable when it cannot answer."""

    def holding(self, profile_id: int, profile: str, terms: list[str]) -> tuple[int, ...]:
        """How many active facts of the profile hold each term (the lexical rule's terms, as a pool's term_df
        counts them), in the terms' order: what a search reads to embed its query without the names the store
        never mentions (service.domain.names). Raises BackendUnavailable when it cannot answer."""

    def changed(self, profile_id: int, profile: str) -> None:
        """Called after a transaction that changed facts of the profile committed."""

    def written(self, profile_id: int, fact: ChangedFact, model: str) -> None:
        """Called after a memory_write's transaction committed (before changed()), with the fact as stored: its
        change number, its vector of `model` or None. A backend that caches the store may take it in now
        instead of reading it back; it must still find every change by itself (other writers, other processes)."""

    def forget_queries(self) -> None:
        """Drop the query words kept outside the store (a redaction may have removed them); the indexes' own
        copies of a redacted fact's words follow the store on their own."""

    def logged(self, profile_id: int, profile: str) -> None:
        """Called after a search's query-log row committed (a mirror delivers it off the search's path)."""

    def status(self) -> dict[str, Any]:
        """For /readyz."""

    def close(self) -> None: ...
