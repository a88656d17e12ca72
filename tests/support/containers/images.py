"""The images the container tests, the Dockerfile and compose.yaml need, built here without any registry.

Each is built only when missing or built from something else: it carries a label (`memory.recipe`) with the
digest of what went in -- the base's release, mirror and this machine's CA certificates; a stand-in's folder
(images/<name>/) and its base's image id; the OpenSearch tree's build stamp -- and a matching label keeps it.
Nothing is pushed anywhere; the bases hold this machine's CA and are never shipped."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.containers.engine import ContainersUnavailable
from tests.support.opensearch.settings import cache_dir

HERE = Path(__file__).resolve().parent / "images"
REPO = Path(__file__).resolve().parents[3]
MIRROR = "http://deb.debian.org/debian"
HOST_CAS = Path("/usr/local/share/ca-certificates")
OPENSEARCH_VERSION = "2.19.1"  # the testcontainers route's image (the test node's default)
OPENSEARCH_3 = "3.5.0"  # compose.yaml's default image (the 3.x line the suite also runs on)
Progress = Callable[[str], None]


@dataclass(frozen=True)
class StandIn:
    tag: str  # the official name the project's files use
    folder: str  # under images/
    base: str
    build_args: tuple[tuple[str, str], ...] = ()  # docker build --build-arg, part of the recipe
    opensearch: str | None = None  # the version of the OpenSearch tree copied into the context


def _opensearch(version: str, base: str, jre: str) -> StandIn:
    """The OpenSearch node tree the tests build, on a Debian JRE the version runs on (2.x: 17; 3.x needs >= 21,
    which trixie packages; the official images bundle their own JDK instead)."""
    return StandIn(f"opensearchproject/opensearch:{version}", "opensearch", base,
                   (("BASE", base), ("JRE", jre), ("VERSION", version)), version)


STAND_INS = (
    StandIn("python:3.11-slim", "python", "local/debian:bookworm"),
    StandIn("postgres:17", "postgres", "local/debian:trixie"),
    _opensearch(OPENSEARCH_VERSION, "local/debian:bookworm", "openjdk-17-jre-headless"),
    _opensearch(OPENSEARCH_3, "local/debian:trixie", "openjdk-21-jre-headless"),
)
BASES = {"local/debian:bookworm": "bookworm", "local/debian:trixie": "trixie"}


def docker(*args: str, capture: bool = True, timeout: float = 1800, stdin: bytes | None = None) -> str:
    result = subprocess.run(["docker", *args], capture_output=capture, timeout=timeout, input=stdin)
    if result.returncode != 0:
        said = (result.stderr or b"").decode(errors="replace").strip()[-2000:] if capture else ""
        raise ContainersUnavailable(f"docker {' '.join(args[:3])} … failed ({result.returncode}): {said}")
    return (result.stdout or b"").decode(errors="replace").strip() if capture else ""


def label(tag: str) -> str | None:
    """The image's memory.recipe label, None when there is no such image."""
    result = subprocess.run(["docker", "image", "inspect", tag], capture_output=True, timeout=60)
    if result.returncode != 0:
        return None
    labels = json.loads(result.stdout)[0]["Config"].get("Labels") or {}
    return labels.get("memory.recipe")


def image_id(tag: str) -> str:
    return docker("image", "inspect", "--format", "{{.Id}}", tag)


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()[:20]


def _folder_digest(folder: Path) -> bytes:
    return b"".join(p.relative_to(folder).as_posix().encode() + p.read_bytes()
                    for p in sorted(folder.rglob("*")) if p.is_file())


def host_cas() -> list[Path]:
    return sorted(HOST_CAS.glob("*.crt")) if HOST_CAS.is_dir() else []


