"""A real single-node OpenSearch for the tests, built from Maven Central artifacts only: the names callers use.

    python -m tests.support.opensearch_node build     # fetch + lay out once (cached), print where
    OPENSEARCH_TEST_VERSION=3.5.0 python -m …        # the same for OpenSearch 3.5.0 (default 2.19.1)
    python -m tests.support.opensearch_node run       # build if needed, start, print the URL; Ctrl-C/SIGTERM stop it
    python -m tests.support.opensearch_node run --secured  # the secured variant: also CA, admin, cert
    make opensearch / make opensearch-secured          # the same as `run` / `run --secured`
    OPENSEARCH_TEST_VERSION=3.5.0 python -m … neural-search-zip  # 3.x: build the neural-search plugin zip
                                                      # (make opensearch-neural-search-3)
    OPENSEARCH_TEST_VERSION=3.5.0 python -m … security-zip  # 3.x: build the security plugin zip (make opensearch-security-3)

A facade: the code lives in the package tests/support/opensearch/ (its docstring tells what the node is and
how it is built, run, secured and supervised; settings.py, build.py, node.py, security.py, supervisor.py,
runner.py), and this module re-exports what the tests, clusters.py and the Makefile use.
"""

from __future__ import annotations

import sys

from tests.support.opensearch.build import (MODULES, PAINLESS_POLICY, POM, build, build_neural_search_zip,
                                            build_security_zip, fetch)
from tests.support.opensearch.node import Node, start_node
from tests.support.opensearch.runner import main
from tests.support.opensearch.security import SecurityApiError
from tests.support.opensearch.settings import (ADMIN_USER, DEFAULT_VERSION, DEMO_ADMIN_CERT, DEMO_ADMIN_KEY, DEMO_CA,
                                               HEAP, HOST, MAJOR, PLUGIN_VERSION, PLUGINS, RUN_AS, SECURITY_PLUGIN,
                                               SECURITY_PLUGIN_AVAILABLE, START_TIMEOUT, VERSION, NodeUnavailable,
                                               cache_dir, home, java_home, neural_search_zip,
                                               security_plugin_missing, security_plugin_zip)
from tests.support.opensearch.supervisor import ORPHAN_STOP_TIMEOUT, supervise

__all__ = [
    "ADMIN_USER", "DEFAULT_VERSION", "MAJOR", "SECURITY_PLUGIN_AVAILABLE", "neural_search_zip", "security_plugin_missing",
    "security_plugin_zip", "build_neural_search_zip", "build_security_zip",
    "DEMO_ADMIN_CERT", "DEMO_ADMIN_KEY", "DEMO_CA", "HEAP", "HOST", "MODULES", "ORPHAN_STOP_TIMEOUT",
    "PAINLESS_POLICY", "PLUGINS", "PLUGIN_VERSION", "POM", "RUN_AS", "SECURITY_PLUGIN", "START_TIMEOUT", "VERSION",
    "Node", "NodeUnavailable", "SecurityApiError", "build", "cache_dir", "fetch", "home", "java_home", "main",
    "start_node", "supervise",
]

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
