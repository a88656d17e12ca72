#!/bin/bash
# The OpenSearch neural-search plugin 3.5.0.0 built from its source tag with Maven only (no Gradle, no GitHub), with
# ml-commons 3.5.0.0's client compiled alongside (not on Maven Central either): see README.md.
#   OUT=DIR tests/support/opensearch/neural-search-3/build.sh   -> DIR/opensearch-neural-search-3.5.0.0.zip
#                                                                  (OUT default: the work folder)
#   W=DIR   a work folder (default: a new temporary one, removed at the end when OUT is elsewhere)
# Needs Maven and a JDK >= 21 (JAVA21_HOME, else the first under /usr/lib/jvm). Once ~/.m2 holds the artifacts,
# `mvn -o` reruns it offline (OFFLINE=1).
set -euo pipefail
R=$(cd "$(dirname "$0")" && pwd)
J=${JAVA21_HOME:-$(ls -d /usr/lib/jvm/temurin-2[1-9]* /usr/lib/jvm/java-2[1-9]-* /usr/lib/jvm/temurin-[3-9][0-9]* 2>/dev/null | head -n 1 || true)}
[ -n "$J" ] && [ -x "$J/bin/java" ] || { echo "no JDK >= 21 under /usr/lib/jvm: set JAVA21_HOME" >&2; exit 1; }
command -v mvn >/dev/null || { echo "Maven (mvn) is not installed: apt-get install maven" >&2; exit 1; }
export JAVA_HOME=$J
CLEAN=
if [ -z "${W:-}" ]; then W=$(mktemp -d); CLEAN=1; fi
OUT=${OUT:-$W}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
[ -n "$CLEAN" ] && [ "$OUT" != "$W" ] && trap 'rm -rf "$W"' EXIT
MVN=(mvn -B -q -Dstyle.color=never ${OFFLINE:+-o} "-Dw=$W")
mvn_() {  # Maven, without the JDK's warnings about Maven's own Guava (sun.misc.Unsafe)
  local rc=0; "${MVN[@]}" "$@" >"$W/mvn.log" 2>&1 || rc=$?
  sed 's/\x1b\[[0-9;]*m//g' "$W/mvn.log" | grep -v '^$\|sun.misc.Unsafe\|Unsafe::\|^WARNING: Please consider reporting' || true; return $rc; }
V=3.5.0.0; ZIP=opensearch-neural-search-$V.zip
t() { echo "[$(date +%T)] $*"; }
# fetched/ too: the dependency plugin's unpack markers there would skip a second unpack into an emptied dist/.
rm -rf "$W/src" "$W/build" "$W/dist" "$W/fetched" "$W/zip"; mkdir -p "$W/src/ml-commons" "$W/src/neural-search" "$W/zip"
t "sources (git archives of the tags $V)"
tar -xzf "$R/sources/ml-commons-$V.tar.gz" --strip-components=1 -C "$W/src/ml-commons"
tar -xzf "$R/sources/neural-search-$V.tar.gz" --strip-components=1 -C "$W/src/neural-search"
t "fetch: compile-time jars of the OpenSearch 3.5.0 integ-test zip and the k-NN $V zip (Maven Central)"
mvn_ -f "$R/fetch/pom.xml" package
t "ml-client (ml-commons spi, common, client)"; mvn_ -f "$R/ml-client/pom.xml" package
t "plugin"; mvn_ -f "$R/plugin/pom.xml" package
t "zip"
Z=$W/zip
cp "$W/build/neural-search/target/opensearch-neural-search-$V.jar" "$W/build/ml-client/target/opensearch-ml-client-$V.jar" \
   "$W/build/neural-search/target/bundle"/*.jar "$Z/"
cp "$W/src/neural-search/src/main/plugin-metadata/plugin-security.policy" "$Z/"
# The descriptor: what OpenSearch reads to load the plugin (class, versions, the plugins it extends).
cat > "$Z/plugin-descriptor.properties" <<D
description=A plugin that adds dense neural retrieval into the OpenSearch ecosytem
version=$V
name=opensearch-neural-search
classname=org.opensearch.neuralsearch.plugin.NeuralSearch
java.version=21
opensearch.version=3.5.0
custom.foldername=
extended.plugins=opensearch-knn,transport-grpc
has.native.controller=false
D
# A reproducible zip: sorted entries, one timestamp, one mode.
python3 - "$Z" "$OUT/$ZIP" <<'PY'
import os, sys, zipfile
root, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(target + ".part", "w", zipfile.ZIP_DEFLATED) as zf:
    for name in sorted(os.listdir(root)):
        info = zipfile.ZipInfo(name, (1980, 2, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(os.path.join(root, name), "rb") as f:
            zf.writestr(info, f.read())
os.replace(target + ".part", target)
PY
t "done: $OUT/$ZIP ($(ls "$Z"/*.jar | wc -l) jars)"
sha256sum "$OUT/$ZIP"
