"""Retention of raw output: summaries forever, the raw per-request events of the last N runs of each fact.

A **run** of a fact is one of its versions (a recording) or one of its verifications (a re-run). Each may carry
`raw`: the tool's raw output — for a probe or a sweep, every request's event times, token counts and server
timings (about 1 KB per request, and the same run's `raw` is stored once per fact it recorded: a 1,000-request
probe that records 8 metrics writes about 8 MB, a verification of those 8 facts as much again).

Kept forever, because verdicts, history, notes and reports read them: every value, spread, n, the statistics of
a version (mean, median, stdev, min, max, IQR, CV, 95% interval, a percentile's interval), flags, conditions,
methods, messages, and the **samples** (one number per request and metric: what the quantile test, Welch's test,
`changes` and the charts read; 8 bytes a number).

Kept for the newest `[retention] raw_runs` runs of each fact (default 5) **and for its current version** (the
evidence of what the fact claims now): `raw`. An older run's `raw` is replaced by a stub,
`{"pruned": {"at": TIME, "bytes": N}}`, so an export still says that there was raw output and how much. Runs are
ordered by when they were made (a version's `recorded_at`, a verification's `verified_at`; at the same time a
version before a verification, then by number).

Pruning happens in the transaction that records a new run (`facts.record_many`, `verify`), for the facts it
wrote, so the registry never holds more than that; and on demand for all facts with `factreg prune
[--dry-run]` (after lowering `raw_runs`, or for a registry written before retention). On SQLite the freed pages
are reused by later writes (the file stops growing); `VACUUM` gives them back to the file system.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factreg import clock
from factreg.errors import UsageError
from factreg.registry.store import in_list, rows

DEFAULT_RAW_RUNS = 5
MAX_RAW_RUNS = 1_000_000
STUB_PATTERN = '{"pruned":%'  # what a stub's text starts with (json.dumps of {"pruned": ...})


@dataclass
class Pruned:
    """What a pruning dropped (or, in a dry run, would drop)."""

    keep: int
    runs: int = 0  # runs whose raw output was dropped
    bytes: int = 0  # bytes of raw output dropped
    kept_runs: int = 0  # runs whose raw output is kept
    kept_bytes: int = 0
    facts: dict[str, dict[str, int]] = field(default_factory=dict)  # id → {"runs", "bytes"} dropped

    def as_json(self) -> dict[str, Any]:
        return {"keep": self.keep, "pruned_runs": self.runs, "pruned_bytes": self.bytes,
                "kept_runs": self.kept_runs, "kept_bytes": self.kept_bytes, "facts": self.facts}


def raw_runs(settings: Any) -> int:
    """`[retention] raw_runs` of the config (checked when the config is read), else DEFAULT_RAW_RUNS."""
    value = settings.get("retention.raw_runs", DEFAULT_RAW_RUNS) if settings is not None else DEFAULT_RAW_RUNS
    return check_keep(value)


def check_keep(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RAW_RUNS:
        raise UsageError(f"raw runs to keep must be a whole number from 0 to {MAX_RAW_RUNS:,}, got {value!r}")
    return value


def _size(conn: Any) -> str:
    """The SQL for the byte length of `raw` on this database."""
    name = getattr(getattr(conn, "dialect", None), "name", "sqlite")
    return "octet_length(raw)" if name == "postgresql" else "length(CAST(raw AS BLOB))"


def _runs(conn: Any, ids: Sequence[str] | None) -> dict[str, list[tuple[Any, ...]]]:
    """fact id → its runs that still hold raw output: (sort key, table, key, bytes, current)."""
    size = _size(conn)
    clause, params = ("", {}) if ids is None else in_list("id", list(ids))
    where = "" if ids is None else f" AND v.fact_id IN {clause}"
    out: dict[str, list[tuple[Any, ...]]] = {}
    for r in rows(conn, f"SELECT v.fact_id, v.version, v.recorded_at, {size.replace('raw', 'v.raw')} AS size, "
                        "f.current_version FROM fact_version v JOIN fact f ON f.id = v.fact_id "
                        f"WHERE v.raw IS NOT NULL AND v.raw NOT LIKE :stub{where}", {**params, "stub": STUB_PATTERN}):
        key = (_when(r["recorded_at"]), 0, int(r["version"]))
        out.setdefault(r["fact_id"], []).append(
            (key, "fact_version", (r["fact_id"], r["version"]), int(r["size"] or 0),
             r["version"] == r["current_version"]))
    where = "" if ids is None else f" AND fact_id IN {clause}"
    for r in rows(conn, f"SELECT pk, fact_id, verified_at, {size} AS size FROM verification "
                        f"WHERE raw IS NOT NULL AND raw NOT LIKE :stub{where}", {**params, "stub": STUB_PATTERN}):
        key = (_when(r["verified_at"]), 1, int(r["pk"]))
        out.setdefault(r["fact_id"], []).append((key, "verification", r["pk"], int(r["size"] or 0), False))
    return out


def _when(text: Any) -> str:
    """A run's time as a sortable ISO string (a time that cannot be read sorts first: pruned first)."""
    try:
        return clock.iso(clock.parse(str(text), "time"))
    except Exception:  # noqa: BLE001 - an unreadable time must not stop the pruning of the rest
        return ""


def stub(size: int) -> str:
    return json.dumps({"pruned": {"at": clock.iso(), "bytes": size}})


def prune(conn: Any, keep: int, ids: Sequence[str] | None = None, *, dry_run: bool = False) -> Pruned:
    """Drop the raw output of every run but the newest `keep` (and the current version) of each fact of `ids`
    (None: every fact), in the caller's transaction. Nothing else of a run is touched."""
    keep = check_keep(keep)
    result = Pruned(keep)
    found: dict[str, list[tuple[Any, ...]]] = {}
    if ids is None:
        found = _runs(conn, None)
    else:
        wanted = sorted(set(ids))
        for i in range(0, len(wanted), 500):
            found.update(_runs(conn, wanted[i:i + 500]))
    versions: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    for fact_id in sorted(found):
        runs = sorted(found[fact_id], key=lambda run: run[0], reverse=True)
        for rank, (_key, table, key, size, current) in enumerate(runs):
            if rank < keep or current:
                result.kept_runs += 1
                result.kept_bytes += size
                continue
            result.runs += 1
            result.bytes += size
            mine = result.facts.setdefault(fact_id, {"runs": 0, "bytes": 0})
            mine["runs"] += 1
            mine["bytes"] += size
            if table == "fact_version":
                versions.append({"raw": stub(size), "fid": key[0], "ver": key[1]})
            else:
                checks.append({"raw": stub(size), "pk": key})
    if not dry_run:
        _update(conn, "UPDATE fact_version SET raw = :raw WHERE fact_id = :fid AND version = :ver", versions)
        _update(conn, "UPDATE verification SET raw = :raw WHERE pk = :pk", checks)
    return result


def _update(conn: Any, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
    if not params:
        return
    from sqlalchemy import text

    conn.execute(text(sql), list(params))


def prune_registry(registry: Any, keep: int, *, dry_run: bool = False) -> Pruned:
    """`factreg prune`: every fact, in one write transaction (a dry run only reads)."""
    if dry_run:
        with registry.read() as conn:
            return prune(conn, keep, dry_run=True)
    result: Pruned = registry.write_retrying(lambda conn: prune(conn, keep))
    return result
