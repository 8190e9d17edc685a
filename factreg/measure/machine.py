"""The machine's state while something was measured: load, CPU pressure, steal, frequency, the busiest other
processes and, with `nvidia-smi`, the GPU's utilisation, clock, temperature, power and other processes.

Kept as the info condition `machine_state` (compact JSON text) of every measurement and verification, so a verdict
can say what else the machine was doing. Everything is read from `/proc` and `/sys` (no commands, except
`nvidia-smi` when it exists); what cannot be read is left out, and nothing here ever fails a measurement.
Process names only, never command lines: a command line can hold a secret.

`Watch` brackets a run: `start()` before, `stop()` after; the steal time and the top consumers are what
happened between the two.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factreg.measure import machinestate

PROC = Path("/proc")
TOP_N = 3
NVIDIA_SMI_TIMEOUT_S = 2.0
KEY = machinestate.MACHINE_KEY  # the info condition that holds the state (`machine` is the host name)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def cpu_times() -> list[int] | None:
    """The aggregate `cpu` line of /proc/stat as integers (user nice system idle iowait irq softirq steal …)."""
    text = _read(PROC / "stat")
    if not text:
        return None
    first = text.splitlines()[0].split()
    if not first or first[0] != "cpu":
        return None
    try:
        return [int(x) for x in first[1:]]
    except ValueError:
        return None


def _share_pct(before: list[int] | None, after: list[int] | None, fields: tuple[int, ...]) -> float | None:
    """The share (%) of the CPU time between two `cpu_times` readings spent in these fields of /proc/stat's `cpu`
    line (the first eight: user … steal); None when a reading is missing or no time passed."""
    if not before or not after or len(before) < 8 or len(after) < 8:
        return None
    total = sum(after[:8]) - sum(before[:8])
    if total <= 0:
        return None
    return round(100.0 * sum(after[i] - before[i] for i in fields) / total, 1)


def _steal_pct(before: list[int] | None, after: list[int] | None) -> float | None:
    return _share_pct(before, after, (7,))  # steal


def _busy_pct(before: list[int] | None, after: list[int] | None) -> float | None:
    return _share_pct(before, after, (0, 1, 2, 5, 6, 7))  # all but idle and iowait


def pressure() -> float | None:
    """`/proc/pressure/cpu` "some avg10": the share of the last 10 s in which some task waited for a CPU."""
    text = _read(PROC / "pressure" / "cpu")
    if not text:
        return None
    for line in text.splitlines():
        if line.startswith("some"):
            for part in line.split():
                if part.startswith("avg10="):
                    try:
                        return float(part.split("=", 1)[1])
                    except ValueError:
                        return None
    return None


def frequency_mhz() -> float | None:
    """The mean current CPU frequency in MHz (cpufreq, else /proc/cpuinfo), or None."""
    values: list[float] = []
    base = Path("/sys/devices/system/cpu")
    try:
        dirs = sorted(base.glob("cpu[0-9]*/cpufreq/scaling_cur_freq"))
    except OSError:
        dirs = []
    for f in dirs:
        text = _read(f)
        if text and text.strip().isdigit():
            values.append(int(text.strip()) / 1000)
    if not values:
        for line in (_read(PROC / "cpuinfo") or "").splitlines():
            if line.lower().startswith("cpu mhz"):
                with contextlib.suppress(IndexError, ValueError):
                    values.append(float(line.split(":", 1)[1]))
    return round(sum(values) / len(values)) if values else None


def process_times() -> dict[int, tuple[str, int]]:
    """pid → (name, utime + stime in clock ticks) of every readable process."""
    out: dict[int, tuple[str, int]] = {}
    try:
        entries = os.listdir(PROC)
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        text = _read(PROC / entry / "stat")
        if not text:
            continue
        # "pid (comm) state ppid ..." — comm may hold spaces and parentheses: split at the last ')'.
        lpar, rpar = text.find("("), text.rfind(")")
        if lpar < 0 or rpar < lpar:
            continue
        rest = text[rpar + 2 :].split()
        try:
            out[int(entry)] = (text[lpar + 1 : rpar][:32], int(rest[11]) + int(rest[12]))
        except (IndexError, ValueError):
            continue
    return out


def top_consumers(
    before: Mapping[int, tuple[str, int]], after: Mapping[int, tuple[str, int]], seconds: float, exclude: set[int],
    n: int = TOP_N,
) -> list[dict[str, Any]]:
    """The processes that used the most CPU between two snapshots (name and % of one CPU), busiest first."""
    if seconds <= 0:
        return []
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    used: dict[str, float] = {}
    for pid, (name, t1) in after.items():
        if pid in exclude or pid not in before or before[pid][0] != name:
            continue
        delta = t1 - before[pid][1]
        if delta > 0:
            used[name] = used.get(name, 0.0) + 100.0 * delta / ticks / seconds
    top = sorted(used.items(), key=lambda kv: -kv[1])[:n]
    return [{"name": name, "cpu_pct": round(pct)} for name, pct in top if pct >= 1]


def gpu() -> list[dict[str, Any]]:
    """Per GPU: utilisation %, SM clock MHz, temperature °C, power W — and the other processes on it (names)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        proc = subprocess.run(
            [exe, "--query-gpu=index,utilization.gpu,clocks.sm,temperature.gpu,power.draw",
             "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=NVIDIA_SMI_TIMEOUT_S, check=False,
        )  # fmt: skip
        apps = subprocess.run(
            [exe, "--query-compute-apps=gpu_bus_id,pid,process_name", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=NVIDIA_SMI_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    out: list[dict[str, Any]] = []
    keys = ("index", "util_pct", "sm_mhz", "temp_c", "power_w")
    for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != len(keys):
            continue
        entry: dict[str, Any] = {}
        for k, v in zip(keys, parts, strict=True):
            try:
                entry[k] = round(float(v), 1)
            except ValueError:
                continue
        out.append(entry)
    names = []
    for line in apps.stdout.splitlines() if apps.returncode == 0 else []:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3 and parts[1].isdigit() and int(parts[1]) != os.getpid():
            names.append(Path(parts[2]).name[:32])  # a path's last part only
    if out and names:
        out[0]["processes"] = sorted(set(names))
    return out


@dataclass
class Watch:
    """Machine state over one run: `start()` before it, `stop()` after it, `state` then holds what was seen."""

    exclude: set[int] = field(default_factory=set)
    state: dict[str, Any] = field(default_factory=dict)
    _cpu: list[int] | None = None
    _procs: dict[int, tuple[str, int]] = field(default_factory=dict)
    _t0: float = 0.0

    def start(self) -> Watch:
        import time

        try:
            self._cpu = cpu_times()
            self._procs = process_times()
        except Exception:  # noqa: BLE001 - machine state is never a reason to fail
            self._cpu, self._procs = None, {}
        self._t0 = time.monotonic()
        return self

    def stop(self) -> dict[str, Any]:
        import time

        seconds = time.monotonic() - self._t0
        try:
            self.state = snapshot(self._cpu, self._procs, seconds, {os.getpid(), *self.exclude})
        except Exception:  # noqa: BLE001 - machine state is never a reason to fail
            self.state = {}
        return self.state


def snapshot(
    cpu_before: list[int] | None, procs_before: Mapping[int, tuple[str, int]], seconds: float, exclude: set[int]
) -> dict[str, Any]:
    """The state now, with steal, CPU use and top consumers over the `seconds` since the `before` readings."""
    state: dict[str, Any] = {}
    with contextlib.suppress(AttributeError, OSError):
        state["load1"] = round(os.getloadavg()[0], 2)
    state["ncpu"] = os.cpu_count()
    psi = pressure()
    if psi is not None:
        state["cpu_pressure_pct"] = psi
    after = cpu_times()
    for key, value in (("steal_pct", _steal_pct(cpu_before, after)), ("busy_pct", _busy_pct(cpu_before, after))):
        if value is not None:
            state[key] = value
    mhz = frequency_mhz()
    if mhz is not None:
        state["cpu_mhz"] = mhz
    if procs_before:
        top = top_consumers(procs_before, process_times(), seconds, exclude)
        if top:
            state["top"] = top
    gpus = gpu()
    if gpus:
        state["gpu"] = gpus
    return {k: v for k, v in state.items() if v is not None}


def as_condition(state: Mapping[str, Any]) -> str:
    """The state as the text of the `machine_state` info condition (compact JSON)."""
    return json.dumps(dict(state), sort_keys=True, separators=(",", ":"))


parse = machinestate.parse
summary = machinestate.summary
