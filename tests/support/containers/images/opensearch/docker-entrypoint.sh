#!/bin/bash
# opensearchproject/opensearch stand-in: `dotted.setting=value` environment variables become -E options (as the
# official entrypoint does); OPENSEARCH_JAVA_OPTS is read by bin/opensearch itself. DISABLE_SECURITY_PLUGIN and
# DISABLE_INSTALL_DEMO_CONFIG need nothing: this tree has no security plugin.
set -euo pipefail
if [ "${1:-}" != opensearch ]; then exec "$@"; fi
shift
export OPENSEARCH_JAVA_HOME=${OPENSEARCH_JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
opts=()
while IFS='=' read -r key value; do
  if [[ "$key" =~ ^[a-z0-9_]+\.[a-z0-9_.]+$ && -n "$value" ]]; then
    opts+=("-E$key=$value")
  fi
done < <(env)
exec /usr/share/opensearch/bin/opensearch "${opts[@]}" "$@"
