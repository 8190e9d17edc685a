"""The series of a fact: its versions and its verifications' observed values, in time order, and what the change
detector (`registry/changes.py`) finds in it.

A point is a version (at its `measured_at`, with its samples) or a verification that measured a value (at its
`verified_at`, with its samples; failed verifications measured nothing and are left out). Only versions in the
current version's metric and unit take part. A point's conditions are its identity conditions: a version's own;
for a verification, those of the version it verified with every identity key it observed in their place (a
verifier observes only some keys; the others are taken as unchanged). What a run records about itself in its
`observed` conditions — `uptime_s`, the machine's state, the control run (`ALWAYS_INFO`), or any key the verified
version keeps as info — is info, left out, and never named as a cause (`conditions.observed_identity`).

`shift` says whether a fact is `shifted`: a change point lies after the point of its recorded (current) value, and
that value lies outside the interval of the latest level. `shifts` finds the shifted facts among many at the cost
of two narrow queries, then reads the series of only the facts with enough points after their recorded value.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factreg.errors import NotFound
from factreg.fmt import value as show_value
from factreg.registry import changes
from factreg.registry import conditions as cond
from factreg.registry.changes import Change, Point
from factreg.registry.ids import check_id
from factreg.registry.store import in_list, rows, tuples
from factreg.stats import changepoints


@dataclass(frozen=True)
class Series:
    """A fact's points in time order, and which of them holds its recorded (current) value."""

    id: str
    metric: str
    unit: str
    version: int  # the current version
    value: float  # the recorded value: the current version's
    measured_at: str
    points: list[Point]
    sources: list[str]  # per point: "v3" or "verification 12"
    current: int  # index of the current version's point

    def detect(self, min_segment: int = changepoints.MIN_SEGMENT, alpha: float = changepoints.ALPHA) -> list[Change]:
        """The change points of this series (see `registry/changes.py`)."""
        return changes.detect(self.points, min_segment=min_segment, alpha=alpha)


