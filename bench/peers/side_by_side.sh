#!/usr/bin/env bash
# Side by side, in one run: our service against mcp-server-qdrant (and optionally mcp-memory-service), through each
# server's own MCP interface, the same corpus, the same client, one server at a time.
#
#   bash bench/peers/side_by_side.sh [N ...]          # from the project root; default N = 1000
#
# Environment: MEMORY_BIN (default .venv/bin/memory: the project's own install), PEERS (default "qdrant"; e.g.
# "qdrant mms"; " " measures our service alone), REPS (default 1), BASE (default ${TMPDIR:-/tmp}/peers-bench, where
# setup.sh installs the client and the peers once: a few minutes), KEEP_QUERIES=1 (each query's time kept in the
# results, for bench/search_by_kind.py).
# Prints a markdown table and, last, one line per N: `ratio n=N search_p50=<ours/best peer> write=<ours/best peer>`
# (search below 1 is faster than the best peer; write above 1 is more writes a second). Speed targets are these
# ratios, medians of several runs, never absolute times: a shared machine is noisy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ns=("$@"); [ ${#ns[@]} -gt 0 ] || ns=(1000)
keep=(); [ "${KEEP_QUERIES:-}" = 1 ] && keep=(--keep-queries)
export BASE=${BASE:-${TMPDIR:-/tmp}/peers-bench}
peers=${PEERS-qdrant}
memory=$(realpath "${MEMORY_BIN:-.venv/bin/memory}")
[ -x "$memory" ] || { echo "no memory executable at $memory (run from the project root, or set MEMORY_BIN)" >&2; exit 2; }
# shellcheck disable=SC2086  # PEERS is a word list
bash "$here/setup.sh" "$BASE" client $peers >&2
py="$BASE/venv-client/bin/python"

# This run's own folder (runs side by side do not share one): a template data dir with one profile, its token and
# the embedder ready, copied fresh for every repetition, and the repetitions' data dirs; removed at the end.
work=$(mktemp -d "$BASE/run-XXXXXX")
trap 'rm -rf "$work"' EXIT
tpl="$work/product-template"
mkdir -p "$tpl"
export MEMORY_DATA_DIR="$tpl" MEMORY_DATABASE_URL="sqlite:///$tpl/memory.db" MEMORY_BIND=127.0.0.1
"$memory" profile create bench --json >/dev/null
token=$("$memory" token issue bench --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["token"])')
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
MEMORY_PORT=$port "$memory" serve >"$work/product-template.log" 2>&1 &
pid=$!
ready=
for _ in $(seq 1 240); do
  sleep 0.5
  "$py" - "http://127.0.0.1:$port/readyz" <<'PY' 2>/dev/null && { ready=1; break; }
import json, sys, urllib.request
state = json.load(urllib.request.urlopen(sys.argv[1], timeout=2)).get("checks", {}).get("embedder", {}).get("state")
sys.exit(0 if state in ("ready", "disabled") else 1)
PY
done
kill "$pid"; wait "$pid" 2>/dev/null || true
[ -n "$ready" ] || { echo "our service did not get ready in 120 s:" >&2; tail -20 "$work/product-template.log" >&2; exit 1; }
unset MEMORY_DATA_DIR MEMORY_DATABASE_URL
cat > "$work/serve-product.sh" <<SH
#!/usr/bin/env bash
cp -a "$tpl"/. "\$1"/ && rm -f "\$1"/memory.db-shm "\$1"/memory.db-wal
export MEMORY_DATA_DIR="\$1" MEMORY_DATABASE_URL="sqlite:///\$1/memory.db" MEMORY_PORT="\$2" MEMORY_BIND=127.0.0.1
exec "$memory" serve
SH
chmod +x "$work/serve-product.sh"

out="$BASE/side-by-side-$(date +%Y%m%d-%H%M%S)-$$.jsonl"
for n in "${ns[@]}"; do
  "$py" "$here/harness.py" --peer product --n "$n" --reps "${REPS:-1}" --out "$out" --base "$BASE" "${keep[@]}" \
    --runs "$work/runs" --url "http://127.0.0.1:{port}/mcp/bench" --token "$token" \
    --server-cmd "$work/serve-product.sh {run_dir} {port}" >&2
  for peer in $peers; do
    extra=(); [ "$peer" = mms ] && extra=(--label nodedup --env MCP_SEMANTIC_DEDUP_ENABLED=false)
    "$py" "$here/harness.py" --peer "$peer" --n "$n" --reps "${REPS:-1}" --out "$out" --base "$BASE" "${keep[@]}" \
      --runs "$work/runs" "${extra[@]}" >&2
  done
done
echo "results: $out" >&2
"$py" "$here/report.py" "$out"
