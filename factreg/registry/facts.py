"""Facts: recording a measurement with its conditions and statistics, and reading facts back as data."""

from __future__ import annotations

import json
import math
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from factreg import clock, stats
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import ConfigError, NotFound, UsageError
from factreg.registry import conditions as cond
from factreg.registry import freshness, provenance, series
from factreg.registry.ids import check_id
from factreg.registry.metrics import check_value, get_metric, missing_required
from factreg.registry.store import Registry, collect_unreadable, in_list, note_unreadable, rows, tuples
from factreg.registry.types import (
    STAT_COLUMNS,
    SUMMARY_COLUMNS,
    VERSION_COLUMNS,
    FactData,
    LastVerification,
    Prepared,
    StatColumns,
    Stats,
    VerificationData,
    VersionRef,
    VersionRow,
)
from factreg.secrets import redact

if TYPE_CHECKING:
    from sqlalchemy import Connection, Table

    FACT: Table
    VERSION: Table
    SAMPLE: Table
    CONDITION: Table
    VERIFICATION: Table

_TABLES = {"FACT": "Fact", "VERSION": "FactVersion", "SAMPLE": "Sample", "CONDITION": "Condition",
           "VERIFICATION": "Verification"}


def __getattr__(name: str) -> Any:
    """The SQLAlchemy tables (FACT, VERSION, …), imported on first use so that read commands start fast."""
    if name in _TABLES:
        from factreg.registry import models

        return getattr(models, _TABLES[name]).__table__
    raise AttributeError(name)

METHOD_KINDS = ("manual", "llama-bench", "probe", "sweep", "derived", "imported")


def _plugin_kind(kind: Any) -> bool:
    """Whether an installed plugin provides this method kind (plugins are looked for only for a kind not factreg's)."""
    from factreg import plugins

    return isinstance(kind, str) and plugins.verifier(kind) is not None


@dataclass
class NewFact:
    """What a caller knows about one measurement; `build_rows` turns it into registry rows."""

    id: str
    metric: str
    value: float | None = None
    samples: Sequence[float] | None = None
    unit: str | None = None
    spread: float | None = None
    n: int | None = None
    identity: Mapping[str, Any] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)
    subject: str | None = None
    measured_at: str | None = None
    warn_after: str | None = None
    error_after: str | None = None
    tolerance: float | None = None
    note: str | None = None
    method: Mapping[str, Any] | None = None
    raw: str | None = None
    direction: str | None = None
    derived_from: list[VersionRef] | None = None
    extra_flags: Sequence[str] = ()
    # The value's own 95% interval when it is not the mean's (a percentile: its order-statistic interval).
    interval: tuple[float | None, float | None] | None = None
    # Provenance: recorded here (and so trusted), or imported from `source` (trusted only when the user says so).
    origin: str = provenance.RECORDED
    source: str | None = None
    trusted: bool = True


# Bounds of what a fact holds: statistics of numbers up to 1e100 cannot overflow a float (squares, sums), and a
# sample count fits every database's integer.
MAX_MAGNITUDE = 1e100
MAX_N = 1_000_000_000


def _finite(x: Any, what: str) -> float:
    # float() also takes `1_000` and non-ASCII digits: a number on the command line or in a file is plain ASCII.
    if isinstance(x, bool) or (isinstance(x, str) and ("_" in x or not x.isascii())):
        raise UsageError(f"{what} must be a number, got {str(x)[:40]!r}")
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        raise UsageError(f"{what} must be a number, got {str(x)[:40]!r}") from None
    if not math.isfinite(v):
        raise UsageError(f"{what} must be a finite number, got {str(x)[:40]!r}")
    if abs(v) > MAX_MAGNITUDE:
        raise UsageError(f"{what} must be within ±{MAX_MAGNITUDE:g}, got {str(x)[:40]!r}")
    return v


def parse_number(text: str, what: str) -> float:
    """A finite number from the command line (plain decimal: no `nan`, `inf` or `1_000`)."""
    return _finite(text.strip(), what)


def parse_samples(text: str) -> list[float]:
    """`"0.43,0.73,0.85"` → floats; empty, non-numeric, NaN and inf are refused, and more than
    stats.MAX_SAMPLES before any is read."""
    parts = [p.strip() for p in text.replace(";", ",").split(",")]
    if len(parts) > stats.MAX_SAMPLES:
        raise UsageError(f"{len(parts):,} samples: at most {stats.MAX_SAMPLES:,} are kept per version")
    if not text.strip() or any(p == "" for p in parts):
        raise UsageError(f"--samples takes comma-separated numbers, got {text!r}")
    return [_finite(p, "every sample") for p in parts]


