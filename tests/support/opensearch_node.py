"""A real single-node OpenSearch for the tests, built from Maven Central artifacts only (no Docker, no other site).

    python -m tests.support.opensearch_node build     # fetch + lay out once (cached), print where
    python -m tests.support.opensearch_node run       # build if needed, start, print the URL, stop on Ctrl-C
    make opensearch                                    # the same as `run`

What it does, in order:
1. Fetch (`fetch`): `mvn package` on tests/support/opensearch/pom.xml copies the integ-test distribution
   (core + transport-netty4), the k-NN and neural-search plugin zips and the lang-painless and
   analysis-common module jars, all at VERSION, out of ~/.m2 (Maven's cache: a second build downloads nothing).
2. Lay out (`build`): unzip the distribution, write the two modules' folders (jars + descriptor, as the full
   distribution ships them: the integ-test zip has no modules but transport), install k-NN then neural-search
   with the distribution's own `opensearch-plugin install`. The result is kept in CACHE_DIR/opensearch-VERSION
   and reused by every later run; a half-built tree is never used (built under a temporary name, then renamed).
3. Run (`Node`): a fresh directory per node holds its config (a copy of the distribution's, plus a minimal
   single-node opensearch.yml: loopback only, no security plugin, disk watermarks off, a fixed heap), data and
   logs. Started as the unprivileged user RUN_AS when we are root (OpenSearch refuses root), daemonised with a
   PID file, waited on until the cluster is green; stopped by that PID. A stopped node can start again on the
   same data and port (the outage tests do that).

Why these pieces: the `hybrid` query and the normalization-processor come from neural-search, knn_vector and
radial search from k-NN (which extends lang-painless), the facts analyzer's pattern_replace, asciifolding and
porter_stem from analysis-common. k-NN's zip on Central carries no native libraries: every knn_vector of the
service names `engine: lucene` (index_templates/memory-facts.json), which needs none.

Environment (tests only; the service reads its own settings elsewhere):
  OPENSEARCH_JAVA_HOME   the JDK to run it on (default: a JDK 17 under /usr/lib/jvm; 2.19 runs on 11-21)
  MEMORY_TEST_CACHE      where the built distribution is kept (default below)
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

VERSION = "2.19.1"  # the one pin: core, modules and plugins (plugins are VERSION + ".0")
PLUGIN_VERSION = f"{VERSION}.0"
PLUGINS = ("opensearch-knn", "neural-search")  # install order: neural-search extends k-NN
RUN_AS = "memory-opensearch"  # the unprivileged user a root caller runs the node as
HEAP = "512m"  # fits 2 cores / 24 GB next to the tests; the test indices are small
START_TIMEOUT = 180.0
POM = Path(__file__).with_name("opensearch") / "pom.xml"

# The two modules the full distribution ships and the integ-test zip does not: name -> (class, extends).
MODULES = {
    "lang-painless": ("org.opensearch.painless.PainlessPlugin", ""),
    "analysis-common": ("org.opensearch.analysis.common.CommonAnalysisPlugin", "lang-painless"),
}
# lang-painless generates classes at run time (OpenSearch's own modules/lang-painless plugin-security.policy).
PAINLESS_POLICY = """grant {
  // needed to generate runtime classes
  permission java.lang.RuntimePermission "createClassLoader";
  // needed to find the classloader to load allowlisted classes from
  permission java.lang.RuntimePermission "getClassLoader";
};
"""


class NodeUnavailable(Exception):
    """The node cannot be built or started here; the message says what is missing."""


def cache_dir() -> Path:
    """Where built distributions and node directories live: readable by RUN_AS, so never under /root."""
    configured = os.environ.get("MEMORY_TEST_CACHE")
    if configured:
        return Path(configured)
    if os.geteuid() == 0:
        return Path("/var/tmp/memory-service")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "memory-service"


def java_home() -> Path:
    """A JDK OpenSearch 2.19 runs on: OPENSEARCH_JAVA_HOME, else a JDK 17 (a newer one may drop the Security Manager)."""
    configured = os.environ.get("OPENSEARCH_JAVA_HOME")
    if configured:
        return Path(configured)
    for candidate in sorted(glob.glob("/usr/lib/jvm/*17*")) + sorted(glob.glob("/usr/lib/jvm/*21*")):
        if Path(candidate, "bin", "java").exists():
            return Path(candidate)
    raise NodeUnavailable("no JDK 17 or 21 under /usr/lib/jvm; install openjdk-17-jdk-headless "
                          "or set OPENSEARCH_JAVA_HOME")


def home() -> Path:
    """The laid-out distribution (built by `build`)."""
    return cache_dir() / f"opensearch-{VERSION}"


def fetch(target: Path) -> None:
    """Copy every artifact the node needs into `target` with Maven (downloads once into ~/.m2)."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise NodeUnavailable("Maven (mvn) is not installed; apt-get install maven")
    env = dict(os.environ, JAVA_HOME=os.environ.get("JAVA_HOME") or str(java_home()))
    result = subprocess.run(
        [mvn, "-B", "-q", "-f", str(POM), f"-Dopensearch.version={VERSION}", f"-Dfetch.dir={target}", "package"],
        capture_output=True, text=True, env=env, timeout=1800)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise NodeUnavailable(f"mvn could not fetch OpenSearch {VERSION} from Maven Central:\n{tail}")


