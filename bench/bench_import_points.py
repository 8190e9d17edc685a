"""Importing verification points: JSONL lines in the export's shape (`kind: fact`, each fact with its versions and
its verifications), 10,000 facts × 100 verifications = 1,000,000 points in 10 files, into a registry with the real
schema and indexes (`factreg import`), beside the bare sqlite3 `executemany` of the same rows into the same schema.
Also a tenth of the size, to show the rate is linear. `--quick`: 1,000 facts × 100 (and 100 × 100)."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BIN, machine, write_section  # noqa: E402

BARE = r'''
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode = WAL"); db.execute("PRAGMA synchronous = NORMAL")
cols = None
db.execute("BEGIN IMMEDIATE")
for path in sys.argv[2:]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            fact = json.loads(line)
            for v in fact["verifications"]:
                if cols is None:
                    cols = [c for c in v if c != "pk"]
                rows.append((fact["id"], *(v[c] for c in cols)))
    db.executemany(f"INSERT INTO verification (fact_id, {', '.join(cols)}) VALUES ({', '.join('?' * (len(cols) + 1))})",
                   rows)
db.execute("COMMIT")
'''


def write_files(folder: Path, n_facts: int, per_fact: int, n_files: int, seed: int = 5) -> list[Path]:
    """Files of fact lines as `factreg export` writes them: one version each, `per_fact` verifications each."""
    rnd = random.Random(seed)
    paths = [folder / f"points-{i:02d}.jsonl" for i in range(n_files)]
    handles = [p.open("w", encoding="utf-8") for p in paths]
    pk = 0
    for i in range(n_facts):
        fid = f"host{i % 40:02d}/model-{i:05d}/tg32"
        value = rnd.uniform(5, 60)
        version = {"ci_hi": value + 0.4, "ci_lo": value - 0.4, "conditions": {"identity": {"machine": f"host{i % 40:02d}"},
                                                                                "info": {}},
                   "cv": 0.01, "derived_from": None, "direction": "higher", "error_after": None, "flags": "[]",
                   "iqr": 0.5, "max": value + 0.4, "mean": value, "measured_at": "2026-10-01T00:00:00Z",
                   "median": value, "method": '{"kind": "manual"}', "metric": "tg_rate", "min": value - 0.4, "n": 5,
                   "note": None, "origin": "recorded", "raw": None, "recorded_at": "2026-10-01T00:00:00Z",
                   "recorded_by": None, "registry_id": None, "samples": [round(value + d, 3) for d in
                                                                           (-0.4, -0.2, 0.0, 0.2, 0.4)],
                   "source": None, "spread": 0.3, "stdev": 0.3, "subject": f"host{i % 40:02d}/model-{i:05d}",
                   "tolerance": None, "trust": None, "unit": "tok/s", "value": value, "version": 1,
                   "warn_after": None}
        verifs = []
        for k in range(per_fact):
            pk += 1
            x = round(value * rnd.uniform(0.97, 1.03), 3)
            verifs.append({"pk": pk, "fact_version": 1, "verified_at": f"2026-10-{1 + k % 28:02d}T{k % 24:02d}:00:00Z",
                           "verdict": "confirmed", "method_kind": "llama-bench", "hostname": f"host{i % 40:02d}",
                           "value": x, "spread": 0.3, "n": 5, "samples": json.dumps([x] * 5), "p_value": 0.5,
                           "rel_diff": 0.01, "needed_n": None, "observed": "{}", "diff": "{}", "message": None,
                           "raw": None})
        handles[i % n_files].write(json.dumps({"kind": "fact", "id": fid, "current_version": 1,
                                               "created_at": "2026-10-01T00:00:00Z", "superseded_by": None,
                                               "superseded_at": None, "supersede_reason": None, "ended_at": None,
                                               "versions": [version], "verifications": verifs}) + "\n")
    for h in handles:
        h.close()
    return paths


def timed(cmd: list[str]) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[:3]} failed: {proc.stderr.read().decode()[-400:] if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = [(100, 100, 1), (1_000, 100, 10)] if quick else [(1_000, 100, 1), (10_000, 100, 10)]
    reps = 2 if quick else 3
    fr = str(BIN / "factreg")
    work = Path(tempfile.mkdtemp(prefix="factreg-import-"))
    try:
        empty = work / "empty.db"
        subprocess.run([fr, "init", "--db", str(empty), "-q"], check=True, capture_output=True)
        bare = work / "bare.py"
        bare.write_text(BARE)
        rows = []
        load0 = os.getloadavg()
        for n_facts, per_fact, n_files in sizes:
            folder = work / f"in-{n_facts}"
            folder.mkdir()
            files = [str(p) for p in write_files(folder, n_facts, per_fact, n_files)]
            points = n_facts * per_fact
            ours, base, rss = [], [], []
            for _ in range(reps):  # interleaved
                for side in ("ours", "bare"):
                    target = work / f"{side}.db"
                    for suffix in ("", "-wal", "-shm"):
                        Path(str(target) + suffix).unlink(missing_ok=True)
                    shutil.copy(empty, target)
                    if side == "ours":
                        wall, peak = timed([fr, "import", *files, "--db", str(target), "-q"])
                        ours.append(wall)
                        rss.append(peak)
                        got = sqlite3.connect(target).execute("SELECT count(*) FROM verification").fetchone()[0]
                        assert got == points, got
                    else:
                        base.append(timed([sys.executable, str(bare), str(target), *files])[0])
            mo, mb = statistics.median(ours), statistics.median(base)
            rows.append(f"| {n_facts:,} facts × {per_fact} ({points:,} points, {n_files} file(s)) | {mo:.2f} | "
                        f"{points / mo:,.0f} | {max(rss):.0f} | {mb:.2f} | {points / mb:,.0f} | {mo / mb:.1f}× |")
        load1 = os.getloadavg()
        text = "\n".join([
            "## Import: verification points from JSONL (`bench/bench_import_points.py`)", "",
            f"{machine()}. Fact lines in the export's shape (one version, its samples and conditions, and its "
            f"verifications), `factreg import FILES` into a registry made by `factreg init` (the real schema and "
            f"indexes), against a bare script that reads the same lines with `json` and inserts the same "
            f"verification rows with one sqlite3 `executemany` in one transaction into the same schema. Median of "
            f"{reps} interleaved runs; load average {load0[0]:.2f} before, {load1[0]:.2f} after.", "",
            "| input | factreg wall (s) | points/s | peak RSS (MB) | bare executemany wall (s) | points/s | ratio |",
            "|---|---|---|---|---|---|---|", *rows, ""])
        print(text)
        write_section("import_points", text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