def in_range(metric: str, value: float, samples: Sequence[float], where: str) -> None:
    """UsageError naming `where` when a stored version holds more samples than a version keeps, or (for a
    vocabulary metric) a value or sample its metric cannot have (a negative latency): what `build_rows` refuses,
    for rows that arrive whole (an import's `fact` lines)."""
    from factreg.registry.metrics import known

    if len(samples) > stats.MAX_SAMPLES:
        raise UsageError(f"{where}: {len(samples):,} samples: at most {stats.MAX_SAMPLES:,} are kept per version")
    found = known(metric)
    if found is None:
        return
    try:
        check_value(found, value, "the value")
        for x in samples:
            check_value(found, x, "a sample")
    except UsageError as exc:
        raise UsageError(f"{where}: {exc.message}") from None


def build_rows(new: NewFact, min_uptime_s: float = DEFAULT_MIN_UPTIME_S) -> Prepared:
    """Validate a measurement and compute its statistics and flags; no database access."""
    fact_id = check_id(new.id)
    metric = get_metric(new.metric, new.unit, new.direction)
    if (new.value is None) == (new.samples is None or len(new.samples) == 0) and new.samples is None:
        raise UsageError("give --value or --samples")
    if new.samples is not None and len(new.samples) == 0:
        raise UsageError("--samples is empty: give at least one number")
    if new.samples is not None and len(new.samples) > stats.MAX_SAMPLES:
        raise UsageError(f"{len(new.samples):,} samples: at most {stats.MAX_SAMPLES:,} are kept per version "
                         "(summarise them, or record the run's percentiles as facts)")
    samples = [_finite(x, "every sample") for x in new.samples] if new.samples is not None else []
    for x in samples:
        check_value(metric, x, "a sample")
    spread = None if new.spread is None else _finite(new.spread, "--spread")
    if spread is not None and spread < 0:
        raise UsageError("--spread cannot be negative")
    if new.n is not None and (not isinstance(new.n, int) or isinstance(new.n, bool) or not 1 <= new.n <= MAX_N):
        raise UsageError(f"--n must be a whole number from 1 to {MAX_N:,}, got {str(new.n)[:40]!r}")
    if samples and new.n is not None and new.n != len(samples):
        raise UsageError(f"--n {new.n} does not match the {len(samples)} samples given")
    if new.tolerance is not None and not (0 < _finite(new.tolerance, "--tolerance") < 10):
        raise UsageError("--tolerance is a fraction, e.g. 0.1 for ±10%")
    for dur in (new.warn_after, new.error_after):
        if dur is not None:
            freshness.parse_duration(dur)
    if new.warn_after and new.error_after and (
        freshness.parse_duration(new.warn_after) > freshness.parse_duration(new.error_after)
    ):
        raise UsageError("--warn-after cannot be longer than --error-after")
    method = dict(new.method or {"kind": "manual"})
    if method.get("kind") not in METHOD_KINDS and not _plugin_kind(method.get("kind")):
        raise UsageError(f"unknown method kind {method.get('kind')!r}")
    identity, info = cond.split(new.identity, new.info)
    measured_at = clock.iso(clock.parse(new.measured_at, "--measured-at")) if new.measured_at else clock.iso()

    if samples:
        summary: stats.Summary | None = stats.summarize(samples)
        assert summary is not None
        value = _finite(new.value, "--value") if new.value is not None else summary.median
        if spread is None:
            spread = summary.stdev
        n: int | None = summary.n
        row_stats = StatColumns(
            mean=summary.mean, median=summary.median, stdev=summary.stdev, min=summary.min, max=summary.max,
            iqr=summary.iqr, cv=summary.cv, ci_lo=summary.ci95[0] if summary.ci95 else None,
            ci_hi=summary.ci95[1] if summary.ci95 else None,
        )
    else:
        value = _finite(new.value, "--value")
        n = new.n
        summary = None
        row_stats = cast(StatColumns, dict.fromkeys(STAT_COLUMNS))
        row_stats["mean"] = value
        if spread is not None:
            row_stats["stdev"] = spread
            row_stats["cv"] = spread / abs(value) if value else None
            if n and n >= 2:
                half = stats.t_ppf(0.975, n - 1) * spread / math.sqrt(n)
                row_stats["ci_lo"], row_stats["ci_hi"] = value - half, value + half

    check_value(metric, value, "the value")
    if new.interval is not None:
        row_stats["ci_lo"], row_stats["ci_hi"] = new.interval
    flags = stats.flags_for(n, row_stats["cv"])
    if not identity or missing_required(metric, identity):
        flags.append("no_conditions")
    if cond.is_cold(identity, info, min_uptime_s):
        flags.append("cold")
    merged = {**info, **identity}
    if merged.get("thinking", "").lower() in ("on", "true", "1", "yes"):
        flags.append("thinking_on")
    if merged.get("cache_hit", "").lower() in ("true", "1", "yes"):
        flags.append("cache_hit")
    for extra in new.extra_flags:
        if extra not in flags:
            flags.append(extra)

    subject = new.subject if new.subject is not None else (fact_id.rsplit("/", 1)[0] if "/" in fact_id else None)
    version_row = cast("VersionRow", {  # its `version` is given when the row is written
        "fact_id": fact_id, "subject": subject, "metric": metric.name, "unit": metric.unit,
        "direction": metric.direction, "value": value, "spread": spread, "n": n, **row_stats,
        "flags": json.dumps(flags), "measured_at": measured_at, "recorded_at": clock.iso(),
        "method": json.dumps(method, sort_keys=True), "warn_after": new.warn_after,
        "error_after": new.error_after, "tolerance": new.tolerance, "raw": new.raw,
        "note": None if new.note is None else redact(new.note),
        "derived_from": json.dumps(new.derived_from) if new.derived_from else None,
        "recorded_by": provenance.user(), "origin": new.origin, "source": new.source, "registry_id": None,
        "trust": None,
    })
    return {
        "version": version_row,
        "samples": samples,
        "conditions": [(k, v, cond.IDENTITY) for k, v in identity.items()]
        + [(k, v, cond.INFO) for k, v in info.items()],
        "trusted": new.trusted,
    }


