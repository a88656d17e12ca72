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
. "$R/../recipe.sh"  # JAVA_HOME, W, OUT, mvn_, t, reproducible_zip
V=3.5.0.0; ZIP=opensearch-neural-search-$V.zip
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
reproducible_zip "$Z" "$OUT/$ZIP"
t "done: $OUT/$ZIP ($(ls "$Z"/*.jar | wc -l) jars)"
sha256sum "$OUT/$ZIP"
