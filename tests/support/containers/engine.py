"""A Docker engine for the container tests: the one that answers, or `dockerd` started here. Only an engine
started here is stopped afterwards (Engine.stop), with the containerd it started."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.opensearch.settings import cache_dir

START_WITHIN = 60.0


class ContainersUnavailable(Exception):
    """What the container tests need is missing here; the message says what to install."""


def answers() -> bool:
    """A Docker engine answers the CLI (`docker info`)."""
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@dataclass
class Engine:
    started: bool
    pid: int | None = None
    log: Path | None = None
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def ensure(cls, progress=print) -> Engine:  # noqa: ANN001 - a print-like callable
        """The engine that answers, else `dockerd` started now (as root: it needs to be)."""
        if answers():
            progress("a Docker engine answers: using it")
            return cls(started=False)
        if shutil.which("docker") is None:
            raise ContainersUnavailable("no docker CLI: apt-get install docker.io")
        dockerd = shutil.which("dockerd")
        if dockerd is None:
            raise ContainersUnavailable("no Docker engine answers and dockerd is not installed: "
                                        "apt-get install docker.io (or start your engine)")
        if os.geteuid() != 0:
            raise ContainersUnavailable("no Docker engine answers, and starting dockerd needs root")
        log = cache_dir() / "dockerd.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with open(log, "ab") as out:
            process = subprocess.Popen([dockerd], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        engine = cls(started=True, pid=process.pid, log=log, _process=process)
        while time.monotonic() - started < START_WITHIN:
            if process.poll() is not None:
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-10:])
                raise ContainersUnavailable(f"dockerd exited ({process.returncode}):\n{tail}")
            if answers():
                progress(f"started dockerd (pid {process.pid}) in {time.monotonic() - started:.1f} s; log {log}")
                return engine
            time.sleep(0.5)
        engine.stop()
        raise ContainersUnavailable(f"dockerd did not answer within {START_WITHIN:.0f} s (log {log})")

    def stop(self, progress=print) -> None:  # noqa: ANN001
        """Stop dockerd and what it started (containerd), if we started it; an engine found running stays."""
        if not self.started or self.pid is None:
            return
        children = _children(self.pid)
        if _alive(self.pid):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (_alive(self.pid) or any(_alive(c) for c in children)):
            time.sleep(0.2)
        for pid in [self.pid, *children]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if self._process is not None:
            self._process.wait(10)
        progress(f"stopped dockerd (pid {self.pid}) and the {len(children)} process(es) it started")
        self.started = False
