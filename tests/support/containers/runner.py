"""`python -m tests.support.containers prepare|test|stop` (`make test-containers` is `test`): see the package's
docstring."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.containers import compose, images
from tests.support.containers.engine import ContainersUnavailable, Engine
from tests.support.opensearch.settings import cache_dir

REPO = Path(__file__).resolve().parents[3]
STATE = cache_dir() / "containers" / "engine.json"  # an engine `prepare` started and left running
# What the container tests run with: Ryuk's image cannot be pulled here (the tests stop their own containers).
TEST_ENV = {"TESTCONTAINERS_RYUK_DISABLED": "true"}
# Every test marked `containers` (tests/containers, and the container parameters of the backend contract suite
# and the outage tests); the default run deselects them.
PYTEST = ["-m", "containers", "-p", "no:cacheprovider"]


def say(line: str) -> None:
    print(f"[containers] {line}", flush=True)


def prepare() -> Engine:
    started = time.monotonic()
    engine = Engine.ensure(say)
    try:
        images.build_all(say)
        compose.ensure(say)
    except BaseException:
        engine.stop(say)
        raise
    say(f"ready in {time.monotonic() - started:.0f} s")
    return engine


def test(args: list[str]) -> int:
    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    engine = prepare()
    try:
        command = [sys.executable, "-m", "pytest", *PYTEST, *args]
        say("running " + " ".join(command[2:]))
        return subprocess.run(command, cwd=REPO, env=dict(os.environ, **TEST_ENV)).returncode
    except KeyboardInterrupt:
        return 130
    finally:
        engine.stop(say)


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("test", [])
    try:
        if command == "test":
            return test(rest)
        if command == "prepare":
            engine = prepare()
            if engine.started:
                STATE.parent.mkdir(parents=True, exist_ok=True)
                STATE.write_text(json.dumps({"pid": engine.pid}), encoding="utf-8")
                say(f"the engine stays up: `python -m tests.support.containers stop` stops it (pid {engine.pid})")
            return 0
        if command == "stop":
            if STATE.exists():
                Engine(started=True, pid=json.loads(STATE.read_text())["pid"]).stop(say)
                STATE.unlink()
            else:
                say("no engine of ours runs")
            return 0
    except ContainersUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("usage: python -m tests.support.containers [test [PYTEST ARGS…]|prepare|stop]", file=sys.stderr)
    return 2
