"""Registry growth per load run, with and without retention of raw output (`[retention] raw_runs`).

Each run is `factreg probe --concurrency 8 --n 1000 --record lp/x --percentile ttft_p90` (a whole process, as a
user runs it) against the stand-in, recording 8 facts. After each run: the bytes of raw output held (`raw` of
versions and verifications), the bytes of the pages in use and the file's size (after a WAL checkpoint), the
sample rows. Two registries: `raw_runs = 2` and `raw_runs = 1000` (nothing pruned). Run by hand:
`python bench/bench_retention.py` (`BENCH_RUNS`, `BENCH_N` change the size); prints a Markdown table.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from factreg.demo import standin  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "8"))
N = int(os.environ.get("BENCH_N", "1000"))


def sizes(db: Path) -> tuple[int, int, int, int]:
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = sum(con.execute(f"SELECT COALESCE(SUM(length(CAST(raw AS BLOB))), 0) FROM {t}").fetchone()[0]
              for t in ("fact_version", "verification"))
    pages, free, size = (con.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count",
                                                                             "page_size"))
    samples = con.execute("SELECT COUNT(*) FROM sample").fetchone()[0]
    con.close()
    return raw, (pages - free) * size, pages * size, samples


def grow(keep: int, url: str, work: Path) -> list[tuple[int, int, int, int]]:
    root = work / f"keep{keep}"
    (root / ".factreg").mkdir(parents=True)
    (root / ".factreg/config.toml").write_text(f"[retention]\nraw_runs = {keep}\n", encoding="utf-8")
    (root / "body.json").write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FACTREG_DB": str(root / "reg.db")}
    out = []
    for _ in range(RUNS):
        r = subprocess.run([sys.executable, "-m", "factreg", "probe", url, "--body", "body.json", "--concurrency", "8",
                            "--n", str(N), "--warmup", "0", "--min-uptime", "0", "--record", "lp/x",
                            "--percentile", "ttft_p90"], capture_output=True, text=True, env=env, cwd=root, check=False)
        if r.returncode != 0:
            raise SystemExit(r.stderr[-500:])
        out.append(sizes(root / "reg.db"))
    return out


def main() -> None:
    mb = 1e6
    with standin.running() as srv, tempfile.TemporaryDirectory() as tmp:
        url = srv.url("ok,first=0.005,gap=0.001,tokens=3")
        kept, every = grow(2, url, Path(tmp)), grow(1000, url, Path(tmp))
    print("| run | raw_runs = 2: raw MB | in use MB | file MB | nothing pruned: raw MB | in use MB | file MB |"
          " sample rows |\n|---|---|---|---|---|---|---|---|")
    for i, (a, b) in enumerate(zip(kept, every, strict=True), 1):
        print(f"| {i} | {a[0] / mb:.1f} | {a[1] / mb:.1f} | {a[2] / mb:.1f} | {b[0] / mb:.1f} | {b[1] / mb:.1f} | "
              f"{b[2] / mb:.1f} | {a[3]:,} |")


if __name__ == "__main__":
    main()
