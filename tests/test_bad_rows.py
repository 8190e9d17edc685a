"""A registry that already holds a bad row — written straight into the SQLite file by another tool, by hand or by an
older factreg — still opens: `list`, `status`, `report`, `export`, `show` and `history` work for the other rows and
name the bad row in one warning line. One bad row never breaks reading the rest."""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from factreg.registry.store import Registry

# (what is wrong, SQL that breaks fact bad/x straight in the file, words the warning names)
BAD_ROWS = [
    ("year 1 measured_at", "UPDATE fact_version SET measured_at = '1-01-01T00:00:00Z' WHERE fact_id = 'bad/x'",
     "measured_at '1-01-01T00:00:00Z' is not a time"),
    ("garbage measured_at", "UPDATE fact_version SET measured_at = 'yesterday' WHERE fact_id = 'bad/x'",
     "measured_at 'yesterday'"),
    ("flags not JSON", "UPDATE fact_version SET flags = 'few_samples,cold' WHERE fact_id = 'bad/x'",
     "flags 'few_samples,cold' is not a JSON list"),
    ("method not JSON", "UPDATE fact_version SET method = '{kind: manual' WHERE fact_id = 'bad/x'",
     "method '{kind: manual' is not a JSON object"),
    ("method a JSON list", "UPDATE fact_version SET method = '[1]' WHERE fact_id = 'bad/x'", "method '[1]'"),
    ("value 1e999", "UPDATE fact_version SET value = 1e999 WHERE fact_id = 'bad/x'", "value 'inf' is not a finite"),
    ("value text", "UPDATE fact_version SET value = 'fast' WHERE fact_id = 'bad/x'", "value 'fast'"),
    ("stdev -1e999", "UPDATE fact_version SET stdev = -1e999 WHERE fact_id = 'bad/x'", "stdev '-inf'"),
    ("sample 1e999", "UPDATE sample SET value = 1e999 WHERE fact_id = 'bad/x'", "a sample is not a finite number"),
    ("n zero", "UPDATE fact_version SET n = 0 WHERE fact_id = 'bad/x'", "n '0'"),
    ("warn_after garbage", "UPDATE fact_version SET warn_after = 'soon' WHERE fact_id = 'bad/x'",
     "warn_after 'soon' is not a duration"),
    ("derived_from not JSON", "UPDATE fact_version SET derived_from = 'a/b@1' WHERE fact_id = 'bad/x'",
     "derived_from 'a/b@1'"),
    ("current_version past the versions", "UPDATE fact SET current_version = 7 WHERE id = 'bad/x'",
     "current_version 7 points past"),
]


def make_registry(cli, db_path: Path, sql: str) -> None:
    for fid in ("good/a", "bad/x", "good/z"):
        assert cli("record", fid, "-m", "ttft", "--samples", "0.4,0.5,0.6").exit_code == 0
    con = sqlite3.connect(db_path)
    con.execute(sql)
    con.commit()
    con.close()


def warning_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("Warning:")]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("what, sql, named", BAD_ROWS, ids=[b[0] for b in BAD_ROWS])
def test_one_bad_row_never_breaks_reading_the_rest(cli, db_path, what, sql, named):
    make_registry(cli, db_path, sql)

    r = cli("list", "--json")
    assert r.exit_code == 0, r.stderr
    assert [f["id"] for f in r.json()] == ["good/a", "good/z"]
    assert "bad/x@" in warning_line(r.stderr) and named in warning_line(r.stderr)
    assert "Traceback" not in r.stderr

    r = cli("list")
    assert r.exit_code == 0 and "good/a" in r.stdout and "good/z" in r.stdout
    warning_line(r.stderr)

    r = cli("status", "--json")
    assert r.exit_code == 0, r.stderr
    shown = [f["id"] for f in r.json()["facts"]]
    assert {"good/a", "good/z"} <= set(shown)
    if "bad/x" not in shown:  # status reads fewer columns (no flags, no method): it may read this row well
        assert "bad/x@" in warning_line(r.stderr)

    r = cli("export")
    assert r.exit_code == 0, r.stderr
    exported = [json.loads(line)["id"] for line in r.stdout.splitlines()]
    assert exported == ["good/a", "good/z"]  # the backup holds every readable fact, and re-imports
    assert "bad/x@" in warning_line(r.stderr)

    for fid in ("good/a", "good/z"):
        r = cli("show", fid)
        assert r.exit_code == 0 and fid in r.stdout and r.stderr == ""
    r = cli("show", "bad/x")
    assert r.exit_code == 2 and r.stderr.startswith("Error: fact bad/x@") and r.stderr.count("\n") == 1
    assert named.split(" ")[0] in r.stderr

    r = cli("report", "--out", "site")
    assert r.exit_code == 0, r.stderr
    assert "bad/x@" in warning_line(r.stderr)
    site = "".join(p.read_text(encoding="utf-8") for p in Path("site").rglob("*") if p.is_file())
    assert "good/a" in site and "good/z" in site


def test_the_exported_backup_of_a_registry_with_a_bad_row_imports(cli, db_path, tmp_path):
    make_registry(cli, db_path, "UPDATE fact_version SET value = 1e999 WHERE fact_id = 'bad/x'")
    backup = tmp_path / "backup.jsonl"
    assert cli("export", "--out", str(backup)).exit_code == 0
    other = tmp_path / "other.db"
    r = cli("import", str(backup), "--db", str(other))
    assert r.exit_code == 0, r.stderr
    assert [f["id"] for f in cli("list", "--json", "--db", str(other)).json()] == ["good/a", "good/z"]


