"""Crash safety: `import`, `report` and `verify` killed with SIGKILL at random points.

After every kill the registry opens and passes its integrity check, an interrupted import has left nothing of its
batch (all or nothing), a verification group is recorded whole or not at all, and every report file is byte for
byte its old or its new content, never half of one. Running the command again finishes the job.
(`docs sync` under SIGKILL is tested in tests/test_docs_sync.py.)

The kill points come from a seeded random generator; the seed is in the test's output on failure."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from factreg.registry import facts
from factreg.registry.facts import NewFact
from factreg.registry.store import Registry
from tests.conftest import pinned_env
from tests.llamabench_support import tiny_model  # noqa: F401

SEED = int(os.environ.get("FACTREG_CRASH_SEED", "20261129"))
FACTREG = [sys.executable, "-m", "factreg"]


def kill_during(
    cmd: list[str], env: dict[str, str], trigger: Callable[[], bool], delay: float, cwd: Path | None = None
) -> bool:
    """Start `cmd`, wait for `trigger()` (or its exit), sleep `delay`, SIGKILL it; True when it was still running."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:  # a trigger that raises must not leave the child running into the next test
        deadline = time.monotonic() + 120
        while proc.poll() is None and not trigger() and time.monotonic() < deadline:
            time.sleep(0.002)
        if delay:
            time.sleep(delay)
        return proc.poll() is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()  # type: ignore[union-attr]