def _unzip(archive: Path, target: Path) -> None:
    """Unzip keeping the executable bits (zipfile alone drops them; `unzip` may not be installed)."""
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            path = Path(zf.extract(info, target))
            mode = info.external_attr >> 16
            if mode and not info.is_dir():
                path.chmod(mode & 0o777)


def _write_module(root: Path, name: str, jars: Path) -> None:
    classname, extends = MODULES[name]
    folder = root / "modules" / name
    folder.mkdir(parents=True)
    for jar in sorted(jars.glob("*.jar")):
        shutil.copy2(jar, folder / jar.name)
    descriptor = {
        "description": f"The {name} module of OpenSearch {VERSION}, from Maven Central",
        "version": VERSION, "name": name, "classname": classname, "java.version": "11",
        "opensearch.version": VERSION, "extended.plugins": extends, "has.native.controller": "false",
    }
    (folder / "plugin-descriptor.properties").write_text(
        "".join(f"{key}={value}\n" for key, value in descriptor.items()), encoding="utf-8")
    if name == "lang-painless":
        (folder / "plugin-security.policy").write_text(PAINLESS_POLICY, encoding="utf-8")


def build(progress=print) -> Path:  # noqa: ANN001 - a print-like callable
    """The laid-out distribution, built now unless a complete one is cached."""
    final = home()
    if (final / ".complete").exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"build-{VERSION}-", dir=final.parent))
    try:
        started = time.monotonic()
        progress(f"fetching OpenSearch {VERSION} artifacts with Maven (cached in ~/.m2)")
        fetch(work / "fetched")
        progress(f"laying out the distribution in {final}")
        _unzip(work / "fetched" / "dist" / f"opensearch-{VERSION}.zip", work)
        root = work / f"opensearch-{VERSION}"
        for name in MODULES:
            _write_module(root, name, work / "fetched" / "modules" / name)
        env = dict(os.environ, OPENSEARCH_JAVA_HOME=str(java_home()))
        for plugin in PLUGINS:
            archive = work / "fetched" / "dist" / f"{plugin}-{PLUGIN_VERSION}.zip"
            result = subprocess.run([str(root / "bin" / "opensearch-plugin"), "install", "--batch",
                                     archive.as_uri()], capture_output=True, text=True, env=env, timeout=300)
            if result.returncode != 0:
                raise NodeUnavailable(f"opensearch-plugin install {plugin} failed:\n"
                                      f"{(result.stdout + result.stderr).strip()[-2000:]}")
        (root / ".complete").write_text(f"{VERSION}\n", encoding="utf-8")
        shutil.rmtree(final, ignore_errors=True)
        root.rename(final)
        progress(f"built in {time.monotonic() - started:.1f} s")
        return final
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as_user() -> pwd.struct_passwd | None:
    """RUN_AS (created on first use) when we are root; None when we can run the node ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(RUN_AS)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS],
                       check=True, capture_output=True)
        return pwd.getpwnam(RUN_AS)


@dataclass
class Node:
    """One single-node cluster on loopback: `start()`, `stop()`, and `start()` again on the same data."""

    directory: Path
    distribution: Path = Path()
    port: int = field(default_factory=_free_port)
    transport_port: int = field(default_factory=_free_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid_file(self) -> Path:
        return self.directory / "opensearch.pid"

    @property
    def log_file(self) -> Path:
        return self.directory / "logs" / "memory-test.log"

    @classmethod
    def create(cls, distribution: Path) -> Node:
        base = cache_dir() / "nodes"
        base.mkdir(parents=True, exist_ok=True)
        node = cls(directory=Path(tempfile.mkdtemp(prefix="node-", dir=base)), distribution=distribution)
        config = node.directory / "config"
        shutil.copytree(distribution / "config", config)
        (node.directory / "data").mkdir()
        (node.directory / "logs").mkdir()
        (node.directory / "tmp").mkdir()
        (config / "opensearch.yml").write_text("\n".join([
            "cluster.name: memory-test",
            "node.name: memory-test-node",
            "discovery.type: single-node",
            "network.host: 127.0.0.1",
            f"http.port: {node.port}",
            f"transport.port: {node.transport_port}",
            f"path.data: {node.directory / 'data'}",
            f"path.logs: {node.directory / 'logs'}",
            "cluster.routing.allocation.disk.threshold_enabled: false",
            "action.auto_create_index: false",
            "",
        ]), encoding="utf-8")
        # The launcher runs from the distribution's folder, which RUN_AS may not write: GC log, error file
        # and heap dumps go to this node's own folders instead of the relative logs/ and data.
        options = (config / "jvm.options").read_text(encoding="utf-8")
        options = options.replace("file=logs/", f"file={node.directory}/logs/")
        options = options.replace("ErrorFile=logs/", f"ErrorFile={node.directory}/logs/")
        options = options.replace("HeapDumpPath=data", f"HeapDumpPath={node.directory}/data")
        (config / "jvm.options").write_text(options, encoding="utf-8")
        (config / "jvm.options.d" / "memory-test.options").write_text(f"-Xms{HEAP}\n-Xmx{HEAP}\n", encoding="utf-8")
        user = _run_as_user()
        if user is not None:
            for path in [node.directory, *node.directory.rglob("*")]:
                os.chown(path, user.pw_uid, user.pw_gid)
        return node

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start the node and wait until the cluster is green; raises NodeUnavailable with the log's tail."""
        self.pid_file.unlink(missing_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "OPENSEARCH_JAVA_HOME": str(java_home()),
            "OPENSEARCH_PATH_CONF": str(self.directory / "config"),
            "OPENSEARCH_TMPDIR": str(self.directory / "tmp"),
        }
        command = [str(self.distribution / "bin" / "opensearch"), "-d", "-p", str(self.pid_file)]
        if _run_as_user() is not None:
            command = ["runuser", "-u", RUN_AS, "--", "env", *[f"{k}={v}" for k, v in env.items()], *command]
        with open(self.directory / "start.out", "ab") as out:
            result = subprocess.run(command, cwd=self.directory, env=dict(os.environ, **env), stdout=out,
                                    stderr=subprocess.STDOUT, timeout=timeout)
        if result.returncode != 0:
            raise NodeUnavailable(f"OpenSearch did not start (exit {result.returncode}):\n{self.tail()}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._green():
                return
            if self.pid_file.exists() and not self.running():
                break
            time.sleep(0.5)
        self.stop()
        raise NodeUnavailable(f"OpenSearch was not green within {timeout:.0f} s:\n{self.tail()}")

    def _green(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/_cluster/health?wait_for_status=green&timeout=1s",
                                        timeout=3) as response:
                return json.load(response).get("status") == "green"
        except (OSError, urllib.error.URLError, ValueError):
            return False

    def pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def running(self) -> bool:
        pid = self.pid()
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def stop(self, timeout: float = 60.0, *, sig: signal.Signals = signal.SIGTERM) -> None:
        """`sig` (SIGTERM: a clean shutdown) by PID, SIGKILL if it lingers; the data stays for a later start()."""
        pid = self.pid()
        if pid is None:
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            self.pid_file.unlink(missing_ok=True)
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.running():
            time.sleep(0.2)
        if self.running():
            os.kill(pid, signal.SIGKILL)
            while self.running():
                time.sleep(0.1)
        self.pid_file.unlink(missing_ok=True)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def tail(self, lines: int = 30) -> str:
        texts = []
        for path in (self.directory / "start.out", self.directory / "logs" / "memory-test.log"):
            if path.exists():
                texts.extend(path.read_text(errors="replace").splitlines()[-lines:])
        return "\n".join(texts) or "(no log written)"


def start_node(progress=print) -> Node:  # noqa: ANN001 - a print-like callable
    """Build (or reuse) the distribution and start a fresh node on free loopback ports."""
    distribution = build(progress)
    node = Node.create(distribution)
    started = time.monotonic()
    node.start()
    progress(f"OpenSearch {VERSION} green at {node.url} after {time.monotonic() - started:.1f} s")
    return node


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "run"
    try:
        if command == "build":
            print(build())
            return 0
        if command == "run":
            node = start_node()
            print(f"OPENSEARCH_URL={node.url}  (Ctrl-C stops it; data in {node.directory})", flush=True)
            try:
                signal.pause()
            except KeyboardInterrupt:
                pass
            finally:
                node.remove()
            return 0
    except NodeUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("usage: python -m tests.support.opensearch_node [build|run]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
