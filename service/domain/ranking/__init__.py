"""The second ranking stage: one rule over either backend's candidates (docs/reviewers.md "Hybrid ranking").

A backend hands over a pool of candidates -- its best facts by meaning (cosine >= MEMORY_MIN_SIMILARITY) and by
words (the lexical rule), MEMORY_RERANK_DEPTH of each -- with each candidate's cosine, whether it matched by words
or by meaning, its token vectors, and the pool's counts. Here, the same for both backends:

- features.py turns query and pool into one row of numbers per candidate (cosine and late interaction, a BM25
  computed here from the facts' words, the query's words and names the fact holds, where it was written among
  the others, ...) and a few numbers of the query as a whole;
- weights.py reads the fitted weights (weights.json, written by bench/fit_ranking.py: a linear model per stage,
  fitted on half of a public conversational benchmark and reported on the other half, docs/benchmarks.md);
- stage.py applies them: "does memory know?" (the gate: when it says no, nothing matched -- matched_count 0),
  then the order of the matched candidates.
"""