def file_size(path: Path) -> int:
    """`path`'s size, 0 when it does not exist; one stat, as SQLite may remove its WAL between two."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def write_records(path: Path, n: int, tag: str) -> None:
    rnd = random.Random(n)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            base = rnd.uniform(5, 60)
            fh.write(json.dumps({
                "id": f"{tag}/model-{i:05d}/tg32", "metric": "tg_rate",
                "samples": [round(base * rnd.uniform(0.9, 1.1), 3) for _ in range(5)],
                "cond": {"machine": tag, "model": f"model-{i}"}, "measured_at": "2026-10-26T02:30:00Z",
            }) + "\n")  # fmt: skip


def batch_being_written(url: str, sqlite_file: Path) -> Callable[[], Callable[[], bool]]:
    """A factory of triggers that fire once a write transaction has started writing rows."""
    if url.startswith("sqlite"):
        wal = Path(str(sqlite_file) + "-wal")

        def make() -> Callable[[], bool]:
            import sqlite3

            con = sqlite3.connect(sqlite_file)
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # an empty WAL: growth means the batch is being written
            con.close()
            size = file_size(wal)
            return lambda: file_size(wal) > size + 64 * 1024

        return make
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(url)
    params = dict(u.query)

    def writing() -> bool:
        with psycopg.connect(
            host=params["host"], port=params["port"], user=u.username, dbname=u.database, autocommit=True
        ) as con:
            row = con.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
                "pid <> pg_backend_pid() AND backend_xid IS NOT NULL"
            ).fetchone()
        return bool(row and row[0])

    return lambda: writing


def counts(reg: Registry) -> tuple[int, int, int]:
    n = {t: reg.query(f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in ("fact", "fact_version", "sample")}
    return n["fact"], n["fact_version"], n["sample"]


@pytest.mark.slow
def test_import_killed_at_random_points_leaves_no_partial_batch(any_url, tmp_path):
    rnd = random.Random(SEED)
    n = 3000
    src = tmp_path / "batch.jsonl"
    write_records(src, n, "crash")
    reg = Registry(any_url)
    facts.record(reg, NewFact(id="keep/x", metric="ttft", value=1.5, measured_at="2026-10-01T00:00:00Z"))
    before = counts(reg)
    cmd = [*FACTREG, "import", str(src), "--db", any_url]
    writing = batch_being_written(any_url, tmp_path / "registry.db")
    mid_run = 0
    for attempt in range(4):
        if attempt == 3:
            trigger, delay = (lambda: True), rnd.uniform(0.0, 0.5)  # while reading and checking the file
        else:
            trigger, delay = writing(), (rnd.uniform(0, 0.1) if attempt else 0.0)  # while the batch is written
        alive = kill_during(cmd, pinned_env(), trigger, delay)
        mid_run += alive
        print(f"attempt {attempt}: killed {'mid-run' if alive else 'after the end'}")
        reg = Registry(any_url)
        assert reg.integrity_check() == "ok"
        assert counts(reg) in (before, (before[0] + n, before[1] + n, before[2] + 5 * n)), (SEED, attempt)
        if counts(reg) != before:
            break  # a kill came too late: the import had committed
        assert facts.get(reg, "keep/x")["value"] == 1.5
        reg.close()
    assert mid_run >= 1, "no kill landed while the import ran"
    reg = Registry(any_url)
    if counts(reg) == before:  # the run after the kills imports everything
        r = subprocess.run(cmd, env=pinned_env(), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    assert counts(reg) == (before[0] + n, before[1] + n, before[2] + 5 * n)
    assert facts.get(reg, "crash/model-00123/tg32")["n"] == 5
    reg.close()


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_report_killed_mid_write_leaves_each_file_old_or_new(db_url, tmp_path):
    rnd = random.Random(SEED + 1)
    reg = Registry(db_url)
    ids = [f"gamebox/m{i:03d}/tg32" for i in range(150)]
    facts.record_many(reg, [NewFact(id=i, metric="tg_rate", samples=[10.0 + k, 11.0 + k, 12.0 + k],
                                    identity={"machine": "gamebox"}, measured_at="2026-10-01T00:00:00Z")
                            for k, i in enumerate(ids)])  # fmt: skip
    site = tmp_path / "site"
    cmd = [*FACTREG, "report", "--out", str(site), "--db", db_url]
    subprocess.run(cmd, env=pinned_env(), check=True, capture_output=True, cwd=tmp_path)
    old = snapshot(site)
    # every page changes: a second version of every fact
    facts.record_many(reg, [NewFact(id=i, metric="tg_rate", samples=[20.0 + k, 21.0 + k, 22.0 + k],
                                    identity={"machine": "gamebox"}, measured_at="2026-10-20T00:00:00Z")
                            for k, i in enumerate(ids)])  # fmt: skip
    expected_site = tmp_path / "expected" / "site"
    shutil.copytree(site, expected_site)
    subprocess.run(
        [*FACTREG, "report", "--out", str(expected_site), "--db", db_url],
        env=pinned_env(),
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    new = snapshot(expected_site)
    changed = [name for name in new if old.get(name) != new[name]]
    assert len(changed) > 100
    first_page = site / changed[len(changed) // 2]

    def some_written() -> bool:
        try:
            return any((site / name).read_bytes() == new[name] for name in changed[:: max(1, len(changed) // 20)])
        except FileNotFoundError:
            return False

    killed_mid = False
    for attempt in range(3):
        alive = kill_during(cmd, pinned_env(), some_written, rnd.uniform(0, 0.2) if attempt else 0.0, cwd=tmp_path)
        now = snapshot(site)
        for name, data in now.items():
            if name.endswith(".tmp"):
                continue  # an unfinished temp file beside its target: never read as the document
            assert data in (old.get(name), new.get(name)), f"{name} is half-written (seed {SEED})"
        states = {
            "old": sum(now.get(k) == old.get(k) for k in changed),
            "new": sum(now.get(k) == new[k] for k in changed),
        }
        if alive and states["old"] and states["new"]:
            killed_mid = True
            break
        if states["new"] == len(changed):  # finished before the kill: start over from the old site
            shutil.rmtree(site)
            site.mkdir()
            for name, data in old.items():
                (site / name).parent.mkdir(parents=True, exist_ok=True)
                (site / name).write_bytes(data)
    assert killed_mid, "no kill landed between the first and the last page"
    assert first_page.exists()
    subprocess.run(cmd, env=pinned_env(), check=True, capture_output=True, cwd=tmp_path)
    final = {k: v for k, v in snapshot(site).items() if not k.endswith(".tmp")}
    assert final == new
    assert Registry(db_url).integrity_check() == "ok"


@pytest.mark.slow
def test_verify_killed_mid_run_records_whole_groups_only(db_url, cli, tiny_model, tmp_path):  # noqa: F811
    rnd = random.Random(SEED + 2)
    # three method groups (different repetitions), each one llama-bench run and one transaction
    for reps in ("8", "9", "10"):
        r = cli(
            "bench",
            "--json",
            "--id",
            f"g{reps}/tiny",
            "--",
            "-m",
            str(tiny_model),
            "-p",
            "0",
            "-n",
            "32,64",
            "-r",
            reps,
            "-t",
            "1",
        )
        assert r.exit_code == 0, r.stderr
    reg = Registry(db_url)
    groups: dict[str, list[str]] = {}
    for f in facts.list_facts(reg):
        key = json.dumps({k: v for k, v in f["method"].items() if k != "select"}, sort_keys=True)
        groups.setdefault(key, []).append(f["id"])
    assert len(groups) == 3 and all(len(g) == 2 for g in groups.values())
    cmd = [*FACTREG, "verify", "--all", "--db", db_url]
    env = pinned_env(FACTREG_HOSTNAME="testhost", FACTREG_USER_DIR=str(tmp_path / "user"))

    def some_recorded() -> bool:
        try:
            return reg.query("SELECT count(*) AS n FROM verification")[0]["n"] > 0
        except Exception:  # noqa: BLE001 - locked for a moment: not yet
            return False

    mid = False
    for _ in range(3):
        alive = kill_during(cmd, env, some_recorded, rnd.uniform(0, 0.1))
        reg = Registry(db_url)
        assert reg.integrity_check() == "ok"
        done = {r["fact_id"] for r in reg.query("SELECT fact_id FROM verification")}
        for ids in groups.values():
            assert set(ids) <= done or not (set(ids) & done), f"a group was half recorded (seed {SEED})"
        n_groups = sum(set(ids) <= done for ids in groups.values())
        print(f"killed {'mid-run' if alive else 'after the end'} with {n_groups} group(s) recorded")
        if alive and 0 < n_groups < len(groups):
            mid = True
            break
        with reg.write() as conn:  # start over
            conn.exec_driver_sql("DELETE FROM verification")
    assert mid, "no kill landed between two groups"
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    per_fact = {r["fact_id"] for r in reg.query("SELECT fact_id FROM verification")}
    assert per_fact == {i for ids in groups.values() for i in ids}


CORRECT_DOC = "# Voice\n\nFull reply in <!-- fact: night/35b-a3b/e2e -->1.07 s<!-- /fact --> on 35B-A3B.\n"
CORRECT_DRAFT = "DRAFT: gateway login is admin password=hunter2-not-for-git\n"


@pytest.mark.slow
def test_correct_killed_at_any_point_is_finished_by_running_it_again(tmp_path):
    """`correct --verification V --commit` killed at points from its start to its commit (a slow pre-commit hook
    holds the moment between the registry transaction and the commit open): the registry is before or after, never
    half (no new version of the fact without its correction row), the document is old or new and the user's
    unstaged line is in no commit; running the command again finishes the correction with exactly one commit."""
    from tests.decisions_support import add_verification, git, init_repo, seed

    rnd = random.Random(SEED + 3)
    pristine = tmp_path / "pristine"
    repo = init_repo(pristine / "proj")
    (repo / ".factreg").mkdir()
    (repo / ".factreg/config.toml").write_text('[docs]\nroots = ["docs"]\n')
    (repo / "docs").mkdir()
    (repo / "docs/voice.md").write_text(CORRECT_DOC, encoding="utf-8")
    git(repo, "add", ".factreg/config.toml", "docs/voice.md")
    git(repo, "commit", "-q", "-m", "docs")
    url = f"sqlite:///{pristine / 'registry.db'}"
    reg = Registry(url)
    seed(reg)
    pk = add_verification(reg, "night/35b-a3b/e2e", "refuted", samples=[2.1, 2.2, 2.3])
    reg.close()
    env = pinned_env(FACTREG_NOW="2026-10-28T12:00:00Z", FACTREG_USER_DIR=str(tmp_path / "user"),
                    GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
                    GIT_COMMITTER_EMAIL="t@example.invalid")
    add = [*FACTREG, "decision", "add", "Voice", "--cites", "night/35b-a3b/e2e", "--date", "2026-10-26", "--commit",
           "--db", url]
    subprocess.run(add, env=env, cwd=repo, check=True, capture_output=True)
    head0 = git(repo, "rev-parse", "HEAD").strip()
    hook = repo / ".git/hooks/pre-commit"
    hook.write_text('#!/bin/sh\ntouch "$(git rev-parse --git-dir)/../../hook-started"\nsleep 0.4\n')
    hook.chmod(0o755)
    (repo / "docs/voice.md").write_text(CORRECT_DOC + CORRECT_DRAFT, encoding="utf-8")  # the user's unstaged line
    fid = "night/35b-a3b/e2e"  # the correction is a new version of the same id: the document keeps citing it
    synced = f"# Voice\n\nFull reply in <!-- fact: {fid} -->2.20 ± 0.10 s<!-- /fact --> on 35B-A3B.\n"

    def points(work: Path, db: Path) -> list[tuple[str, Callable[[], bool], float]]:
        def recorded() -> bool:
            import sqlite3

            try:
                con = sqlite3.connect(db)
                try:
                    return bool(con.execute("SELECT count(*) FROM correction").fetchone()[0])
                finally:
                    con.close()
            except sqlite3.Error:
                return False

        notes = work / "proj/facts/corrections"
        return [
            ("at a random moment", lambda: True, rnd.uniform(0.0, 1.5)),
            ("right after the registry transaction", recorded, 0.0),
            ("soon after the registry transaction", recorded, rnd.uniform(0.0, 0.1)),
            ("once the note is written", lambda: notes.is_dir() and any(notes.iterdir()), 0.0),
            ("while the pre-commit hook runs", lambda: (work / "hook-started").exists(), rnd.uniform(0.0, 0.3)),
        ]

    for k in range(5):
        work = tmp_path / f"run{k}"
        shutil.copytree(pristine, work, symlinks=True)
        db = work / "registry.db"
        url_k = f"sqlite:///{db}"
        proj = work / "proj"
        cmd = [*FACTREG, "correct", "night/35b-a3b/e2e", "--verification", str(pk), "--commit", "--db", url_k]
        name, trigger, delay = points(work, db)[k]
        alive = kill_during(cmd, env, trigger, delay, cwd=proj)
        print(f"kill {name}: {'mid-run' if alive else 'after the end'}")
        reg = Registry(url_k)
        assert reg.integrity_check() == "ok"
        rows = reg.query("SELECT count(*) AS n FROM correction")[0]["n"]
        now = facts.get(reg, fid)
        versions = reg.query("SELECT count(*) AS n FROM fact_version WHERE fact_id = :i", {"i": fid})[0]["n"]
        assert (rows, now["version"], versions) in ((0, 1, 1), (1, 2, 2)), (name, SEED)
        assert now["superseded_by"] is None
        doc = (proj / "docs/voice.md").read_text(encoding="utf-8")
        assert doc in (CORRECT_DOC + CORRECT_DRAFT, synced + CORRECT_DRAFT), (name, SEED)
        assert "hunter2" not in git(proj, "log", "-p", "--all")
        reg.close()
        r = subprocess.run(cmd, env=env, cwd=proj, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (name, r.stderr)
        reg = Registry(url_k)
        assert reg.query("SELECT count(*) AS n FROM correction")[0]["n"] == 1
        assert facts.get(reg, fid)["version"] == 2
        reg.close()
        assert git(proj, "rev-list", "--count", f"{head0}..HEAD").strip() == "1", name
        assert git(proj, "show", "HEAD:docs/voice.md") == synced
        committed = sorted(git(proj, "show", "--name-only", "--format=", "HEAD").split())
        assert committed == ["decisions/0001-voice.md", "docs/voice.md",
                             "facts/corrections/2026-10-28-night-35b-a3b-e2e.md"], name
        assert (proj / "docs/voice.md").read_text(encoding="utf-8") == synced + CORRECT_DRAFT
        status = [s for s in git(proj, "status", "--porcelain").splitlines() if not s.endswith(".tmp")]
        assert status == [" M docs/voice.md"], (name, status)  # a killed atomic write may leave its temp file
        assert "hunter2" not in git(proj, "log", "-p", "--all")


def _processes_running(needle: bytes) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds `needle`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_verify_killed_takes_its_llama_bench_with_it(db_url, tiny_model, tmp_path):  # noqa: F811
    """`verify` killed with SIGKILL while llama-bench runs: llama-bench dies with it (before: it ran on, minutes of
    load on the machine the next measurement measures, and nobody read its result); the registry is whole and
    holds no verification."""
    args = ["-m", str(tiny_model), "-p", "0", "-n", "4096", "-r", "1000", "-t", "1"]
    reg = Registry(db_url)
    facts.record(reg, NewFact(id="long/tiny/tg4096", metric="tg_rate", value=1000.0, n=5,
                              identity={"machine": "testhost", "model_filename": tiny_model.name},
                              method={"kind": "llama-bench", "binary": "llama-bench", "args": args}))
    env = pinned_env(FACTREG_HOSTNAME="testhost", FACTREG_USER_DIR=str(tmp_path / "user"))
    needle = b"\0".join(a.encode() for a in args[2:6])  # -p 0 -n 4096: the fact's run, not the control's
    proc = subprocess.Popen([*FACTREG, "verify", "--all", "--db", db_url], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    bench: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not bench and proc.poll() is None and time.monotonic() < deadline:
            bench = _processes_running(needle)
            time.sleep(0.05)
        assert bench, "llama-bench never started"
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 30
        while _processes_running(needle) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _processes_running(needle)
        assert left == [], f"llama-bench {left} outlived the verify that started it"
    finally:
        for pid in _processes_running(needle):
            os.kill(pid, signal.SIGKILL)  # the orphan of this test's own verify
    reg = Registry(db_url)
    assert reg.integrity_check() == "ok"
    assert reg.query("SELECT count(*) AS n FROM verification")[0]["n"] == 0


@pytest.mark.slow
def test_verify_of_probe_facts_killed_at_any_point_records_whole_groups_only(db_url, tmp_path):
    """`verify --all` over two probes' facts (two groups, each one transaction), killed with SIGKILL after the
    stand-in saw 1, 2, 4, 6 and 8 chat requests (identity check, measured requests of the first group, of the
    second) and once more as soon as a verification is stored: each time the registry passes its integrity check
    and holds each group's verifications whole or not at all; running verify again verifies every fact once more.
    Held before this pass."""
    from factreg.demo import standin

    env = pinned_env(FACTREG_DB=db_url, FACTREG_HOSTNAME="testhost", FACTREG_USER_DIR=str(tmp_path / "user"))
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}), encoding="utf-8")
    with standin.running() as server:
        url = server.url("ok,first=0.05,gap=0.01,tokens=5")
        for prefix, n in (("a/box", "3"), ("b/box", "4")):  # two methods: two probe runs, two transactions
            done = subprocess.run([*FACTREG, "probe", url, "--body", str(body), "--n", n, "--warmup", "0",
                                   "--min-uptime", "0", "--record", prefix], env=env, capture_output=True,
                                  text=True, timeout=120)
            assert done.returncode == 0, done.stderr
        reg = Registry(db_url)
        groups = {p: {f["id"] for f in facts.list_facts(reg) if f["id"].startswith(p)} for p in ("a/", "b/")}
        cmd = [*FACTREG, "verify", "--all"]

        def stored() -> bool:
            try:
                return reg.query("SELECT count(*) AS n FROM verification")[0]["n"] > 0
            except Exception:  # noqa: BLE001 - locked for a moment: not yet
                return False

        landed = 0
        for k in (1, 2, 4, 6, 8, None):  # chat requests the stand-in saw; None: a verification stored
            start = len(server.requests)
            trigger = stored if k is None else (lambda start=start, k=k: len(server.requests) >= start + k)
            landed += kill_during(cmd, env, trigger, 0.0)
            reg = Registry(db_url)
            assert reg.integrity_check() == "ok"
            done_ids = {r["fact_id"] for r in reg.query("SELECT fact_id FROM verification")}
            for ids in groups.values():
                assert ids <= done_ids or not (ids & done_ids), f"a group was half recorded at kill point {k}"
            with reg.write() as conn:  # start over
                conn.exec_driver_sql("DELETE FROM verification")
        assert landed >= 5, f"only {landed} of 6 kills landed while verify ran"
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    per_fact = Counter(row["fact_id"] for row in Registry(db_url).query("SELECT fact_id FROM verification"))
    assert per_fact == dict.fromkeys(groups["a/"] | groups["b/"], 1)
