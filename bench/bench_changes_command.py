"""`factreg changes --json` over 10,000 facts × 100 points beside Otava on the same values, in one run.

The registry and the timing come from bench_changes.py (`speed_points`, `time_command`, `run_otava`); this script runs
only that part, for a quick figure on a quiet machine. Otava needs bench/.venvs/otava (bench_changes.py makes it).
Run: `python bench/bench_changes_command.py`. Prints the load, factreg's three whole-process runs and Otava's time.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_changes as b  # noqa: E402

from factreg.registry.changes import detect  # noqa: E402


def main() -> None:
    speed = b.speed_points(b.SPEED_SEED, 10_000)
    expected = sum(len(detect(p)) for p in speed)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    run = b.time_command(speed, expected)
    print(f"factreg changes --json: wall {', '.join(f'{t:.2f}' for t in run['times'])} s "
          f"(median {statistics.median(run['times']):.2f}), CPU median {statistics.median(run['cpus']):.2f} s, "
          f"{run['changes']} changes over {run['versions']} versions and {run['verifications']} verifications")
    py, note = b.ensure_otava()
    if py is None:
        print(f"Otava: {note}")
        return
    cases = [b.Case([p.value for p in pts], [], [], 0.0) for pts in speed]
    with tempfile.TemporaryDirectory() as tmp:
        res = b.run_otava(py, {"speed": cases}, Path(tmp), skip={c["name"]: ["speed"] for c in b.OTAVA_CONFIGS[1:]})
    for name, r in res["runs"].items():
        if name.endswith("|speed"):
            print(f"{name}: wall {r['wall']:.2f} s, CPU {r['cpu']:.2f} s; ratio factreg/Otava "
                  f"{statistics.median(run['times']) / r['wall']:.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
