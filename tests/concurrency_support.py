"""Concurrent writers: a worker process that records N facts through the library, one transaction each.

Run as `python tests/concurrency_support.py URL WORKER N GO_FILE`: it opens the registry, waits until GO_FILE exists
(so that every worker starts writing at the same moment), records N measurements with `facts.record` and prints one
JSON line `{"worker", "n", "seconds"}`. Every other record goes to one of SHARED ids that every worker writes too,
so workers race for the next version number of the same fact.

Used by tests/test_concurrency.py and bench/bench_concurrency.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

SHARED = 50


def fact_id(worker: int, k: int) -> str:
    """The id of record `k` of `worker`: even records share 50 ids across all workers, odd ones are the worker's."""
    if k % 2 == 0:
        return f"shared/s{(k // 2) % SHARED:02d}/ttft"
    return f"w{worker}/r{k:04d}/ttft"


def run_worker(url: str, worker: int | list[int], n: int, go: Path | None) -> dict:
    """Record `n` measurements as `worker` (or as each of a list of workers in turn, in one process)."""
    from factreg.registry import facts
    from factreg.registry.store import Registry

    reg = Registry(url)
    # Warm up (lazy imports, first connection) before the clock starts: the race is about writing, not importing.
    facts.__getattr__("FACT")
    with reg.read():
        pass
    facts.list_facts(reg, ids=["warm/up"])
    if go is not None:
        Path(f"{go}.ready.{worker if isinstance(worker, int) else 'all'}").write_text("ready")
        end = time.monotonic() + 60
        while not go.exists():
            if time.monotonic() > end:
                raise SystemExit("never told to go")
            time.sleep(0.005)
    t0 = time.perf_counter()
    for w in worker if isinstance(worker, list) else [worker]:
        for k in range(n):
            facts.record(
                reg,
                facts.NewFact(
                    id=fact_id(w, k),
                    metric="ttft",
                    samples=[0.1 + w / 100, 0.2 + k / 10_000, 0.3],
                    identity={"machine": f"host{w}", "model": "m"},
                    info={"worker": str(w), "k": str(k)},
                    measured_at="2026-10-26T14:05:00Z",
                ),
            )
    seconds = time.perf_counter() - t0
    reg.close()
    return {"worker": worker, "n": n, "seconds": seconds}


def start_workers(url: str, workers: int, n: int, go: Path, env: dict | None = None) -> list[subprocess.Popen]:
    cmd = [sys.executable, str(Path(__file__).resolve())]
    return [
        subprocess.Popen(
            [*cmd, url, str(w), str(n), str(go)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for w in range(workers)
    ]


def wait_ready(go: Path, names: list[str], procs: list[subprocess.Popen], timeout: float = 120) -> None:
    """Wait until every worker has opened the registry and warmed up (or one of them has died)."""
    end = time.monotonic() + timeout
    while not all(Path(f"{go}.ready.{name}").exists() for name in names):
        if any(p.poll() is not None for p in procs) or time.monotonic() > end:
            return  # the caller sees the exit code
        time.sleep(0.01)


def run_all(
    url: str, workers: int, n: int, go: Path, env: dict | None = None, timeout: float = 600
) -> tuple[float, list[tuple[int, str, str]]]:
    """Start `workers` processes, let them go together; return (wall seconds from go to the last exit, results)."""
    go.unlink(missing_ok=True)
    for w in range(workers):
        Path(f"{go}.ready.{w}").unlink(missing_ok=True)
    procs = start_workers(url, workers, n, go, env)
    wait_ready(go, [str(w) for w in range(workers)], procs)
    t0 = time.perf_counter()
    go.write_text("go")
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=timeout)
        out.append((p.returncode, stdout, stderr))
    return time.perf_counter() - t0, out


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    # WORKER is a number, or `all:8` for workers 0..7 one after the other in this one process (the baseline)
    spec = sys.argv[2]
    worker_: int | list[int] = list(range(int(spec[4:]))) if spec.startswith("all:") else int(spec)
    url_, n_, go_ = sys.argv[1], int(sys.argv[3]), sys.argv[4]
    result = run_worker(url_, worker_, n_, Path(go_) if go_ != "-" else None)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)
