"""An unexpected crash of a `memory` command prints a traceback (typer's, through sys.excepthook) but no secret
(issue 25): the typer apps do not print local variables, and nothing the service holds puts the OpenSearch
password in a message. The crash is forced where the password is most in scope: inside a request to the
cluster, after the Authorization header is made (a RecursionError, which opensearch-py lets through unwrapped),
in a real `memory check` process. No cluster is needed: the request never leaves.

Run for both ways of giving the password: the separate settings, and a URL's user:password@ (the only way
before issue 25; then the URL, a local of several frames, held it).
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import certifi
import pytest

pytestmark = pytest.mark.process  # a real `memory check` process: not in the fast tier (Makefile FAST)

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Walrus-Lantern-4471-pw"
USER = "memory"
CRASH = """
import sys, urllib3
def crash(self, *args, **kwargs):
    raise RecursionError("simulated crash while a request to OpenSearch is on its way")
urllib3.HTTPConnectionPool.urlopen = crash
from service.cli.main import app
sys.argv = ["memory", *sys.argv[1:]]
app()
"""


def leaks(text: str) -> list[str]:
    forms = {"password": SECRET, "url-quoted": quote(SECRET, safe=""),
             "basic header": base64.b64encode(f"{USER}:{SECRET}".encode()).decode()}
    return [name for name, form in forms.items() if form in text]


@pytest.mark.parametrize("given", ["settings", "url userinfo"])
def test_a_crash_inside_a_request_prints_no_secret(tmp_path: Path, given: str) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MEMORY_", "TYPER_", "_TYPER"))}
    env.update({"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_EMBEDDER": "none", "MEMORY_SEARCH": "opensearch",
                "MEMORY_OPENSEARCH_CA_CERTS": certifi.where(), "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    if given == "settings":
        env.update({"MEMORY_OPENSEARCH_URL": "https://search.internal:9200", "MEMORY_OPENSEARCH_USERNAME": USER,
                    "MEMORY_OPENSEARCH_PASSWORD": SECRET})
    else:
        env["MEMORY_OPENSEARCH_URL"] = f"https://{USER}:{SECRET}@search.internal:9200"

    def memory(*args: str, script: str = "from service.cli.main import app; app()") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", script, *args], env=env, cwd=ROOT, capture_output=True,
                              text=True, timeout=120)

    created = memory("profile", "create", "alpha")
    assert created.returncode == 0, created.stderr
    crashed = memory("check", script=CRASH)
    output = crashed.stdout + crashed.stderr
    assert crashed.returncode == 1
    assert "RecursionError" in output and "simulated crash while a request" in output  # a traceback was printed
    assert "perform_request" in output  # down to the request, where the header is a local
    assert not leaks(output), (leaks(output), output)