def _chunks(items: Sequence[Any], size: int = 500) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def current_versions(conn: Connection, ids: Sequence[str], lock: bool = False) -> dict[str, int]:
    """id → current version for those of `ids` that exist (rows locked for update when asked; SQLite's writer holds
    the whole database already). Plain SQL: a write need not import the table models."""
    sqlite = isinstance(conn, sqlite3.Connection) or conn.dialect.name == "sqlite"
    out: dict[str, int] = {}
    for part in _chunks(sorted(set(ids))):
        clause, params = in_list("id", list(part))
        sql = f"SELECT id, current_version FROM fact WHERE id IN {clause}" + ("" if sqlite or not lock
                                                                               else " FOR UPDATE")
        out.update({fid: ver for fid, ver in tuples(conn, sql, params)})
    return out


def last_versions(conn: Connection, ids: Sequence[str], lock: bool = False) -> dict[str, int]:
    """id → highest version number written, for those of `ids` that exist (fact rows locked when asked): the next
    version is one more, whichever version is current."""
    have = current_versions(conn, ids, lock=lock)
    for part in _chunks(sorted(have)):
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
    for part in _chunks(sorted(set(ids))):
        clause, params = in_list("id", list(part))
        for r in rows(conn, f"SELECT v.fact_id, v.metric, v.unit FROM {_CURRENT} WHERE f.id IN {clause}", params):
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


def _currency(version: int, measured_at: str, recorded_at: str) -> tuple[Any, ...]:
    """How versions rank for "current": the latest measured, ties to the latest recorded (then the last written)."""
    return (clock.parse(measured_at, "measured_at"), clock.parse(recorded_at, "recorded_at"), version)


def corrected_versions(conn: Any, ids: Sequence[str] | None = None) -> dict[tuple[str, int], dict[str, Any]]:
    """(id, version) → its correction (`pk`, `new_version`, `note_path`, `created_at`) for the versions corrected by
    a new version of the same id (`correct`'s default); such a version is never current again."""
    if not _has_table(conn, "correction"):
        return {}
    sql = ("SELECT pk, old_fact_id, old_version, new_version, note_path, created_at FROM correction "
           "WHERE new_fact_id = old_fact_id")
    out: dict[tuple[str, int], dict[str, Any]] = {}
    parts = [None] if ids is None else list(_chunks(sorted(set(ids))))
    for part in parts:
        params: dict[str, Any] = {}
        where = ""
        if part is not None:
            clause, params = in_list("id", list(part))
            where = f" AND old_fact_id IN {clause}"
        for r in rows(conn, sql + where + " ORDER BY pk", params):
            out[(r["old_fact_id"], int(r["old_version"]))] = r
    return out


