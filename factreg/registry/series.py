"""The series of a fact: its versions and its verifications' observed values, in time order, and what the change
detector (`registry/changes.py`) finds in it.

A point is a version (at its `measured_at`, with its samples) or a verification that measured a value (at its
`verified_at`, with its samples; failed verifications measured nothing and are left out). Only versions in the
current version's metric and unit take part. A point's conditions are its identity conditions: a version's own;
for a verification, those of the version it verified with every key it observed in their place (a verifier
observes only some keys; the others are taken as unchanged). Info conditions (uptime, notes, timestamps) vary from
run to run and are never named as a cause.

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
from factreg.registry.changes import Change, Point
from factreg.registry.ids import check_id
from factreg.registry.metrics import ALWAYS_INFO
from factreg.registry.store import in_list, rows


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

    def detect(self, min_segment: int = changes.MIN_SEGMENT, alpha: float = changes.ALPHA) -> list[Change]:
        """The change points of this series (see `registry/changes.py`)."""
        return changes.detect(self.points, min_segment=min_segment, alpha=alpha)


def _chunks(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def load(conn: Any, ids: Sequence[str], *, samples: bool = True) -> dict[str, Series]:
    """The series of each fact of `ids` that exists (id → Series); `samples=False` skips reading samples.

    `conn` is a connection from `Registry.reader()` or `Registry.read()`."""
    out: dict[str, Series] = {}
    for part in _chunks(sorted(set(ids))):
        out.update(_load_part(conn, part, samples))
    return out


def _load_part(conn: Any, ids: Sequence[str], with_samples: bool) -> dict[str, Series]:
    clause, params = in_list("id", list(ids))
    current = {r["id"]: r["current_version"] for r in
               rows(conn, f"SELECT id, current_version FROM fact WHERE id IN {clause}", params)}
    versions: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows(conn, "SELECT fact_id, version, metric, unit, value, measured_at FROM fact_version "
                        f"WHERE fact_id IN {clause} ORDER BY fact_id, version", params):
        versions[r["fact_id"]].append(r)
    conds: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    for r in rows(conn, f"SELECT fact_id, version, key, value FROM condition WHERE fact_id IN {clause} "
                        "AND kind = 'identity'", params):
        conds[(r["fact_id"], r["version"])][r["key"]] = r["value"]
    sample: dict[tuple[str, int], list[float]] = defaultdict(list)
    if with_samples:
        for r in rows(conn, f"SELECT fact_id, version, value FROM sample WHERE fact_id IN {clause} "
                            "ORDER BY fact_id, version, idx", params):
            sample[(r["fact_id"], r["version"])].append(r["value"])
    checks: dict[str, list[dict[str, Any]]] = defaultdict(list)
    cols = "pk, fact_id, fact_version, verified_at, value, observed" + (", samples" if with_samples else "")
    for r in rows(conn, f"SELECT {cols} FROM verification WHERE fact_id IN {clause} AND value IS NOT NULL "
                        "ORDER BY pk", params):
        checks[r["fact_id"]].append(r)
    seen_before: dict[str, dict[str, str]] = {}  # observed conditions repeat from run to run: parse each text once
    out: dict[str, Series] = {}
    for fid, cur in current.items():
        vs = versions.get(fid, [])
        top = next((v for v in vs if v["version"] == cur), None)
        if top is None:
            continue
        keyed: list[tuple[tuple[str, int, int], Point, str]] = []
        same = {v["version"] for v in vs if v["metric"] == top["metric"] and v["unit"] == top["unit"]}
        for v in vs:
            if v["version"] not in same:
                continue
            point = Point(v["measured_at"], float(v["value"]), sample.get((fid, v["version"])) if with_samples else None,
                          dict(sorted(conds.get((fid, v["version"]), {}).items())))
            keyed.append(((v["measured_at"], 0, v["version"]), point, f"v{v['version']}"))
        for c in checks.get(fid, []):
            if c["fact_version"] not in same:
                continue
            seen = seen_before.get(c["observed"])
            if seen is None:
                seen = seen_before[c["observed"]] = {k: str(val) for k, val in _json(c["observed"], {}).items()
                                                      if k not in ALWAYS_INFO}
            conditions = {**conds.get((fid, c["fact_version"]), {}), **seen}
            got = _json(c["samples"], []) if with_samples else None
            point = Point(c["verified_at"], float(c["value"]), [float(x) for x in got] if got else None,
                          dict(sorted(conditions.items())))
            keyed.append(((c["verified_at"], 1, c["pk"]), point, f"verification {c['pk']}"))
        keyed.sort(key=lambda k: k[0])
        out[fid] = Series(
            id=fid, metric=top["metric"], unit=top["unit"], version=cur, value=float(top["value"]),
            measured_at=top["measured_at"], points=[p for _, p, _ in keyed], sources=[s for _, _, s in keyed],
            current=next(i for i, (_, _, s) in enumerate(keyed) if s == f"v{cur}"),
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


def shifts(conn: Any, current: Sequence[Mapping[str, Any]], min_segment: int = changes.MIN_SEGMENT) -> dict[str, str]:
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
                 min_segment: int = changes.MIN_SEGMENT, alpha: float = changes.ALPHA) -> list[dict[str, Any]]:
    """The change points of the named facts (default: every fact with enough points), oldest first per fact.

    `since` (ISO-8601) keeps the changes whose new level began at or after it; detection always reads the whole
    series, so a level's median and interval use every point of it."""
    from factreg import clock

    changes.change_points([], min_segment=min_segment, alpha=alpha)  # validate the parameters first
    start = clock.iso(clock.parse(since, "--since")) if since else None
    wanted = [check_id(i) for i in dict.fromkeys(ids)]
    with registry.reader() as conn:
        found = load(conn, wanted or with_history(conn, 2 * min_segment))
    missing = [i for i in wanted if i not in found]
    if missing:
        raise NotFound(f"no fact {missing[0]!r} in the registry")
    out: list[dict[str, Any]] = []
    for fid in sorted(found):
        s = found[fid]
        for c in s.detect(min_segment=min_segment, alpha=alpha):
            if start is None or clock.iso(clock.parse(c.at_after)) >= start:
                out.append(change_data(s, c))
    return out
