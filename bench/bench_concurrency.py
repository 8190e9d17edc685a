"""Concurrent writers: 8 processes × 500 `facts.record` calls (one transaction each, half of them racing for 50
shared ids) into one registry, against the same 4,000 records written by one process, measured in the same run, on
a SQLite file and on a throwaway PostgreSQL cluster. Writes bench/results/concurrency.md."""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import machine, write_section  # noqa: E402

from factreg.registry.store import Registry  # noqa: E402
from tests.concurrency_support import run_all, wait_ready  # noqa: E402
from tests.pg_support import PgServer, find_bindir  # noqa: E402


def one(url: str, workers: int, n: int, work: Path, baseline: bool) -> float:
    """Records per second of one run into a fresh registry at `url`."""
    Registry(url).close()
    spec_workers = 1 if baseline else workers
    go = work / "go"
    if baseline:
        import subprocess

        go.unlink(missing_ok=True)
        cmd = [
            sys.executable,
            str(Path(__file__).resolve().parent.parent / "tests" / "concurrency_support.py"),
            url,
            f"all:{workers}",
            str(n),
            str(go),
        ]
        Path(f"{go}.ready.all").unlink(missing_ok=True)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_ready(go, ["all"], [proc])
        t0 = time.perf_counter()
        go.write_text("go")
        stdout, stderr = proc.communicate(timeout=3600)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"baseline writer failed: {stderr[-1000:]}")
        json.loads(stdout)
    else:
        wall, results = run_all(url, spec_workers, n, go, timeout=3600)
        for code, _out, err in results:
            if code != 0:
                raise SystemExit(f"a writer failed: {err[-1000:]}")
    reg = Registry(url)
    got = reg.query("SELECT count(*) AS n FROM fact_version")[0]["n"]
    reg.close()
    assert got == workers * n, got
    return workers * n / wall


def fmt(xs: list[float]) -> str:
    return f"{min(xs):,.0f} / {statistics.median(xs):,.0f} / {max(xs):,.0f}"


def main() -> None:
    quick = "--quick" in sys.argv
    workers, n, reps = (8, 100, 2) if quick else (8, 500, 3)
    work = Path(tempfile.mkdtemp(prefix="factreg-bench-conc-"))
    server = None
    lines = []
    try:
        backends: list[tuple[str, object]] = [("SQLite file (WAL)", None)]
        bindir = find_bindir()
        if bindir is not None:
            server = PgServer(bindir)
            server.start()
            backends.append(("PostgreSQL 15 (local socket)", server))
        for label, srv in backends:
            conc, base = [], []
            for rep in range(reps):  # interleaved so that machine noise hits both sides alike
                for baseline in (False, True):
                    if srv is None:
                        db = work / f"r{rep}{int(baseline)}.db"
                        url = f"sqlite:///{db}"
                    else:
                        url = srv.new_database()  # type: ignore[attr-defined]
                    (base if baseline else conc).append(one(url, workers, n, work, baseline))
            ratio = statistics.median(conc) / statistics.median(base)
            lines.append(f"| {label} | {fmt(conc)} | {fmt(base)} | **{ratio:.2f}×** |")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    text = (
        "## Concurrent writers\n\n"
        f"Machine: {machine()}.\n\n"
        f"{workers} processes × {n} records each ({workers * n:,} in all), started together, each record one "
        "`facts.record` call in its own transaction; half of every process's records go to 50 fact ids that every "
        "process writes, so they race for version numbers. Baseline: the same records written by one process, "
        f"one after the other, into a fresh registry of the same backend. {reps} runs of each, interleaved; "
        "records per second (higher is better), min / median / max, and the ratio of medians. Every run ends "
        "with all records present exactly once (checked).\n\n"
        "| backend | 8 writers: records/s | 1 writer: records/s | concurrent / single |\n|---|---|---|---|\n"
        + "\n".join(lines)
        + "\n"
    )
    print(text)
    write_section("concurrency", text)


if __name__ == "__main__":
    main()