def settle_current(conn: Connection, ids: Sequence[str]) -> None:
    """Point each fact of `ids` at its current version: the one rule, whatever order versions were written in.

    Version numbers count recordings; the current version is the latest *measured* (an older measurement imported
    or recorded later joins the history without replacing a newer one) that has not been corrected by a later
    version of the same id (`correct`): a corrected version is current only when every version is."""
    if not ids:
        return
    corrected = corrected_versions(conn, ids)
    best: dict[str, tuple[Any, ...]] = {}
    for part in _chunks(sorted(set(ids))):
        clause, params = in_list("id", list(part))
        for r in rows(conn, "SELECT fact_id, version, measured_at, recorded_at FROM fact_version "
                            f"WHERE fact_id IN {clause}", params):
            rank = (int((r["fact_id"], r["version"]) not in corrected),
                    *_currency(r["version"], r["measured_at"], r["recorded_at"]))
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
    return _version_json({**rows["version"], "version": version}, list(rows["samples"]), rows["conditions"])


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


# ---------------------------------------------------------------- reading

_OPTIONAL_NUMBERS = ("spread", *STAT_COLUMNS, "tolerance")


def _json_as(text: Any, kind: type) -> Any:
    """`text` parsed as JSON of type `kind`, or ValueError."""
    value = json.loads(text) if isinstance(text, str) else None
    if not isinstance(value, kind):
        raise ValueError
    return value


def unreadable(row: Mapping[str, Any], samples: Sequence[Any] = ()) -> str | None:
    """Why a stored version row cannot be read, or None: a row written by another tool or by hand straight into
    the database (a time that is no time, flags or method that are not JSON, a number that is not finite).

    Readers skip such a row and name it (`store.note_unreadable`): one bad row never breaks reading the rest.
    Only the columns present in `row` are checked."""
    for col in ("measured_at", "recorded_at"):
        if col in row and not _is_time(row[col]):
            return f"{col} {str(row[col])[:40]!r} is not a time"
    for col in ("metric", "unit"):
        if col in row and not isinstance(row[col], str):
            return f"{col} is missing"
    if "value" in row and not _is_finite(row["value"]):
        return f"value {str(row['value'])[:40]!r} is not a finite number"
    for col in _OPTIONAL_NUMBERS:
        if row.get(col) is not None and not _is_finite(row[col]):
            return f"{col} {str(row[col])[:40]!r} is not a finite number"
    if row.get("n") is not None and (not isinstance(row["n"], int) or row["n"] < 1):
        return f"n {str(row['n'])[:40]!r} is not a whole number of at least 1"
    if not all(_is_finite(x) for x in samples):
        return "a sample is not a finite number"
    for col, kind in (("flags", list), ("method", dict)):
        if col in row:
            try:
                _json_as(row[col], kind)
            except ValueError:
                return f"{col} {str(row[col])[:40]!r} is not a JSON {'list' if kind is list else 'object'}"
    if row.get("derived_from") is not None:
        try:
            refs = _json_as(row["derived_from"], list)
            if not all(isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(r.get("version"), int)
                       for r in refs):
                raise ValueError
        except ValueError:
            return f"derived_from {str(row['derived_from'])[:40]!r} is not a list of fact versions"
    for col in ("warn_after", "error_after"):
        if row.get(col) is not None:
            try:
                freshness.parse_duration(row[col] if isinstance(row[col], str) else "")
            except UsageError:
                return f"{col} {str(row[col])[:40]!r} is not a duration"
    return None


def _is_time(text: Any) -> bool:
    """Whether `clock.parse` takes `text` (its common case checked without building the UTC time: status reads
    100,000 rows)."""
    if not isinstance(text, str) or len(text) < 10 or not text[:4].isdigit() or text[4] != "-":
        return False
    try:
        year = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text).year
    except ValueError:
        return False
    if clock.FIRST_YEAR < year < clock.LAST_YEAR:
        return True
    try:
        clock.parse(text)  # a year at the edge, where the zone decides
    except UsageError:
        return False
    return True


def _is_finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def readable(found: Iterable[Mapping[str, Any]], samples: Mapping[Any, Sequence[Any]] | None = None,
             key: Callable[[Mapping[str, Any]], Any] = lambda r: r["fact_id"]) -> list[Any]:
    """The rows of `found` that can be read; each other one is named with `store.note_unreadable`."""
    out = []
    for row in found:
        why = unreadable(row, (samples or {}).get(key(row), ()))
        if why is None:
            out.append(row)
        else:
            note_unreadable(f"{row.get('fact_id', row.get('id'))}@{row.get('version')}", why)
    return out


