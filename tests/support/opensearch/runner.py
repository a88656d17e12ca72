"""The command line (`python -m tests.support.opensearch_node build|run [--secured]`, `make opensearch`,
`make opensearch-secured`): build and print where, or start a node, print how to reach it, and stop it on
Ctrl-C, SIGTERM or SIGHUP; and `neural-search-zip` (`make opensearch-neural-search-3`), `security-zip`
(`make opensearch-security-3`): build that 3.x plugin zip into the cache directory unless it is there."""

from __future__ import annotations

import sys
from typing import Any

from bench.lib.until_stopped import serve_until_stopped
from tests.support.opensearch.build import build, build_neural_search_zip, build_security_zip
from tests.support.opensearch.node import start_node
from tests.support.opensearch.settings import NodeUnavailable
from tests.support.opensearch.supervisor import supervise


# The 3.x plugin zips built from source (Maven Central serves neither): command -> builder.
PLUGIN_ZIP_BUILDERS = {"neural-search-zip": build_neural_search_zip, "security-zip": build_security_zip}


def main(argv: list[str]) -> int:
    command, flags = (argv[0], argv[1:]) if argv else ("run", [])
    if command == "supervise":
        return supervise(flags)
    if command in PLUGIN_ZIP_BUILDERS and not flags:
        try:
            print(PLUGIN_ZIP_BUILDERS[command]())
            return 0
        except NodeUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    if command not in ("build", "run") or set(flags) - {"--secured"}:
        print("usage: python -m tests.support.opensearch_node [build|run] [--secured] | neural-search-zip | "
              "security-zip", file=sys.stderr)
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
    def announce(node: Any) -> None:
        if secured:
            user, password = node.admin
            cert, key = node.admin_cert
            print(f"OPENSEARCH_CA={node.ca_file}\nOPENSEARCH_USER={user}\nOPENSEARCH_PASSWORD={password}\n"
                  f"OPENSEARCH_CLIENT_CERT={cert}  (the demo admin certificate, CN=kirk)\n"
                  f"OPENSEARCH_CLIENT_KEY={key}\n"
                  f"try: curl --cacert {node.ca_file} -u '{user}:{password}' {node.url}", flush=True)
        print(f"OPENSEARCH_URL={node.url}  (Ctrl-C or SIGTERM stops it; data in {node.directory})", flush=True)
        # What the service reads (the lines above are the test suite's): ready to paste into a shell.
        service = f"export MEMORY_SEARCH=opensearch MEMORY_OPENSEARCH_URL={node.url}"
        if secured:
            service += (f" MEMORY_OPENSEARCH_CA_CERTS={node.ca_file} MEMORY_OPENSEARCH_USERNAME={user}"
                        f" MEMORY_OPENSEARCH_PASSWORD='{password}'")
        print(f"for memory serve: {service}", flush=True)

    return serve_until_stopped(lambda: start_node(secured=secured), announce, lambda node: node.remove())
