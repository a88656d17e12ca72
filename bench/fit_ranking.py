"""Fit the second ranking stage's weights (service/domain/ranking/weights.json) on LoCoMo, report them honestly.

    python bench/fit_ranking.py --locomo PATH/locomo10.json            # fit and report; writes nothing
    python bench/fit_ranking.py --locomo PATH/locomo10.json --write    # also writes weights.json
    python bench/fit_ranking.py --locomo PATH/locomo10.json --gate-only --write   # the shipped ranker kept

LoCoMo is fetched from its repository (github.com/snap-research/locomo, data/locomo10.json, or the older
data/locomo10.zip: bench/lib/locomo.py reads both alike), never part of this one; the run prints its sha256.
Each conversation goes into its own profile of an in-process service twice (bench/lib/locomo.py: its
observations, and its chat turns), its questions and this repository's off-topic and nonsense questions are
searched, and each search's pool is read as the stage reads it (SearchService.candidates: the same code as
memory_search). Conversations at even positions (and off-topic questions at even positions) are the fit half;
everything is also reported on the other half and overall:

- the ranker: a linear score per candidate, fitted listwise (bench/lib/fitting.py) on the answerable questions'
  matched candidates, relevant = facts whose evidence turns meet the question's -- on observations and turns
  (locomo.RANKER_STORES) and the labelled set; `--gate-only` keeps the shipped ranker instead;
- the gate: logistic regression over the query's numbers (features.QUERY; the closest cosine is read above the
  store's off-topic level, service/domain/ranking/level.py, which each profile's first search measures: the
  collection prints it per store) of every store (bare turns too, where a question about a person meets turns
  that never name anyone), answerable questions against off-topic ones, then
  shifted so that no store's fit half loses more than 1 % of its answerable questions to it (a store with
  fewer than 100 loses none), and the labelled set of bench/data/retrieval (a curated store, the regression
  guard: its fit half is fitted on like the others) none of its answerable ones at all -- honesty must not cost
  recall.
Both come twice: with late interaction (token vectors) and without (the "plain" weights).

`--unseen PATH/REALTALK/data` also writes REALTALK's chats (real chats, never fitted on) as the turn stores of
--stores, searches them the same way and reports them over all their chats, labelled `unseen-<store>`: how the
weights carry to chats they did not see, in the same run (nothing of them reaches the fit).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.lib import fitting, locomo, ranking_metrics  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import build_services  # noqa: E402
from service.domain.ranking import features, stage  # noqa: E402
from service.domain.ranking import weights as stored  # noqa: E402
from service.domain.search import Staged  # noqa: E402

UNSEEN = "unseen-"  # the label of a store of --unseen chats (reported, never fitted on)
MARGIN = 0.01  # kept above the last question the shift lets through (the last float digit must not decide)
LOSE = 0.01  # the share of a store's answerable questions (fit half) the gate may turn away, at most


@dataclass
class Searched:
    store: str
    half: str
    question: locomo.Question
    staged: Staged | None  # None: nothing active matched (or the query could not be read)
    matched_count: int | None


def collect(services: Any, store: str, conversations: list[locomo.Conversation], *, unseen: bool = False
            ) -> list[Searched]:
    """Every search of the conversations, each with its half; `unseen`: none (reported, never fitted on)."""
    out = []
    for conversation in conversations:
        profile = services.profiles.create(f"{store}-{conversation.index}")
        uids = [services.facts.write(profile, title=f["title"], text=f["text"], kind=f["kind"], tags=f["tags"])
                .fact.uid for f in conversation.facts]
        asked = locomo.questions(conversation, uids) + locomo.offtopic()
        halves = {q.text: h for h in ("fit", "report") for q in locomo.offtopic(h)}
        for question in asked:
            found, staged = services.search.candidates(profile, question.text, limit=10)
            half = "" if unseen else conversation.half if question.answerable else (
                halves[question.text] if halves[question.text] == conversation.half else "")
            out.append(Searched(store, half, question, staged, found.matched_count))
        print(f"  {store} conversation {conversation.index}: {len(conversation.facts)} facts, "
              f"{len(asked)} questions, off-topic level {services.search.levels.last(profile.id):.3f}", flush=True)
    return out


def collect_labelled(services: Any) -> list[Searched]:
    """The labelled set (bench/data/retrieval: a curated engineering store) as a third store: its queries and
    unanswerable ones at even positions are fit, at odd ones reported, so the stage holds on curated stores too."""
    data = ROOT / "bench" / "data" / "retrieval"
    load = lambda name: [json.loads(l) for l in (data / name).read_text(encoding="utf-8").splitlines() if l.strip()]
    profile = services.profiles.create("labelled")
    uid_of = {f["id"]: services.facts.write(profile, title=f["title"], text=f["text"], kind=f["kind"],
                                            tags=f["tags"]).fact.uid for f in load("facts.jsonl")}
    out = []
    asked = [locomo.Question(q["query"], 4, {uid_of[r] for r in q["relevant"]}) for q in load("queries.jsonl")] + \
        [locomo.Question(q["query"], q["style"]) for q in load("offtopic.jsonl")]  # offtopic, nonsense, near-miss
    for i, question in enumerate(asked):
        found, staged = services.search.candidates(profile, question.text, limit=10)
        out.append(Searched("labelled", "fit" if i % 2 == 0 else "report", question, staged, found.matched_count))
    print(f"  labelled set: {len(uid_of)} facts, {len(asked)} questions, "
          f"off-topic level {services.search.levels.last(profile.id):.3f}", flush=True)
    return out


def rows_of(s: Searched, late: bool) -> features.Rows | None:
    if s.staged is None or not s.staged.pool.candidates:
        return None
    if late and not stage.uses_late(s.staged.query, s.staged.pool):
        return None
    return features.rows(s.staged.query, s.staged.pool, s.staged.facts, late=late)


def fit(searched: list[Searched], late: bool, ranker_stores: tuple[str, ...] = locomo.RANKER_STORES
        ) -> tuple[stored.Linear, stored.Linear]:
    groups, group_stores, gate_rows, gate_labels, gate_stores = [], [], [], [], []
    guard: list[list[float]] = []  # the labelled set's answerable questions, all of them: the gate loses none
    for s in searched:
        if s.store == "labelled" and s.question.answerable and (numbers := rows_of(s, late)) is not None \
                and s.staged is not None and not stage.holds_every_term(s.staged.query, numbers, [
                    i for i, c in enumerate(s.staged.pool.candidates) if c.by_words or c.by_meaning]):
            guard.append([numbers.query[n] for n in stored.expected_features("gate", late)])
        if s.half != "fit":
            continue
        numbers = rows_of(s, late)
        if numbers is None:
            continue
        assert s.staged is not None
        matched = [i for i, c in enumerate(s.staged.pool.candidates) if c.by_words or c.by_meaning]
        # the gate decides only where no candidate holds every term; near misses (in-domain questions the store
        # does not answer: bench/data/retrieval) are not what it is for
        if not stage.holds_every_term(s.staged.query, numbers, matched) and s.question.category != "near-miss" \
                and not stage.only_questions(s.staged.pool, numbers):
            gate_rows.append([numbers.query[n] for n in stored.expected_features("gate", late)])
            gate_labels.append(1.0 if s.question.answerable else 0.0)
            gate_stores.append(s.store)
        if s.question.answerable and s.store in (*ranker_stores, "labelled"):
            relevant = np.array([s.staged.pool.candidates[i].uid in s.question.relevant for i in matched], float)
            groups.append((numbers.candidates[matched], relevant))
            group_stores.append(s.store)
    mean, scale, weights = fitting.listwise(groups, group_stores, balance=0.5)
    ranker = stored.Linear(stored.expected_features("ranker", late), mean, scale, weights, 0.0)
    rows, labels, stores = np.array(gate_rows), np.array(gate_labels), np.array(gate_stores)
    names = stored.expected_features("gate", late)
    mean, scale, weights, bias = fitting.logistic(rows, labels, gate_stores)
    gate = stored.Linear(names, mean, scale, weights, bias)
    guarded = np.array(guard).reshape(-1, len(names))
    # shifted so that no store loses more than LOSE of its answerable questions that reach the gate (rounded
    # down: a store with fewer than 1 / LOSE of them loses none), and the labelled set none
    shift = max(0.0, -float(gate.score(guarded).min())) if guard else 0.0
    for store in set(gate_stores):
        kept = np.sort(gate.score(rows[(labels == 1) & (stores == store)]))
        shift = max(shift, -float(kept[int(LOSE * len(kept))]))
    return ranker, stored.Linear(names, mean, scale, weights, bias + shift + MARGIN)


def shipped_ranker() -> tuple[stored.Linear, stored.Linear, str]:
    """The shipped ranker (late, plain) and how it was fitted -- read alone: the file's gate may be one of other
    numbers than the code's (the gate being what is refitted)."""
    raw = json.loads(stored.WEIGHTS_FILE.read_text(encoding="utf-8"))
    late, plain = (stored.Linear.of(raw["ranker"][kind], stored.expected_features("ranker", kind == "late"),
                                    f"ranker.{kind}") for kind in ("late", "plain"))
    was = raw.get("fitted", {})
    how = str(was.get("ranker", f"fitted on {', '.join(was.get('stores', locomo.RANKER_STORES))} of "
                                f"{was.get('data', '?')}")).removeprefix("kept: ")
    return late, plain, f"kept: {how}"


