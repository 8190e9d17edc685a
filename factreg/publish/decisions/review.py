"""Decisions read back and reviewed: each cite against the fact that holds now, each driver judged, the review
date; `needs review` worked out whenever a decision is read, never stored."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from factreg import clock
from factreg.errors import NotFound
from factreg.publish.decisions.data import (
    CURRENT_FIELDS,
    FOLDER,
    NEEDS_REVIEW,
    OPEN,
    REVIEW_STATUSES,
    SUCCESSOR_FIELDS,
    Cite,
    CitedFact,
    CiteRow,
    DecisionData,
    PastVersion,
    file_name,
)
from factreg.registry import conditions as cond
from factreg.registry import display
from factreg.registry import drivers as drv
from factreg.registry import facts as factmod
from factreg.registry.freshness import NO_METHOD
from factreg.registry.store import Registry, in_list
from factreg.registry.store import rows as query_rows
from factreg.registry.types import FactStatus
from factreg.verdicts import DEFAULT_TOLERANCE

if TYPE_CHECKING:

    from factreg.registry.types import FactData


def stable_reason(fact: FactData | FactStatus | CitedFact) -> str:
    """A fact's status reason without a moving age, so rendered files only change when the status does."""
    reason = fact.get("status_reason") or ""
    if reason.startswith(NO_METHOD):  # stale without a method: the same words, without the age
        limit = re.search(r"\(((?:warn|error)_after [^)]+)\)", reason)
        return f"{NO_METHOD}: last measured or confirmed longer ago than {limit.group(1) if limit else 'its thresholds'}"
    if fact.get("status") in ("stale", "aging", "fresh") and reason.startswith(("last measured", "measured or")):
        limit = re.search(r"\(((?:warn|error)_after [^)]+)\)", reason)
        if fact["status"] == "fresh" or not limit:
            return "within its freshness thresholds"
        return f"last measured or confirmed longer ago than {limit.group(1)}"
    return reason


def cite_review(cite: CiteRow, current: FactData | CitedFact | None, cited: PastVersion | None) -> list[str]:
    """Why a decision should review what it relied on in `cite` (empty when nothing changed)."""
    fid = cite["fact_id"]
    if current is None:
        return [f"{fid} is no longer in the registry"]
    status = current.get("status")
    out: list[str] = []
    if status == "superseded":
        out.append(f"{fid} was superseded by {current['superseded_by']}")
    elif status in REVIEW_STATUSES:
        out.append(f"{fid} is {status.replace('_', ' ')}: {stable_reason(current)}")
    if cited is not None and current["version"] != cite["fact_version"]:
        changed = cond.diff(cited["conditions"]["identity"], current["conditions"]["identity"])
        if changed:
            parts = ", ".join(
                f"{k} {a if a is not None else '(none)'} → {b if b is not None else '(none)'}"
                for k, (a, b) in changed.items()
            )
            out.append(f"{fid} v{current['version']} was measured under other conditions: {parts}")
        tolerance = current.get("tolerance") or DEFAULT_TOLERANCE
        old = cite["value"]
        if old and abs(current["value"] - old) / abs(old) > tolerance:
            out.append(
                f"{fid} is now {display.text(current)} "
                f"(v{current['version']}); the decision relied on {display.text(cite)}"
            )
    return out


# Ids per IN list: well under SQLite's limit on parameters (32,766; 999 before SQLite 3.32) and PostgreSQL's.
_CHUNK = 30_000 if sqlite3.sqlite_version_info >= (3, 32) else 900


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _closure(ids: Iterable[str], successor_of: Callable[[Sequence[str]], Iterable[str]]) -> set[str]:
    """`ids` and every fact that superseded one of them, to the end of each chain; `successor_of(frontier)`
    gives the `superseded_by` ids of a batch of facts."""
    wanted = set(ids)
    frontier = sorted(wanted)
    while frontier:  # one level of superseded_by links per round
        frontier = sorted(set(successor_of(frontier)) - wanted)
        wanted.update(frontier)
    return wanted


