"""Status of every fact in the registry, fast: what `factreg status` lists and its exit code decides on.

The statuses are the same as `facts.list_facts` gives (freshness.status_of with condition-change and
derived-source staleness, and `shifted` from the facts' histories) but loaded with three narrow queries — no samples, only the conditions that
staleness depends on — so a registry of 100,000 facts is checked in about a second.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypedDict, cast

from factreg import clock
from factreg.registry import freshness, series
from factreg.registry.facts import dangling, last_verifications, observed_environment, retractions, unreadable
from factreg.registry.store import Registry
from factreg.registry.store import rows as dict_rows
from factreg.registry.types import FactStatus, LastVerification, StatusRow
from factreg.registry.unreadable import note_unreadable

# Identity conditions that staleness looks at (the machine and its build/driver).
_KEYS = ("machine", *freshness.ENVIRONMENT_KEYS)

# The columns status reads, named once (StatusRow): these three from `fact`, the others from its current version.
_NAMES = tuple(StatusRow.__annotations__)
_OF_FACT = ("id", "superseded_by", "ended_at")
# The method is read only where it may be no method (`freshness.has_method` decides on the text): a probe's or
# llama-bench's stored method is kilobytes that status would read for 100,000 facts for nothing.
_METHOD = "CASE WHEN v.method LIKE '%manual%' OR v.method LIKE '%imported%' THEN v.method END AS method"
_FACTS_SQL = (
    "SELECT " + ", ".join(f"f.{c}" if c in _OF_FACT else _METHOD if c == "method" else f"v.{c}" for c in _NAMES)
    + " FROM fact f JOIN fact_version v ON v.fact_id = f.id AND v.version = f.current_version"
)
# No join: filtering on the current version in Python is faster than letting SQLite join 100,000 facts.
_CONDS_SQL = (
    "SELECT fact_id, version, key, value FROM condition "
    "WHERE kind = 'identity' AND key IN (" + ", ".join(f"'{k}'" for k in _KEYS) + ")"
)


# Per fact, the inconclusive verifications of its current version since its last confirmation (or ever).
_UNRESOLVED_SQL = (
    "SELECT v.fact_id, count(*) FROM verification v JOIN fact f ON f.id = v.fact_id "
    "AND v.fact_version = f.current_version WHERE v.verdict = 'inconclusive' AND v.pk > COALESCE(("
    "SELECT max(c.pk) FROM verification c WHERE c.fact_id = v.fact_id AND c.fact_version = v.fact_version "
    "AND c.verdict = 'confirmed'), 0) GROUP BY v.fact_id"
)


def _first(row: Any) -> Any:
    return row[0]


def _fetch(conn: Any, sql: str) -> list[Any]:
    """All rows of a constant SQL statement as tuples (no per-row dict: 100,000 rows stay cheap)."""
    if isinstance(conn, sqlite3.Connection):
        cur = conn.cursor()
        cur.row_factory = None  # plain tuples
        try:
            return cur.execute(sql).fetchall()
        finally:
            cur.close()
    # psycopg reads `%` as a placeholder even without parameters (a LIKE '%manual%'): doubled, it is a percent sign.
    return [tuple(r) for r in conn.exec_driver_sql(sql.replace("%", "%%")).fetchall()]


def load(
    registry: Registry,
) -> tuple[list[FactStatus], dict[str, LastVerification], dict[tuple[str, str], tuple[str, str, str]], dict[str, str],
           dict[str, str]]:
    """The current version of every fact, reduced to what status needs, each one's last verification, the newest
    build/driver observations, why the shifted ones are shifted (`series.shifts`) and why the retracted ones are
    retracted (`facts.retractions`)."""
    with registry.reader() as conn:
        rows = _fetch(conn, _FACTS_SQL)
        rows.sort(key=_first)  # sorting here is cheaper than ORDER BY over the join
        if len(rows) < int(dict_rows(conn, "SELECT count(*) AS n FROM fact")[0]["n"]):
            dangling(conn)
        cond_rows = _fetch(conn, _CONDS_SQL)
        verifications = last_verifications(conn)
        observed = observed_environment(conn)
        shifted = series.shifts(conn, [{"id": r[0], "version": r[3]} for r in rows])
        current = {row[0]: row[3] for row in rows}
        retracted = retractions(conn, current)
    conds: dict[str, dict[str, str]] = {}
    for fid, version, key, value in cond_rows:
        if current.get(fid) != version:
            continue
        got = conds.get(fid)
        if got is None:
            conds[fid] = {key: value}
        else:
            got[key] = value
    empty: dict[str, str] = {}
    facts: list[dict[str, Any]] = []
    for row in rows:
        fact = dict(zip(_NAMES, row, strict=True))
        if fact.get("method") is None:  # not read: a method that is no `manual` or `imported` one
            del fact["method"]
        why = unreadable(fact)
        if why is not None:  # one bad row never breaks reading the rest
            note_unreadable(f"{fact['id']}@{fact['version']}", why)
            continue
        if fact["derived_from"]:
            fact["derived_from"] = json.loads(fact["derived_from"])
        fact["conditions"] = {"identity": conds.get(fact["id"], empty)}
        facts.append(fact)
    return cast("list[FactStatus]", facts), verifications, observed, shifted, retracted


def statuses(
    registry: Registry, config: Mapping[str, Any] | None = None, now: datetime | None = None
) -> list[FactStatus]:
    """Every current fact with `status`, `status_reason` and `severity`, ordered by id."""
    facts, verifications, observed, shifted, retracted = load(registry)
    with registry.reader() as conn:
        unresolved: dict[str, int] = {fid: int(n) for fid, n in _fetch(conn, _UNRESOLVED_SQL)}
    now = now or clock.now()
    newest = freshness.merge_newest(freshness.newest_observations(facts), observed)
    invalid = freshness.invalidations(facts, verifications, newest=newest)
    for fid, why in freshness.derived_invalidations(facts, verifications).items():
        invalid.setdefault(fid, why)
    limits: dict[tuple[str, str | None, str | None], freshness.Thresholds] = {}  # they depend only on these three
    severity = freshness.SEVERITY
    for fact in facts:
        key = (fact["metric"], fact["warn_after"], fact["error_after"])
        lim = limits.get(key)
        if lim is None:
            lim = limits[key] = freshness.thresholds(fact, config)
        fact["status"], fact["status_reason"] = freshness.status_of(
            fact, verifications.get(fact["id"]), config, now=now, invalidated_by=invalid.get(fact["id"]), limits=lim,
            shifted_by=shifted.get(fact["id"]), retracted=retracted.get(fact["id"]),
        )
        fact["severity"] = severity.get(fact["status"], 3)
        behind = freshness.verification_behind(fact["status"], verifications.get(fact["id"]))
        if behind is not None:
            fact["verification"] = behind
        count = unresolved.get(fact["id"])
        if count:  # an unresolved verdict is never silent
            fact["inconclusive_since_confirmed"] = count
            fact["status_reason"] += (f"; {count} inconclusive verification{'s' if count > 1 else ''} since its "
                                      "last confirmation")
        del fact["conditions"]
        fact.pop("method", None)
    return facts


class Summary(TypedDict):
    """How many facts there are, per status (in severity order), and how many are at or above `fail_on`."""

    facts: int
    counts: dict[str, int]
    fail_on: str
    failing: int


def summary(facts: Sequence[FactStatus], fail_on: str = "stale") -> Summary:
    """Counts per status (in severity order) and how many facts are at or above the fail level."""
    counts = Counter(f["status"] for f in facts)
    ordered = {s: counts[s] for s in freshness.ORDER if counts[s]}
    ordered.update({s: n for s, n in counts.items() if s not in ordered})
    level = freshness.FAIL_LEVELS.get(fail_on)
    if level is None:
        freshness.fails("fresh", fail_on)  # raises the usage error
    # A fact's own severity when it has one (a retracted fact nothing cites is 0: cli/status.py).
    failing = sum(1 for f in facts if f.get("severity", freshness.severity(f["status"])) >= (level or 0))
    return {"facts": len(facts), "counts": ordered, "fail_on": fail_on, "failing": failing}


def summary_line(s: Summary) -> str:
    """`12 facts: 9 fresh, 2 aging, 1 refuted; 1 at or above stale → exit 1`."""
    parts = ", ".join(f"{n} {status}" for status, n in s["counts"].items()) or "none"
    verdict = f"{s['failing']} at or above {s['fail_on']}" + (" → exit 1" if s["failing"] else "")
    return f"{s['facts']} fact(s): {parts}; {verdict}"
