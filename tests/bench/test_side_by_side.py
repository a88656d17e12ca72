"""The side-by-side harness (bench/peers/) stays runnable and says what the README's Speed figures say: the same
corpus at every size, the ratio taken on medians against the best peer, and a real run through the client it
installs (our service alone always; against mcp-server-qdrant where setup.sh has installed it)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS_DIR = ROOT / "bench" / "peers"
BASE = Path(os.environ.get("BASE") or Path(os.environ.get("TMPDIR", "/tmp")) / "peers-bench")


def load(name: str) -> ModuleType:
    """bench/peers/ holds scripts run by their own client venv, not a package: load one by its path."""
    spec = importlib.util.spec_from_file_location(f"peers_{name}", PEERS_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_thousand_facts_and_the_queries_are_the_same_at_every_size() -> None:
    corpus = load("corpus")
    thousand, more = corpus.facts(1000), corpus.facts(1500)
    assert more[:1000] == thousand and len({f["text"] for f in more}) == 1500
    queries = corpus.queries()
    assert queries == corpus.queries() and len(queries) == 200
    paraphrases = [q for q in queries if q["kind"] == "paraphrase"]
    assert len(paraphrases) == 100 and sum(q["kind"] == "offtopic" for q in queries) == 100
    by_id = {f["id"]: f for f in thousand}
    assert all(by_id[q["target"]["id"]]["text"] == q["target"]["text"] for q in paraphrases)


def test_the_ratio_is_ours_over_the_best_peer_on_medians() -> None:
    report = load("report")
    rows = [{"n": 1000, "peer": "product", "search_ms_p50": ms, "write_per_s": w} for ms, w in ((6, 90), (8, 99), (30, 10))]
    rows += [{"n": 1000, "peer": "qdrant", "search_ms_p50": ms, "write_per_s": 40} for ms in (16, 20, 18)]
    rows += [{"n": 1000, "peer": "mms", "search_ms_p50": 32, "write_per_s": w} for w in (30, 45, 50)]
    rows += [{"n": 10000, "peer": "qdrant", "search_ms_p50": 30, "write_per_s": 40}]  # no run of ours: no ratio
    ratios = report.ratios(rows)
    assert list(ratios) == [1000]
    search, write = ratios[1000]
    assert search == pytest.approx(8 / 18) and write == pytest.approx(90 / 45)


def side_by_side(tmp_path: Path, n: int, **env: str) -> tuple[str, Path]:
    done = subprocess.run(["bash", str(PEERS_DIR / "side_by_side.sh"), str(n)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, env={**os.environ, "REPS": "1", "BASE": str(BASE),
                                                      "TMPDIR": str(tmp_path), **env})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout, Path(done.stderr.split("results: ")[-1].split()[0])


def lines(results: Path) -> list[dict]:
    return [json.loads(line) for line in results.read_text().splitlines()]


@pytest.mark.model
@pytest.mark.process
def test_side_by_side_measures_our_service_through_the_client_it_installs(tmp_path: Path) -> None:
    out, results = side_by_side(tmp_path, 20, PEERS=" ")
    (ours,) = lines(results)
    assert ours["peer"] == "product" and ours["n"] == 20 and ours["writes"] == 20
    assert ours["write_errors"] == 0 and ours["search_errors"] == 0 and ours["returned_unparsed"] == 0
    assert ours["matched_count_reported"] is True and ours["warmup_write_ok"] is True
    assert ours["search_ms_p50"] > 0 and ours["write_per_s"] > 0 and ours["rss_hwm_mb"] > 0
    assert "| product | default | 20 | 1 |" in out and "ratio n=" not in out  # no peer, no ratio
    assert "per_query" not in ours  # kept only when asked (KEEP_QUERIES=1)


@pytest.mark.model
@pytest.mark.process
def test_side_by_side_prints_the_ratio_against_mcp_server_qdrant(tmp_path: Path) -> None:
    if not (BASE / "venv-qdrant" / "bin" / "mcp-server-qdrant").exists():
        pytest.skip(f"mcp-server-qdrant is not installed at {BASE} (bash bench/peers/setup.sh {BASE} installs it)")
    out, results = side_by_side(tmp_path, 20, PEERS="qdrant", KEEP_QUERIES="1")
    rows = lines(results)
    assert sorted(r["peer"] for r in rows) == ["product", "qdrant"]
    assert all(len(r["per_query"]) == 200 for r in rows)
    assert all(r["write_errors"] == 0 and r["search_errors"] == 0 for r in rows)
    ratio = [line for line in out.splitlines() if line.startswith("ratio n=20 ")]
    assert len(ratio) == 1 and "search_p50=" in ratio[0] and "write=" in ratio[0]
    by_kind = subprocess.run([sys.executable, "bench/search_by_kind.py", str(results)], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
    assert by_kind.returncode == 0 and "offtopic" in by_kind.stdout, by_kind.stdout + by_kind.stderr