def test_a_bad_verification_row_is_skipped(cli, db_path):
    make_registry(cli, db_path, "SELECT 1")
    con = sqlite3.connect(db_path)
    con.execute("INSERT INTO verification (fact_id, fact_version, verified_at, verdict, method_kind, samples, "
                "observed, diff) VALUES ('good/a', 1, 'never', 'confirmed', 'manual', 'x', 'y', 'z')")
    con.commit()
    r = cli("list", "--json")
    assert r.exit_code == 0 and len(r.json()) == 3
    assert "good/a verification" in warning_line(r.stderr)
    r = cli("history", "good/a", "--json")
    assert r.exit_code == 0 and r.json()[0]["verifications"][0]["samples"] == []


def test_history_skips_the_bad_version_only(cli, db_path):
    make_registry(cli, db_path, "SELECT 1")
    assert cli("record", "good/a", "-m", "ttft", "--value", "0.7").exit_code == 0
    con = sqlite3.connect(db_path)
    con.execute("UPDATE fact_version SET flags = 'oops' WHERE fact_id = 'good/a' AND version = 1")
    con.commit()
    r = cli("history", "good/a", "--json")
    assert r.exit_code == 0 and [v["version"] for v in r.json()] == [2]
    assert "good/a@1" in warning_line(r.stderr)
    assert cli("show", "good/a").exit_code == 0  # the current version reads
    assert cli("show", "good/a", "--version", "1").exit_code == 2


# ---------------------------------------------------------------- a registry this factreg cannot use as it is


def test_registry_from_a_newer_schema_is_one_clear_line(cli, db_path):
    from factreg.registry.migrations import NAMES

    assert cli("record", "a/b", "-m", "ttft", "--value", "1").exit_code == 0
    con = sqlite3.connect(db_path)
    con.execute("INSERT INTO factreg_migration (name, applied_at) VALUES ('m999_from_the_future', '2030-01-01')")
    con.commit()
    con.execute("PRAGMA user_version = 12345")  # the newer factreg's stamp of its schema (registry/store.py)
    for args in (["list"], ["show", "a/b"], ["export"], ["status"], ["record", "a/c", "-m", "ttft", "--value", "1"]):
        r = cli(*args)
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        assert r.stderr == (f"Error: registry schema {len(NAMES) + 1} is newer than this factreg ({len(NAMES)}); "
                            "upgrade factreg\n")
    assert [n for (n,) in con.execute("SELECT name FROM factreg_migration")].count("m999_from_the_future") == 1


@pytest.mark.parametrize("name", ["a?b.db", "a#b.db", "a%41b.db", "q?x=1#y.db"])
def test_question_mark_and_hash_in_db_paths(cli, tmp_path, name):
    target = tmp_path / "dir?x#y" / name
    assert cli("record", "a/b", "-m", "ttft", "--value", "1", "--db", str(target)).exit_code == 0
    assert target.is_file()  # that exact file, not a name cut at `?` or `#`
    assert sorted(p.name for p in target.parent.iterdir() if p.suffix == ".db") == [name]
    assert [f["id"] for f in cli("list", "--json", "--db", str(target)).json()] == ["a/b"]
    assert cli("export", "--db", str(target)).stdout.count("\n") == 1
    assert Registry(f"sqlite:///{target}".replace("%", "%25").replace("?", "%3F").replace("#", "%23")).query(
        "SELECT count(*) AS n FROM fact")[0]["n"] == 1


def _make_read_only(folder: Path) -> bool:
    """Make `folder` unwritable even for root (chattr +i) or, for another user, by its mode."""
    if os.geteuid() == 0:
        return subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
    folder.chmod(0o555)
    return not os.access(folder, os.W_OK)


def _make_writable(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    folder.chmod(0o755)


def test_registry_in_a_read_only_folder_reads_and_refuses_writes_clearly(cli, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "reg.db"
    assert cli("record", "a/b", "-m", "ttft", "--samples", "1,2,3", "--db", str(db)).exit_code == 0
    gc.collect()  # the in-process commands' registries close their connections: SQLite removes -wal and -shm
    leftovers = sorted(p.name for p in folder.iterdir())
    assert leftovers == ["reg.db"]
    if not _make_read_only(folder):
        pytest.skip("cannot make a folder read-only here (chattr not permitted)")
    try:
        for args in (["list", "--json"], ["show", "a/b", "--json"], ["history", "a/b", "--json"], ["status"],
                     ["export"]):
            r = cli(*args, "--db", str(db))
            assert r.exit_code == 0, (args, r.stderr)
            assert "a/b" in r.stdout and "Error" not in r.stderr
        r = cli("record", "a/c", "-m", "ttft", "--value", "1", "--db", str(db))
        assert r.exit_code == 2
        assert r.stderr == (f"Error: the registry folder {folder} is read-only: this command writes to the registry "
                            "(read commands still work)\n")
        assert sorted(p.name for p in folder.iterdir()) == leftovers
    finally:
        _make_writable(folder)


def test_read_only_folder_with_a_pending_write_ahead_log(tmp_path):
    """A registry whose last writer left its WAL (killed): opened read-only with mode=ro, the log's rows seen."""
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "reg.db"
    script = (f"import os; from factreg.registry.store import Registry; from factreg.registry import facts\n"
              f"r = Registry('sqlite:///{db}'); facts.record(r, facts.NewFact(id='a/b', metric='ttft', value=1.0))\n"
              "os._exit(0)  # no checkpoint: the WAL stays\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    subprocess.run([sys.executable, "-c", script], check=True, env=env)
    if not Path(f"{db}-wal").exists():
        pytest.skip("SQLite checkpointed the log on exit")
    if not _make_read_only(folder):
        pytest.skip("cannot make a folder read-only here (chattr not permitted)")
    try:
        assert [r["id"] for r in Registry(f"sqlite:///{db}", create=False).query("SELECT id FROM fact")] == ["a/b"]
    finally:
        _make_writable(folder)
