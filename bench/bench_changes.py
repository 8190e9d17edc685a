"""Quality and speed of the change-point detector, `factreg.stats.changepoints`, side by side with Apache Otava.

Quality: generated series (tests/changes_support.py: lengths 10–500, noise CV 5–30%, 0/1/2 shifts of 5–40%, every
segment ≥ 4 points). A shift counts as found when a reported change lies within ±1 point of it (each report used
once); the target is ≥ 95% of the shifts of ≥ 3 noise standard deviations. A false alarm is a series without a shift
that reports any change (target ≤ 2%). A second set of series without a shift has 2% of its points 40% slower
(disturbed runs), to see what outliers do.

Speed: 10,000 series × 100 points (0/1/2 shifts, with conditions), `detect()` in one process (target ≤ 10 s).
The command at scale: the same 10,000 series stored as a registry (each level's first point a version, recorded with
`factreg import` of a JSONL file; every other point a verification of it with its observed conditions, inserted with
one `executemany`; building it is not timed), then `factreg changes --json` timed as a whole process (median of 3
runs; target ≤ 10 s and ≤ Otava's time on the same values).

Otava: `apache-otava` is installed by this script into its own virtual environment, bench/.venvs/otava (git-ignored:
it pins numpy 2.2 and pulls cloud SDKs, none of which factreg needs), and its analysis API
(`otava.analysis.compute_change_points`, the Hunter split/merge algorithm with its t-test) is called on the same
series, written to a JSON file, by that environment's python in a subprocess; Otava's own timing is taken inside that
process around the calls alone. It runs with its defaults (window 50, max p-value 0.001), with max p-value 0.01
(factreg's alpha) and with 0.0001 (where its false-alarm rate comes near factreg's: the fair comparison of what each
finds).

Placement next to an outlier (issue 28), the detector before and after points that belong to no level were set aside,
in one run on the same seeded series: the detector of revision BEFORE_REV (`git show`, loaded as a module of its
own) and the current one. Series with a step of ≥ 3 noise SDs and an outlier 1–3 points before it, 3–10 SDs beyond
the new level (tests/changes_support.make_step_outliers): how often a change lands within ±1 point of the step, on
the outlier, and names the build that changed at the step; 10,000 flat series with normal noise and 10,000 with 2%
of the points 40% slower (false alarms); the quality set above; `detect()` CPU time on the speed set. And, on a
registry of the speed set's facts whose verifications observed `uptime_s`, how many changes `factreg changes --json`
names a per-run key as a cause, and its time, with both revisions' code (whole processes, interleaved).

Writes bench/results/changes.md and bench/results/changes_placement.md. Run:
`python bench/bench_changes.py [--quick] [--no-otava] [--placement]` (`--placement`: only the placement part).
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import factreg_cmd, machine, time_process, write_section  # noqa: E402

from factreg.registry.changes import Point, detect  # noqa: E402
from factreg.stats.changepoints import ALPHA, MIN_SEGMENT, change_points  # noqa: E402
from tests.changes_support import (  # noqa: E402
    Case,
    Score,
    make_case,
    make_outlier_nulls,
    make_set,
    make_step_outliers,
    score,
)

VENVS = ROOT / "bench" / ".venvs"
OTAVA_VENV = VENVS / "otava"
OTAVA_SPEC = "apache-otava==0.8.0"
OTAVA_CONFIGS = [
    {"name": "Otava 0.8.0, defaults (window 50, p ≤ 0.001)", "window_len": 50, "max_pvalue": 0.001},
    {"name": "Otava 0.8.0, p ≤ 0.01", "window_len": 50, "max_pvalue": 0.01},
    {"name": "Otava 0.8.0, p ≤ 0.0001", "window_len": 50, "max_pvalue": 0.0001},
]
QUALITY_SEED, OUTLIER_SEED, SPEED_SEED = 20261102, 20261103, 20261104
STEP_OUTLIER_SEED, FLAT_SEED, FLAT_OUTLIER_SEED = 20261105, 20261106, 20261107
# The detector before points that belong to no level were set aside, and before a verification's per-run keys were
# left out of a point's conditions (issue 28, item 6).
BEFORE_REV = "89fca93"

OTAVA_RUNNER = r'''
import json, sys, time
import numpy
from otava.analysis import compute_change_points
job = json.load(open(sys.argv[1]))
out = {"numpy": numpy.__version__, "runs": {}}
for cfg in job["configs"]:
    for set_name, series in job["sets"].items():
        if set_name in cfg.get("skip", []):
            continue
        found = []
        t0, c0 = time.perf_counter(), time.process_time()
        for s in series:
            cps, _weak = compute_change_points(s, window_len=cfg["window_len"], max_pvalue=cfg["max_pvalue"],
                                               min_magnitude=0.0)
            found.append([int(c.index) for c in cps])
        out["runs"][cfg["name"] + "|" + set_name] = {
            "found": found, "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}
json.dump(out, open(sys.argv[2], "w"))
'''


def ensure_otava() -> tuple[Path | None, str]:
    """The python of a virtual environment holding Otava, or None and why not."""
    py = OTAVA_VENV / "bin" / "python"
    VENVS.mkdir(parents=True, exist_ok=True)
    ignore = VENVS / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    check = [str(py), "-c", "import otava.analysis, importlib.metadata as m; print(m.version('apache-otava'))"]
    if py.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return py, "already installed"
    r = subprocess.run([sys.executable, "-m", "venv", "--clear", str(OTAVA_VENV)], capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"`python -m venv` failed: {r.stderr.strip()[-500:]}"
    t0 = time.perf_counter()
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", OTAVA_SPEC], capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"`pip install {OTAVA_SPEC}` failed: {r.stderr.strip()[-800:]}"
    if subprocess.run(check, capture_output=True).returncode != 0:
        return None, f"{OTAVA_SPEC} installed but `import otava.analysis` fails"
    return py, f"installed in {time.perf_counter() - t0:.0f} s"


def run_otava(py: Path, sets: dict[str, list[Case]], work: Path, skip: dict[str, list[str]]) -> dict:
    job = {"configs": [{**c, "skip": skip.get(c["name"], [])} for c in OTAVA_CONFIGS],
           "sets": {name: [c.values for c in cases] for name, cases in sets.items()}}
    src, out, runner = work / "series.json", work / "otava-out.json", work / "otava_runner.py"
    src.write_text(json.dumps(job), encoding="utf-8")
    runner.write_text(OTAVA_RUNNER, encoding="utf-8")
    env = dict(os.environ)
    # Older OpenBLAS builds need these on some processors, and they slow a current numpy: unset them for Otava.
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    t0 = time.perf_counter()
    r = subprocess.run([str(py), str(runner), str(src), str(out)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"Otava runner failed: {r.stderr[-2000:]}")
    result = json.loads(out.read_text(encoding="utf-8"))
    result["process_wall"] = time.perf_counter() - t0
    return result


def timed(fn: Callable[[], list[list[int]]]) -> tuple[list[list[int]], float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    found = fn()
    return found, time.perf_counter() - t0, time.process_time() - c0


def by_length(cases: list[Case], found: list[list[int]]) -> dict[str, Score]:
    buckets = {"10–29": (10, 29), "30–99": (30, 99), "100–500": (100, 500)}
    out = {}
    for name, (lo, hi) in buckets.items():
        pick = [i for i, c in enumerate(cases) if lo <= len(c.values) <= hi]
        out[name] = score([cases[i] for i in pick], [found[i] for i in pick])
    return out


def spurious(cases: list[Case], found: list[list[int]], far: int = 5) -> int:
    """Reported changes farther than `far` points from every true shift, in series that have shifts."""
    return sum(1 for c, got in zip(cases, found, strict=True) if c.shifts
               for g in got if all(abs(g - t) > far for t in c.shifts))


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}% ({a:,}/{b:,})" if b else "—"


def speed_points(seed: int, count: int) -> list[list[Point]]:
    """`count` series of 100 points (0/1/2 shifts), each level on a build of its own.

    A rate is never negative (`factreg import` refuses one), but a generated series with a 30% CV and two 40% drops
    can dip below zero: every series is lifted by the same amount so that the smallest point of the set is 1. The
    detector, Otava and the registry all see these same values."""
    rng = random.Random(seed)
    cases = [make_case(rng, 100, rng.choice((0, 1, 2))) for _ in range(count)]
    lift = max(0.0, 1.0 - min(v for case in cases for v in case.values))
    out = []
    for case in cases:
        commit, pts = 0, []
        for i, v in enumerate(case.values):
            commit += i in case.shifts
            pts.append(Point(f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}T03:00:00Z", v + lift, [v + lift],
                             {"build_commit": f"c{commit:07x}", "gpu_driver": "550.54", "thinking": "off"}))
        out.append(pts)
    return out


def build_registry(db: Path, speed: list[list[Point]], work: Path, tree: Path = ROOT) -> tuple[int, int]:
    """A registry holding `speed` as facts: each level's first point a version, the others verifications of it,
    made by the code of `tree` (its schema: an older factreg refuses a newer registry).

    Returns (versions, verifications) written. Not timed."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    src = work / "versions.jsonl"
    checks: list[tuple] = []
    n_versions = 0
    with src.open("w", encoding="utf-8") as fh:
        for k, pts in enumerate(speed):
            fid = f"benchbox/model-{k:05d}/tg128"
            version, commit = 0, None
            for p in pts:
                if p.conditions["build_commit"] != commit:
                    commit = p.conditions["build_commit"]
                    version += 1
                    n_versions += 1
                    fh.write(json.dumps({"id": fid, "metric": "tg_rate", "samples": p.samples,
                                         "cond": {"machine": "benchbox", **p.conditions},
                                         "measured_at": p.at}) + "\n")
                    continue
                observed = {**p.conditions, "uptime_s": "86400"}
                checks.append((fid, version, p.at, "confirmed", "llama-bench", "benchbox", p.value, 1,
                               json.dumps(p.samples), json.dumps(observed), "{}"))
    # From `work`: `python -m` puts the working directory first on the path, ahead of PYTHONPATH.
    cmd = factreg_cmd() if tree == ROOT else [sys.executable, "-m", "factreg"]
    r = subprocess.run([*cmd, "import", str(src), "--db", str(db)], capture_output=True, text=True, env=env, cwd=work)
    if r.returncode != 0:
        raise SystemExit(f"factreg import failed: {r.stderr[-1000:]}")
    con = sqlite3.connect(db)
    with con:
        con.executemany("INSERT INTO verification (fact_id, fact_version, verified_at, verdict, method_kind, hostname, "
                        "value, n, samples, observed, diff) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", checks)
    con.close()
    return n_versions, len(checks)


