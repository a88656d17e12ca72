"""The embedded index's lexical pass: term counts per row, and BM25 computed only for the rows asked for,
equal to FTS5's own score of the OR query for those rows."""

from __future__ import annotations

import numpy as np

from service.domain import lexical
from service.domain.ports.sources import ChangedFact
from service.search.embedded import ranking
from service.search.embedded.index import ProfileIndex
from service.search.embedded.postings import WEIGHTS

def indexed(fact_id: int, uid: str, title: str, text: str, kind: str, tags: tuple[str, ...], active: bool,
            vector: np.ndarray | None, present: bool = True) -> ChangedFact:
    return ChangedFact(fact_id=fact_id, uid=uid, title=title, text=text, kind=kind, tags=tags, active=active,
                       present=present, vector=vector, change_seq=fact_id)


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
        index.upsert(indexed(i + 1, f"u{i}", title, text, "project", tags, True, None))
    for query in QUERIES:
        terms = lexical.informative_terms(query)
        expression = " OR ".join(f'"{t}"' for t in terms)
        expected = {
            rowid - 1: -score
            for rowid, score in index._db.execute(
                "SELECT rowid, bm25(fts, ?, ?, ?) FROM fts WHERE fts MATCH ?", (*WEIGHTS, expression)
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


# --- the numpy postings stay equal to FTS5 through every kind of write ---------------------------------------

WORDS = ["deploy", "deploys", "deploying", "runbook", "billing", "café", "cafe", "Zürich", "queue", "queues",
         "postgres", "backup", "nightly", "friday", "review", "JIRA", "4412", "ab\u19b0cd", "\u19b0", "x"]


def _fts_counts(index: ProfileIndex, terms: list[str]) -> np.ndarray:
    counts = np.zeros(index.size, dtype=np.int32)
    for term in terms:
        for (rowid,) in index._db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (f'"{term}"',)):
            counts[rowid - 1] += 1
    return counts


def _fts_scores(index: ProfileIndex, terms: list[str]) -> dict[int, float]:
    expression = " OR ".join(f'"{t}"' for t in terms)
    return {rowid - 1: -score for rowid, score in index._db.execute(
        "SELECT rowid, bm25(fts, ?, ?, ?) FROM fts WHERE fts MATCH ?", (*WEIGHTS, expression))}


def _random_fact(rng: np.random.Generator, fact_id: int, present: bool = True) -> ChangedFact:
    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS, size=n).tolist())
    tags = tuple(sorted(set(rng.choice(["deploy", "billing", "c++", "#ops", "queue"], size=rng.integers(0, 3)).tolist())))
    return indexed(fact_id, f"u{fact_id}", words(int(rng.integers(1, 4))), words(int(rng.integers(3, 25))),
                       "project", tags, bool(rng.random() < 0.8), None, present)


def test_postings_equal_fts5_through_writes_rewrites_status_changes_and_redactions() -> None:
    rng = np.random.default_rng(5)
    index = ProfileIndex()
    facts = {i: _random_fact(rng, i) for i in range(1, 41)}
    for fact in facts.values():
        index.upsert(fact)
    for round_ in range(12):
        for _ in range(6):  # searches: words are read into postings as queries first need them
            terms = lexical.informative_terms(" ".join(rng.choice(WORDS, size=int(rng.integers(1, 5))).tolist()))
            counts = index.term_counts(terms)
            assert np.array_equal(counts, _fts_counts(index, terms)), (round_, terms)
            expected = _fts_scores(index, terms) if terms else {}
            rows = np.nonzero(counts)[0]
            assert index.bm25(terms, rows).tolist() == [expected[r] for r in rows.tolist()], (round_, terms)
        assert index._postings, "searches built postings"
        for _ in range(5):  # writes of every kind, after postings exist
            fact_id = int(rng.integers(1, len(facts) + 8))
            kind = rng.choice(["new", "rewrite", "status", "redact"])
            old = facts.get(fact_id)
            if old is None or kind == "new":
                fact_id = len(facts) + 1
                facts[fact_id] = _random_fact(rng, fact_id)
            elif kind == "rewrite":
                facts[fact_id] = _random_fact(rng, fact_id, present=old.present)
            elif kind == "status":
                facts[fact_id] = indexed(old.fact_id, old.uid, old.title, old.text, old.kind, old.tags,
                                             not old.active, None, old.present)
            else:
                facts[fact_id] = indexed(old.fact_id, old.uid, old.title, old.text, old.kind, old.tags,
                                             old.active, None, False)
            index.upsert(facts[fact_id])
    index.close()


def test_a_query_word_fts5_splits_is_a_phrase_and_a_word_it_drops_matches_nothing() -> None:
    index = ProfileIndex()
    index.upsert(indexed(1, "u1", "ab cd", "deploy notes", "project", (), True, None))
    index.upsert(indexed(2, "u2", "cd ab", "deploy ab", "project", (), True, None))
    terms = ["ab\u19b0cd", "deploy", "\u19b0"]  # U+19B0: a letter to Python, a separator to unicode61 (Unicode 6.1)
    assert index.term_counts(terms).tolist() == [2, 1]
    expected = _fts_scores(index, terms)
    assert index.bm25(terms, np.array([0, 1])).tolist() == [expected[0], expected[1]]
    index.close()


def test_a_redacted_facts_words_leave_the_index_memory_not_only_its_answers() -> None:
    """FTS5 keeps a deleted row's words in its segments until they merge; the index merges them at once."""
    index = ProfileIndex()
    filler = [indexed(i, f"u{i}", f"title {i}", f"deploy notes number {i} billing", "project", (), True, None)
              for i in range(1, 80)]
    secret = indexed(100, "s", "vault token", "the password is zzqsecretvalue for now", "project", (), True, None)
    for fact in filler[:40] + [secret] + filler[40:]:
        index.upsert(fact)
    assert index.term_counts(["zzqsecretvalue", "deploy"]).sum() == 80  # postings built: writes tokenize
    index.upsert(indexed(100, "s", secret.title, secret.text, "project", (), False, None, present=False))
    memory = index._db.serialize()
    assert b"zzqsecretvalu" not in memory and b"password" not in memory
    assert "zzqsecretvalu" not in str(index._postings._built.keys())
    assert "zzqsecretvalue" not in index._tokenizer._stems  # the query terms seen before are dropped
    assert index.term_counts(["zzqsecretvalue"]).sum() == 0
    assert "zzqsecretvalu" not in str(index._postings._built.keys())  # a word no fact holds is not kept
    index.close()


def test_the_top_list_is_a_stable_sort_of_every_row_cut_to_depth() -> None:
    """ranking.best sorts only the rows at or above the depth-th best score; its list is the first `depth` of a
    stable sort of all of them, ties (many here: scores of few distinct values) in row order."""
    rng = np.random.default_rng(5)
    for size, depth in [(1, 1), (5, 10), (50, 10), (400, 40), (1000, 1), (1000, 999), (1000, 1000)]:
        for scores in (rng.integers(0, 4, size).astype(np.float32), rng.random(size).astype(np.float32),
                       np.zeros(size, dtype=np.float64)):
            rows = np.sort(rng.choice(10 * size, size, replace=False))
            everything = np.argsort(-scores, kind="stable")[:depth]
            expected = [(int(rows[i]), float(scores[i])) for i in everything]
            assert list(ranking.best(rows, scores, depth).items()) == expected