def report(searched: list[Searched], weights: stored.Weights, label: str) -> dict[str, Any]:
    """The stage's answers as memory_search gives them (matched candidates, limit 10), by half and store."""
    figures: dict[str, Any] = {}
    for store in sorted({s.store for s in searched}):
        unseen = store.startswith(UNSEEN)
        for half in ("all",) if unseen else ("fit", "report", "all"):
            chosen = [s for s in searched if s.store == store and (half == "all" or s.half == half)
                      and (s.half or half == "all")]
            rows, knows = [], {"answerable": [], "offtopic": [], "nonsense": [], "near-miss": []}
            for s in chosen:
                order: list[str] = []
                matched = bool(s.matched_count)
                if s.staged is not None and s.staged.pool.candidates:
                    ranked = stage.rank(weights, s.staged.query, s.staged.pool, s.staged.facts)
                    matched = ranked.knows
                    order = [s.staged.pool.candidates[i].uid for i, _ in ranked.order[:10]]
                key = "answerable" if s.question.answerable else str(s.question.category)
                knows[key].append(matched)
                if s.question.answerable:
                    rows.append((int(s.question.category), ranking_metrics.of(order, s.question.relevant)))
            print(f"\n{label}, {store}, {half} half" if half != "all" else f"\n{label}, {store}, all conversations")
            categories = locomo.REALTALK_CATEGORIES if unseen else locomo.CATEGORIES
            print("\n".join(ranking_metrics.table(rows, categories)))
            shares = {k: float(np.mean(v)) for k, v in knows.items() if v}
            print(f"  answerable with >= 1 match {shares.get('answerable', float('nan')):.3f}; "
                  f"off-topic with 0 {1 - shares.get('offtopic', float('nan')):.3f}; "
                  f"nonsense with 0 {1 - shares.get('nonsense', float('nan')):.3f}"
                  + (f"; near-miss with 0 {1 - shares['near-miss']:.3f}" if "near-miss" in shares else ""))
            figures[f"{store}/{half}"] = {"R@5": round(ranking_metrics.mean(rows), 4),
                                          "answerable_matched": round(shares.get("answerable", 0.0), 4),
                                          "offtopic_zero": round(1 - shares.get("offtopic", 1.0), 4)}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, required=True,
                        help="LoCoMo's data/locomo10.json (or the older data/locomo10.zip)")
    parser.add_argument("--stores", default=",".join(locomo.FITTED_STORES),
                        help=f"of {', '.join(locomo.STORES)} (default: {','.join(locomo.FITTED_STORES)})")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N (a quick run)")
    parser.add_argument("--depth", type=int, default=Settings().rerank_depth,
                        help="MEMORY_RERANK_DEPTH of the searches (default: the setting's default)")
    parser.add_argument("--gate-only", action="store_true",
                        help="fit the gate only; the ranker is the shipped one (service/domain/ranking/weights.json)")
    parser.add_argument("--write", action="store_true", help=f"write {stored.WEIGHTS_FILE.relative_to(ROOT)}")
    parser.add_argument("--searches", type=Path, default=None,
                        help="keep the collected searches in this file, and read them from it when it exists (a "
                             "refit after a change of features.py then takes seconds; delete it when the pools "
                             "change)")
    parser.add_argument("--unseen", type=Path, default=None,
                        help="REALTALK's data/ directory: its chats as the turn stores of --stores, searched and "
                             "reported, never fitted on")
    args = parser.parse_args()
    if args.unseen is not None and not args.unseen.is_dir():
        parser.error(f"--unseen {args.unseen}: not a directory (REALTALK's data/, which holds Chat_N_A_B.json)")
    if args.locomo.is_dir():
        parser.error(f"{args.locomo} is a directory (REALTALK?): nothing is fitted on REALTALK, only on LoCoMo")
    data_sha = locomo.sha256(args.locomo)
    print(f"LoCoMo {args.locomo} sha256 {data_sha}")
    unseen_sha = None if args.unseen is None else locomo.sha256(args.unseen)
    if args.unseen is not None:
        print(f"REALTALK {args.unseen} sha256 {unseen_sha} (reported, never fitted on)")
    started = time.perf_counter()
    searched: list[Searched] = []
    if args.searches is not None and args.searches.exists():
        searched = pickle.loads(args.searches.read_bytes())
    else:
        with tempfile.TemporaryDirectory() as tmp, \
                build_services(Settings(data_dir=Path(tmp), embedder="minilm", rerank_depth=args.depth),
                               ranking=stored.neutral()) as svc:
            for store in args.stores.split(","):
                searched += collect(svc, store, locomo.load(args.locomo, store)[: args.conversations])
            searched += collect_labelled(svc)
            if args.unseen is not None:
                for store in (s for s in args.stores.split(",") if s != "observations"):  # REALTALK has none
                    searched += collect(svc, UNSEEN + store, locomo.load(args.unseen, store)[: args.conversations],
                                        unseen=True)
        if args.searches is not None:
            args.searches.write_bytes(pickle.dumps(searched))
    print(f"collected {len(searched)} searches in {time.perf_counter() - started:.0f} s")
    if args.unseen is not None and not any(s.store.startswith(UNSEEN) for s in searched):
        print(f"note: {args.searches} holds no --unseen searches (collected without it): delete it to collect them")
    ranker_late, gate_late = fit(searched, late=True)
    ranker_plain, gate_plain = fit(searched, late=False)
    fitted = {"by": "bench/fit_ranking.py", "data": f"LoCoMo {args.locomo.name} sha256 {data_sha}",
              "stores": args.stores.split(","), "fit_half": "conversations and off-topic questions at even positions",
              "gate_may_lose": LOSE,
              "ranker": f"fitted on {', '.join(s for s in locomo.RANKER_STORES if s in args.stores.split(','))}"}
    if unseen_sha is not None:
        fitted["unseen"] = f"REALTALK sha256 {unseen_sha}: reported (unseen-*), never fitted on"
    if args.gate_only:
        ranker_late, ranker_plain, fitted["ranker"] = shipped_ranker()
    weights = stored.Weights(ranker_late, ranker_plain, gate_late, gate_plain, fitted)
    figures = report(searched, weights, "fitted")
    for name, linear in (("ranker (late)", ranker_late), ("gate (late)", gate_late)):
        print(f"\n{name}: " + ", ".join(f"{n} {w / s:+.3f}" for n, w, s in zip(linear.features, linear.weights,
                                                                               linear.scale)))
    if args.write:
        weights.fitted["report"] = figures
        stored.WEIGHTS_FILE.write_text(json.dumps(weights.to_dict(), indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {stored.WEIGHTS_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