def time_command(speed: list[list[Point]], expected: int) -> dict:
    """`factreg changes --json` over the registry of `speed`, whole process, 3 runs (the build is not timed)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="factreg-bench-changes-db-") as tmp:
        work = Path(tmp)
        db = work / "reg.db"
        t0 = time.perf_counter()
        n_versions, n_checks = build_registry(db, speed, work)
        build = time.perf_counter() - t0
        out = work / "changes.json"
        times, cpus, loads = [], [], []
        for _ in range(3):
            loads.append(os.getloadavg()[0])
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            with out.open("wb") as fh:
                times += time_process([*factreg_cmd(), "changes", "--json", "--db", str(db)], 1, env=env, stdout=fh)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        got = json.loads(out.read_text(encoding="utf-8"))
    if len(got) != expected:
        raise SystemExit(f"`factreg changes` found {len(got)} changes, detect() on the same points {expected}")
    return {"times": times, "cpus": cpus, "loads": loads, "versions": n_versions, "verifications": n_checks,
            "changes": len(got), "build": build}


def before_tree(rev: str, work: Path) -> Path:
    """The `factreg` package of revision `rev`, extracted under `work` (for a module or a process of that code)."""
    r = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "factreg"], capture_output=True)
    if r.returncode != 0:
        raise SystemExit(f"git archive {rev} failed: {r.stderr.decode(errors='replace')[-500:]}")
    tree = work / f"factreg-{rev}"
    with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tar:
        tar.extractall(tree, filter="data")
    return tree


def load_detector(tree: Path) -> ModuleType:
    """That revision's registry/changes.py as a module of its own (its imports resolve to today's small helpers)."""
    spec = importlib.util.spec_from_file_location("changes_before", tree / "factreg" / "registry" / "changes.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def placement_scores(cases: list[Case], fn: Callable[[list[float]], list[int]]) -> dict[str, int]:
    """Where the changes land on series with a step and an outlier 1–3 points before it."""
    out = {"n": len(cases), "found": 0, "exact": 0, "none": 0, "none_short": 0, **{f"on{d}": 0 for d in (1, 2, 3)},
           **{f"n{d}": 0 for d in (1, 2, 3)}, **{f"found{d}": 0 for d in (1, 2, 3)}}
    for c in cases:
        got, t, d = fn(c.values), c.shifts[0], c.meta["before"]
        hit = any(abs(g - t) <= 1 for g in got)
        out["found"] += hit
        out[f"found{d}"] += hit
        out[f"n{d}"] += 1
        out["exact"] += t in got
        out["none"] += not got
        out["none_short"] += not got and len(c.values) < 30
        out[f"on{d}"] += c.meta["outlier"] in got
    return out


def causes_kept(cases: list[Case], detector: Callable[[list[Point]], list]) -> int:
    """Series (step and outlier) whose change within ±1 of the step names the build that changed there.

    Each point carries build_commit `old` before the step and `new` from it: the outlier ran on the old build."""
    kept = 0
    for c in cases:
        t = c.shifts[0]
        pts = [Point(f"2026-01-01T00:00:{i % 60:02d}Z", v, None, {"build_commit": "old" if i < t else "new"})
               for i, v in enumerate(c.values)]
        kept += any(abs(ch.index - t) <= 1 and ch.conditions_changed == {"build_commit": ["old", "new"]}
                    for ch in detector(pts))
    return kept


def commands(points: list[list[Point]], tree: Path) -> dict[str, dict]:
    """`factreg changes --json` over a registry of `points` (verifications observed `uptime_s`), with today's code
    and with the code of `tree`: 3 whole-process runs each, interleaved; wall and CPU times, the changes found and
    how many name a key that is not one of the facts' identity conditions."""
    out: dict[str, dict] = {"after": {"times": [], "cpus": []}, "before": {"times": [], "cpus": []}}
    identity = {"build_commit", "gpu_driver", "thinking", "machine"}
    with tempfile.TemporaryDirectory(prefix="factreg-bench-uptime-") as tmp:
        dbs = {"after": Path(tmp) / "after.db", "before": Path(tmp) / "before.db"}  # each side's own schema
        build_registry(dbs["after"], points, Path(tmp))
        build_registry(dbs["before"], points, Path(tmp), tree)
        for _ in range(3):
            for side, path in (("after", ROOT), ("before", tree)):
                db = dbs[side]
                env = {**os.environ, "PYTHONPATH": str(path)}
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                # Run from the temporary directory: `python -m` puts the working directory first on the path.
                r = subprocess.run([sys.executable, "-m", "factreg", "changes", "--json", "--db", str(db)],
                                   capture_output=True, text=True, env=env, cwd=tmp)
                out[side]["times"].append(time.perf_counter() - t0)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                out[side]["cpus"].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
                if r.returncode != 0:
                    raise SystemExit(f"factreg changes failed ({path}): {r.stderr[-1000:]}")
                got = json.loads(r.stdout)
                out[side]["changes"] = len(got)
                out[side]["named"] = sum(bool(set(c["conditions_changed"]) - identity) for c in got)
    return out


