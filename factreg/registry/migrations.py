"""Ordered, named schema migrations, frozen: each keeps the exact DDL it had when it was written.

The rule: a migration never imports models; new columns = new migration.

`factreg/models.py` describes today's tables; a migration describes one step from yesterday's. Were a
migration to build its tables from the models, a registry created long ago and upgraded today would get
today's columns at yesterday's step, and the step that really adds them would then fail (or be skipped).
So every migration below spells out its CREATE TABLE / CREATE INDEX statements as text and is never edited
once released. A column added to a model is added to existing registries by a new migration
(`m004_...`, an `ALTER TABLE` of its own) appended to `MIGRATIONS`; tests/test_migrations.py compares the
schema the migrations build with the one the models describe, so the two cannot drift apart unnoticed.

Two backends are supported, SQLite and PostgreSQL. The statements are the same text on both except where the
dialects differ, written as `{serial}`: an integer primary key that numbers itself (SQLite's `INTEGER`
rowid alias, PostgreSQL's `SERIAL`) — exactly what SQLAlchemy emitted for these tables when they were written —
and `{hash}`: an index that holds a hash of its value on PostgreSQL (whose b-tree entries are limited to about
2.7 kB), a plain index on SQLite (which has no such limit).

`Registry.migrate` (store.py) runs each migration in one transaction together with its bookkeeping row in
`factreg_migration`, so a migration that fails half-way leaves no trace (DDL is transactional on both)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from factreg.errors import ConfigError

if TYPE_CHECKING:
    from sqlalchemy import Connection

# What each dialect writes for the few words that differ between them.
_DIALECT_WORDS = {
    "sqlite": {"serial": "INTEGER", "hash": ""},
    "postgresql": {"serial": "SERIAL", "hash": "USING hash "},
}


def _run(conn: Connection, statements: Sequence[str]) -> None:
    """Execute frozen DDL statements, each with the current dialect's words filled in."""
    words = _DIALECT_WORDS.get(conn.dialect.name)
    if words is None:
        raise ConfigError(f"factreg's registry supports SQLite and PostgreSQL, not {conn.dialect.name}")
    for statement in statements:
        conn.exec_driver_sql(statement.format(**words))


# The bookkeeping table: created before any migration runs, by store.Registry.migrate.
BOOKKEEPING = """CREATE TABLE factreg_migration (
    name VARCHAR NOT NULL,
    applied_at VARCHAR NOT NULL,
    PRIMARY KEY (name)
)"""


def create_bookkeeping(conn: Connection) -> None:
    """Create `factreg_migration`, one row per applied migration."""
    _run(conn, [BOOKKEEPING])


# ---------------------------------------------------------------- m001_core (frozen)

M001_CORE = (
    """CREATE TABLE fact (
    id VARCHAR(200) NOT NULL,
    current_version INTEGER NOT NULL,
    created_at VARCHAR NOT NULL,
    superseded_by VARCHAR(200),
    superseded_at VARCHAR,
    supersede_reason VARCHAR,
    ended_at VARCHAR,
    PRIMARY KEY (id)
)""",
    """CREATE TABLE fact_version (
    fact_id VARCHAR(200) NOT NULL,
    version INTEGER NOT NULL,
    subject VARCHAR,
    metric VARCHAR NOT NULL,
    unit VARCHAR NOT NULL,
    direction VARCHAR,
    value FLOAT NOT NULL,
    spread FLOAT,
    n INTEGER,
    mean FLOAT,
    median FLOAT,
    stdev FLOAT,
    min FLOAT,
    max FLOAT,
    iqr FLOAT,
    cv FLOAT,
    ci_lo FLOAT,
    ci_hi FLOAT,
    flags VARCHAR NOT NULL,
    measured_at VARCHAR NOT NULL,
    recorded_at VARCHAR NOT NULL,
    method VARCHAR NOT NULL,
    warn_after VARCHAR,
    error_after VARCHAR,
    tolerance FLOAT,
    note VARCHAR,
    raw VARCHAR,
    derived_from VARCHAR,
    PRIMARY KEY (fact_id, version),
    FOREIGN KEY (fact_id) REFERENCES fact (id)
)""",
    "CREATE INDEX ix_fact_version_metric ON fact_version (metric)",
    "CREATE INDEX ix_fact_version_subject ON fact_version (subject)",
    """CREATE TABLE sample (
    fact_id VARCHAR(200) NOT NULL,
    version INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    value FLOAT NOT NULL,
    PRIMARY KEY (fact_id, version, idx)
)""",
    """CREATE TABLE condition (
    fact_id VARCHAR(200) NOT NULL,
    version INTEGER NOT NULL,
    "key" VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    PRIMARY KEY (fact_id, version, "key")
)""",
    # Lookups by condition (list --cond, verify --here) go through this index.
    'CREATE INDEX ix_condition_key_value ON condition ("key", value)',
    """CREATE TABLE verification (
    pk {serial} NOT NULL,
    fact_id VARCHAR(200) NOT NULL,
    fact_version INTEGER NOT NULL,
    verified_at VARCHAR NOT NULL,
    verdict VARCHAR NOT NULL,
    method_kind VARCHAR NOT NULL,
    hostname VARCHAR,
    value FLOAT,
    spread FLOAT,
    n INTEGER,
    samples VARCHAR NOT NULL,
    p_value FLOAT,
    rel_diff FLOAT,
    needed_n INTEGER,
    observed VARCHAR NOT NULL,
    diff VARCHAR NOT NULL,
    message VARCHAR,
    raw VARCHAR,
    PRIMARY KEY (pk)
)""",
    "CREATE INDEX ix_verification_fact_id ON verification (fact_id)",
)


