"""What the local node is pinned to and where it lives: the versions and names every other module of this
package shares, the cache directory, the JDK, and the one error a caller catches (NodeUnavailable)."""

from __future__ import annotations

import glob
import os
from pathlib import Path

VERSION = "2.19.1"  # the one pin: core, modules and plugins (plugins are VERSION + ".0")
PLUGIN_VERSION = f"{VERSION}.0"
PLUGINS = ("opensearch-knn", "neural-search")  # install order: neural-search extends k-NN
RUN_AS = "memory-opensearch"  # the unprivileged user a root caller runs the node as
HEAP = "512m"  # fits 2 cores / 24 GB next to the tests; the test indices are small
START_TIMEOUT = 180.0
HOST = "127.0.0.1"  # loopback only
SECURITY_PLUGIN = "opensearch-security"  # the secured variant's third plugin (org.opensearch.plugin, zip)
ADMIN_USER = "admin"  # the demo configuration's admin (its password is generated per node)
DEMO_CA, DEMO_ADMIN_CERT, DEMO_ADMIN_KEY = "root-ca.pem", "kirk.pem", "kirk-key.pem"  # in the node's config


class NodeUnavailable(Exception):
    """The node cannot be built or started here; the message says what is missing."""


def cache_dir() -> Path:
    """Where built distributions and node directories live: readable by RUN_AS, so never under /root."""
    configured = os.environ.get("MEMORY_TEST_CACHE")
    if configured:
        return Path(configured)
    if os.geteuid() == 0:
        return Path("/var/tmp/memory-service")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "memory-service"


def java_home() -> Path:
    """A JDK OpenSearch 2.19 runs on: OPENSEARCH_JAVA_HOME, else a JDK 17 (a newer one may drop the Security Manager)."""
    configured = os.environ.get("OPENSEARCH_JAVA_HOME")
    if configured:
        return Path(configured)
    for candidate in sorted(glob.glob("/usr/lib/jvm/*17*")) + sorted(glob.glob("/usr/lib/jvm/*21*")):
        if Path(candidate, "bin", "java").exists():
            return Path(candidate)
    raise NodeUnavailable("no JDK 17 or 21 under /usr/lib/jvm; install openjdk-17-jdk-headless "
                          "or set OPENSEARCH_JAVA_HOME")


def home(*, secured: bool = False) -> Path:
    """The laid-out distribution (built by `build`); the secured one is a tree of its own."""
    return cache_dir() / (f"opensearch-{VERSION}-secured" if secured else f"opensearch-{VERSION}")

