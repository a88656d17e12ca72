# Sourced by neural-search-3/build.sh and security-3/build.sh (bash, `set -euo pipefail` already on): what both recipes
# do before and after their own steps. Sets JAVA_HOME (JAVA21_HOME, else the first JDK >= 21 under /usr/lib/jvm),
# W (the work folder: W, else a new temporary one, removed at the end when OUT is elsewhere), OUT (default W);
# defines mvn_ (Maven, quiet, offline with OFFLINE=1), t (a timestamped step line) and reproducible_zip.
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
t() { echo "[$(date +%T)] $*"; }

# reproducible_zip DIR ZIP: DIR's files as ZIP, the same bytes on every run: sorted entries, one timestamp, mode 644
# (755 for the scripts).
reproducible_zip() {
  python3 - "$1" "$2" <<'PY'
import os, sys, zipfile
root, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(target + ".part", "w", zipfile.ZIP_DEFLATED) as zf:
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            info = zipfile.ZipInfo(os.path.relpath(path, root), (1980, 2, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".sh") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as f:
                zf.writestr(info, f.read())
os.replace(target + ".part", target)
PY
}
