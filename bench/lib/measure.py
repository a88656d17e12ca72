"""Measurement helpers of the benchmarks: the console, percentiles, RSS, progress bars."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

console = Console(highlight=False, width=132)


def rss(pid: int | str = "self") -> tuple[float, float]:
    """(VmRSS, VmHWM) in MB of this process or of another one."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", float("nan")), values.get("VmHWM", float("nan"))


def stats_ms(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "mean": float("nan"), "max": float("nan")}
    ms = sorted(s * 1000 for s in samples)
    return {"n": len(ms), "p50": statistics.median(ms), "p95": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))],
            "mean": statistics.fmean(ms), "max": ms[-1]}


def advance(progress: Progress, task: Any, k: int) -> None:
    """Advance a rich progress bar; without a terminal (output to a file) also log every 10%."""
    before = next(t for t in progress.tasks if t.id == task)
    done_before, total = before.completed, before.total or 1
    progress.advance(task, k)
    if not console.is_terminal and int(10 * (done_before + k) / total) > int(10 * done_before / total):
        console.print(f"  {before.description}: {int(done_before + k):,}/{int(total):,} "
                      f"({before.elapsed or 0:.0f}s)")


def set_torch_threads(n: int) -> None:
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
