"""Scheduling evidence from /proc: how long a process's threads ran, and how long they waited for a CPU.

`/proc/PID/task/TID/schedstat` holds three counters per thread (CONFIG_SCHED_INFO, on in every distribution
kernel): nanoseconds on a CPU, nanoseconds waiting on a run-queue (runnable, but another task had the CPU), and
time slices. A thread that ends takes its counters with it, so a `Watch` polls the tasks every `POLL_S` from a
thread of its own and keeps each thread's last reading: what a short-lived thread did after its last poll is lost
(at most `POLL_S` of it), everything else is counted. Over a run:

- `wait_s`: the run-queue delay of all the process's threads, summed — the time it was kept from running;
- `run_s`: the CPU time of its threads;
- `wall_s`: the run's length.

On a virtual machine the hypervisor's share (steal) is invisible here: a task whose virtual CPU was not running
counts as running. The machine-wide steal (`/proc/stat`) and CPU pressure (`/proc/pressure/cpu`, "some" total)
over the same run are read with it (`MachineClock`), and `denied_share` adds steal to the wait.

Nothing here raises: what cannot be read is reported as unreadable with the reason, and the caller decides.
Only numbers are read, never a command line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PROC = "/proc"
POLL_S = 0.05


def read_tasks(pid: int, proc: str = PROC) -> dict[int, tuple[int, int, int]] | None:
    """tid → (ns on CPU, ns waiting on a run-queue, time slices) of every thread of `pid`; None when unreadable."""
    try:
        tids = os.listdir(f"{proc}/{pid}/task")
    except OSError:
        return None
    out: dict[int, tuple[int, int, int]] = {}
    for tid in tids:
        if not tid.isdigit():
            continue
        try:
            with open(f"{proc}/{pid}/task/{tid}/schedstat", encoding="ascii") as fh:
                parts = fh.read().split()
            out[int(tid)] = (int(parts[0]), int(parts[1]), int(parts[2]))
        except (OSError, ValueError, IndexError):
            continue
    return out if out else None


def children(pid: int, proc: str = PROC) -> set[int]:
    """The direct children of `pid` (`/proc/PID/task/*/children`, else a scan of every process's parent)."""
    found: set[int] = set()
    try:
        tids = os.listdir(f"{proc}/{pid}/task")
    except OSError:
        return found
    readable = False
    for tid in tids:
        try:
            with open(f"{proc}/{pid}/task/{tid}/children", encoding="ascii") as fh:
                found.update(int(x) for x in fh.read().split() if x.isdigit())
            readable = True
        except OSError:
            continue
    if readable:
        return found
    with contextlib.suppress(OSError):
        for entry in os.listdir(proc):
            if not entry.isdigit():
                continue
            try:
                with open(f"{proc}/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                if int(text[text.rindex(")") + 2 :].split()[1]) == pid:
                    found.add(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


def _psi_some_us(proc: str = PROC) -> int | None:
    """`/proc/pressure/cpu` "some" total: microseconds in which at least one task waited for a CPU."""
    try:
        with open(f"{proc}/pressure/cpu", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("some"):
                    for part in line.split():
                        if part.startswith("total="):
                            return int(part[6:])
    except (OSError, ValueError):
        return None
    return None


def _cpu_line(proc: str = PROC) -> list[int] | None:
    try:
        with open(f"{proc}/stat", encoding="ascii") as fh:
            first = fh.readline().split()
        return [int(x) for x in first[1:]] if first and first[0] == "cpu" else None
    except (OSError, ValueError):
        return None


@dataclass
class Usage:
    """What a process (or a set of them) got over one run; `readable` False (and `why`) when /proc would not say."""

    readable: bool
    why: str = ""
    run_s: float = 0.0
    wait_s: float = 0.0
    slices: int = 0
    threads: int = 0
    wall_s: float = 0.0
    steal: float | None = None  # machine-wide share of CPU time the hypervisor gave to others over the run
    pressure: float | None = None  # machine-wide share of the run in which some task waited for a CPU (PSI)

    @property
    def wait_share(self) -> float | None:
        """Run-queue delay per second of the run (summed over threads: above 1 when several waited at once)."""
        return self.wait_s / self.wall_s if self.readable and self.wall_s > 0 else None

    @property
    def runnable_wait(self) -> float | None:
        """The share of its runnable time the process spent waiting: wait / (run + wait)."""
        total = self.run_s + self.wait_s
        return self.wait_s / total if self.readable and total > 0 else None

    def denied_share(self) -> float | None:
        """How much of the run's wall time the process was kept from a CPU: its run-queue delay plus, on a
        virtual machine, the steal share of its own CPU time, per second of the run (not capped)."""
        if not self.readable or self.wall_s <= 0:
            return None
        stolen = self.run_s * (self.steal or 0.0)
        return (self.wait_s + stolen) / self.wall_s

    def as_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"readable": self.readable}
        if self.why:
            data["why"] = self.why
        if self.readable:
            data.update(run_s=round(self.run_s, 4), wait_s=round(self.wait_s, 4), slices=self.slices,
                        threads=self.threads)  # fmt: skip
        data["wall_s"] = round(self.wall_s, 4)
        if self.steal is not None:
            data["steal"] = round(self.steal, 4)
        if self.pressure is not None:
            data["pressure"] = round(self.pressure, 4)
        return data


@dataclass
class Watch:
    """Polls the threads of the processes `pids()` names (re-asked each poll: children come and go) from
    `start()` to `stop()`, and sums what each thread did in between."""

    pids: Callable[[], set[int]]
    poll_s: float = POLL_S
    _first: dict[tuple[int, int], tuple[int, int, int]] = field(default_factory=dict)
    _last: dict[tuple[int, int], tuple[int, int, int]] = field(default_factory=dict)
    _seen_any: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _t0: float = 0.0
    _cpu0: list[int] | None = None
    _psi0: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _poll(self, baseline: bool) -> None:
        with contextlib.suppress(Exception):  # evidence is never a reason to fail
            for pid in self.pids():
                tasks = read_tasks(pid)
                if tasks is None:
                    continue
                with self._lock:
                    self._seen_any = True
                    for tid, counters in tasks.items():
                        key = (pid, tid)
                        if baseline:
                            self._first.setdefault(key, counters)
                        elif key not in self._first:
                            self._first[key] = (0, 0, 0)  # a thread born during the run: all of it counts
                        self._last[key] = counters

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            self._poll(baseline=False)

    def start(self) -> Watch:
        self._t0 = time.monotonic()
        self._cpu0, self._psi0 = _cpu_line(), _psi_some_us()
        self._poll(baseline=True)
        self._thread = threading.Thread(target=self._loop, name="factreg-sched", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> Usage:
        wall = time.monotonic() - self._t0
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        self._poll(baseline=False)
        cpu1, psi1 = _cpu_line(), _psi_some_us()
        usage = Usage(readable=self._seen_any, wall_s=wall)
        if not self._seen_any:
            usage.why = "its threads could not be read in /proc"
        with self._lock:
            for key, last in self._last.items():
                first = self._first.get(key, (0, 0, 0))
                usage.run_s += max(last[0] - first[0], 0) / 1e9
                usage.wait_s += max(last[1] - first[1], 0) / 1e9
                usage.slices += max(last[2] - first[2], 0)
            usage.threads = len(self._last)
        if self._cpu0 and cpu1 and len(self._cpu0) >= 8 and len(cpu1) >= 8:
            total = sum(cpu1[:8]) - sum(self._cpu0[:8])
            if total > 0:
                usage.steal = (cpu1[7] - self._cpu0[7]) / total
        if self._psi0 is not None and psi1 is not None and wall > 0:
            usage.pressure = min(max((psi1 - self._psi0) / 1e6 / wall, 0.0), 1.0)
        return usage


def watch_process(pid: int) -> Watch:
    """A watch on one process (a local server found listening on the probed port)."""
    return Watch(lambda: {pid})


def watch_children() -> Watch:
    """A watch on this process's children as they come and go (the measured llama-bench)."""
    me = os.getpid()
    return Watch(lambda: children(me))


def watch_self() -> Watch:
    """A watch on this process (the probe's client side)."""
    me = os.getpid()
    return Watch(lambda: {me})


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that has a child process killed when factreg dies (Linux: `prctl(PR_SET_PDEATHSIG,
    SIGKILL)`); None where that cannot be done. A `verify` killed with SIGKILL would otherwise leave llama-bench
    (measured or control) running on for minutes, loading the machine that the next measurement measures."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here: the child only calls it
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
        if os.getppid() != parent:  # factreg died before that call: nobody waits for this run
            os._exit(1)

    return preexec
