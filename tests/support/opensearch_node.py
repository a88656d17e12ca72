"""A real single-node OpenSearch for the tests, built from Maven Central artifacts only (no Docker, no other site).

    python -m tests.support.opensearch_node build     # fetch + lay out once (cached), print where
    python -m tests.support.opensearch_node run       # build if needed, start, print the URL; Ctrl-C/SIGTERM stop it
    python -m tests.support.opensearch_node run --secured  # the secured variant (below): also CA, admin, cert
    make opensearch / make opensearch-secured          # the same as `run` / `run --secured`

What it does, in order:
1. Fetch (`fetch`): `mvn package` on tests/support/opensearch/pom.xml copies the integ-test distribution
   (core + transport-netty4), the k-NN and neural-search plugin zips and the lang-painless and
   analysis-common module jars, all at VERSION, out of ~/.m2 (Maven's cache: a second build downloads nothing).
2. Lay out (`build`): unzip the distribution, write the two modules' folders (jars + descriptor, as the full
   distribution ships them: the integ-test zip has no modules but transport), install k-NN then neural-search
   with the distribution's own `opensearch-plugin install`. The result is kept in CACHE_DIR/opensearch-VERSION
   and reused by every later run; a half-built tree is never used (built under a temporary name, then renamed).
3. Run (`Node`): a fresh directory per node holds its config (a copy of the distribution's, plus a minimal
   single-node opensearch.yml: loopback only, disk watermarks off, no index created by a write alone, a fixed
   heap; no security plugin unless secured, below), data and logs. Started as the unprivileged user RUN_AS
   when we are root (OpenSearch refuses root), in the foreground under a supervisor of its own (4.), waited on
   until the cluster is green; stopped by its PID (OpenSearch's PID file). A stopped node can start again on
   the same data and port (the outage tests do that).
4. Never outlive the starter: the JVM is the child of a small supervisor (`supervise`: this file run with
   `python -I`) whose stdin is a pipe only the starting process holds. When that process dies, however it
   dies (SIGKILL too), the pipe reads EOF and the supervisor stops the JVM (SIGTERM, SIGKILL after
   ORPHAN_STOP_TIMEOUT) and removes the node's directory; were the supervisor itself killed, the kernel
   SIGKILLs the JVM (PR_SET_PDEATHSIG, set in the launcher after it became RUN_AS). The runner (`run`,
   `make opensearch`) stops its node on SIGINT, SIGTERM and SIGHUP. (The node used to be daemonised: a
   runner killed by SIGTERM, or a killed test session, left its JVM running.)

The secured variant (`build(secured=True)`, `start_node(secured=True)`, `run --secured`; the tests' session
fixture `secured_opensearch` in tests/support/clusters.py): the same tree plus the security plugin
(org.opensearch.plugin:opensearch-security:PLUGIN_VERSION, zip; the pom's `secured` profile), kept apart in
CACHE_DIR/opensearch-VERSION-secured so the open tree never changes. Node.create() on it runs the plugin's
demo installer (democonfig.Installer, what tools/install_demo_configuration.sh -y -i -s runs) into the node's
own config with a generated admin password: demo certificates (their SAN has 127.0.0.1 and localhost), TLS
on HTTP and transport, basic auth, the security index initialised from config/opensearch-security on first
start. Then it takes out of the demo what would give a test's user more than its role (the mapping of every
user to own_index, which grants cluster_composite_ops -- bulk, m*-reads, aliases -- and the demo users with
published passwords) and switches the audit log off (its index would need a replica: yellow for ever).
What a test gets from the Node:
  url (https://127.0.0.1:PORT), ca_file (config/root-ca.pem), admin ("admin", generated password),
  admin_cert (config/kirk.pem, kirk-key.pem: the admin_dn certificate, a super admin over mTLS),
  client_options(user, password) / client_options(client_cert=True): keyword arguments for opensearchpy;
  create_role(name, cluster_permissions=[…], index_permissions=[{"index_patterns": […], "allowed_actions":
  […]}]), create_user(name, password, roles=[…]), map_role, delete_user, delete_role: the security REST API
  (_plugins/_security/api/…) as admin; request(method, path, body, auth=…) for anything else.
It waits for green over TLS as admin. Measured here (2 shared cores): build 28 s cold (166 MB into an empty
~/.m2, 119 MB laid out), 8.8 s with ~/.m2 warm, 0.07 s cached; create (the installer) 1.5 s, start to green
13-14 s (the open node 9 s); JVM RSS at green about 745 MB (open: 710 MB), plus about 24 MB for the supervisor.

Why these pieces: the `hybrid` query and the normalization-processor come from neural-search, knn_vector and
radial search from k-NN (which extends lang-painless), the facts analyzer's pattern_replace, asciifolding and
porter_stem from analysis-common. k-NN's zip on Central carries no native libraries: every knn_vector of the
service names `engine: lucene` (index_templates/memory-facts.json), which needs none.

Environment (tests only; the service reads its own settings elsewhere):
  OPENSEARCH_JAVA_HOME   the JDK to run it on (default: a JDK 17 under /usr/lib/jvm; 2.19 runs on 11-21)
  MEMORY_TEST_CACHE      where the built distribution is kept (default below)
"""