def dangling(conn: Any, ids: Sequence[str] | None = None) -> list[str]:
    """Facts whose `current_version` names no stored version (each named with `store.note_unreadable`)."""
    sql = ("SELECT f.id, f.current_version, (SELECT max(v.version) FROM fact_version v WHERE v.fact_id = f.id) "
           "AS newest FROM fact f WHERE NOT EXISTS (SELECT 1 FROM fact_version v WHERE v.fact_id = f.id AND "
           "v.version = f.current_version)")
    params: dict[str, Any] = {}
    if ids is not None:
        clause, params = in_list("id", list(ids) or [""])
        sql += f" AND f.id IN {clause}"
    found = rows(conn, sql, params)
    for r in found:
        note_unreadable(f"{r['id']}@{r['current_version']}", f"current_version {r['current_version']} points past "
                        f"the stored versions (newest: {r['newest'] if r['newest'] is not None else 'none'})")
    return [r["id"] for r in found]


def _version_json(row: Mapping[str, Any], samples: list[float], conds: Iterable[tuple[str, str, str]]) -> FactData:
    ident = {k: v for k, v, kind in conds if kind == cond.IDENTITY}
    info = {k: v for k, v, kind in conds if kind == cond.INFO}
    ci = [row["ci_lo"], row["ci_hi"]] if row["ci_lo"] is not None else None
    return {
        "id": row["fact_id"],
        "version": row["version"],
        "subject": row["subject"],
        "metric": row["metric"],
        "unit": row["unit"],
        "direction": row["direction"],
        "value": row["value"],
        "spread": row["spread"],
        "n": row["n"],
        "samples": samples,
        "stats": _stats(row, ci),
        "conditions": {"identity": dict(sorted(ident.items())), "info": dict(sorted(info.items()))},
        "flags": json.loads(row["flags"]),
        "measured_at": row["measured_at"],
        "recorded_at": row["recorded_at"],
        "method": json.loads(row["method"]),
        "warn_after": row["warn_after"],
        "error_after": row["error_after"],
        "tolerance": row["tolerance"],
        "note": row["note"],
        "derived_from": json.loads(row["derived_from"]) if row["derived_from"] else None,
        "provenance": {"origin": row.get("origin"), "recorded_by": row.get("recorded_by"),
                       "source": row.get("source"), "registry_id": row.get("registry_id")},
    }


def _stats(row: Mapping[str, Any], ci: list[float] | None) -> Stats:
    """The stat columns as JSON data: the interval's two columns become `ci95`."""
    out: dict[str, object] = {c: row[c] for c in SUMMARY_COLUMNS}
    out["ci95"] = ci
    return cast(Stats, out)


# Every column but the raw tool output, which no reader shows.
_VERSION_COLS = tuple(c for c in VERSION_COLUMNS if c != "raw")


def _current_where(metric: str | None, subject: str | None, conds: Mapping[str, str] | None,
                   ids: Sequence[str] | None, prefix: str | None = None) -> tuple[str, dict[str, Any]]:
    """WHERE clause (over `v`, the current fact_version) and parameters for the list filters."""
    clauses, params = ["1 = 1"], {}
    if prefix:
        # `a/b` is the fact a/b and every id under it (a/b/c, not a/bc); `a/b/` only those under it.
        folder = prefix if prefix.endswith("/") else prefix + "/"
        escaped = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("(v.fact_id = :prefix OR v.fact_id LIKE :under ESCAPE '\\')")
        params["prefix"], params["under"] = prefix, escaped + "%"
    if metric:
        clauses.append("v.metric = :metric")
        params["metric"] = metric
    if subject:
        clauses.append("v.subject = :subject")
        params["subject"] = subject
    if ids is not None:
        sql, p = in_list("id", list(ids) or [""])
        clauses.append(f"v.fact_id IN {sql}")
        params.update(p)
    for i, (key, value) in enumerate((conds or {}).items()):
        clauses.append(f"EXISTS (SELECT 1 FROM condition c{i} WHERE c{i}.fact_id = v.fact_id AND "
                       f"c{i}.version = v.version AND c{i}.key = :ck{i} AND c{i}.value = :cv{i})")
        params[f"ck{i}"], params[f"cv{i}"] = key, value
    return " AND ".join(clauses), params


_CURRENT = "fact f JOIN fact_version v ON v.fact_id = f.id AND v.version = f.current_version"


