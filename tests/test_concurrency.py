"""Concurrent writers: 8 processes × 200 records into one registry (a SQLite file, then PostgreSQL; 8 × 500, timed
against one writer, in bench/bench_concurrency.py).

Half of every worker's records go to 50 ids that every worker writes, so the workers race for the next version
number of the same fact (16 versions each). Afterwards all 1,600 measurements are there exactly once, every shared
fact's versions are 1..N without gaps or duplicates, its current version is the newest, and no worker saw "database
is locked"."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from factreg.registry import facts
from factreg.registry.store import Registry
from tests.concurrency_support import SHARED, fact_id, run_all

WORKERS, PER_WORKER = 8, 200


@pytest.mark.slow
def test_eight_writers_lose_nothing_and_duplicate_nothing(any_url, tmp_path):
    reg = Registry(any_url)  # migrated before the workers start, as `factreg init` would
    wall, results = run_all(any_url, WORKERS, PER_WORKER, tmp_path / "go")
    for code, stdout, stderr in results:
        assert "database is locked" not in stderr
        assert code == 0, stderr[-2000:]
        assert json.loads(stdout)["n"] == PER_WORKER

    total = WORKERS * PER_WORKER
    assert reg.query("SELECT count(*) AS n FROM fact_version")[0]["n"] == total
    # every (worker, k) measurement is there exactly once
    pairs = reg.query(
        "SELECT w.value AS w, k.value AS k FROM condition w JOIN condition k ON k.fact_id = w.fact_id AND "
        "k.version = w.version AND k.key = 'k' WHERE w.key = 'worker'"
    )
    seen = Counter((int(r["w"]), int(r["k"])) for r in pairs)
    assert len(seen) == total and max(seen.values()) == 1
    # and each under the id it was meant for
    by_id = Counter(
        r["fact_id"]
        for r in reg.query(
            "SELECT v.fact_id FROM fact_version v JOIN condition c ON c.fact_id = v.fact_id AND "
            "c.version = v.version AND c.key = 'worker'"
        )
    )
    expected = Counter(fact_id(w, k) for w in range(WORKERS) for k in range(PER_WORKER))
    assert by_id == expected
    # shared facts: versions 1..N without gaps, current version is the newest
    per_shared = WORKERS * PER_WORKER // 2 // SHARED
    versions = reg.query(
        "SELECT v.fact_id, v.version, f.current_version FROM fact_version v JOIN fact f ON f.id = v.fact_id "
        "WHERE v.fact_id LIKE 'shared/%'"
    )
    numbers: dict[str, list[int]] = {}
    for r in versions:
        numbers.setdefault(r["fact_id"], []).append(r["version"])
        assert r["current_version"] == per_shared
    assert len(numbers) == SHARED
    assert all(sorted(v) == list(range(1, per_shared + 1)) for v in numbers.values())
    assert facts.count(reg) == SHARED + total // 2
    assert reg.query("SELECT count(*) AS n FROM sample")[0]["n"] == 3 * total
    assert reg.integrity_check() == "ok"
    reg.close()


@pytest.mark.slow
def test_two_verify_runs_at_once_each_record_every_fact_once(any_url, tmp_path):
    """Two `factreg verify --all` processes started together on one registry (cron runs that overlap), over probe
    facts of a stand-in server: both finish with a verdict's exit code, neither meets a locked database, each
    records one verification per fact (so every fact has exactly two), and the registry passes its integrity
    check. Held before this pass."""
    import subprocess
    import sys

    from factreg.demo import standin
    from tests.conftest import pinned_env

    reg = Registry(any_url)
    env = pinned_env(FACTREG_DB=any_url, FACTREG_HOSTNAME="testhost", FACTREG_USER_DIR=str(tmp_path / "user"))
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}), encoding="utf-8")
    with standin.running() as server:
        url = server.url("ok,first=0.05,gap=0.005,tokens=5")
        for prefix in ("a/box", "b/box"):
            done = subprocess.run([sys.executable, "-m", "factreg", "probe", url, "--body", str(body), "--n", "5",
                                   "--warmup", "1", "--min-uptime", "0", "--record", prefix], env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
        ids = {f["id"] for f in facts.list_facts(reg)}
        assert len(ids) >= 10
        runs = [subprocess.Popen([sys.executable, "-m", "factreg", "verify", "--all", "--json"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [run.communicate(timeout=300) for run in runs]
    for run, (stdout, stderr) in zip(runs, outs, strict=True):
        assert run.returncode in (0, 1), stderr[-2000:]
        assert "locked" not in stderr and "Traceback" not in stderr and "internal error" not in stderr
        assert {r["id"] for r in json.loads(stdout) if r.get("recorded")} == ids
    per_fact = Counter(r["fact_id"] for r in reg.query("SELECT fact_id FROM verification"))
    assert per_fact == dict.fromkeys(ids, 2)
    if any_url.startswith("sqlite"):
        assert reg.integrity_check() == "ok"
