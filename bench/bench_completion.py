"""Shell completion of a fact id over 100,000 facts: the whole `factreg` process a shell runs on TAB, against the
`sqlite3` command-line shell (and `python -c` with sqlite3) answering the same prefix query on the same file.
Writes bench/results/completion.md (assembled into docs/performance.md by run_all.py)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine, write_section  # noqa: E402

N_FACTS = 100_000
REPEAT = 21
TARGET_S = 0.150
PREFIX = "host07/model-3"


def _registry(folder: Path) -> Path:
    from factreg.registry.store import Registry

    path = folder / "registry.db"
    Registry(f"sqlite:///{path}").close()  # every migration applied, as `factreg init` leaves it
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany("INSERT INTO fact (id, current_version, created_at) VALUES (?, 1, '2026-11-01T00:00:00Z')",
                         ((f"host{i % 50:02d}/model-{i % 997}/tg{i}",) for i in range(N_FACTS)))
    conn.close()
    return path


def _time(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({done.returncode}): {done.stderr[-500:]}")
    return took, done.stdout


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = _registry(Path(tmp))
        env = {**os.environ, "PYTHONPATH": str(ROOT), "FACTREG_DB": f"sqlite:///{db}"}
        env.pop("_FACTREG_COMPLETE", None)
        sql = (f"SELECT id FROM fact WHERE id >= '{PREFIX}' AND id < '{PREFIX}\U0010ffff' ORDER BY id LIMIT 200;")
        sides: dict[str, list[str]] = {
            "factreg completion": [sys.executable, "-m", "factreg", "show", PREFIX],
            "python -c sqlite3": [sys.executable, "-c", "import sqlite3,sys;c=sqlite3.connect(sys.argv[1]);"
                                  "print('\\n'.join(r[0] for r in c.execute(sys.argv[2])))", str(db), sql],
            "python -c pass (interpreter start-up)": [sys.executable, "-c", "pass"],
            "factreg list --limit 1 (the CLI, for scale)": [sys.executable, "-m", "factreg", "list", "--limit", "1",
                                                             "--columns", "id", "--json"],
        }
        if shutil.which("sqlite3"):
            sides["sqlite3 CLI"] = ["sqlite3", "-readonly", str(db), sql]
        times: dict[str, list[float]] = {name: [] for name in sides}
        outputs: dict[str, str] = {}
        for _ in range(REPEAT):  # interleaved: each round runs every side once
            for name, cmd in sides.items():
                run_env = {**env, "_FACTREG_COMPLETE": "bash"} if name == "factreg completion" else env
                took, out = _time(cmd, run_env)
                times[name].append(took)
                outputs[name] = out
        load = os.getloadavg()[0]
    ours = outputs["factreg completion"].split()
    assert ours and ours == outputs["python -c sqlite3"].split(), "the completion and the baseline disagree"
    if "sqlite3 CLI" in outputs:
        assert ours == outputs["sqlite3 CLI"].split()
    med = {name: statistics.median(ts) for name, ts in times.items()}
    fmt = lambda ts: f"{min(ts) * 1000:.0f} / {statistics.median(ts) * 1000:.0f} / {max(ts) * 1000:.0f}"  # noqa: E731
    rows = []
    for name, ts in times.items():
        ratio = med["factreg completion"] / med[name]
        rows.append(f"| {name} | {fmt(ts)} | {ratio:.2f}× |")
    verdict = "met" if med["factreg completion"] <= TARGET_S else "**missed**"
    text = f"""## Shell completion: a fact id over {N_FACTS:,} facts

Machine: {machine()}. Load average (1 min) at the end: {load:.1f}. Whole processes, {REPEAT} runs each,
interleaved; the prefix `{PREFIX}` matches {len(ours)} ids. `bench/bench_completion.py`.

- factreg completion: `_FACTREG_COMPLETE=bash python -m factreg show {PREFIX}`, what the bash script runs on TAB
  (the entry point answers before typer, SQLAlchemy or httpx are imported; the SQLite file opened read-only).
- baselines: the same range query on the same file by the `sqlite3` shell and by `python -c` with sqlite3.

| process | min / median / max (ms) | completion ÷ this (medians) |
|---|---|---|
{chr(10).join(rows)}

Target: completion ≤ {TARGET_S * 1000:.0f} ms (median, whole process): **{med['factreg completion'] * 1000:.0f} ms**,
{verdict}.
"""
    path = write_section("completion", text)
    print(text)
    print(f"written: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
