"""What one command costs from start to exit: CPU (user + system of the process) and wall time of every everyday
command on a registry of 1,000 facts, interleaved with `python -c pass` (the floor) and with the tools factreg sits
beside (`sqlite-utils`, `llm`, from their own virtualenv: --peers DIR, default /tmp/peers-venv/bin), and where the
import time of each command goes (`python -X importtime`, by top-level package).

Each round runs every command once, in an order rotated each round, so that the machine's load falls on all of them
alike; the table gives medians. Every factreg command is also run with the code of another revision
(`--before=REV`, default: where this branch left main) as `python -m factreg` with that tree first on the path.
`--quick`: 3 rounds instead of 7."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_changes import before_tree  # noqa: E402
from bench_core import make_records  # noqa: E402
from common import BIN, ROOT, machine, write_section  # noqa: E402

FACT = "gamebox/model-000000/tg32"
MINIMAL_TYPER = '''import typer
app = typer.Typer(add_completion=False)
@app.command()
def hello(name: str) -> None:
    """Say hello."""
@app.command()
def bye(name: str) -> None:
    """Say goodbye."""
app()
'''


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """CPU seconds (user + system, this child only) and wall seconds of one run of `cmd` (a `PYTHONPATH=…` first
    word is put in the environment)."""
    if cmd[0].startswith("PYTHONPATH="):
        env, cmd = {**env, "PYTHONPATH": cmd[0].split("=", 1)[1]}, cmd[1:]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # docs check / lint exit 1 on a finding, which they are given on purpose
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, wall


def imports(cmd: list[str], env: dict[str, str], cwd: Path) -> list[tuple[str, float]]:
    """Import time (ms) by top-level package for one run of a Python command, largest first."""
    done = subprocess.run(cmd, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd=cwd, capture_output=True, text=True)
    by: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            by[m.group(4).split(".")[0]] += int(m.group(1)) / 1000  # self time: the sum is the whole
    return sorted(by.items(), key=lambda kv: -kv[1])


def main() -> None:
    rounds = 3 if "--quick" in sys.argv else 7
    peers = Path(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--peers=")), "/tmp/peers-venv/bin"))
    fr = str(BIN / "factreg")
    py = sys.executable
    base = subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True)
    rev = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--before=")), base.stdout.strip()[:10])
    work = Path(tempfile.mkdtemp(prefix="factreg-startup-"))
    try:
        before = before_tree(rev, work) if rev else None
        db = work / "registry.db"
        # Without PYTHONDONTWRITEBYTECODE (set in some shells and CI): the warm-up run below writes the .pyc files
        # of the editable tree, as any user's first run does; with it set, every run would compile factreg's
        # modules again (~0.05 s of CPU) while the peers, installed by pip, run from their .pyc files.
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "FACTREG_DB": str(db), "FACTREG_NOW": "2026-11-02T00:00:00Z", "NO_COLOR": "1",
               "LLM_USER_PATH": str(work / "llm")}
        make_records(work / "facts.jsonl", 1000)
        subprocess.run([fr, "import", str(work / "facts.jsonl"), "-q"], env=env, check=True)
        (work / "plain.md").write_text("# Notes\n\nThe server runs on gamebox.\nRestart it after an upgrade.\n")
        (work / "claims.md").write_text("# Notes\n\nDecode is 12 tok/s on gamebox.\nFirst token after 0.4 s.\n")
        (work / "cited.md").write_text(f"# Notes\n\nDecode is <!-- fact: {FACT} -->22.2 ± 1.1 tok/s<!-- /fact -->.\n")
        (work / "minimal_typer.py").write_text(MINIMAL_TYPER)
        su, llm = peers / "sqlite-utils", peers / "llm"
        have_peers = su.exists() and llm.exists()
        if have_peers:
            (work / "llm").mkdir()
        # name, command, target CPU (s) or None, the peer row it is held to
        cases: list[tuple[str, list[str], float | None, str | None]] = [
            ("python -c pass", [py, "-c", "pass"], None, None),
            ("factreg --version", [fr, "--version"], 0.10, "sqlite-utils --version"),
            ("factreg --help", [fr, "--help"], 0.25, "sqlite-utils --help"),
            ("minimal typer app --help", [py, str(work / "minimal_typer.py"), "--help"], None, None),
            (f"factreg show {FACT}", [fr, "show", FACT], 0.30, "sqlite-utils rows … --limit 20"),
            ("factreg list --limit 20", [fr, "list", "--limit", "20"], 0.30, "sqlite-utils rows … --limit 20"),
            ("factreg status (1,000 facts)", [fr, "status"], 0.30, "sqlite-utils query (count by fact)"),
            (f"factreg cite {FACT}", [fr, "cite", FACT], 0.30, "sqlite-utils rows … --limit 20"),
            ("factreg docs check one file", [fr, "docs", "check", "cited.md", "--no-cache"], 0.30, "sqlite-utils rows … --limit 20"),
            ("factreg docs lint (no numbers)", [fr, "docs", "lint", "plain.md", "--no-cache"], 0.25, "sqlite-utils --help"),
            ("factreg docs lint (claims)", [fr, "docs", "lint", "claims.md", "--no-cache"], 0.35, "sqlite-utils --help"),
            ("factreg record", [fr, "record", "bench/startup/tg32", "-m", "tg_rate", "--samples", "20,21,22,21,20",
                                "-c", "machine=gamebox", "-q"], 0.40, "sqlite-utils insert (one row)"),
        ]
        if have_peers:
            (work / "row.json").write_text('{"id": "x", "value": 1}')
            cases += [
                ("sqlite-utils --version", [str(su), "--version"], None, None),
                ("sqlite-utils --help", [str(su), "--help"], None, None),
                ("sqlite-utils rows … --limit 20", [str(su), "rows", str(db), "fact", "--limit", "20"], None, None),
                ("sqlite-utils query (count by fact)", [str(su), "query", str(db), "SELECT fact_id, count(*) FROM "
                                                        "fact_version GROUP BY fact_id"], None, None),
                ("sqlite-utils insert (one row)", [str(su), "insert", str(work / "peer.db"), "t",
                                                   str(work / "row.json")], None, None),
                ("llm --version", [str(llm), "--version"], None, None),
                ("llm --help", [str(llm), "--help"], None, None),
            ]
        if before is not None:
            cases += [(f"{name} [before]", [f"PYTHONPATH={before}", py, "-m", "factreg", *cmd[1:]], None, None)
                      for name, cmd, _, _ in cases if name.startswith("factreg")]
        for _, cmd, _, _ in cases:  # warm the page cache and the .pyc files once, not timed
            run(cmd, env, work)
        cpu: dict[str, list[float]] = defaultdict(list)
        wall: dict[str, list[float]] = defaultdict(list)
        load0 = os.getloadavg()
        for r in range(rounds):
            order = cases[r % len(cases):] + cases[:r % len(cases)]
            for name, cmd, _, _ in order:
                c, w = run(cmd, env, work)
                cpu[name].append(c)
                wall[name].append(w)
        load1 = os.getloadavg()
        med = {name: statistics.median(xs) for name, xs in cpu.items()}
        floor = med["python -c pass"]
        lines = ["## Start-up: every command against the tools beside it (`bench/bench_startup.py`)", "",
                 f"{machine()}. {rounds} interleaved rounds, every command once per round (order rotated); the "
                 f"figures are medians of CPU (user + system of the process) and wall time. Load average "
                 f"{load0[0]:.2f} before, {load1[0]:.2f} after (2 cores, shared). A registry of 1,000 facts "
                 "(SQLite), the editable install with its .pyc files written (PYTHONDONTWRITEBYTECODE unset, as "
                 "for a user; pip wrote the peers' at install); peers from their own virtualenv; `docs check` and "
                 "`docs lint` with `--no-cache` (every run reads and lints its file).", "",
                 f"| command | CPU median (s) | wall median (s) | × `python -c pass` | before ({rev}) CPU (s) | "
                 "before / now | target | peer (CPU) | target; peer |",
                 "|---|---|---|---|---|---|---|---|---|"]
        minimal = med.get("minimal typer app --help")
        for name, _, target, peer in cases:
            if name.endswith(" [before]"):
                continue
            was = med.get(f"{name} [before]")
            c, w = med[name], statistics.median(wall[name])
            goal = target
            if name == "factreg --help" and minimal is not None:
                goal = max(target or 0, minimal + 0.05)
            peer_cpu = med.get(peer) if peer else None
            ok = "—" if goal is None else "met" if c <= goal else "**missed**"
            if peer_cpu is not None:
                ok += "; ≤ peer" if c <= peer_cpu else f"; {c / peer_cpu:.2f}× the peer"
            lines.append(f"| {name} | {c:.3f} | {w:.3f} | {c / floor:.1f}× | "
                         f"{'—' if was is None else f'{was:.3f} | {was / c:.1f}×'}{' | —' if was is None else ''} | "
                         f"{'—' if goal is None else f'≤ {goal:.2f}'} | "
                         f"{'—' if peer_cpu is None else f'{peer_cpu:.3f} ({peer})'} | {ok} |")
        lines += ["", "Where the import time goes (one run with `-X importtime`, self time summed by top-level "
                  "package, ms; the three largest, and the total):", "",
                  "| command | largest imports | total |", "|---|---|---|"]
        for name, cmd, _, _ in cases:
            if not name.startswith("factreg"):
                continue
            full = [py, "-m", "factreg", *cmd[1:]] if not cmd[0].startswith("PYTHONPATH") else cmd[1:]
            if cmd[0].startswith("PYTHONPATH"):
                env = {**env, "PYTHONPATH": cmd[0].split("=", 1)[1]}
            else:
                env.pop("PYTHONPATH", None)
            by = imports(full, env, work)
            top = ", ".join(f"{k} {v:.0f}" for k, v in by[:3])
            lines.append(f"| {name} | {top} | {sum(v for _, v in by):.0f} |")
        text = "\n".join(lines) + "\n"
        print(text)
        write_section("startup", text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
