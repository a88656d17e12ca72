"""The benchmarks stay runnable: each one, on a tiny input, exits 0 and prints its tables (the figures
themselves are never asserted -- they go in docs/benchmarks.md from full runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.domain.ranking import weights as w
from tests.support.clusters import Cluster, new_prefix, remove_prefix

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("client", ["sdk", "raw"])
def test_search_latency_runs(client: str) -> None:
    out = run("bench/search_latency.py", "--sizes", "40", "--queries", "6", "--repeated", "2", "--writes", "1",
              "--embedder", "none", "--client", client)
    assert "memory_search / memory_write over MCP HTTP" in out and "search (distinct)" in out
    assert ("SDK's client" if client == "sdk" else "JSON-RPC POSTs") in out


@pytest.mark.model
def test_retrieval_runs() -> None:
    out = run("bench/retrieval.py")
    assert "hybrid (served)" in out and "zero-match rate" in out


@pytest.mark.model
def test_precision_ab_runs() -> None:
    """fp32 and int8 on the labelled set, paired: every metric row with both means and an interval."""
    out = run("bench/precision_ab.py", "--resamples", "200")
    assert "145 answerable and 98 unanswerable queries" in out
    for metric in ("hybrid (served) recall@5", "hybrid (served) nDCG@10", "vectors only nDCG@10",
                   "answerable with 0 matches", "unanswerable with 0 matches"):
        row = next(line for line in out.splitlines() if line.startswith(metric))
        assert "[" in row and row.rstrip().endswith(("within noise", "int8 higher", "int8 lower"))


@pytest.mark.model
def test_embedder_bench_runs() -> None:
    out = run("bench/embedder.py", "--queries", "5", "--docs", "8", "--threads", "1")
    assert "threads=1 shipped graph" in out and "threads=1 weights inside" in out  # before/after, one run
    assert "threads=1 in turn, one process" in out
    assert "vs sentence-transformers fixture: max |diff|" in out
    assert "fresh data dir" in out and "second start, same data dir" in out and "ready after" in out


@pytest.mark.model
def test_embedder_pool_bench_runs() -> None:
    out = run("bench/embedder_pool.py", "--texts", "12", "--rounds", "1")
    for kind in ("queries", "facts"):
        for pool in ("sleep", "spin in run (service)", "spin on"):
            row = next(line for line in out.splitlines() if line.startswith(kind) and f" {pool} " in line)
            p50, p90, cpu = (float(figure) for figure in row.split()[-3:])
            assert 0 < p50 <= p90 and cpu > 0


@pytest.mark.model
def test_breakdown_runs() -> None:
    out = run("bench/breakdown.py", "--sizes", "30", "--calls", "5")
    assert "memory_search at 30 facts" in out and "memory_write at 30 facts" in out
    assert "HTTP + MCP framing" in out and "query-log write" in out
    assert "client round trip by answer" in out and "no fact: memory does not know" in out


@pytest.mark.model
@pytest.mark.parametrize("cut", ["push", "lean", "similar"])
def test_write_ab_runs(cut: str) -> None:
    out = run("bench/write_ab.py", "--cut", cut, "--sizes", "20", "--rounds", "2", "--calls", "2")
    assert f"memory_write at 20 facts, cut '{cut}'" in out
    assert "server - embed" in out and "HTTP + MCP framing" in out and "on - off, paired" in out


@pytest.mark.model
def test_peer_breakdown_runs() -> None:
    """The peer's timers must really wrap its layers: a zero embed or upsert would mean a part went untimed."""
    base = Path(os.environ.get("BASE") or Path(os.environ.get("TMPDIR", "/tmp")) / "peers-bench")
    if not (base / "venv-qdrant" / "bin" / "python").exists():
        pytest.skip(f"the side-by-side's peer is not installed at {base} (bash bench/peers/setup.sh installs it)")
    out = run("bench/peer_breakdown.py", "--sizes", "20", "--calls", "5")
    assert "memory_search at 20 facts" in out and "memory_write at 20 facts" in out
    find = _parts(out, "mcp-server-qdrant qdrant-find at 20 facts", "mcp-server-qdrant qdrant-store")
    store = _parts(out, "mcp-server-qdrant qdrant-store at 20 facts", "memory_search at 20 facts")
    assert find["embed query"] > 0 and find["query points"] > 0 and find["connector search"] > find["embed query"]
    assert store["embed"] > 0 and store["upsert"] > 0 and store["connector store"] > store["embed"]
    assert find["HTTP + MCP framing"] > 0 and store["HTTP + MCP framing"] > 0