def placement(quick: bool) -> Path:
    """Before and after points that belong to no level were set aside, on the same series in one run."""
    n = 1_000 if quick else 10_000
    steps = make_step_outliers(STEP_OUTLIER_SEED, n)
    flat = make_set(FLAT_SEED, n, shifts=(0,))
    flat_out = make_outlier_nulls(FLAT_OUTLIER_SEED, n)
    quality = make_set(QUALITY_SEED, n)
    speed = speed_points(SPEED_SEED, n)
    with tempfile.TemporaryDirectory(prefix="factreg-bench-before-") as tmp:
        tree = before_tree(BEFORE_REV, Path(tmp))
        old = load_detector(tree)
        sides = {f"before ({BEFORE_REV})": old, "after (this revision)": SimpleNamespace(change_points=change_points, detect=detect)}
        res: dict[str, dict] = {}
        for name, mod in sides.items():
            def cps(values: list[float], mod: ModuleType = mod) -> list[int]:
                return [c for c, _ in mod.change_points(values)]
            t0 = time.process_time()
            r = placement_scores(steps, cps)
            r["steps_cpu"] = time.process_time() - t0
            r["causes"] = causes_kept(steps, mod.detect)
            r["flat"] = sum(bool(cps(c.values)) for c in flat)
            r["flat_out"] = sum(bool(cps(c.values)) for c in flat_out)
            found = [cps(c.values) for c in quality]
            r["quality"], r["quality_exact"] = score(quality, found), score(quality, found, tol=0)
            res[name] = r
            print(f"{name}: {r['found']}/{n} on the step, flat {r['flat']}, flat+outliers {r['flat_out']}",
                  file=sys.stderr)
        # The ceiling: the old detector on the same series with the outlier taken out (known only to the generator).
        oracle = 0
        for c in steps:
            keep = [i for i in range(len(c.values)) if i != c.meta["outlier"]]
            got = [keep[j] for j, _ in old.change_points([c.values[i] for i in keep])]
            oracle += any(abs(g - c.shifts[0]) <= 1 for g in got)
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(3):  # interleaved, so both sides see the same load
            for name, mod in sides.items():
                t0 = time.process_time()
                for pts in speed:
                    mod.detect(pts)
                cpu[name].append(time.process_time() - t0)
        cmd = commands(speed, tree)

    (before, b), (after, a) = res.items()
    pc = lambda k, r: pct(r[k], r["n"])  # noqa: E731
    lines = [
        "## Change points: an outlier next to a step, and per-run keys named as a cause",
        "",
        f"Machine: {machine()}. Load average (1 min) at the end: {os.getloadavg()[0]:.1f}. "
        f"`bench/bench_changes.py --placement`: the detector of revision {BEFORE_REV} (loaded from `git show`) and "
        "this revision's, in one process, on the same seeded series.",
        "",
        f"Step and outlier: {n:,} series (seed {STEP_OUTLIER_SEED}; `tests/changes_support.make_step_outliers`): "
        "lengths 10–500, noise CV 5–30%, one step of a relative 5–40% up or down that is ≥ 3 noise SDs, and 1, 2 or "
        "3 points before it one outlier lying 3–10 SDs (of the new level's noise) beyond the new level, on the far "
        "side from the old one. Landing on the step: a change within ±1 point of it. Names the cause: that change's "
        "`conditions_changed` is exactly the build that changed at the step (the outlier ran on the old build). "
        f"Flat: {n:,} series without a shift (seed {FLAT_SEED}; normal noise) and {n:,} with 2% of the points 40% "
        f"slower (seed {FLAT_OUTLIER_SEED}). Quality: the quality set above (seed {QUALITY_SEED}, first {n:,}).",
        "",
        f"| measure | {before} | {after} | target |",
        "|---|---|---|---|",
        f"| step and outlier: change lands on the step (±1) | {pc('found', b)} | **{pc('found', a)}** | ≥ 95% |",
        "| … outlier 1 / 2 / 3 points before | " + " / ".join(pct(b[f'found{d}'], b[f'n{d}']) for d in (1, 2, 3))
        + " | " + " / ".join(pct(a[f'found{d}'], a[f'n{d}']) for d in (1, 2, 3)) + " | — |",
        f"| … exactly on the step | {pc('exact', b)} | {pc('exact', a)} | — |",
        "| … a change on the outlier, 1 / 2 / 3 points before | "
        + " / ".join(pct(b[f'on{d}'], b[f'n{d}']) for d in (1, 2, 3)) + " | "
        + " / ".join(pct(a[f'on{d}'], a[f'n{d}']) for d in (1, 2, 3)) + " | — |",
        f"| … no change at all | {pc('none', b)} | {pc('none', a)} | — |",
        f"| … the change names the build as its cause | {pc('causes', b)} | {pc('causes', a)} | — |",
        f"| false alarms, {n:,} flat series | {pct(b['flat'], n)} | **{pct(a['flat'], n)}** | ≤ 1.2% |",
        f"| false alarms, {n:,} flat series with 2% of the points 40% slower | {pct(b['flat_out'], n)} "
        f"| **{pct(a['flat_out'], n)}** | ≤ 1.2% |",
        f"| quality set: shifts ≥ 3 SD found (±1) | {pct(b['quality'].big_found, b['quality'].big_total)} "
        f"| {pct(a['quality'].big_found, a['quality'].big_total)} | ≥ 95% |",
        f"| quality set: shifts ≥ 3 SD exactly placed | "
        f"{pct(b['quality_exact'].big_found, b['quality_exact'].big_total)} "
        f"| {pct(a['quality_exact'].big_found, a['quality_exact'].big_total)} | — |",
        f"| quality set: all shifts found (±1) | {pct(b['quality'].all_found, b['quality'].all_total)} "
        f"| {pct(a['quality'].all_found, a['quality'].all_total)} | — |",
        f"| quality set: false alarms | {pct(b['quality'].null_alarms, b['quality'].null_series)} "
        f"| {pct(a['quality'].null_alarms, a['quality'].null_series)} | ≤ 2% |",
        f"| `detect()` on {len(speed):,} × 100 points, CPU (s), median of 3 interleaved runs "
        f"| {statistics.median(cpu[before]):.2f} ({', '.join(f'{x:.2f}' for x in cpu[before])}) "
        f"| {statistics.median(cpu[after]):.2f} ({', '.join(f'{x:.2f}' for x in cpu[after])}) | — |",
        f"| `factreg changes --json` over {len(speed):,} facts × 100 points whose verifications observed `uptime_s`: "
        f"changes naming a key that is not an identity condition | "
        f"{pct(cmd['before']['named'], cmd['before']['changes'])} of changes "
        f"| **{pct(cmd['after']['named'], cmd['after']['changes'])}** | none |",
        f"| … the same command, CPU (s), median of 3 interleaved runs "
        f"| {statistics.median(cmd['before']['cpus']):.2f} ({', '.join(f'{x:.2f}' for x in cmd['before']['cpus'])}) "
        f"| {statistics.median(cmd['after']['cpus']):.2f} ({', '.join(f'{x:.2f}' for x in cmd['after']['cpus'])}) "
        "| ≤ 10 s |",
        f"| … wall (s), median of 3 | {statistics.median(cmd['before']['times']):.2f} "
        f"| {statistics.median(cmd['after']['times']):.2f} | ≤ 10 s |",
        "",
        f"The ceiling on the step-and-outlier series — the old detector on the same series with the outlier taken "
        f"out, which only the generator knows — is {pct(oracle, n)}: at 3 noise SDs even a clean step lands 2 or more "
        f"points off now and then. Of the {a['none']:,} series that report no change after, {a['none_short']:,} have "
        "fewer than 30 points (a 3-SD step in so few points is near what `alpha` lets through).",
        "",
    ]
    path = write_section("changes_placement", "\n".join(lines))
    print(f"wrote {path}", file=sys.stderr)
    return path