def cited_facts(
    registry: Registry,
    config: Mapping[str, Any] | None,
    ids: Iterable[str],
    statuses: Sequence[FactStatus] | None = None,
) -> dict[str, FactData | CitedFact]:
    """The current version of each fact in `ids` and of every fact that superseded one of them, to the end of
    each chain, with its status: fact id → the data of `facts.list_facts` that a review looks at. Facts not in
    the registry are left out.

    Only these facts are read, through `Registry.reader()` (sqlite3 for a SQLite file). `statuses`, when the
    caller has them (`status.statuses`: every current fact with its status), give the statuses and chains; then
    only the tolerances and identity conditions of these facts are read."""
    out: dict[str, FactData | CitedFact] = {}
    if statuses is not None:
        by_id = {f["id"]: f for f in statuses}

        def successor_of(batch: Sequence[str]) -> list[str]:
            return [nxt for i in batch if i in by_id and (nxt := by_id[i]["superseded_by"])]

        wanted = _closure(ids, successor_of)
        present = sorted(i for i in wanted if i in by_id)
        details = _versions(registry, [(i, by_id[i]["version"]) for i in present])
        for i in present:
            got = details.get((i, by_id[i]["version"]))
            if got is None:  # changed since `statuses` were read: read it again
                return cited_facts(registry, config, ids)
            out[i] = cast("CitedFact", {**by_id[i], "tolerance": got["tolerance"], "conditions": got["conditions"],
                                        "stats": got["stats"]})
        return out

    with registry.reader() as conn:

        def successors(batch: Sequence[str]) -> list[str]:
            found = []
            for part in _chunks(batch):
                clause, params = in_list("id", part)
                found += [r["superseded_by"] for r in query_rows(
                    conn, f"SELECT superseded_by FROM fact WHERE id IN {clause} AND superseded_by IS NOT NULL",
                    params)]
            return found

        wanted = _closure(ids, successors)
    for part in _chunks(sorted(wanted)):
        # A fact's status depends on its machine's other facts and on its sources, not on which facts are
        # listed with it: the same as in a listing of the whole registry (what `show` relies on too).
        out.update((f["id"], f) for f in factmod.list_facts(registry, config, ids=part))
    return out


def _versions(registry: Registry, pairs: Iterable[tuple[str, int]]) -> dict[tuple[str, int], PastVersion]:
    """(fact id, version) → that version's tolerance, identity conditions, median and 95% interval, for the versions
    that exist."""
    wanted = set(pairs)
    ids = sorted({fid for fid, _ in wanted})
    out: dict[tuple[str, int], PastVersion] = {}
    if not ids:
        return out
    with registry.reader() as conn:
        for part in _chunks(ids):
            clause, params = in_list("id", part)
            for r in query_rows(conn, "SELECT fact_id, version, tolerance, median, ci_lo, ci_hi FROM fact_version "
                                      f"WHERE fact_id IN {clause}", params):
                if (r["fact_id"], r["version"]) in wanted:
                    ci = [r["ci_lo"], r["ci_hi"]] if r["ci_lo"] is not None else None
                    out[(r["fact_id"], r["version"])] = {"tolerance": r["tolerance"], "conditions": {"identity": {}},
                                                         "stats": {"median": r["median"], "ci95": ci}}
            for r in query_rows(conn, "SELECT fact_id, version, key, value FROM condition "
                                      f"WHERE kind = :kind AND fact_id IN {clause}", {**params, "kind": cond.IDENTITY}):
                got = out.get((r["fact_id"], r["version"]))
                if got is not None:
                    got["conditions"]["identity"][r["key"]] = r["value"]
    for got in out.values():
        got["conditions"]["identity"] = dict(sorted(got["conditions"]["identity"].items()))
    return out


def load(
    registry: Registry,
    config: Mapping[str, Any] | None,
    numbers: Sequence[int] | None = None,
    current: Mapping[str, FactData | CitedFact] | None = None,
    statuses: Sequence[FactStatus] | None = None,
) -> list[DecisionData]:
    with registry.reader() as conn:
        rows = query_rows(conn, "SELECT * FROM decision ORDER BY number")
        corrected = factmod.corrected_versions(conn)
        cites: dict[int, list[CiteRow]] = {}
        for crow in query_rows(conn, "SELECT * FROM decision_cite ORDER BY decision, fact_id"):
            cites.setdefault(crow["decision"], []).append(cast(CiteRow, crow))
        for cited in cites.values():
            cited.sort(key=lambda c: c["fact_id"])  # byte order whatever the server's collation
    if numbers is not None:
        wanted = set(numbers)
        missing = wanted - {r["number"] for r in rows}
        if missing:
            raise NotFound(f"no decision {min(missing)}")
    shown = [r for r in rows if numbers is None or r["number"] in numbers]
    used = [c for r in shown for c in cites.get(r["number"], [])]
    drivers = {r["number"]: drv.loads(r.get("drivers")) for r in shown}
    read = {c["fact_id"] for c in used} | {fid for ds in drivers.values() for d in ds for fid in d.facts}
    if current is None:
        current = cited_facts(registry, config, read, statuses) if read else {}
    past = _versions(registry, {
        (c["fact_id"], c["fact_version"]) for c in used
        if c["fact_id"] in current and current[c["fact_id"]]["version"] != c["fact_version"]
    })
    by_number = {r["number"]: r for r in rows}
    superseding: dict[int, list[int]] = {}
    for r in rows:
        if r["superseded_by"] is not None:
            superseding.setdefault(r["superseded_by"], []).append(r["number"])
    out: list[DecisionData] = []
    for row in shown:
        entries: list[Cite] = []
        reasons: list[str] = []
        for c in cites.get(row["number"], []):
            entry = _cite_entry(c, current, past, corrected)
            reasons.extend(entry["review"])
            entries.append(entry)
        judged = [_judge(d, current) for d in drivers[row["number"]]]
        reasons.extend(f"driver {j['text']} {j['verdict']}: {j['detail']}" for j in judged
                       if j["verdict"] in (drv.BROKEN, drv.UNKNOWN))
        review_by = row.get("review_by")
        if review_by and clock.today() > review_by:
            reasons.append(f"its review date {review_by} has passed")
        recorded = row["status"]
        effective = NEEDS_REVIEW if recorded in OPEN and reasons else recorded
        supersedes = sorted(superseding.get(row["number"], []))
        out.append(
            {
                "number": row["number"],
                "title": row["title"],
                "slug": row["slug"],
                "status": effective,
                "recorded_status": recorded,
                "date": row["date"],
                "decision_makers": json.loads(row["decided_by"] or "[]"),
                "context": row["context"],
                "outcome": row["outcome"],
                "cites": entries,
                "drivers": judged,
                "review_by": review_by,
                "review_reasons": reasons,
                "reverted": None
                if recorded != "reverted"
                else {"date": row["reverted_at"], "because_fact": row["revert_fact"], "because": row["revert_reason"]},
                "superseded_by": None
                if row["superseded_by"] is None
                else {"number": row["superseded_by"], "path": file_name(by_number[row["superseded_by"]])},
                "supersedes": [{"number": n, "path": file_name(by_number[n])} for n in supersedes],
                "path": f"{FOLDER}/{file_name(row)}",
            }
        )
    return out


