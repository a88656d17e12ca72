"""The supervisor: the JVM's parent, so that no JVM outlives what started it.

Run by Node.start() as `python -I supervisor.py supervise …` (isolated mode, by file path: neither this
folder nor the project is on sys.path), so this file imports the standard library only and names its own
constants. (node.py imports it for its path; runner.py's `supervise` command and the facade call it too.)"""

from __future__ import annotations

import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

ORPHAN_STOP_TIMEOUT = 30.0  # an orphaned node gets SIGTERM, then SIGKILL after this long
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
    """`python -I supervisor.py supervise [--user NAME] [--remove-when-orphaned DIR] -- COMMAND…`

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


if __name__ == "__main__":
    if sys.argv[1:2] != ["supervise"]:
        raise SystemExit("usage: python -I supervisor.py supervise [--user NAME] [--remove-when-orphaned DIR] "
                         "-- COMMAND…")
    raise SystemExit(supervise(sys.argv[2:]))
