#!/bin/bash
# The OpenSearch security plugin 3.5.0.0 built from its source tag with Maven only (no Gradle, no GitHub): see README.md.
#   OUT=DIR tests/support/opensearch/security-3/build.sh   -> DIR/opensearch-security-3.5.0.0.zip (OUT default: the work folder)
#   W=DIR   a work folder (default: a new temporary one, removed at the end when OUT is elsewhere)
# Needs Maven and a JDK >= 21 (JAVA21_HOME, else the first under /usr/lib/jvm). Once ~/.m2 holds the artifacts,
# `mvn -o` reruns it offline (OFFLINE=1).
set -euo pipefail
R=$(cd "$(dirname "$0")" && pwd)
. "$R/../recipe.sh"  # JAVA_HOME, W, OUT, mvn_, t, reproducible_zip
V=3.5.0.0; ZIP=opensearch-security-$V.zip
rm -rf "$W/src" "$W/build" "$W/dist" "$W/zip"; mkdir -p "$W/src/security" "$W/dist" "$W/zip"
t "sources (git archive of tag $V)"
tar -xzf "$R/sources/security-$V.tar.gz" --strip-components=1 -C "$W/src/security"
t "fetch: OpenSearch 3.5.0 integ-test zip, OpenSAML jar of the 3.4.0.0 release, compileOnly jars (Maven Central)"
mvn_ -f "$R/fetch/pom.xml" package
(cd "$W/dist" && unzip -q -o "$W/fetched/opensearch-3.5.0.zip")
t "spi"; mvn_ -f "$R/spi/pom.xml" package
t "plugin (about 420 source files)"; mvn_ -f "$R/plugin/pom.xml" package
t "zip"
Z=$W/zip; D=$W/dist/opensearch-3.5.0
cp "$W/build/plugin/opensearch-security-$V.jar" "$W/build/spi/opensearch-security-spi-$V.jar" \
   "$W/fetched/opensaml/opensaml-3.4.0.0-all.jar" "$Z/"
# Gradle's bundle is runtimeClasspath minus compileOnly: leave out every jar of the compileOnly resolution, every
# artifact of the node's core (lib/: org.opensearch:opensearch's own dependencies) and of the rule-framework module
# (autotagging-commons-spi's). transport-grpc-spi's come from grpc-api, which has guava in its runtime scope only:
# guava stays bundled, as in the released 3.4.0.0 zip (the demo installer runs on plugin, lib and deps jars only).
provided=$( (ls "$W/fetched/compileonly"; ls "$D/lib" "$D/modules/rule-framework") \
            | grep '\.jar$' | sed -E 's/-[0-9][^-]*(-[a-z]+)?\.jar$//; s/\.jar$//' | sort -u)
for jar in "$W/build/plugin/bundle"/*.jar; do
  name=$(basename "$jar"); artifact=$(echo "$name" | sed -E 's/-[0-9][^-]*(-[a-z]+)?\.jar$//')
  if grep -qxF "$artifact" <<<"$provided"; then echo "  not bundled (the node provides it): $name"; else cp "$jar" "$Z/"; fi
done
cp "$W/src/security/plugin-security.policy" "$Z/"
cp -r "$W/src/security/config" "$W/src/security/tools" "$Z/"
cat > "$Z/plugin-descriptor.properties" <<D
description=Provide access control related features for OpenSearch
version=$V
name=opensearch-security
classname=org.opensearch.security.OpenSearchSecurityPlugin
java.version=21
opensearch.version=3.5.0
custom.foldername=
extended.plugins=rule-framework,workload-management;optional=true,transport-grpc;optional=true
has.native.controller=false
D
reproducible_zip "$Z" "$OUT/$ZIP"
t "done: $OUT/$ZIP ($(ls "$Z"/*.jar | wc -l) jars)"
sha256sum "$OUT/$ZIP"
