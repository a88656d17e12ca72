"""Recall on conversations, through the running service's MCP tools: LoCoMo's conversations written with
memory_write, its questions asked with memory_search, as an agent would.

    python bench/conversational.py --locomo PATH/locomo10.json                       # observations, embedded
    python bench/conversational.py --locomo PATH/locomo10.json --store turns         # one fact per chat turn
    python bench/conversational.py --locomo PATH/locomo10.json --backend opensearch --opensearch-url URL
    python bench/conversational.py --locomo PATH/REALTALK/data --store turns-bare    # chats never fitted on

LoCoMo is fetched from its repository (github.com/snap-research/locomo, data/locomo10.json, or the older
data/locomo10.zip: bench/lib/locomo.py reads both alike), never part of this one; the run prints its sha256.
REALTALK (github.com/danny911kr/REALTALK: real chats between two people over three weeks, by LoCoMo's authors)
is read from its data/ directory the same way (the turn stores only; the sha256 is that of its chats in order):
nothing is fitted on it, so it shows how the fitted weights carry to chats they never saw.
The run starts `memory serve` on a fresh data directory (embedded, or mirrored into the given cluster under a
prefix of its own, removed afterwards), makes one profile and token per conversation, writes the conversation's
facts (bench/lib/locomo.py: title = the first 80 characters, kind user, tag = the speaker) and asks every
answerable question (categories 1-4) and this repository's off-topic and nonsense questions
(bench/data/conversational/offtopic.jsonl) with limit 10, through the MCP SDK's client.

Printed, for the fit half (conversations at even positions: what bench/fit_ranking.py fits on), the report half
and all: R@1/5/10, nDCG@10 and MRR@10 per category and for 1-4 (the headline; relevant = facts whose evidence
turns meet the question's), the share of off-topic and of nonsense questions answered with matched_count 0, and
of answerable ones with matched_count >= 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.lib import locomo, opensearch, ranking_metrics  # noqa: E402
from bench.lib.mcp import call, mcp_client  # noqa: E402
from bench.lib.server import served  # noqa: E402
from service.config import Settings  # noqa: E402
from service.container import build_services  # noqa: E402


async def run_conversation(base_url: str, conversation: locomo.Conversation, token: str) -> list[dict[str, Any]]:
    """Write the conversation, ask its questions and the off-topic ones; one row per question."""
    profile = f"conv-{conversation.index}"
    rows = []
    async with mcp_client(base_url, profile, token) as client:
        uids = []
        for fact in conversation.facts:
            written = await call(client, "memory_write", title=fact["title"], text=fact["text"], kind=fact["kind"],
                                 tags=fact["tags"])
            uids.append(written["fact"]["uid"])
        for question in locomo.questions(conversation, uids) + locomo.offtopic():
            found = await call(client, "memory_search", query=question.text, limit=10)
            rows.append({"half": conversation.half, "question": question, "matched": found["matched_count"],
                         "ranked": [f["uid"] for f in found["facts"]]})
    return rows


def report(rows: list[dict[str, Any]], label: str, categories: dict[int, str]) -> None:
    for half in ("fit", "report", "all"):
        chosen = [r for r in rows if half == "all" or r["half"] == half]
        metrics = [(int(r["question"].category), ranking_metrics.of(r["ranked"], r["question"].relevant))
                   for r in chosen if r["question"].answerable]
        print(f"\n{label}: {'all conversations' if half == 'all' else half + ' half'}")
        print("\n".join(ranking_metrics.table(metrics, categories)))
        for kind in ("offtopic", "nonsense"):
            zero = [r["matched"] == 0 for r in chosen if r["question"].category == kind]
            print(f"  {kind} questions answered with matched_count 0: {np.mean(zero):.1%} ({sum(zero)}/{len(zero)})")
        some = [bool(r["matched"]) for r in chosen if r["question"].answerable]
        print(f"  answerable questions with matched_count >= 1: {np.mean(some):.1%} ({sum(some)}/{len(some)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, required=True,
                        help="LoCoMo's data/locomo10.json (or the older data/locomo10.zip), or REALTALK's data/")
    parser.add_argument("--store", choices=locomo.STORES, default="observations")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N (a quick run)")
    parser.add_argument("--backend", choices=["embedded", "opensearch"], default="embedded")
    parser.add_argument("--opensearch-url", default=None, help="the cluster (`make opensearch` starts one)")
    args = parser.parse_args()
    if args.backend == "opensearch" and not args.opensearch_url:
        parser.error("--backend opensearch needs --opensearch-url")
    if args.locomo.is_dir() and args.store == "observations":
        parser.error("REALTALK has no observations: --store turns, turns-named or turns-bare")
    print(f"{'REALTALK' if args.locomo.is_dir() else 'LoCoMo'} {args.locomo} sha256 {locomo.sha256(args.locomo)}; store {args.store}; backend {args.backend}")
    conversations = locomo.load(args.locomo, args.store)[: args.conversations]
    prefix = opensearch.prefix(None, "conversational")
    env = {"MEMORY_EMBEDDER": "minilm"}
    if args.backend == "opensearch":
        env.update(MEMORY_SEARCH="opensearch", MEMORY_OPENSEARCH_URL=args.opensearch_url,
                   MEMORY_OPENSEARCH_PREFIX=prefix)
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            with build_services(Settings(data_dir=Path(tmp), embedder="none")) as services:  # profiles, tokens
                tokens = {}
                for conversation in conversations:
                    services.profiles.create(f"conv-{conversation.index}")
                    tokens[conversation.index] = services.profiles.issue_token(f"conv-{conversation.index}").token
            with served(Path(tmp), env, warm_search=args.backend) as (base_url, _pid):
                for conversation in conversations:
                    asked = asyncio.run(run_conversation(base_url, conversation, tokens[conversation.index]))
                    rows += asked
                    print(f"  conversation {conversation.index}: {len(conversation.facts)} facts written, "
                          f"{len(asked)} questions asked", flush=True)
    finally:
        if args.backend == "opensearch":
            opensearch.remove(args.opensearch_url, prefix)
    print(f"{len(rows)} searches in {time.perf_counter() - started:.0f} s")
    report(rows, f"{args.store}, {args.backend}", locomo.categories(args.locomo))


if __name__ == "__main__":
    main()