def main() -> None:
    quick = "--quick" in sys.argv
    if "--placement" in sys.argv:
        placement(quick)
        return
    n_quality, n_outlier, n_speed = (1_000, 500, 1_000) if quick else (10_000, 3_000, 10_000)
    quality = make_set(QUALITY_SEED, n_quality)
    outliers = make_outlier_nulls(OUTLIER_SEED, n_outlier)
    speed = speed_points(SPEED_SEED, n_speed)
    speed_cases = [Case([p.value for p in pts], [], [], 0.0) for pts in speed]

    rows: dict[str, dict] = {}
    found, wall, cpu = timed(lambda: [[c for c, _ in change_points(x.values)] for x in quality])
    found_out, _, _ = timed(lambda: [[c for c, _ in change_points(x.values)] for x in outliers])
    speed_runs = []
    for _ in range(3):
        _, w, c = timed(lambda: [[ch.index for ch in detect(pts)] for pts in speed])
        speed_runs.append((w, c))
    values_runs = []
    for _ in range(3):
        _, w, c = timed(lambda: [[i for i, _ in change_points(x.values)] for x in speed_cases])
        values_runs.append((w, c))
    speed_load = os.getloadavg()[0]
    expected = sum(len(detect(pts)) for pts in speed)
    command = time_command(speed, expected)
    print(f"factreg changes --json: {command}", file=sys.stderr)
    rows[f"factreg.registry.changes (min_segment {MIN_SEGMENT}, alpha {ALPHA})"] = {
        "found": found, "wall": wall, "cpu": cpu, "outliers": found_out,
        "speed": statistics.median(w for w, _ in speed_runs),
        "speed_cpu": statistics.median(c for _, c in speed_runs),
        "speed_detail": ("`detect()` on Points (medians, intervals, conditions included), 3 runs: "
                         + ", ".join(f"{w:.2f} s" for w, _ in speed_runs)
                         + "; `change_points()` on the bare values: "
                         + ", ".join(f"{w:.2f} s" for w, _ in values_runs)),
    }

    otava_note = "not run (--no-otava)"
    otava_numpy = ""
    otava_load: float | None = None
    if "--no-otava" not in sys.argv:
        py, otava_note = ensure_otava()
        if py is not None:
            otava_load = os.getloadavg()[0]
            with tempfile.TemporaryDirectory(prefix="factreg-bench-changes-") as tmp:
                res = run_otava(py, {"quality": quality, "outliers": outliers, "speed": speed_cases}, Path(tmp),
                                skip={c["name"]: ["speed"] for c in OTAVA_CONFIGS[1:]})
            otava_numpy = res["numpy"]
            for cfg in OTAVA_CONFIGS:
                q = res["runs"][f"{cfg['name']}|quality"]
                sp = res["runs"].get(f"{cfg['name']}|speed")
                rows[cfg["name"]] = {
                    "found": q["found"], "wall": q["wall"], "cpu": q["cpu"],
                    "outliers": res["runs"][f"{cfg['name']}|outliers"]["found"],
                    "speed": sp["wall"] if sp else None,
                    "speed_cpu": sp["cpu"] if sp else None,
                    "speed_detail": (f"`compute_change_points()` on the values, one run: {sp['wall']:.2f} s "
                                     f"(CPU {sp['cpu']:.2f} s)" if sp else "not run (same code as the defaults)"),
                }

    lines = ["## Change points: detection quality and speed", "",
             f"Machine: {machine()}.", "",
             f"Quality set: {n_quality:,} generated series (seed {QUALITY_SEED}; tests/changes_support.py): lengths "
             "uniform in 10–500, noise CV uniform in 5–30% (normal, proportional to the level), 0, 1 or 2 shifts "
             "(equally likely where the length allows) of a relative 5–40% up or down, each segment ≥ 4 points. "
             "A shift's size in noise standard deviations is its relative size over the CV. A shift is found when "
             "a report lies within ±1 point of it. Outlier set: "
             f"{n_outlier:,} series without a shift where 2% of the points ran 40% slower (seed {OUTLIER_SEED}).",
             "",
             "| detector | shifts ≥ 3 SD found (±1) | all shifts found (±1) | false alarms (no shift) "
             "| false alarms (no shift, 2% outliers) | reports > 5 points from any shift | quality set, wall (CPU) "
             "| 10,000 × 100 points, wall (CPU) |",
             "|---|---|---|---|---|---|---|---|"]
    detail = []
    for name, r in rows.items():
        s = score(quality, r["found"])
        so = score(outliers, r["outliers"])
        reports = sum(len(f) for c, f in zip(quality, r["found"], strict=True) if c.shifts)
        far = spurious(quality, r["found"])
        speed_txt = f"**{r['speed']:.2f} s** ({r['speed_cpu']:.2f} s)" if r["speed"] is not None else "—"
        lines.append(f"| {name} | **{pct(s.big_found, s.big_total)}** | {pct(s.all_found, s.all_total)} "
                     f"| **{pct(s.null_alarms, s.null_series)}** | {pct(so.null_alarms, so.null_series)} "
                     f"| {pct(far, reports)} of reports | {r['wall']:.1f} s ({r['cpu']:.1f} s) | {speed_txt} |")
        parts = []
        for bucket, bs in by_length(quality, r["found"]).items():
            parts.append(f"length {bucket}: ≥ 3 SD {pct(bs.big_found, bs.big_total)}, "
                         f"false alarms {pct(bs.null_alarms, bs.null_series)}")
        detail.append(f"- {name}: " + "; ".join(parts) + f". Speed: {r['speed_detail']}.")
        print(lines[-1], file=sys.stderr)
    lines += ["", "By series length:", "", *detail, ""]
    med = statistics.median(command["times"])
    otava_speed = rows.get(OTAVA_CONFIGS[0]["name"], {}).get("speed")
    ratio = f"**{med / otava_speed:.2f}×** Otava's {otava_speed:.2f} s on the same values" if otava_speed else (
        "Otava not run")
    verdict = ("≤ 10 s: " + ("met" if med <= 10 else "**missed**") + "; ≤ Otava: "
               + ("—" if not otava_speed else "met" if med <= otava_speed else "**missed**"))
    otava_cpu = rows.get(OTAVA_CONFIGS[0]["name"], {}).get("speed_cpu")
    cpu_ratio = (f" CPU: {statistics.median(command['cpus']) / otava_cpu:.2f}× Otava's {otava_cpu:.2f} s."
                 if otava_cpu else "")
    lines += [
        f"### The command at scale: `factreg changes --json` over {len(speed):,} facts × 100 points",
        "",
        f"The {len(speed):,} series of the speed set stored as a registry ({command['versions']:,} versions — each level's "
        "first point, recorded with `factreg import` of a JSONL file, with its conditions build_commit, gpu_driver, "
        f"thinking, machine — and {command['verifications']:,} verifications of them with their observed "
        f"conditions, inserted with one `executemany`; built in {command['build']:.0f} s, not timed). "
        "`factreg changes --json --db DB` timed as a whole process (start, migrations check, reading every series, "
        f"detection, JSON output to a file), 3 runs; it found {command['changes']:,} changes, as many as `detect()` "
        "on the same points.",
        "",
        "| measure | run 1 | run 2 | run 3 | median | target |",
        "|---|---|---|---|---|---|",
        "| wall (s) | " + " | ".join(f"{t:.2f}" for t in command["times"]) + f" | **{med:.2f}** | {verdict} |",
        "| CPU, user + system (s) | " + " | ".join(f"{c:.2f}" for c in command["cpus"])
        + f" | {statistics.median(command['cpus']):.2f} | — |",
        "| load average (1 min) at the start | " + " | ".join(f"{x:.1f}" for x in command["loads"])
        + f" | {statistics.median(command['loads']):.1f} | — |",
        "",
        f"Ratio of medians: {ratio} (its `compute_change_points()` alone, inside its process, on the values only: no "
        f"database, no conditions, no output).{cpu_ratio} Load average (1 min) when factreg's in-process speed runs started: "
        f"{speed_load:.1f}; when Otava's runs started: " + (f"{otava_load:.1f}" if otava_load is not None else "—")
        + f"; the machine has {os.cpu_count()} cores shared with other work, so wall times carry the load and the "
        "CPU times are the steadier figure.",
        "",
    ]
    lines += [
        "Targets: ≥ 95% of the shifts of ≥ 3 noise SDs found within ±1 point; ≤ 2% false alarms; 10,000 series × "
        "100 points in ≤ 10 s (wall; the machine's 2 cores are shared, so CPU time is given too). factreg's figures are single-process, standard library only; Otava's are measured "
        "inside its own process around the calls (numpy " + (otava_numpy or "—") + "), in a virtual environment "
        f"of its own ({otava_note}).",
        "",
        "Why the false alarms differ: Otava tests its best split with a t-test as if that split had been chosen in "
        "advance; the best of many splits has a much larger t than a single one, so its p-value threshold is not "
        "its false-alarm rate. factreg multiplies the p-value by the number of splits searched (see the "
        "docstring of factreg/changes.py), so its false-alarm rate stays at or below alpha. Reports far from every "
        "true shift are mostly small shifts (under 3 SD) found at a poorly determined place.",
        "",
    ]
    path = write_section("changes", "\n".join(lines))
    print(f"wrote {path}", file=sys.stderr)
    placement(quick)


if __name__ == "__main__":
    main()
