"""Reading facts back as data: the current versions with their status, one fact, its history, the
verifications, what the machines observed, retractions and corrections."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from factreg import clock
from factreg.errors import ConfigError, NotFound, UsageError
from factreg.registry import conditions as cond
from factreg.registry import freshness, series
from factreg.registry.facts.integrity import dangling, json_as, readable
from factreg.registry.ids import check_id
from factreg.registry.store import Registry, in_list, rows
from factreg.registry.types import (
    SUMMARY_COLUMNS,
    VERSION_COLUMNS,
    FactData,
    LastVerification,
    Stats,
    VerificationData,
)
from factreg.registry.unreadable import collect_unreadable, note_unreadable


def version_json(row: Mapping[str, Any], samples: list[float], conds: Iterable[tuple[str, str, str]]) -> FactData:
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


CURRENT = "fact f JOIN fact_version v ON v.fact_id = f.id AND v.version = f.current_version"


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
    found = rows(conn, f"SELECT {cols}, f.superseded_by, f.ended_at FROM {CURRENT} WHERE {where} ORDER BY f.id",
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
    keyed = f" AND v.fact_id IN (SELECT v.fact_id FROM {CURRENT} WHERE {where})" if filtered else ""
    samples: dict[str, list[float]] = defaultdict(list)
    for r in rows(conn, f"SELECT s.fact_id, s.value FROM {CURRENT} JOIN sample s ON s.fact_id = v.fact_id AND "
                        f"s.version = v.version WHERE 1 = 1{keyed} ORDER BY s.fact_id, s.idx", params):
        samples[r["fact_id"]].append(r["value"])
    condmap: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for r in rows(conn, f"SELECT c.fact_id, c.key, c.value, c.kind FROM {CURRENT} JOIN condition c ON "
                        f"c.fact_id = v.fact_id AND c.version = v.version WHERE 1 = 1{keyed}", params):
        condmap[r["fact_id"]].append((r["key"], r["value"], r["kind"]))
    out: list[FactData] = []
    for row in readable(found, samples):
        data = version_json(row, samples.get(row["fact_id"], []), condmap.get(row["fact_id"], []))
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
    found = rows(conn, f"SELECT m.value AS machine, c.key AS key, MAX(v.measured_at) AS at FROM {CURRENT} "
                       "JOIN condition m ON m.fact_id = v.fact_id AND m.version = v.version AND m.key = 'machine' "
                       "AND m.kind = 'identity' JOIN condition c ON c.fact_id = v.fact_id AND c.version = v.version "
                       f"AND c.kind = 'identity' AND c.key IN {eclause} WHERE f.superseded_by IS NULL AND "
                       f"m.value IN {mclause} GROUP BY m.value, c.key", params)
    out: dict[tuple[str, str], tuple[str, str, str]] = {}
    for r in found:
        newest = rows(conn, f"SELECT v.fact_id AS id, c.value AS value FROM {CURRENT} JOIN condition m ON "
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


def list_first(registry: Registry, config: Mapping[str, Any] | None, limit: int,
               pick: Callable[[list[FactData]], list[FactData]] | None = None, descending: bool = False,
               **filters: Any) -> list[FactData]:
    """The first `limit` facts of `list_facts(registry, config, **filters)` in id order (`descending`: from the
    last id), after `pick` (a filter over facts with their status, e.g. by status): the same facts and data, but
    only the candidates are read and judged, a batch of ids at a time, until `limit` facts are picked."""
    filtered = bool(filters.get("metric") or filters.get("subject") or filters.get("conds")
                    or filters.get("ids") is not None or filters.get("prefix"))
    with registry.reader() as conn:
        where, params = _current_where(filters.get("metric"), filters.get("subject"), filters.get("conds"),
                                       filters.get("ids"), filters.get("prefix"))
        ids = sorted({r["fact_id"] for r in rows(conn, f"SELECT v.fact_id FROM {CURRENT} WHERE {where}", params)},
                     reverse=descending)
        if filters.get("ids") is not None:
            dangling(conn, filters["ids"])
        elif not filtered:
            dangling(conn)  # as `load_current` notes them when it reads every fact
    out: list[FactData] = []
    # Without `pick` a batch of `limit` ids is enough unless one cannot be read; with it, a larger one.
    size = max(limit, 1) if pick is None else max(limit, 100)
    for batch in chunks(ids, size):
        if len(out) >= limit:
            break
        found = sorted(list_facts(registry, config, ids=list(batch)), key=lambda f: f["id"], reverse=descending)
        out += pick(found) if pick is not None else found
    return out[:limit]


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
    found.sort(key=lambda r: currency(r["version"], r["measured_at"], r["recorded_at"]))  # measured order
    out = []
    for row in readable(found, samples, key=lambda r: r["version"]):
        data = version_json(row, samples[row["version"]], conds[row["version"]])
        data["current"] = row["version"] == current
        data["superseded_by"] = fact[0]["superseded_by"] if data["current"] else None
        data["verifications"] = verifs[row["version"]]
        fix = corrected.get((fact_id, row["version"]))
        if fix is not None:
            data["corrected"] = fix.as_json()
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
        return json_as(text, type(default))
    except ValueError:
        return default


def count(registry: Registry) -> int:
    """How many facts the registry holds."""
    return int(registry.query("SELECT count(*) AS n FROM fact")[0]["n"])


def chunks(items: Sequence[Any], size: int = 500) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def currency(version: int, measured_at: str, recorded_at: str) -> tuple[Any, ...]:
    """How versions rank for "current": the latest measured, ties to the latest recorded (then the last written)."""
    return (clock.parse(measured_at, "measured_at"), clock.parse(recorded_at, "recorded_at"), version)


@dataclass(frozen=True)
class Corrected:
    """A version corrected by a later version of the same id (`correct`'s default): the correction row's number, the
    version that holds now, the note and when."""

    pk: int
    new_version: int
    note_path: str | None
    created_at: str

    def as_json(self) -> dict[str, Any]:
        """As `history` shows it on the corrected version."""
        return {"by_version": self.new_version, "correction": self.pk, "note": self.note_path,
                "date": self.created_at[:10]}


def corrected_versions(conn: Any, ids: Sequence[str] | None = None) -> dict[tuple[str, int], Corrected]:
    """(id, version) → its correction for the versions corrected by a new version of the same id (`correct`'s
    default); such a version is never current again."""
    if not _has_table(conn, "correction"):
        return {}
    sql = ("SELECT pk, old_fact_id, old_version, new_version, note_path, created_at FROM correction "
           "WHERE new_fact_id = old_fact_id")
    out: dict[tuple[str, int], Corrected] = {}
    parts = [None] if ids is None else list(chunks(sorted(set(ids))))
    for part in parts:
        params: dict[str, Any] = {}
        where = ""
        if part is not None:
            clause, params = in_list("id", list(part))
            where = f" AND old_fact_id IN {clause}"
        for r in rows(conn, sql + where + " ORDER BY pk", params):
            out[(r["old_fact_id"], int(r["old_version"]))] = Corrected(
                pk=r["pk"], new_version=r["new_version"], note_path=r["note_path"], created_at=str(r["created_at"]))
    return out
