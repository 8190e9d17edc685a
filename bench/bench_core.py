"""Core benchmarks: JSONL import, `list --json` and `show --json`, each against a plain-sqlite3 baseline
measured in the same run. Writes bench/results/core.md (assembled into docs/performance.md by run_all.py)."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import TABLE_HEAD, factreg_cmd, machine, row, time_process, write_section  # noqa: E402

from factreg.registry.types import SUMMARY_COLUMNS  # noqa: E402

BASELINE_IMPORT = r'''
import json, sqlite3, statistics, sys
src, db = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
facts, versions, samples, conds = [], [], [], []
now = "2026-11-29T00:00:00Z"
with open(src, encoding="utf-8") as fh:
    for line in fh:
        o = json.loads(line)
        xs = o["samples"]
        facts.append((o["id"], 1, now))
        mean = statistics.fmean(xs)
        sd = statistics.stdev(xs)
        versions.append((o["id"], 1, o["metric"], "tok/s", statistics.median(xs), sd, len(xs), mean,
                         statistics.median(xs), sd, min(xs), max(xs), sd / mean, "[]", o["measured_at"], now,
                         '{"kind": "manual"}'))
        samples.extend((o["id"], 1, i, x) for i, x in enumerate(xs))
        conds.extend((o["id"], 1, k, v, "identity") for k, v in o["cond"].items())
with con:
    con.executemany("insert into fact (id, current_version, created_at) values (?,?,?)", facts)
    con.executemany("insert into fact_version (fact_id, version, metric, unit, value, spread, n, mean, median, "
                    "stdev, min, max, cv, flags, measured_at, recorded_at, method) "
                    "values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", versions)
    con.executemany("insert into sample (fact_id, version, idx, value) values (?,?,?,?)", samples)
    con.executemany("insert into condition (fact_id, version, key, value, kind) values (?,?,?,?,?)", conds)
'''

# The baseline stays a plain script: the statistics' names are written into it, not imported.
BASELINE_LIST = f"STATS = {SUMMARY_COLUMNS!r}\n" + r'''
import json, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("select v.* from fact f join fact_version v on v.fact_id = f.id and v.version = f.current_version "
                   "order by f.id").fetchall()
cols = [d[0] for d in con.execute("select * from fact_version limit 0").description]
samples, conds = {}, {}
for fid, value in con.execute("select s.fact_id, s.value from sample s join fact f on s.fact_id = f.id and "
                              "s.version = f.current_version order by s.fact_id, s.idx"):
    samples.setdefault(fid, []).append(value)
for fid, k, v, kind in con.execute("select c.fact_id, c.key, c.value, c.kind from condition c join fact f on "
                                   "c.fact_id = f.id and c.version = f.current_version"):
    conds.setdefault(fid, {"identity": {}, "info": {}})[kind][k] = v
out = []
for r in rows:
    d = dict(zip(cols, r))
    out.append({"id": d["fact_id"], "version": d["version"], "subject": d["subject"], "metric": d["metric"],
                "unit": d["unit"], "value": d["value"], "spread": d["spread"], "n": d["n"],
                "samples": samples.get(d["fact_id"], []),
                "stats": {k: d[k] for k in STATS} | {"ci95": [d["ci_lo"], d["ci_hi"]]},
                "conditions": conds.get(d["fact_id"], {"identity": {}, "info": {}}), "flags": json.loads(d["flags"]),
                "measured_at": d["measured_at"], "recorded_at": d["recorded_at"], "method": json.loads(d["method"])})
sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2))
'''


def make_records(path: Path, n: int, seed: int = 7) -> None:
    rnd = random.Random(seed)
    machines = ["gamebox", "remote", "studio", "laptop"]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            m = machines[i % 4]
            base = rnd.uniform(5, 60)
            fh.write(json.dumps({
                "id": f"{m}/model-{i // 4:06d}/tg32", "metric": "tg_rate",
                "samples": [round(base * rnd.uniform(0.9, 1.1), 3) for _ in range(5)],
                "cond": {"machine": m, "model": f"model-{i // 4}", "build_commit": "8cf427ff", "n_threads": "8"},
                "measured_at": "2026-10-26T02:30:00Z",
            }) + "\n")


def main() -> None:
    quick = "--quick" in sys.argv
    n_import, n_list = (2_000, 20_000) if quick else (10_000, 100_000)
    reps = 3 if quick else 5
    work = Path(tempfile.mkdtemp(prefix="factreg-bench-"))
    fr = factreg_cmd()
    try:
        empty = work / "empty.db"
        subprocess.run([*fr, "list", "--db", str(empty)], check=False, capture_output=True)
        subprocess.run([*fr, "import", "/dev/null", "--db", str(empty)], capture_output=True)  # migrate
        src = work / "records.jsonl"
        make_records(src, n_import)
        baseline_script = work / "baseline_import.py"
        baseline_script.write_text(BASELINE_IMPORT)

        def fresh(name: str) -> Path:
            target = work / name
            for suffix in ("", "-wal", "-shm"):
                Path(str(target) + suffix).unlink(missing_ok=True)
            shutil.copy(empty, target)
            return target

        ours, base = [], []
        for _ in range(reps):  # interleave so that machine noise hits both sides alike
            db = fresh("ours.db")
            ours += time_process([*fr, "import", str(src), "--db", str(db)], 1)
            db = fresh("base.db")
            base += time_process([sys.executable, str(baseline_script), str(src), str(db)], 1)
        count = sqlite3.connect(work / "ours.db").execute("select count(*) from sample").fetchone()[0]
        assert count == n_import * 5, count
        rows = [row(f"import {n_import:,} facts × 5 samples (JSONL)", ours, base, 3)]

        big_src = work / "big.jsonl"
        make_records(big_src, n_list, seed=11)
        big = fresh("big.db")
        subprocess.run([*fr, "import", str(big_src), "--db", str(big)], check=True)
        list_script = work / "baseline_list.py"
        list_script.write_text(BASELINE_LIST)
        ours, base = [], []
        for _ in range(reps):
            ours += time_process([*fr, "list", "--json", "--db", str(big)], 1)
            base += time_process([sys.executable, str(list_script), str(big)], 1)
        out = subprocess.run([*fr, "list", "--json", "--db", str(big)], capture_output=True, check=True).stdout
        assert len(json.loads(out)) == n_list
        rows.append(row(f"list --json over {n_list:,} facts", ours, base, 3))

        su = Path(sys.executable).parent / "sqlite-utils"
        target = "gamebox/model-000100/tg32"
        ours, base = [], []
        for _ in range(reps * 3):
            ours += time_process([*fr, "show", target, "--json", "--db", str(big)], 1)
            base += time_process([str(su), "query", str(big), "select * from fact_version where fact_id = :id",
                                  "-p", "id", target], 1)
        rows.append(row("show ID --json (whole process)", ours, base, 2))

        text = (
            "## Core: import, list, show\n\n"
            f"Machine: {machine()}. Each side is a whole process, run {reps}× ({reps * 3}× for show), interleaved; "
            "times in seconds.\n\n"
            "- import: `factreg import FILE` (JSONL record lines; statistics and flags computed per fact) vs. a "
            "Python script that reads the same file and inserts the same rows with `sqlite3.executemany` in one "
            "transaction.\n"
            "- list: `factreg list --json` (with status per fact) vs. a `sqlite3` query + `json.dumps` script "
            "producing the same fields.\n"
            "- show: `factreg show ID --json` vs. `sqlite-utils query` of the same row on the same file.\n\n"
            + TABLE_HEAD.format(u="s") + "\n" + "\n".join(rows) + "\n"
        )
        print(text)
        write_section("core", text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
