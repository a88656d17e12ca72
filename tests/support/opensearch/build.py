"""Fetch (`fetch`: Maven on pom.xml, beside this file) and lay out (`build`) the node's distribution, cached in
cache_dir()/opensearch-VERSION (and opensearch-VERSION-secured); see the package's docstring for what goes in.
What differs by version (settings.py): 2.x takes neural-search and the security plugin from Maven Central and lays
out two modules its integ-test zip lacks; 3.x's integ-test zip ships every module, and its neural-search and security
plugin come as zips (settings.neural_search_zip, settings.security_plugin_zip)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.opensearch.settings import (MODULES_IN_DISTRIBUTION, NEURAL_SEARCH_FROM_CENTRAL,
                                               NEURAL_SEARCH_FROM_SOURCE, PLUGIN_VERSION, PLUGINS, SECURITY_FROM_SOURCE,
                                               SECURITY_PLUGIN, SECURITY_PLUGIN_FROM_CENTRAL, VERSION, NodeUnavailable,
                                               PluginFromSource, home, java_home, neural_search_zip,
                                               security_plugin_zip)

POM = Path(__file__).with_name("pom.xml")

# The two modules the full distribution ships and the integ-test zip does not: name -> (class, extends).
MODULES = {
    "lang-painless": ("org.opensearch.painless.PainlessPlugin", ""),
    "analysis-common": ("org.opensearch.analysis.common.CommonAnalysisPlugin", "lang-painless"),
}
# lang-painless generates classes at run time (OpenSearch's own modules/lang-painless plugin-security.policy).
PAINLESS_POLICY = """grant {
  // needed to generate runtime classes
  permission java.lang.RuntimePermission "createClassLoader";
  // needed to find the classloader to load allowlisted classes from
  permission java.lang.RuntimePermission "getClassLoader";
};
"""


def fetch(target: Path, *, secured: bool = False) -> None:
    """Copy every artifact the node needs into `target` with Maven (downloads once into ~/.m2)."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise NodeUnavailable("Maven (mvn) is not installed; apt-get install maven")
    env = dict(os.environ, JAVA_HOME=os.environ.get("JAVA_HOME") or str(java_home()))
    command = [mvn, "-B", "-q", "-f", str(POM), f"-Dopensearch.version={VERSION}", f"-Dfetch.dir={target}"]
    if NEURAL_SEARCH_FROM_CENTRAL:
        command.append("-Dopensearch.neural.central=true")  # the pom's `neural-search-central` profile
    if not MODULES_IN_DISTRIBUTION:
        command.append("-Dopensearch.modules=true")  # the pom's `modules` profile: lang-painless, analysis-common
    if secured and SECURITY_PLUGIN_FROM_CENTRAL:
        command.append("-Dopensearch.secured=true")  # the pom's `secured` profile: the security plugin's zip too
    result = subprocess.run([*command, "package"], capture_output=True, text=True, env=env, timeout=1800)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise NodeUnavailable(f"mvn could not fetch OpenSearch {VERSION} from Maven Central:\n{tail}")


def _unzip(archive: Path, target: Path) -> None:
    """Unzip keeping the executable bits (zipfile alone drops them; `unzip` may not be installed)."""
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            path = Path(zf.extract(info, target))
            mode = info.external_attr >> 16
            if mode and not info.is_dir():
                path.chmod(mode & 0o777)


def _write_module(root: Path, name: str, jars: Path) -> None:
    classname, extends = MODULES[name]
    folder = root / "modules" / name
    folder.mkdir(parents=True)
    for jar in sorted(jars.glob("*.jar")):
        shutil.copy2(jar, folder / jar.name)
    descriptor = {
        "description": f"The {name} module of OpenSearch {VERSION}, from Maven Central",
        "version": VERSION, "name": name, "classname": classname, "java.version": "11",
        "opensearch.version": VERSION, "extended.plugins": extends, "has.native.controller": "false",
    }
    (folder / "plugin-descriptor.properties").write_text(
        "".join(f"{key}={value}\n" for key, value in descriptor.items()), encoding="utf-8")
    if name == "lang-painless":
        (folder / "plugin-security.policy").write_text(PAINLESS_POLICY, encoding="utf-8")


def _stamp(neural_search: Path | None, security: Path | None = None) -> str:
    """What a cached tree was built from: the version, and the digests of the plugin zips given from outside
    (another zip for the same version rebuilds the tree)."""
    stamp = f"{VERSION}\n"
    for name, archive in (("neural-search", neural_search), (SECURITY_PLUGIN, security)):
        if archive is not None:
            stamp += f"{name} sha256 {hashlib.sha256(archive.read_bytes()).hexdigest()}\n"
    return stamp