def _chunks(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def load(conn: Any, ids: Sequence[str], *, samples: bool = True) -> dict[str, Series]:
    """The series of each fact of `ids` that exists (id → Series); `samples=False` skips reading samples.

    `conn` is a connection from `Registry.reader()` or `Registry.read()`. Up to `_WHOLE_TABLES` ids are read through
    IN lists of 500; more are read in one pass over each table (no per-fact query, no sort by an index), keeping the
    rows of the facts asked for."""
    wanted = sorted(set(ids))
    if len(wanted) > _WHOLE_TABLES:
        return _load_part(conn, None, samples, set(wanted))
    out: dict[str, Series] = {}
    for part in _chunks(wanted):
        out.update(_load_part(conn, part, samples, None))
    return out


_WHOLE_TABLES = 2_000


def load_range(conn: Any, ids: Sequence[str]) -> dict[str, Series]:
    """The series (without samples) of the facts of `ids`, read as one range of ids per table, from the first id
    to the last in their order, keeping the rows of `ids`: what `changes` reads a part at a time. Each table is read
    along its index on the fact's id, with no IN list and no sort. SQLite only: the range is in the order of code
    points, which a PostgreSQL collation need not follow."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    return _load_part(conn, None, False, set(wanted), (wanted[0], wanted[-1]))


def _load_part(conn: Any, ids: Sequence[str] | None, with_samples: bool, keep: set[str] | None,
               bounds: tuple[str, str] | None = None) -> dict[str, Series]:
    """The series of `ids` (IN lists), or, when `ids` is None, of the facts of `keep` read in one pass per table
    (with `bounds`, over the facts from its first id to its last only).

    A million points are read at once for `changes` over a large registry: rows come as tuples, and a point's
    conditions (the same for most points of a fact: one version, the same observed text) are built once."""
    params: dict[str, Any] = {}
    fact_in = other_in = ""
    by_pk = "pk"
    if ids is not None:
        clause, params = in_list("id", list(ids))
        fact_in, other_in = f" WHERE id IN {clause}", f" AND fact_id IN {clause}"
    elif bounds is not None:
        params = {"lo": bounds[0], "hi": bounds[1]}
        fact_in, other_in = " WHERE id BETWEEN :lo AND :hi", " AND fact_id BETWEEN :lo AND :hi"
        by_pk = "fact_id, pk"  # along the fact's index: each fact's verifications still in the order written

    def wanted(fid: str) -> bool:
        return keep is None or fid in keep

    current = {fid: cur for fid, cur in tuples(conn, f"SELECT id, current_version FROM fact{fact_in}", params)
               if wanted(fid)}
    versions: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for r in tuples(conn, "SELECT fact_id, version, metric, unit, value, measured_at FROM fact_version "
                          f"WHERE 1 = 1{other_in} ORDER BY fact_id, version", params):
        if r[0] in current:
            versions[r[0]].append(r)
    conds: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    info_keys: dict[tuple[str, int], set[str]] = defaultdict(set)
    for fid, ver, kind, key, val in tuples(conn, "SELECT fact_id, version, kind, key, value FROM condition "
                                                 f"WHERE 1 = 1{other_in}", params):
        if fid in current:
            if kind == cond.IDENTITY:
                conds[(fid, ver)][key] = val
            else:
                info_keys[(fid, ver)].add(key)
    sample: dict[tuple[str, int], list[float]] = defaultdict(list)
    if with_samples:
        for fid, ver, val in tuples(conn, f"SELECT fact_id, version, value FROM sample WHERE 1 = 1{other_in} "
                                          "ORDER BY fact_id, version, idx", params):
            if fid in current:
                sample[(fid, ver)].append(val)
    checks: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    cols = "pk, fact_id, fact_version, verified_at, value, observed" + (", samples" if with_samples else "")
    for r in tuples(conn, f"SELECT {cols} FROM verification WHERE value IS NOT NULL{other_in} ORDER BY {by_pk}",
                    params):
        if r[1] in current:
            checks[r[1]].append(r)
    seen_before: dict[str, dict[str, Any]] = {}  # observed conditions repeat from run to run: parse each text once
    out: dict[str, Series] = {}
    for fid, cur in current.items():
        vs = versions.get(fid, [])
        top = next((v for v in vs if v[1] == cur), None)
        if top is None:
            continue
        keyed: list[tuple[str, int, int, Point, str]] = []  # (time, version 0 / verification 1, number, ...)
        same = {v[1] for v in vs if v[2] == top[2] and v[3] == top[3]}
        for _fid, ver, _metric, _unit, val, measured_at in vs:
            if ver not in same:
                continue
            point = Point(measured_at, float(val), sample.get((fid, ver)) if with_samples else None,
                          dict(sorted(conds.get((fid, ver), {}).items())))
            keyed.append((measured_at, 0, ver, point, f"v{ver}"))
        merged: dict[tuple[int, str], dict[str, str]] = {}
        for c in checks.get(fid, []):
            pk, _fid, ver, verified_at, val, observed = c[:6]
            if ver not in same:
                continue
            conditions = merged.get((ver, observed))
            if conditions is None:
                seen = seen_before.get(observed)
                if seen is None:
                    seen = seen_before[observed] = _json(observed, {})
                conditions = merged[(ver, observed)] = dict(sorted(
                    cond.observed_identity(conds.get((fid, ver), {}), info_keys.get((fid, ver), set()), seen).items()))
            got = _json(c[6], []) if with_samples else None
            point = Point(verified_at, float(val), [float(x) for x in got] if got else None, conditions)
            keyed.append((verified_at, 1, pk, point, f"verification {pk}"))
        keyed.sort()  # (time, kind, number) is unique: points themselves are never compared
        _fid, _ver, metric, unit, value, measured_at = top
        out[fid] = Series(
            id=fid, metric=metric, unit=unit, version=cur, value=float(value),
            measured_at=measured_at, points=[k[3] for k in keyed], sources=[k[4] for k in keyed],
            current=next(i for i, k in enumerate(keyed) if k[1] == 0 and k[2] == cur),
        )
    return out


def _json(text: str | None, default: Any) -> Any:
    try:
        got = json.loads(text) if text else default
    except ValueError:
        return default
    return got if isinstance(got, type(default)) else default


def of(registry: Any, fact_id: str) -> Series:
    """One fact's series; NotFound when the fact is not in the registry."""
    check_id(fact_id)
    with registry.reader() as conn:
        found = load(conn, [fact_id])
    if fact_id not in found:
        raise NotFound(f"no fact {fact_id!r} in the registry")
    return found[fact_id]


def shift(series: Series, found: Sequence[Change]) -> str | None:
    """Why the fact is `shifted` — its latest level began after its recorded value and does not contain it — or None.

    `found` are the change points of `series`."""
    if not found:
        return None
    last = found[-1]
    if series.current >= last.index:
        return None  # the recorded value belongs to the latest level
    level = last.after
    if level.ci_low <= series.value <= level.ci_high:
        return None
    return (f"its level {last.describe()}; the recorded {show_value(series.value, None, series.unit)} "
            f"({series.sources[series.current]}, {series.measured_at[:10]}) is from before it")


def shifts(conn: Any, current: Sequence[Mapping[str, Any]],
           min_segment: int = changepoints.MIN_SEGMENT) -> dict[str, str]:
    """fact id → why it is shifted, for the facts of `current` (current versions: id, version, measured_at) that are.

    Only facts with at least `min_segment` valued verifications, or versions measured after their current one, can
    have a level after their recorded value; their series alone are read and searched."""
    if not current:
        return {}
    counts: dict[str, int] = defaultdict(int)
    for r in rows(conn, "SELECT fact_id, COUNT(*) AS n FROM verification WHERE value IS NOT NULL GROUP BY fact_id "
                        "HAVING COUNT(*) >= :m", {"m": min_segment}):
        counts[r["fact_id"]] += r["n"]
    if any(f["version"] > 1 for f in current):
        for r in rows(conn, "SELECT v.fact_id, COUNT(*) AS n FROM fact f JOIN fact_version c ON c.fact_id = f.id AND "
                            "c.version = f.current_version JOIN fact_version v ON v.fact_id = f.id AND "
                            "v.measured_at > c.measured_at WHERE f.current_version > 1 GROUP BY v.fact_id"):
            counts[r["fact_id"]] += r["n"]
    versions = {f["id"]: f["version"] for f in current}  # versions are numbered 1…current
    candidates = [fid for fid, n in counts.items()
                  if n >= min_segment and versions.get(fid, 0) + n >= 2 * min_segment]
    if not candidates:
        return {}
    out: dict[str, str] = {}
    for fid, s in load(conn, candidates, samples=False).items():
        if len(s.points) - 1 - s.current < min_segment:
            continue
        why = shift(s, s.detect(min_segment=min_segment))
        if why:
            out[fid] = why
    return out


def with_history(conn: Any, min_points: int) -> list[str]:
    """Ids of the facts whose series has at least `min_points` points (counted in SQL, read nothing else)."""
    counts: dict[str, int] = defaultdict(int)
    for sql in ("SELECT fact_id, COUNT(*) AS n FROM fact_version GROUP BY fact_id",
                "SELECT fact_id, COUNT(*) AS n FROM verification WHERE value IS NOT NULL GROUP BY fact_id"):
        for r in rows(conn, sql):
            counts[r["fact_id"]] += r["n"]
    return sorted(fid for fid, n in counts.items() if n >= min_points)


def change_data(s: Series, c: Change) -> dict[str, Any]:
    """One change of a fact as JSON data: what `factreg changes --json` prints per change."""
    return {
        "id": s.id,
        "metric": s.metric,
        "unit": s.unit,
        "at": c.at_after,
        "between": [c.at_before, c.at_after],
        "points": [s.sources[c.index - 1], s.sources[c.index]],
        "before": c.before.__dict__.copy(),
        "after": c.after.__dict__.copy(),
        "change": c.relative_change,
        "p_value": c.p_value,
        "conditions_changed": {k: list(v) for k, v in c.conditions_changed.items()},
        "summary": c.describe(),
    }


def find_changes(registry: Any, ids: Sequence[str] = (), since: str | None = None,
                 min_segment: int = changepoints.MIN_SEGMENT, alpha: float = changepoints.ALPHA) -> list[dict[str, Any]]:
    """The change points of the named facts (default: every fact with enough points), oldest first per fact.

    `since` (ISO-8601) keeps the changes whose new level began at or after it; detection always reads the whole
    series, so a level's median and interval use every point of it."""
    from factreg import clock

    changepoints.change_points([], min_segment=min_segment, alpha=alpha)  # validate the parameters first
    start = clock.iso(clock.since(since, "--since")) if since else None
    wanted = [check_id(i) for i in dict.fromkeys(ids)]
    out: list[dict[str, Any]] = []
    missing: list[str] = []
    # every fact with a history, on SQLite: each part read as a range of ids (its text order is the code points')
    ranged = not wanted and registry.is_sqlite
    with registry.reader() as conn:  # one snapshot; the series read and judged _STREAM facts at a time, then dropped
        for part in _chunks(sorted(wanted or with_history(conn, 2 * min_segment)), _STREAM):
            found = load_range(conn, part) if ranged else load(conn, part, samples=False)
            missing += [i for i in part if i not in found]
            for fid in part if not missing else ():
                s = found[fid]
                for c in s.detect(min_segment=min_segment, alpha=alpha):
                    if start is None or clock.iso(clock.parse(c.at_after)) >= start:
                        out.append(change_data(s, c))
    if missing:
        raise NotFound(f"no fact {sorted(missing, key=wanted.index)[0]!r} in the registry")
    return out


# Facts whose series `find_changes` holds at once: 10,000 facts of 100 points each are read in ten parts (a part's
# rows are fetched at once: 2,000 facts a part peaked at 283 MB, 1,000 at 182 MB, for the same CPU).
_STREAM = 1_000