def _parts(out: str, start: str, end: str) -> dict[str, float]:
    section = out[out.index(start):out.index(end)]
    return {line[:36].strip(): float(line[36:]) for line in section.splitlines()
            if line.startswith("  ") and line[36:].strip().replace(".", "", 1).lstrip("-").isdigit()}


@pytest.mark.model
def test_floor_runs() -> None:
    out = run("bench/floor.py", "--facts", "20", "--calls", "5")
    assert "round trip" in out and "query embed" in out and "fact embed" in out
    assert "memory_search" in out and "memory_write" in out and "above the floor" in out


def credentials(cluster: Cluster) -> dict[str, str]:
    """The cluster's user, password and CA as the service reads them (the benchmarks pass them on)."""
    return {k: v for k, v in cluster.env("unused").items() if k not in ("MEMORY_OPENSEARCH_PREFIX",
                                                                         "MEMORY_OPENSEARCH_URL")}


@pytest.fixture
def bench_prefix(real_opensearch: Cluster) -> Iterator[str]:
    """The prefix a benchmark builds its deployments' prefixes on; the tests' admin removes what the service's
    least-privilege user may not (templates, pipelines)."""
    base = new_prefix()
    yield base
    for part in ("30", "retrieval", "a1", "b1", "anatomy"):
        remove_prefix(real_opensearch, f"{base}-{part}")


@pytest.mark.opensearch
@pytest.mark.one_version  # a timing script: the searches it times are the service's, tested on every version
def test_search_latency_against_opensearch_runs(real_opensearch: Cluster, bench_prefix: str) -> None:
    out = run("bench/search_latency.py", "--sizes", "30", "--queries", "4", "--repeated", "2", "--writes", "1",
              "--embedder", "none", "--search", "opensearch", "--opensearch-url", real_opensearch.url,
              "--opensearch-prefix", bench_prefix, env=credentials(real_opensearch))
    assert "search=opensearch" in out and "search (distinct)" in out


@pytest.mark.opensearch
@pytest.mark.model
@pytest.mark.one_version  # the labelled set on each version: test_real_cluster.py's parity test
def test_retrieval_against_opensearch_runs(real_opensearch: Cluster, bench_prefix: str) -> None:
    out = run("bench/retrieval.py", "--backend", "opensearch", "--opensearch-url", real_opensearch.url,
              "--opensearch-prefix", bench_prefix, env=credentials(real_opensearch))
    assert "matched_count equal on" in out and "top-5 overlap" in out


@pytest.mark.opensearch
@pytest.mark.model
def test_opensearch_scale_runs(real_opensearch: Cluster, bench_prefix: str) -> None:
    out = run("bench/opensearch_scale.py", "--opensearch-url", real_opensearch.url,
              "--opensearch-prefix", bench_prefix, "--facts", "40",
              "--queries", "3", "--profiles", "6", "--per-profile", "3", "--sample", "2", "--per-sample", "2",
              env=credentials(real_opensearch))
    assert "one profile of 40 facts" in out and "6 profiles of 3 facts" in out and "median p50 ratio" in out
    assert out.count("the deployment on the cluster: 2 indices, 2 shards") == 2  # one profile as for six
    assert "the cluster: OpenSearch " in out and "Lucene" in out and "vector module" in out