def load_current(
    conn: Any,
    *,
    metric: str | None = None,
    subject: str | None = None,
    conds: Mapping[str, str] | None = None,
    ids: Sequence[str] | None = None,
    prefix: str | None = None,
) -> list[FactData]:
    """The current version of every matching fact as JSON data (without status), ordered by id (`prefix`: that
    fact and the ids under it).

    `conn` is a connection from `Registry.reader()` or `Registry.read()`."""
    where, params = _current_where(metric, subject, conds, ids, prefix)
    cols = ", ".join(f"v.{c}" for c in _VERSION_COLS)
    found = rows(conn, f"SELECT {cols}, f.superseded_by, f.ended_at FROM {_CURRENT} WHERE {where} ORDER BY f.id",
                 params)
    filtered = bool(metric or subject or conds or ids is not None or prefix)
    if ids is not None:
        dangling(conn, ids)
    elif not filtered and len(found) < int(rows(conn, "SELECT count(*) AS n FROM fact")[0]["n"]):
        dangling(conn)
    if not found:
        return []
    # Byte order on every backend (a PostgreSQL server's collation may sort `a-b` after `a/b`).
    found.sort(key=lambda r: r["fact_id"])
    keyed = f" AND v.fact_id IN (SELECT v.fact_id FROM {_CURRENT} WHERE {where})" if filtered else ""
    samples: dict[str, list[float]] = defaultdict(list)
    for r in rows(conn, f"SELECT s.fact_id, s.value FROM {_CURRENT} JOIN sample s ON s.fact_id = v.fact_id AND "
                        f"s.version = v.version WHERE 1 = 1{keyed} ORDER BY s.fact_id, s.idx", params):
        samples[r["fact_id"]].append(r["value"])
    condmap: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for r in rows(conn, f"SELECT c.fact_id, c.key, c.value, c.kind FROM {_CURRENT} JOIN condition c ON "
                        f"c.fact_id = v.fact_id AND c.version = v.version WHERE 1 = 1{keyed}", params):
        condmap[r["fact_id"]].append((r["key"], r["value"], r["kind"]))
    out: list[FactData] = []
    for row in readable(found, samples):
        data = _version_json(row, samples.get(row["fact_id"], []), condmap.get(row["fact_id"], []))
        data["superseded_by"] = row["superseded_by"]
        data["ended_at"] = row["ended_at"]
        out.append(data)
    return out


def last_verifications(conn: Any, ids: Sequence[str] | None = None) -> dict[str, LastVerification]:
    """The newest verification of each fact's current version."""
    sql = ("SELECT r.fact_id, r.verdict, r.verified_at, r.message, r.pk FROM verification r JOIN fact f ON "
           "r.fact_id = f.id AND r.fact_version = f.current_version")
    params: dict[str, Any] = {}
    if ids is not None:
        clause, params = in_list("id", list(ids) or [""])
        sql += f" WHERE r.fact_id IN {clause}"
    out: dict[str, LastVerification] = {}
    for r in rows(conn, sql + " ORDER BY r.pk", params):
        try:
            clock.parse(r["verified_at"] if isinstance(r["verified_at"], str) else "")
        except UsageError:
            note_unreadable(f"{r['fact_id']} verification {r['pk']}",
                            f"verified_at {str(r['verified_at'])[:40]!r} is not a time")
            continue
        out[r["fact_id"]] = cast(LastVerification, r)
    return out


