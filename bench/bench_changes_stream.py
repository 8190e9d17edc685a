"""`factreg changes --json` over 10,000 facts × 100 points: peak memory and CPU of the whole process, this tree
against the code of other revisions (default: where this branch left main) on the same facts, runs interleaved. The registries come from bench_changes.py (`speed_points`, `build_registry`), one per side.

Run: `python bench/bench_changes_stream.py [REV...]` (each revision a side of its own)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_changes as b  # noqa: E402
from common import ROOT, machine, write_section  # noqa: E402


def run(tree: Path, db: Path, out: Path) -> tuple[float, float, float]:
    """Wall (s), CPU (s) and peak RSS (MB) of `python -m factreg changes --json` with `tree` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    stats = out.with_suffix(".time")
    t0 = time.perf_counter()
    with out.open("wb") as fh:
        # Through /usr/bin/time: a child forked from this (large) process inherits its peak RSS in ru_maxrss. From
        # the registry's folder: `-m` puts the working directory first on the path, ahead of PYTHONPATH.
        done = subprocess.run(["/usr/bin/time", "-o", str(stats), "-f", "%U %S %M", sys.executable, "-m", "factreg",
                               "changes", "--json", "--db", str(db)], stdout=fh, stderr=subprocess.DEVNULL, env=env,
                              cwd=db.parent)
    if done.returncode != 0:
        raise SystemExit(f"changes failed under {tree}")
    user, system, peak_kb = stats.read_text().split()[-3:]
    return time.perf_counter() - t0, float(user) + float(system), int(peak_kb) / 1024


def main() -> None:
    base = subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True)
    revs = [a for a in sys.argv[1:] if not a.startswith("-")] or [base.stdout.strip()[:10] or "main"]
    speed = b.speed_points(b.SPEED_SEED, 10_000)  # lifted above zero there, as a rate is
    with tempfile.TemporaryDirectory(prefix="factreg-changes-stream-") as tmp:
        work = Path(tmp)
        sides = {"this tree": ROOT, **{rev: b.before_tree(rev, work) for rev in revs}}
        # The same facts in a registry of each side's own schema, made by its code (an older factreg refuses a newer
        # registry), each in a folder of its own.
        dbs = {name: work / f"db-{k}" / "reg.db" for k, name in enumerate(sides)}
        for name, tree in sides.items():
            dbs[name].parent.mkdir()
            n_versions, n_checks = b.build_registry(dbs[name], speed, dbs[name].parent, tree)
        got: dict[str, list[tuple[float, float, float]]] = {k: [] for k in sides}
        outputs: dict[str, bytes] = {}
        load0 = os.getloadavg()
        for _ in range(3):
            for name, tree in sides.items():
                out = work / f"out-{len(outputs)}.json"
                got[name].append(run(tree, dbs[name], out))
                outputs[name] = out.read_bytes()
        load1 = os.getloadavg()
        same = all(outputs["this tree"] == outputs[rev] for rev in revs)
        lines = ["## `changes`: streamed from the database (`bench/bench_changes_stream.py`)", "",
                 f"{machine()}. `factreg changes --json` over {len(speed):,} facts ({n_versions:,} versions, "
                 f"{n_checks:,} verifications), whole process, 3 interleaved runs per side, medians; load average "
                 f"{load0[0]:.2f} before, {load1[0]:.2f} after. Output identical on every side: "
                 f"{'yes' if same else '**no**'}.", "",
                 "| code | wall (s) | CPU (s) | peak RSS (MB) |", "|---|---|---|---|"]
        for name, runs in got.items():
            w, c, m = (statistics.median(x) for x in zip(*runs, strict=True))
            lines.append(f"| {name} | {w:.2f} | {c:.2f} | {m:.0f} |")
        ours = [statistics.median(x) for x in zip(*got["this tree"], strict=True)]
        lines.append("")
        for rev in revs:
            theirs = [statistics.median(x) for x in zip(*got[rev], strict=True)]
            lines.append(f"CPU ratio (this tree / {rev}): {ours[1] / theirs[1]:.2f}×; peak memory ratio: "
                         f"{ours[2] / theirs[2]:.2f}×.")
        lines.append("")
        text = "\n".join(lines)
        print(text)
        write_section("changes_stream", text)
        if not same:
            raise SystemExit("the outputs differ")


if __name__ == "__main__":
    main()
