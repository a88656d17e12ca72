"""The embedded index's lexical pass: term counts per row, and BM25 computed only for the rows asked for,
equal to FTS5's own score of the OR query for those rows."""

from __future__ import annotations

import numpy as np

from service.search import lexical
from service.search.embedded.index import _BM25_WEIGHTS, IndexedFact, ProfileIndex

FACTS = [
    ("Deploy runbook", "Deploys go through Argo CD; the runbook lives in the platform wiki.", ("deploy", "runbook")),
    ("Billing database", "Invoices live in PostgreSQL 16 on billing-db-1; nightly backups to S3.", ("billing",)),
    ("Search cluster", "search-svc runs OpenSearch 2.19 with three data nodes.", ("search",)),
    ("Deploy freeze", "No deploys on Fridays after 15:00; billing deploys need a second reviewer.", ("deploy",)),
    ("Ticket", "Rate limiting bug tracked in JIRA-4412, deploy blocked until fixed.", ()),
]
QUERIES = ["deploy runbook", "billing deploys friday", "postgresql backups s3 invoices", "JIRA-4412",
           "opensearch data nodes search", "nothing shared here"]


def test_counts_and_bm25_of_the_rows_asked_for() -> None:
    index = ProfileIndex()
    for i, (title, text, tags) in enumerate(FACTS):
        index.upsert(IndexedFact(i + 1, f"u{i}", title, text, "project", tags, True, None))
    for query in QUERIES:
        terms = lexical.informative_terms(query)
        expression = " OR ".join(f'"{t}"' for t in terms)
        expected = {
            rowid - 1: -score
            for rowid, score in index._db.execute(
                "SELECT rowid, bm25(fts, ?, ?, ?) FROM fts WHERE fts MATCH ?", (*_BM25_WEIGHTS, expression)
            )
        }
        counts = index.term_counts(terms)
        for row in range(index.size):
            present = [t for t in terms if index._db.execute(
                "SELECT 1 FROM fts WHERE rowid = ? AND fts MATCH ?", (row + 1, f'"{t}"')).fetchone()]
            assert counts[row] == len(present), (query, row)
        assert sorted(np.nonzero(counts)[0].tolist()) == sorted(expected), query
        # Any subset of the rows: each gets exactly its OR-query score; a row without a match gets 0.
        for rows in (np.arange(index.size), np.nonzero(counts >= 2)[0], np.array([1, 3]), np.array([], dtype=int)):
            scores = index.bm25(terms, rows)
            assert scores.shape == rows.shape
            for row, score in zip(rows.tolist(), scores.tolist()):
                assert score == expected.get(row, 0.0), (query, row)
    index.close()
