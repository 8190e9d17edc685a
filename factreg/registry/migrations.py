"""Ordered, named schema migrations. Each runs in one transaction together with its bookkeeping row,
so a migration that fails half-way leaves no trace.

A table is created by the first migration that needs it, from its SQLModel definition; a column added
to a model later must be listed in `ADDED_LATER` (so the create step leaves it out) and added by an
`ALTER TABLE` migration of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Connection, Table

# table name -> columns that a later migration adds
ADDED_LATER: dict[str, set[str]] = {}


def _create(conn: Connection, name: str) -> None:
    from sqlalchemy.schema import CreateIndex, CreateTable

    from factreg.registry.models import SQLModel

    table: Table = SQLModel.metadata.tables[name]
    later = ADDED_LATER.get(name, set())
    columns = [c for c in table.columns if c.name not in later]
    conn.execute(CreateTable(table) if not later else _create_subset(table, columns, conn))
    for index in table.indexes:
        if all(c.name not in later for c in index.columns):
            conn.execute(CreateIndex(index))


def _create_subset(table: Table, columns: list, conn: Connection):  # pragma: no cover - no such table yet
    from sqlalchemy import MetaData, Table
    from sqlalchemy.schema import CreateTable

    copy = Table(table.name, MetaData(), *[c._copy() for c in columns])
    return CreateTable(copy)


def m001_core(conn: Connection) -> None:
    """Facts, their versions, samples, conditions and verifications."""
    for name in ("fact", "fact_version", "sample", "condition", "verification"):
        _create(conn, name)


def m002_decisions(conn: Connection) -> None:
    """Decision records and the facts they cite, with the values relied on."""
    for name in ("decision", "decision_cite"):
        _create(conn, name)


def m003_corrections(conn: Connection) -> None:
    """Corrections: which fact replaced which, and why."""
    _create(conn, "correction")


MIGRATIONS: list[tuple[str, Callable[[Connection], None]]] = [
    ("m001_core", m001_core),
    ("m002_decisions", m002_decisions),
    ("m003_corrections", m003_corrections),
]

NAMES = [name for name, _ in MIGRATIONS]