def newest_environment(conn: Any, machines: Sequence[str]) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(machine, key) → (measured_at, value, fact id) of the newest current fact observing that build/driver key.

    Aggregated in SQL, so that checking one fact does not read every fact of its machine."""
    if not machines:
        return {}
    mclause, params = in_list("m", sorted(set(machines)))
    eclause, eparams = in_list("k", freshness.ENVIRONMENT_KEYS)
    params.update(eparams)
    found = rows(conn, f"SELECT m.value AS machine, c.key AS key, MAX(v.measured_at) AS at FROM {_CURRENT} "
                       "JOIN condition m ON m.fact_id = v.fact_id AND m.version = v.version AND m.key = 'machine' "
                       "AND m.kind = 'identity' JOIN condition c ON c.fact_id = v.fact_id AND c.version = v.version "
                       f"AND c.kind = 'identity' AND c.key IN {eclause} WHERE f.superseded_by IS NULL AND "
                       f"m.value IN {mclause} GROUP BY m.value, c.key", params)
    out: dict[tuple[str, str], tuple[str, str, str]] = {}
    for r in found:
        newest = rows(conn, f"SELECT v.fact_id AS id, c.value AS value FROM {_CURRENT} JOIN condition m ON "
                            "m.fact_id = v.fact_id AND m.version = v.version AND m.key = 'machine' AND m.value = :m "
                            "JOIN condition c ON c.fact_id = v.fact_id AND c.version = v.version AND c.key = :k "
                            "WHERE v.measured_at = :at AND f.superseded_by IS NULL ORDER BY v.fact_id LIMIT 1",
                      {"m": r["machine"], "k": r["key"], "at": r["at"]})
        if newest:
            out[(r["machine"], r["key"])] = (r["at"], newest[0]["value"], newest[0]["id"])
    return out


def observed_environment(conn: Any, machines: Sequence[str] | None = None
                         ) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(machine, key) → (verified_at, value, "verification of ID") of the newest verification that observed a
    build or driver key: a re-measurement that sees a new build makes the machine's older facts stale too."""
    where = " OR ".join(f"r.observed LIKE :k{i}" for i in range(len(freshness.ENVIRONMENT_KEYS)))
    params: dict[str, Any] = {f"k{i}": f'%"{k}"%' for i, k in enumerate(freshness.ENVIRONMENT_KEYS)}
    found = rows(conn, "SELECT r.fact_id, r.verified_at, r.observed, c.value AS machine FROM verification r "
                       "LEFT JOIN condition c ON c.fact_id = r.fact_id AND c.version = r.fact_version AND "
                       f"c.key = 'machine' AND c.kind = 'identity' WHERE ({where}) ORDER BY r.pk", params)
    out: dict[tuple[str, str], tuple[str, str, str]] = {}
    for r in found:
        try:
            observed = json.loads(r["observed"] or "{}")
        except ValueError:
            continue
        machine = observed.get("machine") or r["machine"]
        if not machine or (machines is not None and machine not in machines):
            continue
        for key in freshness.ENVIRONMENT_KEYS:
            if key in observed:
                seen = out.get((machine, key))
                if seen is None or r["verified_at"] >= seen[0]:
                    out[(machine, key)] = (r["verified_at"], str(observed[key]), f"a verification of {r['fact_id']}")
    return out


# A correction without a replacement (no new fact, no verification) is a retraction: `factreg retract`.
_RETRACTIONS = ("SELECT old_fact_id, old_version, cause, created_at FROM correction "
                "WHERE new_fact_id IS NULL AND verification IS NULL")


def retractions(conn: Any, current: Mapping[str, int]) -> dict[str, str]:
    """fact id → why it is retracted, for the facts of `current` (id → current version) whose current version
    was retracted (`factreg retract`); a version recorded after a retraction is not retracted."""
    out: dict[str, str] = {}
    if not _has_table(conn, "correction"):  # a registry read before its migrations ran (m003 adds it)
        return out
    for r in rows(conn, _RETRACTIONS + " ORDER BY pk"):
        if current.get(r["old_fact_id"]) == r["old_version"]:
            cause = " ".join((r["cause"] or "").split())
            out[r["old_fact_id"]] = f"retracted on {r['created_at'][:10]}" + (f": {cause}" if cause else "")
    return out


def _has_table(conn: Any, name: str) -> bool:
    """Whether table `name` exists, asked without an error (which would end a PostgreSQL transaction)."""
    if isinstance(conn, sqlite3.Connection) or conn.dialect.name == "sqlite":
        sql = "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = :name"
    else:
        sql = ("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = :name "
               "AND table_schema = current_schema()")
    return bool(rows(conn, sql, {"name": name})[0]["n"])


def list_facts(registry: Registry, config: Mapping[str, Any] | None = None, **filters: Any) -> list[FactData]:
    """Current facts matching the filters, with their status."""
    filtered = bool(filters.get("metric") or filters.get("subject") or filters.get("conds")
                    or filters.get("ids") is not None or filters.get("prefix"))
    with registry.reader() as conn:
        facts = load_current(conn, **filters)
        if filtered:
            ver = last_verifications(conn, [f["id"] for f in facts])
            # Staleness by condition change looks at every fact of the same machines, not just the listed ones.
            machines = [f["conditions"]["identity"]["machine"] for f in facts if "machine" in f["conditions"]["identity"]]
            newest = freshness.merge_newest(newest_environment(conn, machines),
                                            observed_environment(conn, machines))
            context: list[FactData] = []
            derived_sources = [d["id"] for f in facts for d in (f.get("derived_from") or [])]
            if derived_sources:
                context += load_current(conn, ids=derived_sources)
                ver.update(last_verifications(conn, derived_sources))
        else:
            ver = last_verifications(conn)
            context = []
            newest = freshness.merge_newest(freshness.newest_observations(facts), observed_environment(conn))
        shifted = series.shifts(conn, facts)
        retracted = retractions(conn, {f["id"]: f["version"] for f in facts})
    invalid = freshness.invalidations(facts, ver, newest=newest)
    for fid, why in freshness.derived_invalidations([*facts, *context], ver).items():
        invalid.setdefault(fid, why)
    for fact in facts:
        fact["status"], fact["status_reason"] = freshness.status_of(
            fact, ver.get(fact["id"]), config, invalidated_by=invalid.get(fact["id"]), shifted_by=shifted.get(fact["id"]),
            retracted=retracted.get(fact["id"]))
        behind = freshness.verification_behind(fact["status"], ver.get(fact["id"]))
        if behind is not None:
            fact["verification"] = behind
    return facts


