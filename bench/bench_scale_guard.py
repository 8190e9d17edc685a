"""What the start-up work must not cost at scale: `factreg status` on 100,000 facts and `docs check` of a 10,000-file
tree (`--no-cache`), this tree against the code of another revision (default: main as last merged), run as
`python -m factreg` with each tree first on the path, interleaved; CPU medians (`--quick`: 20,000 facts, 2,000 files).
The registry and the tree come from bench_docs.py (`make_registry`, `make_tree`)."""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_changes import before_tree  # noqa: E402
from bench_docs import make_registry, make_tree  # noqa: E402
from common import ROOT, machine, write_section  # noqa: E402


def cpu(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{cmd} failed")
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - t0


def main() -> None:
    quick = "--quick" in sys.argv
    n_facts, n_files, reps = (20_000, 2_000, 3) if quick else (100_000, 10_000, 3)
    base = subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True)
    rev = next((a for a in sys.argv[1:] if not a.startswith("-")), base.stdout.strip()[:10])
    work = Path(tempfile.mkdtemp(prefix="factreg-scale-"))
    try:
        rnd = random.Random(26)
        db = work / "status.db"
        make_registry(db, n_facts, rnd)
        tree = work / "tree"
        make_tree(tree, n_files, f"sqlite:///{work / 'docs.db'}", rnd, 0.03)
        sides = {"this tree": ROOT, rev: before_tree(rev, work)}
        cases = {f"status ({n_facts:,} facts)": (["status"], db),
                 f"docs check ({n_files:,} files, --no-cache)": (["docs", "check", "--no-cache", str(tree)],
                                                                  work / "docs.db")}
        got: dict[tuple[str, str], list[tuple[float, float]]] = {}
        load0 = os.getloadavg()
        for _ in range(reps):
            for case, (args, reg) in cases.items():
                for side, path in sides.items():
                    env = {**os.environ, "PYTHONPATH": str(path), "FACTREG_DB": str(reg),
                           "FACTREG_CACHE_DIR": str(work / "cache")}
                    got.setdefault((case, side), []).append(
                        cpu([sys.executable, "-m", "factreg", *args], env, work))
        load1 = os.getloadavg()
        lines = ["### At scale: status on 100,000 facts, docs check of 10,000 files (`bench/bench_scale_guard.py`)", "",
                 f"{machine()}. `python -m factreg` with each tree first on the path (from a folder outside both), "
                 f"{reps} interleaved runs per side, medians; load average {load0[0]:.2f} before, {load1[0]:.2f} after.",
                 "", f"| command | this tree CPU (s) | {rev} CPU (s) | ratio | this tree wall (s) | {rev} wall (s) |",
                 "|---|---|---|---|---|---|"]
        for case in cases:
            ours = [statistics.median(x) for x in zip(*got[(case, "this tree")], strict=True)]
            theirs = [statistics.median(x) for x in zip(*got[(case, rev)], strict=True)]
            lines.append(f"| {case} | {ours[0]:.2f} | {theirs[0]:.2f} | {ours[0] / theirs[0]:.2f}× | {ours[1]:.2f} | "
                         f"{theirs[1]:.2f} |")
        text = "\n".join(lines) + "\n"
        print(text)
        write_section("scale_guard", text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
