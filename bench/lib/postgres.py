"""A throwaway PostgreSQL cluster (for the test session, bench/summary.py and `make postgres`), from the machine's
own binaries.

TEST_DATABASE_URL (a server you run) wins. Otherwise initdb + pg_ctl from /usr/lib/postgresql/*/bin
(or PATH) into a temp dir on a free port; as root they run as the `postgres` user (PostgreSQL refuses
root). When neither is possible the Postgres tests skip, and say why.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.lib.until_stopped import serve_until_stopped


class PostgresUnavailable(Exception):
    pass


def _bindir() -> Path:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for c in candidates:
        if Path(c, "initdb").exists():
            return Path(c)
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise PostgresUnavailable("PostgreSQL server binaries (initdb, pg_ctl) not found; install postgresql")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    url: str  # postgresql+psycopg://postgres@127.0.0.1:PORT/postgres
    datadir: Path | None
    _stop: list[str] | None

    def stop(self) -> None:
        if self._stop:
            subprocess.run(self._stop, check=False, capture_output=True, timeout=60)
        if self.datadir:
            shutil.rmtree(self.datadir.parent, ignore_errors=True)


def start_cluster() -> Cluster:
    bindir = _bindir()
    base = Path(tempfile.mkdtemp(prefix="memtest-pg-"))
    datadir, sockdir = base / "data", base / "sock"
    sockdir.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError as exc:
            raise PostgresUnavailable("running as root and there is no `postgres` user to run the server") from exc
        os.chown(base, pw.pw_uid, pw.pw_gid)
        os.chown(sockdir, pw.pw_uid, pw.pw_gid)
        os.chmod(base, 0o755)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()

    def run(args: list[str], timeout: int = 120) -> None:
        result = subprocess.run(prefix + args, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise PostgresUnavailable(f"{args[0]} failed: {result.stderr.strip() or result.stdout.strip()}")

    run([str(bindir / "initdb"), "-D", str(datadir), "-U", "postgres", "--auth=trust", "-E", "UTF8",
         "--no-sync"])
    options = f"-p {port} -k {sockdir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off " \
              f"-c synchronous_commit=off -c max_connections=200"
    run([str(bindir / "pg_ctl"), "-D", str(datadir), "-o", options, "-l", str(base / "log"), "-w", "start"])
    stop = prefix + [str(bindir / "pg_ctl"), "-D", str(datadir), "-m", "immediate", "-w", "stop"]
    return Cluster(url=f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres", datadir=datadir, _stop=stop)


def from_env() -> Cluster | None:
    url = os.environ.get("TEST_DATABASE_URL")
    if not url:
        return None
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return Cluster(url=url, datadir=None, _stop=None)


def fresh_database(admin_url: str, name: str, template: str | None = None) -> str:
    """CREATE DATABASE name on the cluster (a copy of `template` when given: a database nobody is connected to)
    and return its URL."""
    import sqlalchemy as sa

    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    deadline = time.time() + 30
    while True:
        try:
            with engine.connect() as conn:
                conn.execute(sa.text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
            break
        except sa.exc.OperationalError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    engine.dispose()
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


@contextmanager
def throwaway_database(name: str) -> Iterator[str | None]:
    """A fresh database `name` on TEST_DATABASE_URL's server, else on a cluster started for the block (and
    stopped after it); None (with the reason printed) when neither is possible."""
    cluster = from_env()
    started = None
    if cluster is None:
        try:
            cluster = started = start_cluster()
        except PostgresUnavailable as exc:
            print(f"\n[postgres] skipped: {exc}")
            yield None
            return
    try:
        yield fresh_database(cluster.url, name)
    finally:
        if started is not None:
            started.stop()


def run_until_stopped() -> int:
    """`make postgres`: a throwaway cluster with a database `memory`, until Ctrl-C, SIGTERM or SIGHUP; prints the
    line `memory serve` needs. Its data is removed when it stops (fsync is off: it is for trying the scale-out
    deployment and for development, never for facts to keep)."""
    def announce(cluster: Cluster) -> None:
        url = fresh_database(cluster.url, "memory")
        print(f"export MEMORY_DATABASE_URL={url}", flush=True)
        print(f"(a throwaway PostgreSQL: Ctrl-C or SIGTERM stops it and removes its data in {cluster.datadir})",
              flush=True)

    try:
        return serve_until_stopped(start_cluster, announce, Cluster.stop)
    except PostgresUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    if sys.argv[1:] != ["run"]:
        sys.exit("usage: python -m bench.lib.postgres run")
    sys.exit(run_until_stopped())