def m001_core(conn: Connection) -> None:
    """Facts, their versions, samples, conditions and verifications."""
    _run(conn, M001_CORE)


# ---------------------------------------------------------------- m002_decisions (frozen)

M002_DECISIONS = (
    """CREATE TABLE decision (
    number {serial} NOT NULL,
    title VARCHAR NOT NULL,
    slug VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    date VARCHAR NOT NULL,
    decided_by VARCHAR NOT NULL,
    context VARCHAR,
    outcome VARCHAR,
    created_at VARCHAR NOT NULL,
    reverted_at VARCHAR,
    revert_reason VARCHAR,
    revert_fact VARCHAR,
    superseded_by INTEGER,
    PRIMARY KEY (number)
)""",
    """CREATE TABLE decision_cite (
    decision INTEGER NOT NULL,
    fact_id VARCHAR(200) NOT NULL,
    fact_version INTEGER NOT NULL,
    value FLOAT NOT NULL,
    spread FLOAT,
    unit VARCHAR NOT NULL,
    PRIMARY KEY (decision, fact_id),
    FOREIGN KEY (decision) REFERENCES decision (number)
)""",
)


def m002_decisions(conn: Connection) -> None:
    """Decision records and the facts they cite, with the values relied on."""
    _run(conn, M002_DECISIONS)


# ---------------------------------------------------------------- m003_corrections (frozen)

M003_CORRECTIONS = (
    """CREATE TABLE correction (
    pk {serial} NOT NULL,
    old_fact_id VARCHAR(200) NOT NULL,
    old_version INTEGER NOT NULL,
    new_fact_id VARCHAR(200),
    new_version INTEGER,
    verification INTEGER,
    cause VARCHAR,
    created_at VARCHAR NOT NULL,
    note_path VARCHAR,
    PRIMARY KEY (pk)
)""",
    "CREATE INDEX ix_correction_old_fact_id ON correction (old_fact_id)",
)


def m003_corrections(conn: Connection) -> None:
    """Corrections: which fact replaced which, and why."""
    _run(conn, M003_CORRECTIONS)


# ---------------------------------------------------------------- m004_provenance (frozen)

M004_PROVENANCE = (
    "ALTER TABLE fact_version ADD COLUMN recorded_by VARCHAR",
    "ALTER TABLE fact_version ADD COLUMN origin VARCHAR",
    "ALTER TABLE fact_version ADD COLUMN source VARCHAR",
    "ALTER TABLE fact_version ADD COLUMN registry_id VARCHAR",
    "ALTER TABLE fact_version ADD COLUMN trust VARCHAR",
    """CREATE TABLE registry_meta (
    name VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    PRIMARY KEY (name)
)""",
)


def m004_provenance(conn: Connection) -> None:
    """Where each version came from (recorded here by whom, or imported from which file) and whether this
    registry trusts its method; `registry_meta` holds the registry's own id and trust key."""
    _run(conn, M004_PROVENANCE)


# ---------------------------------------------------------------- m005_decision_drivers (frozen)

M005_DECISION_DRIVERS = (
    "ALTER TABLE decision ADD COLUMN drivers VARCHAR",
    "ALTER TABLE decision ADD COLUMN review_by VARCHAR",
)


def m005_decision_drivers(conn: Connection) -> None:
    """A decision's drivers (the comparisons it holds on, a JSON list) and the date to review it by."""
    _run(conn, M005_DECISION_DRIVERS)


# ---------------------------------------------------------------- m006_notifications (frozen)

M006_NOTIFICATIONS = (
    """CREATE TABLE notified (
    subject VARCHAR NOT NULL,
    state VARCHAR NOT NULL,
    noted_at VARCHAR NOT NULL,
    PRIMARY KEY (subject)
)""",
    """CREATE TABLE outbox (
    pk {serial} NOT NULL,
    notifier VARCHAR NOT NULL,
    created_at VARCHAR NOT NULL,
    subject VARCHAR NOT NULL,
    body VARCHAR NOT NULL,
    attempts INTEGER NOT NULL,
    last_error VARCHAR,
    PRIMARY KEY (pk)
)""",
)


def m006_notifications(conn: Connection) -> None:
    """Alerts: the state of each fact and decision as last reported (`verify --notify`), and the messages not yet
    delivered, retried by the next run."""
    _run(conn, M006_NOTIFICATIONS)


# ---------------------------------------------------------------- m007_condition_value_index (frozen)

M007_CONDITION_VALUE_INDEX = (
    "DROP INDEX ix_condition_key_value",
    "CREATE INDEX ix_condition_value ON condition {hash}(value)",
)


def m007_condition_value_index(conn: Connection) -> None:
    """Lookups by condition go through an index on the value alone, a hash index on PostgreSQL: a b-tree entry
    there holds at most about 2.7 kB, and a condition such as the control's readings (`info.control`, a few
    hundred samples) can be longer, which made recording the fact fail. The key is not in the index: a value is
    selective by itself, and the query still compares the key."""
    _run(conn, M007_CONDITION_VALUE_INDEX)


# Append only: a released migration is never edited, renamed or reordered.
MIGRATIONS: list[tuple[str, Callable[[Connection], None]]] = [
    ("m001_core", m001_core),
    ("m002_decisions", m002_decisions),
    ("m003_corrections", m003_corrections),
    ("m004_provenance", m004_provenance),
    ("m005_decision_drivers", m005_decision_drivers),
    ("m006_notifications", m006_notifications),
    ("m007_condition_value_index", m007_condition_value_index),
]

NAMES = [name for name, _ in MIGRATIONS]
