"""One single-node cluster on loopback (Node: create, start and wait for green, stop, start again, remove;
REST calls and opensearch-py options) and `start_node`, what the tests call: build or reuse, create, start."""

from __future__ import annotations

import base64
import json
import os
import pwd
import re
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.lib.waiting import until
from tests.support.opensearch import supervisor as supervisor_script
from tests.support.opensearch.build import build
from tests.support.opensearch.security import NodeSecurity, new_admin_password
from tests.support.opensearch.settings import (ADMIN_USER, DEMO_ADMIN_CERT, DEMO_ADMIN_KEY, DEMO_CA, HEAP, HOST,
                                               RUN_AS, SECURITY_PLUGIN, SIMD, START_TIMEOUT, VECTOR_MODULE_OPTION,
                                               VERSION, NodeUnavailable, cache_dir, java_home)

SUPERVISOR = Path(supervisor_script.__file__).resolve()  # run by path with `python -I`: see supervisor.py


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



@dataclass
class Node(NodeSecurity):
    """One single-node cluster on loopback: `start()`, `stop()`, and `start()` again on the same data.

    The JVM runs under a supervisor process of this package (supervisor.py): it lives as long as this
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
                   secured=secured, admin_password=new_admin_password() if secured else "", ephemeral=True)
        try:
            node._lay_out(secured)
        except BaseException:  # a failed installer, say: no half-made node directory left behind
            shutil.rmtree(node.directory, ignore_errors=True)
            raise
        return node

    def _lay_out(self, secured: bool) -> None:
        """create()'s work in the fresh directory: config, data, logs, tmp; the demo security when secured; owned
        by RUN_AS."""
        node, distribution = self, self.distribution
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
        if not SIMD:  # OPENSEARCH_TEST_SIMD=off: Lucene's vector code without the JDK's vector module
            options = "\n".join(f"# (OPENSEARCH_TEST_SIMD=off) {line}" if line.endswith(VECTOR_MODULE_OPTION) else line
                                 for line in options.splitlines()) + "\n"
        (config / "jvm.options").write_text(options, encoding="utf-8")
        (config / "jvm.options.d" / "memory-test.options").write_text(f"-Xms{HEAP}\n-Xmx{HEAP}\n", encoding="utf-8")
        if secured:
            node._install_demo_security()
            node._least_privilege_baseline()
        user = _run_as_user()
        if user is not None:
            for path in [node.directory, *node.directory.rglob("*")]:
                os.chown(path, user.pw_uid, user.pw_gid, follow_symlinks=False)

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
        supervising = [sys.executable, "-I", str(SUPERVISOR), "supervise"]
        if _run_as_user() is not None:
            supervising += ["--user", RUN_AS]
        if self.ephemeral:
            supervising += ["--remove-when-orphaned", str(self.directory)]
        with open(self.directory / "start.out", "ab") as out:
            self._supervisor = subprocess.Popen(
                [*supervising, "--", *command], stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                cwd=self.directory, env=dict(os.environ, **env),
                start_new_session=True)  # a Ctrl-C at the terminal reaches us, who stop it cleanly
        supervisor = self._supervisor

        def green_or_exited() -> str | None:
            if self._green():
                return "green"
            return "exited" if supervisor.poll() is not None else None  # the JVM exited: no use waiting

        try:
            state = until(green_or_exited, timeout, every=0.5, what=f"the node in {self.directory} turning green")
            if state == "green":
                return
        except TimeoutError:
            pass  # said below, with the node's log
        except BaseException:  # interrupted (Ctrl-C, SIGTERM turned into KeyboardInterrupt): no half-started node
            self.stop()
            raise
        exited = supervisor.poll()
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

    def vector_simd(self) -> str:
        """What Lucene said of its vector code when the node started (its log): the line, or why there is none."""
        try:
            log = self.log_file.read_text(errors="replace")
        except OSError:
            return "unknown (no log)"
        said = re.search(r"(?:INFO|WARNING): (.*vector incubator.*)$", log, re.MULTILINE)
        if said:
            return said.group(1).strip()
        return "no line about it in the log (Lucene's scalar vector code: no vector module on this JDK)"

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
             f"after {time.monotonic() - started:.1f} s on {java_home()}; Lucene vector SIMD: {node.vector_simd()}")
    return node

