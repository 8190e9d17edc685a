"""SQLModel tables of the registry. Times are UTC ISO-8601 strings (`2026-10-26T02:30:00Z`) so that
SQLite and PostgreSQL store, sort and export them identically; JSON columns are text."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Index, Table, inspect
from sqlmodel import Field, SQLModel


class Fact(SQLModel, table=True):
    """A fact id and what happened to it as a whole: its newest version, its successor, its end."""

    __tablename__ = "fact"
    id: str = Field(primary_key=True, max_length=200)
    current_version: int
    created_at: str
    superseded_by: str | None = Field(default=None, max_length=200)
    superseded_at: str | None = None
    supersede_reason: str | None = None
    ended_at: str | None = None


class FactVersion(SQLModel, table=True):
    """One recorded measurement of a fact; recording the same id again adds a version."""

    __tablename__ = "fact_version"
    fact_id: str = Field(primary_key=True, foreign_key="fact.id", max_length=200)
    version: int = Field(primary_key=True)
    subject: str | None = Field(default=None, index=True)
    metric: str = Field(index=True)
    unit: str
    direction: str | None = None
    value: float
    spread: float | None = None
    n: int | None = None
    mean: float | None = None
    median: float | None = None
    stdev: float | None = None
    min: float | None = None
    max: float | None = None
    iqr: float | None = None
    cv: float | None = None
    ci_lo: float | None = None
    ci_hi: float | None = None
    flags: str = "[]"  # JSON list
    measured_at: str
    recorded_at: str
    method: str = '{"kind": "manual"}'  # JSON object, never a shell string
    warn_after: str | None = None
    error_after: str | None = None
    tolerance: float | None = None
    note: str | None = None
    raw: str | None = None
    derived_from: str | None = None  # JSON list of {"id", "version"} for derived facts
    # Provenance (m004): who recorded it where, or which file it was imported from; `trust` is this registry's
    # tag on the method (registry/provenance.py), without which an imported method is never run.
    recorded_by: str | None = None
    origin: str | None = None  # "recorded" | "imported"; None: written before provenance was kept
    source: str | None = None  # the imported file's name
    registry_id: str | None = None  # the registry that wrote the version
    trust: str | None = None


class Sample(SQLModel, table=True):
    """One raw sample of a fact version, in measurement order."""

    __tablename__ = "sample"
    fact_id: str = Field(primary_key=True, max_length=200)
    version: int = Field(primary_key=True)
    idx: int = Field(primary_key=True)
    value: float


class Condition(SQLModel, table=True):
    """A condition of a fact version: `identity` decides comparability, `info` is kept alongside."""

    __tablename__ = "condition"
    # Lookups by condition (list --cond, verify --here) go through this index: a hash index on PostgreSQL, whose
    # b-tree entries are limited to about 2.7 kB while a value (the control's readings) can be longer.
    __table_args__ = (Index("ix_condition_value", "value", postgresql_using="hash"),)
    fact_id: str = Field(primary_key=True, max_length=200)
    version: int = Field(primary_key=True)
    key: str = Field(primary_key=True)
    value: str
    kind: str  # "identity" | "info"


class Verification(SQLModel, table=True):
    """One re-run of a fact's method: new samples, the verdict, observed conditions and their diff."""

    __tablename__ = "verification"
    pk: int | None = Field(default=None, primary_key=True)
    fact_id: str = Field(index=True, max_length=200)
    fact_version: int
    verified_at: str
    verdict: str
    method_kind: str
    hostname: str | None = None
    value: float | None = None
    spread: float | None = None
    n: int | None = None
    samples: str = "[]"  # JSON list
    p_value: float | None = None
    rel_diff: float | None = None
    needed_n: int | None = None
    observed: str = "{}"  # JSON object of observed conditions
    diff: str = "{}"  # JSON object key -> [old, new]
    message: str | None = None
    raw: str | None = None


class Decision(SQLModel, table=True):
    """A decision record (MADR-compatible) that cites facts; revert and supersede links are data."""

    __tablename__ = "decision"
    number: int = Field(primary_key=True)
    title: str
    slug: str
    status: str  # proposed | accepted | rejected | deprecated | superseded | reverted
    date: str
    decided_by: str = "[]"  # JSON list of names
    context: str | None = None
    outcome: str | None = None
    created_at: str
    reverted_at: str | None = None
    revert_reason: str | None = None
    revert_fact: str | None = None
    superseded_by: int | None = None
    drivers: str | None = None  # JSON list of driver texts (`fact < 1.0 s`, `a > b`); None: no drivers
    review_by: str | None = None  # YYYY-MM-DD: the decision needs review after this date


class DecisionCite(SQLModel, table=True):
    """A fact a decision relied on, with the value it relied on."""

    __tablename__ = "decision_cite"
    decision: int = Field(primary_key=True, foreign_key="decision.number")
    fact_id: str = Field(primary_key=True, max_length=200)
    fact_version: int
    value: float
    spread: float | None = None
    unit: str


class Correction(SQLModel, table=True):
    """Fact `old` was wrong or outdated; `new` (a fact or a verification) replaces it, and why."""

    __tablename__ = "correction"
    pk: int | None = Field(default=None, primary_key=True)
    old_fact_id: str = Field(index=True, max_length=200)
    old_version: int
    new_fact_id: str | None = Field(default=None, max_length=200)
    new_version: int | None = None
    verification: int | None = None
    cause: str | None = None
    created_at: str
    note_path: str | None = None


class RegistryMeta(SQLModel, table=True):
    """The registry's own settings: its random id (written into exports) and its trust key (never exported)."""

    __tablename__ = "registry_meta"
    name: str = Field(primary_key=True)
    value: str


class Notified(SQLModel, table=True):
    """What `verify --notify` last reported of a fact (`fact:ID`) or decision (`decision:N`): its alert state."""

    __tablename__ = "notified"
    subject: str = Field(primary_key=True)
    state: str
    noted_at: str


class Outbox(SQLModel, table=True):
    """A message one notifier has not delivered yet (secrets redacted): retried by the next `verify --notify`."""

    __tablename__ = "outbox"
    pk: int | None = Field(default=None, primary_key=True)
    notifier: str
    created_at: str
    subject: str
    body: str
    attempts: int
    last_error: str | None = None


class Migration(SQLModel, table=True):
    """Bookkeeping: one row per applied migration, written in the migration's own transaction."""

    __tablename__ = "factreg_migration"
    name: str = Field(primary_key=True)
    applied_at: str


def table(model: type[SQLModel]) -> Table:
    """A table model's SQLAlchemy `Table` (its `__table__`, which SQLModel sets without declaring it for mypy)."""
    return cast(Table, inspect(model).local_table)


# the tables of decisions and corrections, as the JSONL export and import read and write them
DECISION = table(Decision)
CITE = table(DecisionCite)
CORRECTION = table(Correction)