def base(tag: str, progress: Progress) -> None:
    """local/debian:<release>: debootstrap's minbase with ca-certificates and this machine's CA certificates."""
    release = BASES[tag]
    recipe = _digest(release.encode(), MIRROR.encode(), *(p.read_bytes() for p in host_cas()))
    if label(tag) == recipe:
        progress(f"{tag}: kept (built from the same release and CA certificates)")
        return
    if shutil.which("debootstrap") is None:
        raise ContainersUnavailable("debootstrap is not installed: apt-get install debootstrap")
    started = time.monotonic()
    progress(f"{tag}: debootstrap {release} (minbase) from {MIRROR}")
    with tempfile.TemporaryDirectory(prefix=f"base-{release}-", dir=_work_dir()) as work:
        root = Path(work) / "root"
        result = subprocess.run(["debootstrap", "--variant=minbase", "--include=ca-certificates", release, str(root),
                                 MIRROR], capture_output=True, text=True, timeout=1800)
        if result.returncode != 0:
            raise ContainersUnavailable(f"debootstrap {release} failed:\n{(result.stdout + result.stderr)[-2000:]}")
        target = root / "usr/local/share/ca-certificates"
        target.mkdir(parents=True, exist_ok=True)
        for ca in host_cas():
            shutil.copy2(ca, target / ca.name)
        subprocess.run(["chroot", str(root), "update-ca-certificates"], check=True, capture_output=True)
        shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
        (root / "var/cache/apt/archives/partial").mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(["tar", "-C", str(root), "-c", "."], capture_output=True, check=True).stdout
        docker("import", "--change", f"LABEL memory.recipe={recipe}", "--change", 'CMD ["bash"]', "-", tag,
               stdin=tar)
    progress(f"{tag}: built in {time.monotonic() - started:.0f} s")


def _work_dir() -> Path:
    folder = cache_dir() / "containers"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def opensearch_tree(version: str, progress: Progress) -> Path:
    """The open tree of `version` tests/support/opensearch builds (whatever OPENSEARCH_TEST_VERSION this process
    has; 3.x with neural-search built from source, as the 3.5 test pass does)."""
    env = dict(os.environ, OPENSEARCH_TEST_VERSION=version, PYTHONPATH=str(REPO))
    # 3.x: Maven Central serves no neural-search; its zip is built first (nothing to do when it is there).
    if int(version.split(".")[0]) >= 3 and not env.get("OPENSEARCH_NEURAL_SEARCH_ZIP"):
        _opensearch_node(env, "neural-search-zip", f"the neural-search plugin zip of OpenSearch {version}")
    result = _opensearch_node(env, "build", f"the OpenSearch {version} tree")
    tree = Path(result.stdout.strip().splitlines()[-1])
    progress(f"OpenSearch {version} tree: {tree}")
    return tree


def _opensearch_node(env: dict[str, str], command: str, what: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "tests.support.opensearch_node", command], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        raise ContainersUnavailable(f"{what} cannot be built:\n{result.stderr[-2000:]}")
    return result


def stand_in(image: StandIn, progress: Progress) -> None:
    folder = HERE / image.folder
    parts = [image.tag.encode(), _folder_digest(folder), image_id(image.base).encode(),
             *(f"{k}={v}".encode() for k, v in image.build_args)]
    tree = None
    if image.opensearch is not None:
        tree = opensearch_tree(image.opensearch, progress)
        parts.append((tree / ".complete").read_bytes())
    recipe = _digest(*parts)
    if label(image.tag) == recipe:
        progress(f"{image.tag}: kept (stand-in, built from the same recipe)")
        return
    started = time.monotonic()
    progress(f"{image.tag}: building the stand-in from {image.base}")
    with tempfile.TemporaryDirectory(prefix=f"context-{image.folder}-", dir=_work_dir()) as work:
        context = Path(work)
        for item in folder.iterdir():
            shutil.copy2(item, context / item.name)
        if tree is not None:  # hard links: the tree is ~560 MB, on the same file system
            subprocess.run(["cp", "-al", str(tree), str(context / "opensearch")], check=True)
        args = [a for k, v in image.build_args for a in ("--build-arg", f"{k}={v}")]
        docker("build", "--label", f"memory.recipe={recipe}", *args, "-t", image.tag, str(context), capture=False)
    progress(f"{image.tag}: built in {time.monotonic() - started:.0f} s")


def build_all(progress: Progress = print) -> None:
    """Every image, bases first; each kept when its recipe has not changed."""
    for tag in BASES:
        base(tag, progress)
    for image in STAND_INS:
        stand_in(image, progress)