from __future__ import annotations

import base64
import glob
import json
import os
import pwd
import secrets
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERSION = "2.19.1"  # the one pin: core, modules and plugins (plugins are VERSION + ".0")
PLUGIN_VERSION = f"{VERSION}.0"
PLUGINS = ("opensearch-knn", "neural-search")  # install order: neural-search extends k-NN
RUN_AS = "memory-opensearch"  # the unprivileged user a root caller runs the node as
HEAP = "512m"  # fits 2 cores / 24 GB next to the tests; the test indices are small
START_TIMEOUT = 180.0
ORPHAN_STOP_TIMEOUT = 30.0  # an orphaned node gets SIGTERM, then SIGKILL after this long
HOST = "127.0.0.1"  # loopback only
SECURITY_PLUGIN = "opensearch-security"  # the secured variant's third plugin (org.opensearch.plugin, zip)
ADMIN_USER = "admin"  # the demo configuration's admin (its password is generated per node)
DEMO_CA, DEMO_ADMIN_CERT, DEMO_ADMIN_KEY = "root-ca.pem", "kirk.pem", "kirk-key.pem"  # in the node's config
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


class SecurityApiError(Exception):
    """The security plugin's REST API refused a call (status and body in the message)."""

    def __init__(self, method: str, path: str, status: int, body: object) -> None:
        super().__init__(f"{method} {path}: {status} {body}")
        self.status = status
        self.body = body


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


def home(*, secured: bool = False) -> Path:
    """The laid-out distribution (built by `build`); the secured one is a tree of its own."""
    return cache_dir() / (f"opensearch-{VERSION}-secured" if secured else f"opensearch-{VERSION}")


