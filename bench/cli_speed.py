"""How long the `memory` commands an operator types first take, start to exit, as a user runs them.

    python bench/cli_speed.py [--runs 5] [--bytecode cached|none]

Each command runs --runs times as its own process (the installed `memory` script of this environment) on a fresh
data directory (SQLite): `memory --help`, `memory profile create`, `memory token issue`, `memory profile list`.
Printed: the median and the range of wall-clock seconds per command, never asserted (issue 57 asks <= 1 s each).

--bytecode none runs with PYTHONDONTWRITEBYTECODE=1 and no compiled files of the service itself, so every run
compiles the service's modules from source again -- what a machine or image that never caches bytecode pays
(`cached`, the default, lets Python keep its compiled files, as an ordinary install does).
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

ROOT = Path(__file__).resolve().parent.parent
MEMORY = Path(sys.executable).with_name("memory")


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([str(MEMORY), *args], env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"memory {' '.join(args)} failed: {done.stderr.strip()}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bytecode", choices=("cached", "none"), default="cached")
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    if options.bytecode == "none":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for cache in (ROOT / "service").rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        timed(["--help"], env)  # a first run writes the compiled files
    figures: dict[str, list[float]] = {}
    for run in range(options.runs):
        with tempfile.TemporaryDirectory() as data:
            env["MEMORY_DATA_DIR"] = data
            for label, args in (("memory --help", ["--help"]), ("memory profile create", ["profile", "create", f"p{run}"]),
                                ("memory token issue", ["token", "issue", f"p{run}", "--json"]),
                                ("memory profile list", ["profile", "list"])):
                figures.setdefault(label, []).append(timed(args, env))
    print(f"seconds per command, {options.runs} runs each, bytecode {options.bytecode} (median, min-max):")
    for label, seconds in figures.items():
        print(f"  {label:24s} {statistics.median(seconds):5.2f}   {min(seconds):.2f}-{max(seconds):.2f}")


if __name__ == "__main__":
    main()