def get(registry: Registry, fact_id: str, version: int | None = None,
        config: Mapping[str, Any] | None = None) -> FactData:
    """One fact (its current version, or `version`) with its status; NotFound when absent."""
    check_id(fact_id)
    with collect_unreadable() as skipped:
        if version is None:
            found = list_facts(registry, config, ids=[fact_id])
        else:
            found = [v for v in history(registry, fact_id) if v["version"] == version]
    for key, why in skipped.items():
        if key.startswith(f"{fact_id}@") and (version is None or key == f"{fact_id}@{version}"):
            raise ConfigError(f"fact {key} cannot be read: {why}")
        note_unreadable(key, why)
    if not found:
        raise NotFound(f"no fact {fact_id!r} in the registry" if version is None
                       else f"fact {fact_id!r} has no version {version}")
    return found[0]


def history(registry: Registry, fact_id: str) -> list[FactData]:
    """Every version of a fact in measured order (oldest measurement first), each with its verifications."""
    check_id(fact_id)
    p = {"id": fact_id}
    with registry.reader() as conn:
        fact = rows(conn, "SELECT current_version, superseded_by FROM fact WHERE id = :id", p)
        if not fact:
            raise NotFound(f"no fact {fact_id!r} in the registry")
        found = rows(conn, f"SELECT {', '.join(_VERSION_COLS)} FROM fact_version WHERE fact_id = :id ORDER BY version", p)
        samples: dict[int, list[float]] = defaultdict(list)
        for r in rows(conn, "SELECT version, value FROM sample WHERE fact_id = :id ORDER BY version, idx", p):
            samples[r["version"]].append(r["value"])
        conds: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
        for r in rows(conn, "SELECT version, key, value, kind FROM condition WHERE fact_id = :id", p):
            conds[r["version"]].append((r["key"], r["value"], r["kind"]))
        verifs: dict[int, list[VerificationData]] = defaultdict(list)
        for r in rows(conn, "SELECT * FROM verification WHERE fact_id = :id ORDER BY pk", p):
            verifs[r["fact_version"]].append(verification_json(r))
        corrected = corrected_versions(conn, [fact_id])
    current = fact[0]["current_version"]
    if current not in {r["version"] for r in found}:
        note_unreadable(f"{fact_id}@{current}", f"current_version {current} points past the stored versions")
    found.sort(key=lambda r: _currency(r["version"], r["measured_at"], r["recorded_at"]))  # measured order
    out = []
    for row in readable(found, samples, key=lambda r: r["version"]):
        data = _version_json(row, samples[row["version"]], conds[row["version"]])
        data["current"] = row["version"] == current
        data["superseded_by"] = fact[0]["superseded_by"] if data["current"] else None
        data["verifications"] = verifs[row["version"]]
        fix = corrected.get((fact_id, row["version"]))
        if fix is not None:
            data["corrected"] = {"by_version": fix["new_version"], "correction": fix["pk"], "note": fix["note_path"],
                                 "date": str(fix["created_at"])[:10]}
        out.append(data)
    return out


def verification_json(row: Mapping[str, Any]) -> VerificationData:
    """A verification row as JSON data (raw output left out)."""
    return {
        "pk": row["pk"], "fact_id": row["fact_id"], "fact_version": row["fact_version"],
        "verified_at": row["verified_at"], "verdict": row["verdict"], "method_kind": row["method_kind"],
        "hostname": row["hostname"], "value": row["value"], "spread": row["spread"], "n": row["n"],
        "samples": _loads(row["samples"], []), "p_value": row["p_value"], "rel_diff": row["rel_diff"],
        "needed_n": row["needed_n"], "observed": _loads(row["observed"], {}), "diff": _loads(row["diff"], {}),
        "message": row["message"],
    }


def _loads(text: Any, default: Any) -> Any:
    """A verification's JSON column, or `default` when what is stored is not JSON of the same kind."""
    try:
        return _json_as(text, type(default))
    except ValueError:
        return default


def count(registry: Registry) -> int:
    """How many facts the registry holds."""
    return int(registry.query("SELECT count(*) AS n FROM fact")[0]["n"])


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

    FACT = __getattr__("FACT")

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
