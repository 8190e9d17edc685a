"""Recording facts: each measurement written as the next version of its fact (facts created as needed), the
current version settled by one rule, and supersede links."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from factreg import clock
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import NotFound, UsageError
from factreg.registry import provenance
from factreg.registry.facts.measurement import NewFact, build_rows
from factreg.registry.facts.reading import CURRENT, chunks, corrected_versions, currency, get, version_json
from factreg.registry.ids import check_id
from factreg.registry.store import Registry, in_list, rows, tuples
from factreg.registry.types import FactData, Prepared, VersionRow
from factreg.secrets import redact

if TYPE_CHECKING:
    from sqlalchemy import Connection


def current_versions(conn: Connection, ids: Sequence[str], lock: bool = False) -> dict[str, int]:
    """id → current version for those of `ids` that exist (rows locked for update when asked; SQLite's writer holds
    the whole database already). Plain SQL: a write need not import the table models."""
    sqlite = isinstance(conn, sqlite3.Connection) or conn.dialect.name == "sqlite"
    out: dict[str, int] = {}
    for part in chunks(sorted(set(ids))):
        clause, params = in_list("id", list(part))
        sql = f"SELECT id, current_version FROM fact WHERE id IN {clause}" + ("" if sqlite or not lock
                                                                               else " FOR UPDATE")
        out.update({fid: ver for fid, ver in tuples(conn, sql, params)})
    return out


def last_versions(conn: Connection, ids: Sequence[str], lock: bool = False) -> dict[str, int]:
    """id → highest version number written, for those of `ids` that exist (fact rows locked when asked): the next
    version is one more, whichever version is current."""
    have = current_versions(conn, ids, lock=lock)
    for part in chunks(sorted(have)):
        clause, params = in_list("id", list(part))
        for r in rows(conn, f"SELECT fact_id, MAX(version) AS top FROM fact_version WHERE fact_id IN {clause} "
                            "GROUP BY fact_id", params):
            have[r["fact_id"]] = max(have[r["fact_id"]], int(r["top"]))
    return have


def bulk_insert(conn: Connection, table: str, rows_: Sequence[Mapping[str, Any]]) -> None:
    """executemany at the driver level: SQLAlchemy's per-row parameter processing costs more than the insert."""
    cols = list(rows_[0])
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join([mark] * len(cols))})"
    conn.exec_driver_sql(sql, [tuple(r[c] for c in cols) for r in rows_])


def insert_rows(conn: Connection, facts: Sequence[Mapping[str, Any]], versions: Sequence[VersionRow],
                samples: Sequence[Mapping[str, Any]], conds: Sequence[Mapping[str, Any]],
                bumps: Sequence[Mapping[str, Any]]) -> None:
    """Bulk-insert prepared rows, one executemany per table."""
    if facts:
        bulk_insert(conn, "fact", facts)
    if bumps:
        mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
        conn.exec_driver_sql(f"UPDATE fact SET current_version = {mark} WHERE id = {mark}",
                             [(b["cv"], b["fid"]) for b in bumps])
    if versions:
        bulk_insert(conn, "fact_version", versions)
    if samples:
        bulk_insert(conn, "sample", samples)
    if conds:
        bulk_insert(conn, "condition", conds)