def fetch(target: Path, *, secured: bool = False) -> None:
    """Copy every artifact the node needs into `target` with Maven (downloads once into ~/.m2)."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise NodeUnavailable("Maven (mvn) is not installed; apt-get install maven")
    env = dict(os.environ, JAVA_HOME=os.environ.get("JAVA_HOME") or str(java_home()))
    command = [mvn, "-B", "-q", "-f", str(POM), f"-Dopensearch.version={VERSION}", f"-Dfetch.dir={target}"]
    if secured:
        command.append("-Dopensearch.secured=true")  # the pom's `secured` profile: the security plugin's zip too
    result = subprocess.run([*command, "package"], capture_output=True, text=True, env=env, timeout=1800)
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


def build(progress=print, *, secured: bool = False) -> Path:  # noqa: ANN001 - a print-like callable
    """The laid-out distribution, built now unless a complete one is cached (`secured`: with the security
    plugin, in a tree of its own; the open tree is never touched by it)."""
    final = home(secured=secured)
    if (final / ".complete").exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"build-{final.name}-", dir=final.parent))
    try:
        started = time.monotonic()
        progress(f"fetching OpenSearch {VERSION} artifacts with Maven (cached in ~/.m2)")
        fetch(work / "fetched", secured=secured)
        progress(f"laying out the distribution in {final}")
        _unzip(work / "fetched" / "dist" / f"opensearch-{VERSION}.zip", work)
        root = work / f"opensearch-{VERSION}"
        for name in MODULES:
            _write_module(root, name, work / "fetched" / "modules" / name)
        env = dict(os.environ, OPENSEARCH_JAVA_HOME=str(java_home()))
        for plugin in (*PLUGINS, SECURITY_PLUGIN) if secured else PLUGINS:
            archive = work / "fetched" / "dist" / f"{plugin}-{PLUGIN_VERSION}.zip"
            # --batch also grants the extra permissions the security plugin asks for.
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


def _alive(pid: int) -> bool:
    """`pid` exists and is not a zombie (a dead JVM waiting to be reaped is not running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no procfs: trust kill(0)
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _drop_top_level_keys(path: Path, drop: Callable[[str], bool]) -> None:
    """Remove the top-level entries of a security-plugin YAML file (a key at column 0 and its indented
    block) whose key `drop` names; comments and everything else stay as they are."""
    kept, dropping = [], False
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line[:1] not in ("", " ", "\t", "#", "-", "\n") and ":" in line:
            dropping = drop(line.split(":", 1)[0].strip().strip('"'))
        if not dropping or line.startswith("#"):
            kept.append(line)
    path.write_text("".join(kept), encoding="utf-8")


def _admin_password() -> str:
    """Random, and passes the demo installer's check (upper, lower, digit, special; zxcvbn "strong")."""
    return f"Aa1-{secrets.token_urlsafe(18)}"


@dataclass
class Node:
    """One single-node cluster on loopback: `start()`, `stop()`, and `start()` again on the same data.

    The JVM runs under a supervisor process of this module (see `supervise`): it lives as long as this
    object's process does (and as long as this object: dropping it closes the supervisor's pipe).
    A secured node (the distribution has the security plugin) speaks https with the demo CA and basic auth.
    """

    directory: Path
    distribution: Path = Path()
    port: int = field(default_factory=_free_port)
    transport_port: int = field(default_factory=_free_port)
    secured: bool = False
    admin_password: str = field(default="", repr=False)
    ephemeral: bool = False  # a directory of create()'s own: removed by the supervisor if we die
    _supervisor: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    @property
    def url(self) -> str:
        return f"{'https' if self.secured else 'http'}://{HOST}:{self.port}"

    @property
    def pid_file(self) -> Path:
        return self.directory / "opensearch.pid"

    @property
    def log_file(self) -> Path:
        return self.directory / "logs" / "memory-test.log"

    @property
    def config_dir(self) -> Path:
        return self.directory / "config"

    @property
    def ca_file(self) -> Path | None:
        """The demo root CA the node's certificate is signed by (trust this, nothing else); None if open."""
        return self.config_dir / DEMO_CA if self.secured else None

    @property
    def admin(self) -> tuple[str, str] | None:
        """(user, password) of the demo admin (all_access, may use the security REST API); None if open."""
        return (ADMIN_USER, self.admin_password) if self.secured else None

    @property
    def admin_cert(self) -> tuple[Path, Path] | None:
        """(certificate, key) of the demo admin client certificate "kirk" (CN=kirk,OU=client,O=client,L=test,
        C=de: the node's admin_dn, so a super admin over mTLS); None if open."""
        if not self.secured:
            return None
        return self.config_dir / DEMO_ADMIN_CERT, self.config_dir / DEMO_ADMIN_KEY

    def client_options(self, user: str | None = None, password: str | None = None, *,
                       client_cert: bool = False) -> dict[str, Any]:
        """Keyword arguments for opensearchpy.OpenSearch: TLS verified against the demo CA, basic auth as
        `user` (default: admin), or with `client_cert` the admin certificate instead of a password."""
        if not self.secured:
            return {"hosts": [self.url]}
        options: dict[str, Any] = {"hosts": [self.url], "use_ssl": True, "verify_certs": True,
                                   "ca_certs": str(self.ca_file)}
        if client_cert:
            cert, key = self.admin_cert  # type: ignore[misc]
            options.update(client_cert=str(cert), client_key=str(key))
        else:
            options["http_auth"] = (user, password) if user is not None else self.admin
        return options

    @classmethod
    def create(cls, distribution: Path, *, secured: bool | None = None) -> Node:
        """A fresh node directory (config, data, logs) for `distribution`; `secured` defaults to whether the
        distribution has the security plugin (a secured node needs it, an open node must not have it)."""
        has_security = (distribution / "plugins" / SECURITY_PLUGIN).is_dir()
        secured = has_security if secured is None else secured
        if secured != has_security:
            raise NodeUnavailable(f"{distribution} {'lacks' if secured else 'has'} the security plugin: "
                                  f"use build(secured={secured})")
        base = cache_dir() / "nodes"
        base.mkdir(parents=True, exist_ok=True)
        node = cls(directory=Path(tempfile.mkdtemp(prefix="node-", dir=base)), distribution=distribution,
                   secured=secured, admin_password=_admin_password() if secured else "", ephemeral=True)
        config = node.config_dir
        shutil.copytree(distribution / "config", config)
        (node.directory / "data").mkdir()
        (node.directory / "logs").mkdir()
        (node.directory / "tmp").mkdir()
        (config / "opensearch.yml").write_text("\n".join([
            "cluster.name: memory-test",
            "node.name: memory-test-node",
            "discovery.type: single-node",
            f"network.host: {HOST}",
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
        if secured:
            node._install_demo_security()
            node._least_privilege_baseline()
        user = _run_as_user()
        if user is not None:
            for path in [node.directory, *node.directory.rglob("*")]:
                os.chown(path, user.pw_uid, user.pw_gid, follow_symlinks=False)
        return node

    def _install_demo_security(self) -> None:
        """The security plugin's demo installer, run into this node's own config directory.

        tools/install_demo_configuration.sh is one line: `java -cp … democonfig.Installer <its own dir> ARGS`,
        and the Installer writes into <that dir>/../../../config (the distribution's, shared by every node).
        So the same class runs here with a directory whose config/ is this node's (bin, lib and plugins link
        to the distribution): demo certificates, the TLS and security settings appended to opensearch.yml,
        the admin's bcrypt hash in opensearch-security/internal_users.yml. `-y` no questions, `-i` the node
        initialises its security index from those files on first start, `-s` quit quietly if already done.
        It needs no root and no PATH (java is named); run as the caller, the files are chowned afterwards."""
        base = self.directory / "demo-installer"
        base.mkdir()
        try:
            for name in ("bin", "lib", "plugins"):
                (base / name).symlink_to(self.distribution / name)
            (base / "config").symlink_to(self.config_dir)
            plugin = self.distribution / "plugins" / SECURITY_PLUGIN
            classpath = f"{plugin}/*:{self.distribution}/lib/*:{plugin}/deps/*"  # as the script's
            result = subprocess.run(
                [str(java_home() / "bin" / "java"), "-Dorg.apache.logging.log4j.simplelog.StatusLogger.level=OFF",
                 "-cp", classpath, "org.opensearch.security.tools.democonfig.Installer",
                 str(base / "plugins" / SECURITY_PLUGIN / "tools"), "-y", "-i", "-s"],
                capture_output=True, text=True, timeout=300,
                env=dict(os.environ, OPENSEARCH_INITIAL_ADMIN_PASSWORD=self.admin_password))
        finally:
            for name in ("bin", "lib", "plugins", "config"):
                (base / name).unlink(missing_ok=True)  # the links only, never what they point to
            base.rmdir()
        output = (result.stdout + result.stderr).strip()
        (self.directory / "demo-installer.out").write_text(output.replace(self.admin_password, "<admin password>")
                                                          + "\n", encoding="utf-8")
        admin_script = self.config_dir / "securityadmin_demo.sh"  # names the links just removed: the real paths
        if admin_script.exists():
            admin_script.write_text(admin_script.read_text(encoding="utf-8")
                                    .replace(f"{base}/plugins/", f"{self.distribution}/plugins/")
                                    .replace(f"{base}/config/", f"{self.config_dir}/"), encoding="utf-8")
        missing = [name for name in (DEMO_CA, DEMO_ADMIN_CERT, DEMO_ADMIN_KEY) if not (self.config_dir / name).exists()]
        if result.returncode != 0 or "### Success" not in output or missing:
            raise NodeUnavailable(f"the security demo installer failed (exit {result.returncode}, missing "
                                  f"{missing or 'nothing'}):\n{output[-2000:]}")

    def _least_privilege_baseline(self) -> None:
        """Take out of the demo configuration what would give a test's user more than the test's role:
        the mapping of every user ("*") to the static role own_index (cluster_composite_ops -- bulk, msearch,
        mget, aliases, reindex -- and indices_all on an index named like the user), and the demo users with
        published passwords (kibanaserver, readall, logstash, …); and the audit log (below). What stays:
        admin (all_access, the security REST API), the TLS settings and certificates, every role and action
        group."""
        security = self.config_dir / "opensearch-security"
        _drop_top_level_keys(security / "roles_mapping.yml", lambda key: key == "own_index")
        _drop_top_level_keys(security / "internal_users.yml", lambda key: key not in ("_meta", ADMIN_USER))
        # The demo's audit log (internal_opensearch) needs an index auto-created (this node allows none) with a
        # replica (a single node stays yellow after the first failed login, and a restart never sees green).
        yml = self.config_dir / "opensearch.yml"
        text = yml.read_text(encoding="utf-8")
        audit = "plugins.security.audit.type: internal_opensearch\n"
        if audit not in text:
            raise NodeUnavailable(f"the demo installer wrote no audit setting to {yml}; has it changed?")
        yml.write_text(text.replace(audit, "plugins.security.audit.type: noop  # was internal_opensearch\n"),
                       encoding="utf-8")

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start the node and wait until the cluster is green; raises NodeUnavailable with the log's tail."""
        if self.running():
            raise NodeUnavailable(f"the node in {self.directory} already runs")
        self.pid_file.unlink(missing_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "OPENSEARCH_JAVA_HOME": str(java_home()),
            "OPENSEARCH_PATH_CONF": str(self.config_dir),
            "OPENSEARCH_TMPDIR": str(self.directory / "tmp"),
        }
        # In the foreground (-q: no console logging; the log file has it all) under a supervisor of our own.
        command = [str(self.distribution / "bin" / "opensearch"), "-q", "-p", str(self.pid_file)]
        supervisor = [sys.executable, "-I", str(Path(__file__).resolve()), "supervise"]
        if _run_as_user() is not None:
            supervisor += ["--user", RUN_AS]
        if self.ephemeral:
            supervisor += ["--remove-when-orphaned", str(self.directory)]
        with open(self.directory / "start.out", "ab") as out:
            self._supervisor = subprocess.Popen(
                [*supervisor, "--", *command], stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                cwd=self.directory, env=dict(os.environ, **env),
                start_new_session=True)  # a Ctrl-C at the terminal reaches us, who stop it cleanly
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self._green():
                    return
                if self._supervisor.poll() is not None:  # the JVM exited
                    break
                time.sleep(0.5)
        except BaseException:  # interrupted (Ctrl-C, SIGTERM turned into KeyboardInterrupt): no half-started node
            self.stop()
            raise
        exited = self._supervisor.poll()
        self.stop()
        reason = f"exited ({exited})" if exited is not None else f"was not green within {timeout:.0f} s"
        raise NodeUnavailable(f"OpenSearch {reason}:\n{self.tail()}")

    def _green(self) -> bool:
        try:
            status, body = self.request("GET", "/_cluster/health?wait_for_status=green&timeout=1s", timeout=3)
        except (OSError, ValueError):
            return False
        return status == 200 and isinstance(body, dict) and body.get("status") == "green"

    def request(self, method: str, path: str, body: object = None, *, auth: tuple[str, str] | None = None,
                timeout: float = 30) -> tuple[int, Any]:
        """One REST call: (status, JSON body, or text when not JSON). A secured node is called over https,
        verified against the demo CA, as `auth` (default: the admin). HTTP errors are returned, not raised."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        context = None
        if self.secured:
            context = ssl.create_default_context(cafile=str(self.ca_file))
            user, password = auth or self.admin  # type: ignore[misc]
            request.add_header("Authorization",
                               "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    # --- users and roles (secured nodes; the security plugin's REST API, as the admin) ----------------------

    def _security(self, method: str, path: str, body: object = None, *, missing_ok: bool = False) -> Any:
        if not self.secured:
            raise NodeUnavailable("an open node has no users or roles")
        full = f"/_plugins/_security/api/{path}"
        status, answer = self.request(method, full, body)
        if status == 404 and missing_ok:
            return None
        if status >= 300:
            raise SecurityApiError(method, full, status, answer)
        return answer

    def create_role(self, name: str, *, cluster_permissions: Iterable[str] = (),
                    index_permissions: Iterable[Mapping[str, Any]] = ()) -> None:
        """Create (or replace) role `name`. `index_permissions` in the plugin's own shape:
        [{"index_patterns": ["team-*"], "allowed_actions": ["crud", "indices:admin/create"]}, …]
        (action groups such as `crud`, `read`, `write`, or action names as the plugin spells them)."""
        self._security("PUT", f"roles/{name}", {"cluster_permissions": list(cluster_permissions),
                                                "index_permissions": [dict(p) for p in index_permissions]})

    def create_user(self, name: str, password: str, *, roles: Sequence[str] = ()) -> None:
        """Create (or replace) internal user `name` and map it to `roles` (added to each role's mapping).
        The plugin checks the password: at least 8 characters and zxcvbn-"strong" (a random one is)."""
        self._security("PUT", f"internalusers/{name}", {"password": password})
        for role in roles:
            self.map_role(role, users=[name])

    def map_role(self, role: str, *, users: Sequence[str]) -> None:
        """Add `users` to `role`'s mapping (created if there is none)."""
        current = self._security("GET", f"rolesmapping/{role}", missing_ok=True) or {}
        mapping = current.get(role, {})
        self._security("PUT", f"rolesmapping/{role}", {
            "users": sorted({*mapping.get("users", []), *users}),
            "backend_roles": mapping.get("backend_roles", []), "hosts": mapping.get("hosts", [])})

    def delete_user(self, name: str) -> None:
        """Remove internal user `name` and its entries in role mappings (a missing user is fine)."""
        mappings = self._security("GET", "rolesmapping") or {}
        for role, mapping in mappings.items():
            if name in mapping.get("users", []) and not mapping.get("reserved") and not mapping.get("hidden"):
                self._security("PUT", f"rolesmapping/{role}", {
                    "users": [user for user in mapping["users"] if user != name],
                    "backend_roles": mapping.get("backend_roles", []), "hosts": mapping.get("hosts", [])})
        self._security("DELETE", f"internalusers/{name}", missing_ok=True)

    def delete_role(self, name: str) -> None:
        """Remove role `name` and its mapping (a missing role is fine)."""
        self._security("DELETE", f"rolesmapping/{name}", missing_ok=True)
        self._security("DELETE", f"roles/{name}", missing_ok=True)

    # --- process ------------------------------------------------------------------------------------------

    def pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def supervisor_pid(self) -> int | None:
        if self._supervisor is None or self._supervisor.poll() is not None:
            return None
        return self._supervisor.pid

    def running(self) -> bool:
        if self.supervisor_pid() is not None:
            return True
        pid = self.pid()
        return pid is not None and _alive(pid)

    def stop(self, timeout: float = 60.0, *, sig: signal.Signals = signal.SIGTERM) -> None:
        """`sig` (SIGTERM: a clean shutdown) by PID, SIGKILL if it lingers; the data stays for a later start()."""
        pid = self.pid()
        supervisor = self._supervisor
        try:
            if pid is not None and _alive(pid):
                os.kill(pid, sig)
            elif supervisor is not None and supervisor.poll() is None:
                supervisor.send_signal(signal.SIGTERM)  # no PID file yet: the supervisor stops its JVM
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.running():
                time.sleep(0.2)
            if self.running():
                if pid is not None and _alive(pid):
                    os.kill(pid, signal.SIGKILL)
                if supervisor is not None and supervisor.poll() is None:
                    supervisor.kill()  # its JVM gets SIGKILL too (parent-death signal)
                while self.running():
                    time.sleep(0.1)
        except ProcessLookupError:
            pass
        finally:
            if supervisor is not None:
                if supervisor.stdin is not None:
                    supervisor.stdin.close()
                supervisor.wait()
            self._supervisor = None
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


def start_node(progress=print, *, secured: bool = False) -> Node:  # noqa: ANN001 - a print-like callable
    """Build (or reuse) the distribution and start a fresh node on free loopback ports."""
    distribution = build(progress, secured=secured)
    node = Node.create(distribution)
    started = time.monotonic()
    try:
        node.start()
    except BaseException:
        node.remove()
        raise
    progress(f"OpenSearch {VERSION}{' (secured)' if secured else ''} green at {node.url} "
             f"after {time.monotonic() - started:.1f} s")
    return node


# --- the supervisor: the JVM's parent, so that no JVM outlives what started it ------------------------------

PR_SET_PDEATHSIG = 1


def _parent_death_signal() -> Callable[[int], None]:
    """A function for the JVM's launcher, between fork and exec (after the switch to RUN_AS, which would
    clear it): the kernel sends the signal when the launcher's parent, the supervisor, dies. Linux only;
    elsewhere a no-op. libc is loaded here, before the fork: the child, already RUN_AS, may not be allowed
    to read Python's own files (under /root, say) to import ctypes."""
    if not sys.platform.startswith("linux"):
        return lambda _sig: None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda sig: prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def supervise(argv: list[str]) -> int:
    """`python -I opensearch_node.py supervise [--user NAME] [--remove-when-orphaned DIR] -- COMMAND…`

    Started by Node.start() with a pipe as stdin whose other end only the starting process holds. Runs
    COMMAND (OpenSearch in the foreground, which execs its JVM) as its child, as NAME, and:
    - exits with the JVM's status when the JVM exits (stopped by its PID, or crashed);
    - SIGTERM/SIGINT/SIGHUP to the supervisor: SIGTERM to the JVM, SIGKILL after ORPHAN_STOP_TIMEOUT;
    - EOF on stdin, i.e. the starting process died however it died (SIGKILL included) or dropped its Node:
      the same, then removes DIR (nobody else is left to);
    - the supervisor itself killed: the kernel SIGKILLs the JVM (PR_SET_PDEATHSIG, set in the launcher).
    Polls every 0.25 s; no threads, so preexec_fn is safe here."""
    user = remove = None
    while argv and argv[0] != "--":
        option, value, argv = argv[0], argv[1], argv[2:]
        if option == "--user":
            user = value
        elif option == "--remove-when-orphaned":
            remove = value
        else:
            raise SystemExit(f"supervise: unknown option {option}")
    command = argv[1:]
    me = os.getpid()
    die_with_parent = _parent_death_signal()

    def launcher_setup() -> None:
        die_with_parent(signal.SIGKILL)
        if os.getppid() != me:  # the supervisor died before the line above: do not start at all
            os._exit(1)

    options: dict[str, Any] = {}
    env = dict(os.environ)
    if user is not None:
        account = pwd.getpwnam(user)
        options = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
        env.update(HOME=account.pw_dir, USER=user, LOGNAME=user)
    stop_requested: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        stop_requested.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, env=env, preexec_fn=launcher_setup, **options)
    print(f"[supervisor {me}] started {command[0]} as pid {child.pid}", flush=True)
    orphaned = False
    while child.poll() is None and not stop_requested:
        ready, _, _ = select.select([0], [], [], 0.25)
        if ready and not os.read(0, 4096):
            orphaned = True
            break
    if child.poll() is None:
        why = "the starting process is gone" if orphaned else f"signal {stop_requested[0]}"
        print(f"[supervisor {me}] {why}: stopping the JVM", flush=True)
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(ORPHAN_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    if orphaned and remove:
        shutil.rmtree(remove, ignore_errors=True)
    code = child.returncode
    return 128 - code if code < 0 else code


def main(argv: list[str]) -> int:
    command, flags = (argv[0], argv[1:]) if argv else ("run", [])
    if command == "supervise":
        return supervise(flags)
    if command not in ("build", "run") or set(flags) - {"--secured"}:
        print("usage: python -m tests.support.opensearch_node [build|run] [--secured]", file=sys.stderr)
        return 2
    secured = "--secured" in flags
    try:
        if command == "build":
            print(build(secured=secured))
            return 0
        return _run(secured)
    except NodeUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _run(secured: bool) -> int:
    """Start a node, print how to reach it, stop it on Ctrl-C, SIGTERM or SIGHUP (and, through its supervisor,
    when this process dies any other way)."""
    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)
    node = None
    try:
        node = start_node(secured=secured)
        if secured:
            user, password = node.admin  # type: ignore[misc]
            cert, key = node.admin_cert  # type: ignore[misc]
            print(f"OPENSEARCH_CA={node.ca_file}\nOPENSEARCH_USER={user}\nOPENSEARCH_PASSWORD={password}\n"
                  f"OPENSEARCH_CLIENT_CERT={cert}  (the demo admin certificate, CN=kirk)\n"
                  f"OPENSEARCH_CLIENT_KEY={key}\n"
                  f"try: curl --cacert {node.ca_file} -u '{user}:{password}' {node.url}", flush=True)
        print(f"OPENSEARCH_URL={node.url}  (Ctrl-C or SIGTERM stops it; data in {node.directory})", flush=True)
        while True:
            signal.pause()
    except KeyboardInterrupt:
        return 0
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean stop short
        if node is not None:
            node.remove()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
