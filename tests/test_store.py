"""The registry store: migrations, transactional DDL, SQLite settings."""

import sqlite3

import pytest
from sqlalchemy import text

from factreg.errors import UsageError
from factreg.registry import facts
from factreg.registry.migrations import MIGRATIONS
from factreg.registry.store import Registry


def test_new_registry_applies_every_migration_in_order(db_url, db_path):
    reg = Registry(db_url)
    assert reg.applied_migrations() == [name for name, _ in MIGRATIONS]
    con = sqlite3.connect(db_path)
    tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
    assert {"fact", "fact_version", "sample", "condition", "verification", "decision", "decision_cite",
            "correction", "factreg_migration"} <= tables
    assert con.execute("pragma journal_mode").fetchone()[0] == "wal"
    # reopening applies nothing again
    assert Registry(db_url).migrate() == []


def test_busy_timeout_is_set(registry):
    with registry.read() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000


def test_failing_migration_leaves_no_trace(db_url, db_path):
    reg = Registry(db_url)

    def m900_half_done(conn):
        conn.execute(text("CREATE TABLE half (x INTEGER)"))
        conn.execute(text("ALTER TABLE fact ADD COLUMN extra TEXT"))
        conn.execute(text("INSERT INTO half VALUES (1)"))
        raise RuntimeError("boom half-way")

    with pytest.raises(RuntimeError):
        reg.migrate([*MIGRATIONS, ("m900_half_done", m900_half_done)])
    con = sqlite3.connect(db_path)
    tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
    assert "half" not in tables
    cols = [r[1] for r in con.execute("pragma table_info(fact)")]
    assert "extra" not in cols
    assert "m900_half_done" not in reg.applied_migrations()

    def m900_ok(conn):
        conn.execute(text("CREATE TABLE half (x INTEGER)"))

    assert reg.migrate([*MIGRATIONS, ("m900_half_done", m900_ok)]) == ["m900_half_done"]
    assert "m900_half_done" in reg.applied_migrations()


def test_write_transaction_is_all_or_nothing(registry):
    good = facts.NewFact(id="a/one", metric="ttft", value=1.0)
    bad = facts.NewFact(id="a/two", metric="ttft", value=float("nan"))
    with pytest.raises(UsageError):
        facts.record_many(registry, [good, bad])
    assert facts.count(registry) == 0
    facts.record_many(registry, [good, facts.NewFact(id="a/two", metric="ttft", value=2.0)])
    assert facts.count(registry) == 2


def test_same_id_twice_in_one_batch_makes_two_versions(registry):
    ids = facts.record_many(registry, [facts.NewFact(id="a/x", metric="ttft", value=v) for v in (1.0, 2.0, 3.0)])
    assert ids == ["a/x@1", "a/x@2", "a/x@3"]
    assert facts.get(registry, "a/x")["value"] == 3.0
    assert [v["value"] for v in facts.history(registry, "a/x")] == [1.0, 2.0, 3.0]


def test_integrity_check(registry):
    assert registry.integrity_check() == "ok"


def test_the_schema_is_checked_once_then_known_from_the_files_stamp(tmp_path) -> None:
    """Migrations are checked once per schema: a migrated registry carries `PRAGMA user_version` = the schema's
    stamp, and a registry stamped so is not asked for its migrations table again; one migrated before the stamp
    (user_version 0) is checked through the table once, then stamped."""
    import sqlite3

    from factreg.registry.store import Registry, schema_stamp

    path = tmp_path / "r.db"
    Registry(f"sqlite:///{path}").close()
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == schema_stamp() != 0
    con.execute("PRAGMA user_version = 0")  # as a registry migrated before the stamp was kept
    con.commit()
    Registry(f"sqlite:///{path}").close()
    assert con.execute("PRAGMA user_version").fetchone()[0] == schema_stamp()
    con.execute("ALTER TABLE factreg_migration RENAME TO moved")  # the stamp alone answers now
    con.commit()
    Registry(f"sqlite:///{path}", migrate=True).close()
    assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'factreg_migration'").fetchone()[0] == 0
    con.close()
