"""The OpenSearch mirror (MEMORY_SEARCH=opensearch): PostgreSQL stays canonical, OpenSearch serves search and
aggregations. Only this package imports opensearchpy; its errors leave it as service.errors.BackendUnavailable.

Modules, one job each:
- templates: loads index_templates/*.json and renders them for this deployment (names, shards, dimension);
- queries, aggregations: pure request-body builders (asserted as JSON by the tests);
- documents: canonical rows -> index documents and bulk actions;
- client: the client and the error translation; health: the circuit that keeps a dead cluster off the request path;
- indices: template/pipeline install, per-profile versioned indices behind aliases, alias swaps;
- mirror: outbox delivery (external versions), backfill, lag; worker: the background drain;
- upkeep: the cluster fit to serve (checks, install, indices), deliveries now and in the worker's cycles,
  facts still without a vector, the cluster's health and each profile's backoff (backoff);
- searcher: hybrid / BM25 search and similar(); summary: summary and stats checked against the canonical store;
- maintenance: `memory reindex` and `memory check` in opensearch mode;
- backend: OpenSearchBackend, the SearchBackend composed of searcher, upkeep and summary, with the lexical
  fallback from the canonical store when the cluster cannot answer.
"""
