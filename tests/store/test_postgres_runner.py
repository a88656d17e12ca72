"""`make postgres` (python -m bench.lib.postgres run): a throwaway PostgreSQL from the machine's binaries that prints
the line `memory serve` needs, serves a database `memory` at it, and is gone -- data removed -- on SIGTERM
(issue 57: nothing said where a local PostgreSQL for the scale-out deployment comes from)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from bench.lib import postgres

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
def test_it_prints_the_url_serves_it_and_is_gone_after_sigterm(pg_cluster: postgres.Cluster) -> None:
    del pg_cluster  # the session's cluster: PostgreSQL's binaries are here (the fixture says why if not)
    process = subprocess.Popen([sys.executable, "-m", "bench.lib.postgres", "run"], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert process.stdout is not None
        first, second = process.stdout.readline().strip(), process.stdout.readline().strip()
        assert first.startswith("export MEMORY_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:"), first
        url = first.split("=", 1)[1]
        assert url.endswith("/memory") and "Ctrl-C or SIGTERM stops it" in second
        data = Path(second.rsplit(" in ", 1)[1].rstrip(")"))
        engine = sa.create_engine(url)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT current_database()")).scalar_one() == "memory"
        engine.dispose()
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
        assert not data.exists()
    finally:
        if process.poll() is None:
            process.kill()
