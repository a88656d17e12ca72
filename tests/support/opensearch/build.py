"""Fetch (`fetch`: Maven on pom.xml, beside this file) and lay out (`build`) the node's distribution, cached in
cache_dir()/opensearch-VERSION (and opensearch-VERSION-secured); see the package's docstring for what goes in.
What differs by version (settings.py): 2.x takes neural-search from Maven Central and lays out two modules its
integ-test zip lacks; 3.x's integ-test zip ships every module, and its neural-search comes as a zip
(settings.neural_search_zip)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

from tests.support.opensearch.settings import (MODULES_IN_DISTRIBUTION, NEURAL_SEARCH_FROM_CENTRAL, PLUGIN_VERSION,
                                               PLUGINS, SECURITY_PLUGIN, VERSION, NodeUnavailable, home, java_home,
                                               neural_search_zip)

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
    if secured:
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


def _stamp(neural_search: Path | None) -> str:
    """What a cached tree was built from: the version, and the digest of a neural-search zip given from outside
    (another zip for the same version rebuilds the tree)."""
    if neural_search is None:
        return f"{VERSION}\n"
    return f"{VERSION}\nneural-search sha256 {hashlib.sha256(neural_search.read_bytes()).hexdigest()}\n"


def build(progress=print, *, secured: bool = False) -> Path:  # noqa: ANN001 - a print-like callable
    """The laid-out distribution, built now unless a complete one is cached (`secured`: with the security
    plugin, in a tree of its own; the open tree is never touched by it)."""
    final = home(secured=secured)
    neural_search = None if NEURAL_SEARCH_FROM_CENTRAL else neural_search_zip()  # before a long fetch: fail fast
    stamp = _stamp(neural_search)
    complete = final / ".complete"
    if complete.exists() and complete.read_text(encoding="utf-8") == stamp:
        return final
    java_home()  # the same: no JDK that can run VERSION is one line, before any download
    final.parent.mkdir(parents=True, exist_ok=True)
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