@contextmanager
def one_at_a_time(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on this file (flock; released when the process ends, however it ends), waiting for
    whoever holds it: the test session's workers start their nodes at once, and on a fresh machine both would
    build the same tree, the second replacing the first's while its node was starting from it."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(progress=print, *, secured: bool = False) -> Path:  # noqa: ANN001 - a print-like callable
    """The laid-out distribution, built now unless a complete one is cached (`secured`: with the security
    plugin, in a tree of its own; the open tree is never touched by it). One process builds a tree at a time;
    the others wait for it and use what it built."""
    final = home(secured=secured)
    neural_search = None if NEURAL_SEARCH_FROM_CENTRAL else neural_search_zip()  # before a long fetch: fail fast
    security = security_plugin_zip() if secured and not SECURITY_PLUGIN_FROM_CENTRAL else None  # the same
    stamp = _stamp(neural_search, security)
    if _built(final, stamp):
        return final
    java_home()  # the same: no JDK that can run VERSION is one line, before any download
    with one_at_a_time(final.parent / f".{final.name}.lock"):
        if _built(final, stamp):  # another process built it while this one waited
            return final
        return _lay_out(final, stamp, neural_search, security, progress, secured=secured)


def _built(final: Path, stamp: str) -> bool:
    complete = final / ".complete"
    return complete.exists() and complete.read_text(encoding="utf-8") == stamp


def _lay_out(final: Path, stamp: str, neural_search: Path | None, security: Path | None, progress,  # noqa: ANN001
             *, secured: bool) -> Path:
    work = Path(tempfile.mkdtemp(prefix=f"build-{final.name}-", dir=final.parent))
    try:
        started = time.monotonic()
        progress(f"fetching OpenSearch {VERSION} artifacts with Maven (cached in ~/.m2)")
        fetch(work / "fetched", secured=secured)
        progress(f"laying out the distribution in {final}")
        _unzip(work / "fetched" / "dist" / f"opensearch-{VERSION}.zip", work)
        root = work / f"opensearch-{VERSION}"
        for name in MODULES:
            if MODULES_IN_DISTRIBUTION:
                if not (root / "modules" / name).is_dir():
                    raise NodeUnavailable(f"the integ-test distribution of OpenSearch {VERSION} lacks the {name} module")
            else:
                _write_module(root, name, work / "fetched" / "modules" / name)
        env = dict(os.environ, OPENSEARCH_JAVA_HOME=str(java_home()))
        for plugin in (*PLUGINS, SECURITY_PLUGIN) if secured else PLUGINS:
            archive = work / "fetched" / "dist" / f"{plugin}-{PLUGIN_VERSION}.zip"
            if plugin == "neural-search" and neural_search is not None:
                archive = neural_search
            if plugin == SECURITY_PLUGIN and security is not None:
                archive = security
            # --batch also grants the extra permissions the security plugin asks for.
            result = subprocess.run([str(root / "bin" / "opensearch-plugin"), "install", "--batch",
                                     archive.as_uri()], capture_output=True, text=True, env=env, timeout=300)
            if result.returncode != 0:
                raise NodeUnavailable(f"opensearch-plugin install {plugin} failed:\n"
                                      f"{(result.stdout + result.stderr).strip()[-2000:]}")
        (root / ".complete").write_text(stamp, encoding="utf-8")
        shutil.rmtree(final, ignore_errors=True)
        root.rename(final)
        progress(f"built in {time.monotonic() - started:.1f} s")
        return final
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_neural_search_zip(progress=print) -> Path:  # noqa: ANN001 - a print-like callable
    """`make opensearch-neural-search-3`: the neural-search plugin zip of a 3.x node, built into the cache
    directory by neural-search-3/build.sh unless it is there."""
    return build_plugin_zip(NEURAL_SEARCH_FROM_SOURCE, progress)


def build_security_zip(progress=print) -> Path:  # noqa: ANN001 - a print-like callable
    """`make opensearch-security-3`: the security plugin zip of a 3.x node, built into the cache directory by
    security-3/build.sh unless it is there."""
    return build_plugin_zip(SECURITY_FROM_SOURCE, progress)


def build_plugin_zip(source: PluginFromSource, progress=print) -> Path:  # noqa: ANN001 - a print-like callable
    """The zip of `source` at source.default_zip(), built by source.recipe/build.sh (Maven only) unless the one
    the recipe names is already there."""
    target = source.default_zip()
    wanted = source.known.get(target.name)
    if source.from_central or wanted is None:
        raise NodeUnavailable(f"{source.recipe.name}/build.sh builds {', '.join(sorted(source.known))}, "
                              f"not {source.title} of OpenSearch {VERSION}")
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == wanted:
        progress(f"{target} is there (sha256 {wanted})")
        return target
    if shutil.which("mvn") is None:
        raise NodeUnavailable("Maven (mvn) is not installed; apt-get install maven")
    target.parent.mkdir(parents=True, exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix=f"{source.plugin}-zip-", dir=target.parent))
    try:
        started = time.monotonic()
        progress(f"building {target.name} with {source.recipe / 'build.sh'} (Maven; cached in ~/.m2)")
        _run_recipe(source, out)
        built = out / target.name
        digest = hashlib.sha256(built.read_bytes()).hexdigest()
        if digest != wanted:
            # Another javac may compile other bytes: keep the zip for a look, never under the name the node trusts.
            kept = target.with_name(f"{target.stem}-{digest[:12]}.zip")
            built.replace(kept)
            raise NodeUnavailable(f"built {kept}, but its sha256 {digest} is not the recipe's {wanted} (another javac "
                                  f"than the README's?): check it, then use it with {source.variable}={kept}")
        built.replace(target)
        progress(f"{target} built in {time.monotonic() - started:.0f} s (sha256 {digest})")
        return target
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _run_recipe(source: PluginFromSource, out: Path) -> None:
    result = subprocess.run([str(source.recipe / "build.sh")], capture_output=True, text=True, timeout=1800,
                            env=dict(os.environ, OUT=str(out), JAVA21_HOME=str(java_home())))
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-25:])
        raise NodeUnavailable(f"{source.recipe.name}/build.sh failed (exit {result.returncode}):\n{tail}")
