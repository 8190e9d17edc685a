"""Shared helpers for factreg's benchmarks: timing whole processes, describing the machine, writing results."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent


def factreg_cmd() -> list[str]:
    exe = BIN / "factreg"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "factreg"]


def time_process(cmd: Sequence[str], repeat: int, env: dict | None = None, stdout=subprocess.DEVNULL) -> list[float]:
    """Wall-clock seconds of `cmd` run `repeat` times (each must exit 0)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run(list(cmd), stdout=stdout, stderr=subprocess.PIPE, env=env)
        times.append(time.perf_counter() - t0)
        if r.returncode != 0:
            raise SystemExit(f"{cmd[0]} failed ({r.returncode}): {r.stderr.decode(errors='replace')[-500:]}")
    return times


def time_call(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}")


def row(name: str, ours: list[float], base: list[float], target: float | None, unit: str = "s") -> str:
    """One Markdown table row: min/median/max of both sides and the ratio of medians against the target."""
    mo, mb = statistics.median(ours), statistics.median(base)
    ratio = mo / mb
    verdict = "—" if target is None else ("met" if ratio <= target else "**missed**")
    fmt = lambda xs: f"{min(xs):.3f} / {statistics.median(xs):.3f} / {max(xs):.3f}"  # noqa: E731
    tgt = "—" if target is None else f"≤ {target:g}×"
    return f"| {name} | {fmt(ours)} | {fmt(base)} | **{ratio:.2f}×** | {tgt} | {verdict} |"


TABLE_HEAD = ("| benchmark | factreg min / median / max ({u}) | baseline min / median / max ({u}) | ratio of medians "
              "| target | |\n|---|---|---|---|---|---|")


def write_section(name: str, text: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path