def test_opensearch_scale_serves_opensearch_mode_alone(real_opensearch: Cluster, bench_prefix: str) -> None:
    """--sides opensearch: for stores the embedded server cannot hold (1,000,000 facts); figures, no ratio."""
    out = run("bench/opensearch_scale.py", "--opensearch-url", real_opensearch.url,
              "--opensearch-prefix", bench_prefix, "--skip", "one", "--sides", "opensearch",
              "--queries", "3", "--profiles", "6", "--per-profile", "3", "--sample", "2", "--per-sample", "2",
              env=credentials(real_opensearch))
    assert "6 profiles of 3 facts" in out and "OpenSearch mode alone (--sides opensearch): no ratio" in out
    assert "median p50 ratio" not in out and "2 indices, 2 shards" in out


def test_concurrency_runs() -> None:
    out = run("bench/concurrency.py", "--clients", "3", "--seconds", "1", "--facts", "5", "--embedder", "none")
    assert "throughput:" in out and "errors: 0" in out and "acknowledged writes readable afterwards" in out


def test_search_by_kind_splits_the_side_by_sides_queries(tmp_path: Path) -> None:
    """Two groups for this service (off-topic fast, paraphrases slow), one for the peer: `all` is bench.py's p50."""
    def rep(peer: str, rep: int, para_ms: float, off_ms: float) -> str:
        queries = [{"kind": "paraphrase", "ms": para_ms + i / 10} for i in range(5)]
        queries += [{"kind": "offtopic", "ms": off_ms + i / 10} for i in range(5)]
        return json.dumps({"peer": peer, "n": 1000, "rep": rep, "per_query": queries})

    results = tmp_path / "results.jsonl"
    results.write_text("\n".join([rep("product", 1, 10, 6), rep("product", 2, 10, 6), rep("qdrant", 1, 10, 10)]))
    out = run("bench/search_by_kind.py", str(results))
    assert "| product | 1000 | 2 | paraphrase | 10.04 | 10.20 | 10.36 |" in out
    assert "| product | 1000 | 2 | all | 6.09 | 8.20 | 10.31 |" in out  # between the groups
    assert "p50 ratio n=1000 against qdrant: all=0.80 paraphrase=1.00 offtopic=0.61" in out

    (tmp_path / "bare.jsonl").write_text(json.dumps({"peer": "product", "n": 1000, "rep": 1}))
    done = subprocess.run([sys.executable, "bench/search_by_kind.py", str(tmp_path / "bare.jsonl")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "KEEP_QUERIES=1" in done.stderr


def test_gaps_bench_runs() -> None:
    out = run("bench/gaps.py", "--rows", "3000", "--topics", "40", "--runs", "1", "--embedder", "none")
    assert "gap report, days=365" in out and "sqlite    none     lexical" in out


@pytest.mark.model
def test_gaps_threshold_check_runs() -> None:
    out = run("bench/gaps.py", "--check")
    assert "labelled check: 60 queries in 19 topics" in out and "<- SEMANTIC_THRESHOLD" in out


@pytest.mark.model
def test_pyspy_profile_runs() -> None:
    """py-spy samples a running `memory serve` (it is in the test extra; attaching needs ptrace rights)."""
    if not Path(sys.executable).with_name("py-spy").exists():
        pytest.skip("py-spy is not installed in this environment (it is in the test extra)")
    out = run("bench/pyspy.py", "--facts", "10", "--seconds", "2", "--rate", "200")
    assert "memory_search at 10 facts" in out and "share of samples by thread" in out
    # a tools/call takes the SDK's per-request kernel (service/mcp/exchange.py); other requests its full path
    assert "MCP SDK: its per-request kernel (a tools/call)" in out and "functions of the service" in out


@pytest.mark.opensearch
@pytest.mark.model
def test_opensearch_anatomy_runs(real_opensearch: Cluster, bench_prefix: str) -> None:
    """The served _msearch taken apart on the real node: every variant answered (the bench stops on a refused
    search), one row each."""
    out = run("bench/opensearch_anatomy.py", "--opensearch-url", real_opensearch.url,
              "--opensearch-prefix", bench_prefix, "--facts", "40", "--queries", "6", "--rounds", "1",
              env=credentials(real_opensearch))
    assert "one profile of 40 facts: the served _msearch taken apart" in out
    for row in ("served _msearch", "hybrid query alone", "vector sub-query", "lexical sub-query",
                "companion searches", "empty search"):
        assert row in out


def tiny_locomo(path: Path) -> Path:
    """Two conversations in LoCoMo's format (data/locomo10.json), written here: the real data is never in the
    repository."""
    def conversation(i: int, a: str, b: str) -> dict:
        turns = [{"speaker": a, "dia_id": "D1:1", "text": f"I adopted a puppy called Rex {i}."},
                 {"speaker": b, "dia_id": "D1:2", "text": "Lovely! I am training for a marathon in May."},
                 {"speaker": a, "dia_id": "D1:3", "text": "Where is the race?"},
                 {"speaker": b, "dia_id": "D1:4", "text": "In Lisbon, along the river."}]
        return {"sample_id": f"t{i}", "conversation": {"speaker_a": a, "speaker_b": b, "session_1": turns,
                                                        "session_1_date_time": "1 May 2023"},
                "observation": {"session_1_observation": {
                    a: [[f"{a} adopted a puppy called Rex.", "D1:1"]],
                    b: [[f"{b} is training for a marathon in Lisbon in May.", ["D1:2", "D1:4"]]]}},
                "qa": [{"question": f"What is the name of {a}'s puppy?", "answer": "Rex", "evidence": ["D1:1"],
                        "category": 4},
                       {"question": f"Where is {b}'s marathon?", "answer": "Lisbon", "evidence": ["D1:4"],
                        "category": 4},
                       {"question": "Adversarial", "answer": "", "evidence": ["D1:3"], "category": 5}]}
    path.write_text(json.dumps([conversation(0, "Anna", "Ben"), conversation(1, "Cleo", "Dan")]))
    return path


@pytest.mark.model
def test_conversational_runs(tmp_path: Path) -> None:
    out = run("bench/conversational.py", "--locomo", str(tiny_locomo(tmp_path / "locomo10.json")), "--store", "turns")
    assert "sha256" in out and "1-4 (headline)" in out and "report half" in out
    assert "offtopic questions answered with matched_count 0" in out and "answerable questions with" in out


@pytest.mark.model
def test_fit_ranking_runs_and_writes_nothing_unless_asked(tmp_path: Path) -> None:
    shipped = (ROOT / "service" / "domain" / "ranking" / "weights.json").read_bytes()
    locomo_file, searches = str(tiny_locomo(tmp_path / "locomo10.json")), str(tmp_path / "searches.pickle")
    out = run("bench/fit_ranking.py", "--locomo", locomo_file, "--searches", searches)
    assert "fitted, observations, report half" in out and "fitted, turns-bare, report half" in out
    assert "gate (late):" in out
    # --gate-only (the searches read back from the file): the shipped ranker, to the digit it prints
    kept = run("bench/fit_ranking.py", "--locomo", locomo_file, "--searches", searches, "--gate-only")
    ranker = w.shipped().ranker(True)
    assert "ranker (late): " + ", ".join(f"{n} {v / s:+.3f}" for n, v, s in zip(
        ranker.features, ranker.weights, ranker.scale)) in kept.splitlines()
    assert (ROOT / "service" / "domain" / "ranking" / "weights.json").read_bytes() == shipped


def test_cli_speed_runs() -> None:
    out = run("bench/cli_speed.py", "--runs", "1")
    assert "seconds per command, 1 runs each, bytecode cached" in out
    for command in ("memory --help", "memory profile create", "memory token issue", "memory profile list"):
        assert any(line.strip().startswith(command) for line in out.splitlines()), out
