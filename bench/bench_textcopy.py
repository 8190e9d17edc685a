"""The registry as text in a fresh clone: `.factreg/registry.jsonl` of 10,000 facts and no registry.db, built by the
first command that opens the registry (registry/snapshot.py). Writes bench/results/textcopy.md.

Each run is a whole process in a copy of the clone without its registry.db: `factreg status` (it builds the registry
from the text, then judges every fact). The baseline, in the same run and interleaved: the same `factreg status` on
the registry once built (what every later command pays). The target is absolute: the fresh clone's first `status`,
building included, in at most 5 s (median); the ratio says what the building costs on top. `BENCH_FACTS` and
`BENCH_RUNS` change the size."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import TABLE_HEAD, factreg_cmd, machine, row, write_section  # noqa: E402

FACTS = int(os.environ.get("BENCH_FACTS", "10000"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
TARGET_S = 5.0


def make_clone(work: Path) -> Path:
    """A project with the text copy of a FACTS-fact registry (5 samples and 4 conditions each, a verification for
    every tenth) and no registry.db, as `git clone` leaves it."""
    from factreg import config
    from factreg.registry import facts, snapshot
    from factreg.registry.facts import NewFact
    from factreg.registry.store import Registry

    origin = work / "origin"
    (origin / ".factreg").mkdir(parents=True)
    reg = Registry(config.sqlite_url(origin / ".factreg" / "registry.db"))
    news = [NewFact(id=f"host{i % 50:02d}/model-{i // 50}/tg{32 + i % 7}", metric="tg_rate",
                    samples=[10.0 + (i % 13) * 0.1 + k * 0.05 for k in range(5)],
                    identity={"machine": f"host{i % 50:02d}", "model": f"model-{i // 50}", "n_gen": str(32 + i % 7),
                              "build": f"b{6000 + i % 3}"},
                    measured_at=f"2026-11-{1 + i % 28:02d}T10:00:00Z") for i in range(FACTS)]
    facts.record_many(reg, news)
    with reg.write() as conn:
        from sqlalchemy import insert

        conn.execute(insert(facts.VERIFICATION), [
            {"fact_id": n.id, "fact_version": 1, "verified_at": "2026-11-29T10:00:00Z", "verdict": "confirmed",
             "method_kind": "manual", "value": 10.2, "n": 5, "samples": "[10.1, 10.2, 10.2, 10.3, 10.2]",
             "observed": "{}", "diff": "{}"} for n in news[::10]])
    (origin / ".factreg" / snapshot.FILE).write_text(snapshot.text(reg), encoding="utf-8")
    reg.close()
    (origin / ".factreg" / "registry.db").unlink()
    return origin


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    import time

    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def main() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTREG_")}
    env["FACTREG_NOW"] = "2026-11-30T12:00:00Z"
    cmd = [*factreg_cmd(), "status", "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        clone = make_clone(work)
        size_mb = (clone / ".factreg" / "registry.jsonl").stat().st_size / 1e6
        built = work / "built"
        shutil.copytree(clone, built)
        timed(cmd, built, env)  # builds it once: the baseline's registry
        fresh, steady = [], []
        for k in range(RUNS):  # interleaved
            copy = work / f"fresh{k}"
            shutil.copytree(clone, copy)
            fresh.append(timed(cmd, copy, env))
            steady.append(timed(cmd, built, env))
            shutil.rmtree(copy)
    median = statistics.median(fresh)
    text = (f"## The registry as text: a fresh clone's first command (`bench/bench_textcopy.py`)\n\n"
            f"Machine: {machine()}. Load average (1 min) at the end: {os.getloadavg()[0]:.1f}. Whole processes, "
            f"{RUNS} runs each, interleaved.\n\n"
            f"- factreg: `factreg status` in a clone holding `.factreg/registry.jsonl` ({FACTS:,} facts × 5 samples, "
            f"a verification for every tenth; {size_mb:.1f} MB) and no registry.db: it builds the registry from the "
            "text (registry/snapshot.py, the JSONL import), then judges every fact.\n"
            "- baseline: the same `factreg status` on that registry once built.\n\n"
            + TABLE_HEAD.format(u="s") + "\n"
            + row(f"fresh clone: build + status, {FACTS:,} facts", fresh, steady, None) + "\n\n"
            f"Target: the fresh clone's first command in ≤ {TARGET_S:g} s (median, building included): "
            f"**{median:.2f} s**, {'met' if median <= TARGET_S else '**missed**'}.\n")
    write_section("textcopy", text)
    print(text)


if __name__ == "__main__":
    main()