def _cite_entry(c: CiteRow, current: Mapping[str, FactData | CitedFact], past: Mapping[tuple[str, int], PastVersion],
                corrected: Mapping[tuple[str, int], factmod.Corrected]) -> Cite:
    """One cite of a decision as data: the value relied on, the fact now and its successor, why to review it."""
    cur = current.get(c["fact_id"])
    cited_version: PastVersion | None = None
    if cur is not None and cur["version"] != c["fact_version"]:
        cited_version = past.get((c["fact_id"], c["fact_version"]))
    review = cite_review(c, cur, cited_version)
    fix = corrected.get((c["fact_id"], c["fact_version"]))
    if fix is not None:
        review.append(f"{c['fact_id']} v{c['fact_version']} was corrected by v{fix.new_version}"
                      + (f" ({fix.note_path})" if fix.note_path else ""))
    return {
        "id": c["fact_id"],
        "version": c["fact_version"],
        "value": c["value"],
        "spread": c["spread"],
        "unit": c["unit"],
        "relied_on": display.text(c),
        "current": None if cur is None
        else {**display.fields(cur, CURRENT_FIELDS), "status_reason": stable_reason(cur)},
        "successor": _successor(current, cur),
        "review": review,
    }


def _end(current: Mapping[str, FactData | CitedFact], fact_id: str | None) -> FactData | CitedFact | None:
    """The fact that holds now for `fact_id`: itself, or the end of its supersede chain."""
    fact = current.get(fact_id) if fact_id is not None else None
    seen: set[str] = set()
    while fact is not None and (nxt := fact.get("superseded_by")) and fact["id"] not in seen and nxt in current:
        seen.add(fact["id"])
        fact = current[nxt]
    return fact


def _judge(driver: drv.Driver, current: Mapping[str, FactData | CitedFact]) -> drv.Judged:
    """A driver judged on the facts that hold now (a superseded fact's successor stands in for it)."""
    return drv.judge(driver, _end(current, driver.fact), _end(current, driver.other))


def _successor(
    current: Mapping[str, FactData | CitedFact], fact: FactData | CitedFact | None
) -> display.Shown | None:
    """The fact that holds now at the end of a superseded fact's chain, if any."""
    seen: set[str] = set()
    while fact is not None and (nxt := fact.get("superseded_by")) and fact["id"] not in seen:
        seen.add(fact["id"])
        fact = current.get(nxt)
    if fact is None or not seen:
        return None
    return display.fields(fact, SUCCESSOR_FIELDS)


def list_decisions(
    registry: Registry,
    config: Mapping[str, Any] | None = None,
    current: Mapping[str, FactData | CitedFact] | None = None,
    statuses: Sequence[FactStatus] | None = None,
) -> list[DecisionData]:
    """Every decision with its effective status (`needs review` when a cited fact changed).

    `current` (fact id → `facts.list_facts` data) or `statuses` (`status.statuses`), when the caller has them,
    save reading the cited facts' statuses again."""
    return load(registry, config, current=current, statuses=statuses)


def get(registry: Registry, number: int, config: Mapping[str, Any] | None = None) -> DecisionData:
    """One decision with its cited facts, their current state and any review reasons."""
    return load(registry, config, [number])[0]


def needing_review(
    registry: Registry, config: Mapping[str, Any] | None = None, statuses: Sequence[FactStatus] | None = None
) -> list[DecisionData]:
    """Open decisions (proposed or accepted) that rely on a fact that has since changed.

    `statuses`: every current fact with its status (`status.statuses`), when the caller has them already."""
    return [d for d in load(registry, config, statuses=statuses) if d["status"] == NEEDS_REVIEW]


def citing(decisions: Iterable[DecisionData], fact_id: str) -> list[DecisionData]:
    """The decisions among `decisions` that cite `fact_id`."""
    return [d for d in decisions if any(c["id"] == fact_id for c in d["cites"])]
