"""`docs check` over many citation markers in one paragraph: linear, against the same markers one per paragraph.

A document holding one paragraph (one long line) of N outdated markers, at about 55, 111 and 223 KB, is checked
by `factreg docs check --json` (every marker is a `text_differs` problem with its diff); the baseline is the same
N markers each in its own paragraph, checked in the same run. Both sides are whole processes, run interleaved.
With `--before DIR` (a checkout of an older factreg) that version is timed once per size as well.

Writes bench/results/markers.md (assembled into docs/performance.md by run_all.py).
Run: `python bench/bench_markers.py [--quick] [--before DIR]`.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine, write_section  # noqa: E402

MARKER = "<!-- fact: a/b -->28 tok/s<!-- /fact -->"
SIZES_KB = (55, 111, 223)


def documents(folder: Path, kb: int) -> tuple[Path, Path, int]:
    n = kb * 1000 // (len(MARKER) + 7)
    one = folder / f"one-{kb}.md"
    one.write_text("Speeds: " + " ".join(f"run {i % 10} {MARKER}" for i in range(n)) + "\n", encoding="utf-8")
    many = folder / f"many-{kb}.md"
    many.write_text("".join(f"Speed: run {i % 10} {MARKER}\n\n" for i in range(n)), encoding="utf-8")
    return one, many, n


BEFORE_LIMIT = 4 << 30  # address space of a `--before` run: the quadratic version needs ~12 GB at 223 KB


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (BEFORE_LIMIT, BEFORE_LIMIT))


def timed(cmd: list[str], env: dict[str, str], limited: bool = False) -> float | None:
    """Seconds of one run, or None when a limited run ran out of memory."""
    t0 = time.perf_counter()  # run from the temp folder: `python -m` puts the current folder first on the path
    r = subprocess.run(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=env["BENCH_CWD"],
        preexec_fn=_limit if limited else None,
    )
    took = time.perf_counter() - t0
    if limited and r.returncode != 1:
        return None
    if r.returncode != 1:  # every marker is outdated: exit 1 with findings
        raise SystemExit(f"{cmd} exited {r.returncode}: {r.stderr.decode(errors='replace')[-400:]}")
    return took


def in_process(doc: Path, repeat: int) -> float:
    """Median seconds of reading, parsing and checking `doc` (with its diffs) in this process: no start-up."""
    sys.path.insert(0, str(ROOT))
    from factreg.docs import check as chk

    index = {"a/b": {"id": "a/b", "value": 11.9, "spread": 7.2, "unit": "tok/s", "status": "fresh"}}
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        chk.check_scanned(chk.scan([doc]), index)  # type: ignore[arg-type]
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    quick = "--quick" in sys.argv
    before = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
    repeat = 3 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = f"sqlite:///{folder / 'r.db'}"
        env = {**os.environ, "FACTREG_DB": db, "PYTHONPATH": str(ROOT), "BENCH_CWD": str(folder)}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "factreg",
                "record",
                "a/b",
                "-m",
                "tg_rate",
                "--value",
                "11.9",
                "--spread",
                "7.2",
                "-c",
                "machine=bench",
            ],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=folder,
        )
        cmd = [sys.executable, "-m", "factreg", "docs", "check", "--json"]
        rows: list[str] = []
        medians: dict[int, float] = {}
        old: dict[int, float | None] = {}
        inproc: dict[int, tuple[float, float]] = {}
        load_start = os.getloadavg()[0]
        for kb in SIZES_KB:
            one, many, n = documents(folder, kb)
            ours: list[float] = []
            base: list[float] = []
            for _ in range(repeat):
                ours.append(timed([*cmd, str(one)], env) or 0.0)
                base.append(timed([*cmd, str(many)], env) or 0.0)
            if before:
                old[kb] = timed([*cmd, str(one)], {**env, "PYTHONPATH": before}, limited=True)
            medians[kb] = statistics.median(ours)
            inproc[kb] = (in_process(one, repeat), in_process(many, repeat))
            fmt = lambda xs: f"{min(xs):.3f} / {statistics.median(xs):.3f} / {max(xs):.3f}"  # noqa: E731
            size = one.stat().st_size / 1000
            took = old.get(kb)
            then = (
                (f" | {took:.2f}" if took is not None else f" | out of memory (> {BEFORE_LIMIT >> 30} GB)")
                if before
                else ""
            )
            rows.append(
                f"| {size:.0f} KB, {n:,} markers | {fmt(ours)} | {fmt(base)} | "
                f"**{statistics.median(ours) / statistics.median(base):.2f}×**{then} |"
            )
        load_end = os.getloadavg()[0]
    scale = medians[SIZES_KB[-1]] / medians[SIZES_KB[0]]
    lo, hi = inproc[SIZES_KB[0]], inproc[SIZES_KB[-1]]
    inproc_rows = "\n".join(
        f"| {kb} KB | {a * 1000:.1f} | {b * 1000:.1f} | {a / b:.2f}× |" for kb, (a, b) in inproc.items()
    )
    head_then = " | before (1 run, s) |\n|---|---|---|---|---|" if before else " |\n|---|---|---|---|"
    text = (
        "## Documents: many markers in one paragraph\n\n"
        f"Machine: {machine()}. Load average (1 min) at the start and end: {load_start:.1f} and {load_end:.1f}. "
        f"Whole processes (`factreg docs check --json`), {repeat} runs each, interleaved; times in seconds.\n\n"
        "- one paragraph: a single line of N outdated markers (every one a `text_differs` problem with a diff).\n"
        "- baseline: the same N markers, each in its own paragraph, checked in the same run.\n"
        + (
            "- before: the factreg of `--before` (diffs of whole lines, an opening marker read to the end of its "
            "line), one run per size.\n"
            if before
            else ""
        )
        + "\n| document | one paragraph min / median / max | one per paragraph min / median / max | ratio of "
        "medians" + head_then + "\n" + "\n".join(rows) + "\n\n"
        f"Input ×{SIZES_KB[-1] / SIZES_KB[0]:.1f} (55 → 223 KB): one-paragraph time ×{scale:.2f} (linear: at most "
        f"×4, less while start-up weighs; quadratic: ×16).\n\n"
        "Without process start-up (reading, parsing and checking in one process, medians in ms):\n\n"
        "| document | one paragraph | one per paragraph | ratio |\n|---|---|---|---|\n" + inproc_rows + "\n\n"
        f"In-process, input ×{SIZES_KB[-1] / SIZES_KB[0]:.1f}: one paragraph ×{hi[0] / lo[0]:.2f}, one per paragraph "
        f"×{hi[1] / lo[1]:.2f}.\n"
    )
    print(text)
    write_section("markers", text)


if __name__ == "__main__":
    main()