def current_metrics(conn: Connection, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """id → (metric, unit) of the current version, for those of `ids` that exist."""
    out: dict[str, tuple[str, str]] = {}
    for part in chunks(sorted(set(ids))):
        clause, params = in_list("id", list(part))
        for r in rows(conn, f"SELECT v.fact_id, v.metric, v.unit FROM {CURRENT} WHERE f.id IN {clause}", params):
            out[r["fact_id"]] = (r["metric"], r["unit"])
    return out


def same_metric(known: dict[str, tuple[str, str]], fact_id: str, metric: str, unit: str) -> None:
    """UsageError when `fact_id` already measures another metric or unit: a fact's versions are one quantity
    (a new version of a ttft fact cannot be a ratio). Remembers the metric for the rest of the batch."""
    was = known.get(fact_id)
    if was is not None and was != (metric, unit):
        raise UsageError(f"fact {fact_id} measures {was[0]} ({was[1]}); a new version cannot measure {metric} "
                         f"({unit}): record it under another id (nothing stored)")
    known[fact_id] = (metric, unit)


def write_versions(conn: Connection, all_rows: Sequence[Prepared]) -> list[int]:
    """Add each prepared measurement as the next version of its fact (creating facts as needed)."""
    current = last_versions(conn, [r["version"]["fact_id"] for r in all_rows], lock=True)
    known = current_metrics(conn, list(current)) if current else {}
    for prepared in all_rows:
        vrow = prepared["version"]
        same_metric(known, vrow["fact_id"], vrow["metric"], vrow["unit"])
    new_facts: list[dict[str, object]] = []
    versions: list[VersionRow] = []
    samples: list[dict[str, object]] = []
    conds: list[dict[str, object]] = []
    numbers: list[int] = []
    for prepared in all_rows:
        vrow = prepared["version"]
        fid = vrow["fact_id"]
        if fid in current:
            number = current[fid] + 1
        else:
            number = 1
            new_facts.append({"id": fid, "current_version": 1, "created_at": vrow["recorded_at"]})
        current[fid] = number
        numbers.append(number)
        versions.append({**vrow, "version": number})
        samples.extend({"fact_id": fid, "version": number, "idx": i, "value": v} for i, v in enumerate(prepared["samples"]))
        conds.extend({"fact_id": fid, "version": number, "key": k, "value": v, "kind": kind}
                     for k, v, kind in prepared["conditions"])
    provenance.tag_rows(conn, versions, [p.get("trusted", True) for p in all_rows])
    insert_rows(conn, new_facts, versions, samples, conds, [])
    settle_current(conn, [v["fact_id"] for v in versions])
    return numbers


def settle_current(conn: Connection, ids: Sequence[str]) -> None:
    """Point each fact of `ids` at its current version: the one rule, whatever order versions were written in.

    Version numbers count recordings; the current version is the latest *measured* (an older measurement imported
    or recorded later joins the history without replacing a newer one) that has not been corrected by a later
    version of the same id (`correct`): a corrected version is current only when every version is."""
    if not ids:
        return
    corrected = corrected_versions(conn, ids)
    best: dict[str, tuple[Any, ...]] = {}
    for part in chunks(sorted(set(ids))):
        clause, params = in_list("id", list(part))
        for r in rows(conn, "SELECT fact_id, version, measured_at, recorded_at FROM fact_version "
                            f"WHERE fact_id IN {clause}", params):
            rank = (int((r["fact_id"], r["version"]) not in corrected),
                    *currency(r["version"], r["measured_at"], r["recorded_at"]))
            if r["fact_id"] not in best or rank > best[r["fact_id"]]:
                best[r["fact_id"]] = rank
    have = current_versions(conn, list(best))
    bumps = [(rank[-1], fid) for fid, rank in sorted(best.items()) if have.get(fid) != rank[-1]]
    if bumps:
        mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
        conn.exec_driver_sql(f"UPDATE fact SET current_version = {mark} WHERE id = {mark}", bumps)


def record(registry: Registry, new: NewFact, min_uptime_s: float = DEFAULT_MIN_UPTIME_S) -> FactData:
    """Record one measurement as a new version of its fact; return the fact as JSON data."""
    rows = build_rows(new, min_uptime_s)

    def work(conn: Connection) -> None:
        write_versions(conn, [rows])
        prune_raw(registry, conn, [rows["version"]["fact_id"]])

    registry.write_lean(work)  # plain SQL all through: no SQLAlchemy to import for one version
    return get(registry, rows["version"]["fact_id"])


def preview(new: NewFact, version: int = 1, min_uptime_s: float = DEFAULT_MIN_UPTIME_S) -> FactData:
    """The fact as `get` shows it once `new` is recorded as `version` (validated; nothing read or written).

    Without what only the registry knows: no status, no successor."""
    rows = build_rows(new, min_uptime_s)
    return version_json({**rows["version"], "version": version}, list(rows["samples"]), rows["conditions"])


def record_many(registry: Registry, news: Iterable[NewFact], min_uptime_s: float = DEFAULT_MIN_UPTIME_S) -> list[str]:
    """Record several measurements in one transaction: all land or none do. Return `id@version`s."""
    all_rows = [build_rows(n, min_uptime_s) for n in news]

    def work(conn: Connection) -> list[str]:
        numbers = write_versions(conn, all_rows)
        prune_raw(registry, conn, [r["version"]["fact_id"] for r in all_rows])
        return [f"{r['version']['fact_id']}@{n}" for r, n in zip(all_rows, numbers, strict=True)]

    return list(registry.write_retrying(work))


def prune_raw(registry: Registry, conn: Connection, ids: Sequence[str]) -> None:
    """In the transaction that wrote runs of `ids`: drop the raw output of their runs beyond the newest
    `registry.raw_runs` (registry/retention.py)."""
    from factreg.registry import retention

    keep = retention.DEFAULT_RAW_RUNS if registry.raw_runs is None else registry.raw_runs
    retention.prune(conn, keep, ids)


def supersede(registry: Registry, old_id: str, new_id: str, reason: str | None = None) -> FactData:
    """Mark fact `old_id` as superseded by `new_id` (kept, linked to its successor); return the old fact.

    Both facts must exist; a fact cannot supersede itself, a link that would make a loop is refused, and a fact
    already superseded by another fact is refused (recording the same link again changes nothing).
    """
    check_id(old_id)
    check_id(new_id)
    if old_id == new_id:
        raise UsageError(f"{old_id} cannot supersede itself")

    from sqlalchemy import select, update

    from factreg.registry.models import Fact

    FACT = Fact.metadata.tables["fact"]

    def work(conn: Connection) -> None:
        def link(fid: str) -> tuple[bool, str | None]:
            row = conn.execute(select(FACT.c.superseded_by).where(FACT.c.id == fid)).first()
            return (row is not None, row[0] if row is not None else None)

        for fid in (old_id, new_id):
            if not link(fid)[0]:
                raise NotFound(f"no fact {fid!r} in the registry")
        current = link(old_id)[1]
        if current == new_id:
            return
        if current:
            raise UsageError(f"{old_id} is already superseded by {current}")
        nxt: str | None = new_id
        while nxt:
            if nxt == old_id:
                raise UsageError(f"{new_id} is (transitively) superseded by {old_id}: that would make a loop")
            nxt = link(nxt)[1]
        conn.execute(update(FACT).where(FACT.c.id == old_id).values(
            superseded_by=new_id, superseded_at=clock.iso(),
            supersede_reason=None if reason is None else redact(reason)))

    registry.write_retrying(work)
    return get(registry, old_id)
