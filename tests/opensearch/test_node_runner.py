"""The local OpenSearch node never outlives what started it (tests/support/opensearch_node.py).

`python -m tests.support.opensearch_node run` (what `make opensearch` runs) is started as a subprocess and
then stopped in each way it can end: SIGINT (Ctrl-C), SIGTERM, SIGKILL of the runner itself (no goodbye:
the node's own supervisor notices), and a pytest session holding the `real_opensearch` node killed with
SIGKILL. Each time the node's JVM must be gone within GONE_WITHIN seconds, and its directory removed. One
more: the supervisor itself killed with SIGKILL takes its JVM along (the JVM's parent-death signal). And
`run --secured` prints a URL, CA, admin credentials and admin certificate that work, and stops on SIGTERM.
The ways to stop are the runner's and its supervisor's Python, the same for every version (`one_version`: the 3.5.0
pass of `make test` leaves them out); `run --secured` runs on both.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from opensearchpy import OpenSearch

from tests.support import opensearch_node
from bench.lib.waiting import until

pytestmark = pytest.mark.opensearch

REPO = Path(__file__).resolve().parents[2]
START_WITHIN = opensearch_node.START_TIMEOUT + 60  # build (cached) + start to green
GONE_WITHIN = 45.0  # a clean shutdown takes a few seconds; the supervisor escalates to SIGKILL after 30 s


@pytest.fixture(scope="module")
def distribution() -> Path:
    """The open node's tree, built once (a skip, or under CI a failure, when it cannot be built here)."""
    try:
        return opensearch_node.build(progress=lambda line: print(f"[opensearch] {line}", flush=True))
    except opensearch_node.NodeUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the local OpenSearch node cannot be built: {exc}")
        pytest.skip(f"the local OpenSearch node cannot be built here: {exc}")


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's zombie may wait for a reaper that never comes)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def is_opensearch(pid: int) -> bool:
    try:
        return b"org.opensearch.bootstrap.OpenSearch" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def wait_gone(pid: int, within: float = GONE_WITHIN) -> float:
    """Seconds until `pid` was gone; fails the test if it still runs after `within`."""
    started = time.monotonic()
    until(lambda: not alive(pid), within, every=0.2, what=f"the node's JVM (pid {pid}) gone")
    return time.monotonic() - started


def wait_removed(directory: Path, within: float = 10.0) -> None:
    until(lambda: not directory.exists(), within, every=0.2, what=f"{directory} is left behind")


def jvm_of(directory: Path) -> int:
    """The JVM serving the node in `directory`, by the config path on its command line."""
    needle = f"-Dopensearch.path.conf={directory / 'config'}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if needle in cmdline.split(b"\0") and alive(int(entry.name)):
                return int(entry.name)
    raise AssertionError(f"no OpenSearch JVM runs with its config in {directory}")


class Lines:
    """A subprocess's output, read by a thread so that waiting for a line has a deadline."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert process.stdout is not None
        stdout = process.stdout
        threading.Thread(target=lambda: [self.lines.put(line) for line in stdout], daemon=True).start()

    def wait_for(self, prefix: str, within: float) -> str:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                continue
            self.seen.append(line.rstrip())
            if line.startswith(prefix):
                return line.rstrip()
        raise AssertionError(f"no line starting with {prefix!r} within {within:.0f} s:\n" + "\n".join(self.seen))


@dataclass
class Started:
    process: subprocess.Popen[str]
    directory: Path
    jvm: int


@pytest.fixture
def started() -> Iterator[list[Started]]:
    """What a test started; whatever survives the test is killed here (never leave a JVM behind)."""
    runs: list[Started] = []
    yield runs
    for run in runs:
        if run.process.poll() is None:
            run.process.kill()
            run.process.wait(10)
        if alive(run.jvm) and is_opensearch(run.jvm):
            os.kill(run.jvm, signal.SIGKILL)
        shutil.rmtree(run.directory, ignore_errors=True)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_node(started: list[Started], *flags: str, sigint_ignored: bool = False) -> tuple[Started, dict[str, str]]:
    """`python -m tests.support.opensearch_node run` until it prints the URL: its node's directory and JVM,
    and the NAME=value lines it printed. `sigint_ignored`: started as a shell without job control starts a
    background job (`make opensearch &` in a script), with SIGINT ignored, which exec passes on."""
    process = subprocess.Popen([sys.executable, "-m", "tests.support.opensearch_node", "run", *flags], cwd=REPO,
                               env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               preexec_fn=_ignore_sigint if sigint_ignored else None)
    lines = Lines(process)
    try:
        line = lines.wait_for("OPENSEARCH_URL=", START_WITHIN)
    except AssertionError:
        process.kill()
        raise
    directory = Path(line.split("data in ", 1)[1].rstrip(")"))
    run = Started(process, directory, jvm_of(directory))
    started.append(run)
    assert is_opensearch(run.jvm)
    printed = dict(line.split("  ")[0].split("=", 1) for line in lines.seen if line.startswith("OPENSEARCH_"))
    return run, printed


@pytest.mark.one_version
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_the_runner_stops_the_jvm(distribution: Path, started: list[Started],
                                              sig: signal.Signals) -> None:
    """SIGINT is sent to a runner that inherited it ignored (a background job of a script): the runner's own
    handler must stop the node all the same (it is the one handler in both cases)."""
    run, _ = run_node(started, sigint_ignored=sig == signal.SIGINT)
    run.process.send_signal(sig)
    took = wait_gone(run.jvm)
    assert run.process.wait(GONE_WITHIN) == 0  # a clean stop, not a death by the signal
    assert not run.directory.exists()
    print(f"{sig.name}: JVM gone after {took:.1f} s")


@pytest.mark.secured
def test_run_secured_prints_how_to_connect_and_sigterm_stops_it(started: list[Started]) -> None:
    try:
        opensearch_node.build(secured=True)
    except opensearch_node.NodeUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the secured node cannot be built: {exc}")
        pytest.skip(f"the secured node cannot be built here: {exc}")
    run, printed = run_node(started, "--secured")
    assert printed["OPENSEARCH_URL"].startswith("https://")
    client = OpenSearch(hosts=[printed["OPENSEARCH_URL"]], use_ssl=True, verify_certs=True,
                        ca_certs=printed["OPENSEARCH_CA"],
                        http_auth=(printed["OPENSEARCH_USER"], printed["OPENSEARCH_PASSWORD"]))
    assert client.cluster.health()["status"] == "green"
    mtls = OpenSearch(hosts=[printed["OPENSEARCH_URL"]], use_ssl=True, verify_certs=True,
                      ca_certs=printed["OPENSEARCH_CA"], client_cert=printed["OPENSEARCH_CLIENT_CERT"],
                      client_key=printed["OPENSEARCH_CLIENT_KEY"])
    assert mtls.info()["version"]["number"] == opensearch_node.VERSION
    run.process.send_signal(signal.SIGTERM)
    took = wait_gone(run.jvm)
    assert run.process.wait(GONE_WITHIN) == 0
    assert not run.directory.exists()
    print(f"secured, SIGTERM: JVM gone after {took:.1f} s")


@pytest.mark.one_version
def test_the_runner_killed_takes_the_jvm_along(distribution: Path, started: list[Started]) -> None:
    run, _ = run_node(started)
    run.process.kill()  # SIGKILL: the runner cannot clean up
    run.process.wait(10)
    took = wait_gone(run.jvm)
    wait_removed(run.directory)  # by the supervisor: nobody else is left to
    print(f"runner SIGKILL: JVM gone after {took:.1f} s")


@pytest.mark.one_version
def test_a_killed_test_session_takes_its_node_along(distribution: Path, started: list[Started],
                                                    tmp_path: Path) -> None:
    """A pytest session that got its node from the `real_opensearch` fixture, killed mid-test."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_hold.py").write_text(textwrap.dedent("""
        import time
        from tests.support.clusters import open_opensearch, real_opensearch, secured_opensearch  # noqa: F401

        def test_hold(real_opensearch):
            print("NODE_URL=" + real_opensearch.url, flush=True)
            time.sleep(600)
        """), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key not in ("OPENSEARCH_URL", "CI")}
    env.update(PYTHONPATH=str(REPO), TEST_OPENSEARCH="local")
    process = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                                "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
                                str(tmp_path / "test_hold.py")],
                               cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = Lines(process)
    try:
        url = lines.wait_for("NODE_URL=", START_WITHIN).split("=", 1)[1]
    except AssertionError:
        process.kill()
        raise
    port = url.rsplit(":", 1)[1]
    nodes = opensearch_node.cache_dir() / "nodes"
    directory = next(config.parent.parent for config in nodes.glob("*/config/opensearch.yml")
                     if f"http.port: {port}\n" in config.read_text())
    run = Started(process, directory, jvm_of(directory))
    started.append(run)
    process.kill()
    process.wait(10)
    took = wait_gone(run.jvm)
    wait_removed(run.directory)
    print(f"pytest session SIGKILL: JVM gone after {took:.1f} s")


@pytest.mark.one_version
def test_the_supervisor_killed_takes_the_jvm_along(distribution: Path) -> None:
    """The last line of defence: the JVM's parent-death signal, should its supervisor be killed."""
    node = opensearch_node.Node.create(distribution)
    try:
        node.start()
        jvm = node.pid()
        assert jvm is not None and is_opensearch(jvm)
        supervisor = node.supervisor_pid()
        assert supervisor is not None
        os.kill(supervisor, signal.SIGKILL)
        took = wait_gone(jvm)
        print(f"supervisor SIGKILL: JVM gone after {took:.1f} s")
    finally:
        jvm = node.pid()
        if jvm is not None and alive(jvm) and is_opensearch(jvm):
            os.kill(jvm, signal.SIGKILL)
        node.remove()
