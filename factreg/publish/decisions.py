"""Decisions: MADR-compatible decision records that cite facts as data, with the value each relied on.

A decision is `needs review` when a fact it cites has since been refuted, retracted, superseded, gone stale,
become unverifiable, changed conditions, or moved outside its tolerance in a newer version; when one of its
drivers (`registry/drivers.py`: `day/35b-a3b/e2e < 1.0 s`) no longer holds for the facts as they are now; or
when its review date (`--review-by`) has passed. Nothing of that is stored: it is worked out whenever the
decision is read. Revert and supersede links are stored as data and rendered into the front matter of
`decisions/NNNN-<slug>.md`.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from factreg import clock
from factreg.errors import NotFound, UsageError
from factreg.registry import conditions as cond
from factreg.registry import display
from factreg.registry import drivers as drv
from factreg.registry import facts as factmod
from factreg.registry.freshness import NO_METHOD
from factreg.registry.ids import check_id, parse_ref, slugify
from factreg.registry.store import Registry, in_list
from factreg.registry.store import rows as query_rows
from factreg.registry.types import FactStatus, IdentityOnly
from factreg.secrets import redact
from factreg.verdicts import DEFAULT_TOLERANCE

if TYPE_CHECKING:
    from sqlalchemy import Connection, Table

    from factreg.registry.types import FactData


class CiteRow(TypedDict):
    """A `decision_cite` row: a fact version a decision relied on, with the value it relied on."""

    decision: int
    fact_id: str
    fact_version: int
    value: float
    spread: float | None
    unit: str


class Cite(TypedDict):
    """A fact a decision cites, as JSON data: the version and value relied on, the fact now, and why to review."""

    id: str
    version: int
    value: float
    spread: float | None
    unit: str
    relied_on: str  # the value relied on, as people read it
    current: display.Shown | None  # CURRENT_FIELDS of the fact now; None when it left the registry
    successor: display.Shown | None  # SUCCESSOR_FIELDS of the fact at the end of its supersede chain, if any
    review: list[str]


class Reverted(TypedDict):
    date: str | None
    because_fact: str | None
    because: str | None


class DecisionLink(TypedDict):
    number: int
    path: str


class DecisionData(TypedDict):
    """A decision as JSON data (`list_decisions`, `get`): its effective status and its cites, as its file shows it."""

    number: int
    title: str
    slug: str
    status: str  # effective: `needs review` when an open decision's cited fact changed
    recorded_status: str
    date: str
    decision_makers: list[str]
    context: str | None
    outcome: str | None
    cites: list[Cite]
    drivers: list[drv.Judged]  # each driver with its truth now
    review_by: str | None
    review_reasons: list[str]
    reverted: Reverted | None
    superseded_by: DecisionLink | None
    supersedes: list[DecisionLink]
    path: str


class Center(TypedDict):
    """The median and 95% interval a driver is judged on (`drivers.center`)."""

    median: float | None
    ci95: list[float] | None


class CitedFact(FactStatus):
    """A cited fact's status row (`status.statuses`) with the tolerance, identity conditions and median a review
    reads."""

    tolerance: float | None
    stats: Center


class _PastVersion(TypedDict):
    tolerance: float | None
    conditions: IdentityOnly
    stats: Center


# What a cite shows of the fact it cites now, and of that fact's successor (registry.display fields).
CURRENT_FIELDS = ("version", "value", "spread", "unit", "text", "status", "status_reason", "superseded_by", "metric")
SUCCESSOR_FIELDS = ("id", "version", "status", "text")


def _tables() -> tuple[Table, Table]:
    """The SQLAlchemy tables (decision, decision_cite) for writing, imported on first use: reading decisions
    goes through `Registry.reader()` (sqlite3 for a SQLite file), so `status` does not load SQLAlchemy."""
    from factreg.registry.models import Decision, DecisionCite, table

    return table(Decision), table(DecisionCite)

STATUSES = ("proposed", "accepted")
OPEN = ("proposed", "accepted")
NEEDS_REVIEW = "needs review"
REVIEW_STATUSES = ("refuted", "retracted", "superseded", "stale", "conditions_changed", "unverifiable", "shifted")
FOLDER = "decisions"
MAX_SLUG = 200


def parse_cites(values: Iterable[str], required: bool = True) -> list[tuple[str, int | None]]:
    """`--cites a,b@2` (repeatable) → [(id, version or None)]; duplicates are refused, and no id at all unless
    not `required` (a decision whose drivers name its facts)."""
    out: list[tuple[str, int | None]] = []
    seen: set[str] = set()
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                fid, version = parse_ref(part)
            except UsageError as exc:
                raise UsageError(f"--cites: {exc.message}") from None
            if fid in seen:
                raise UsageError(f"--cites: {fid!r} given twice")
            seen.add(fid)
            out.append((fid, version))
    if not out and required:
        raise UsageError("--cites needs at least one fact id")
    return out


def _today() -> str:
    return clock.today()


def add(
    registry: Registry,
    title: str,
    cites: Sequence[tuple[str, int | None]],
    *,
    context: str | None = None,
    outcome: str | None = None,
    status: str = "accepted",
    by: Sequence[str] = (),
    date: str | None = None,
    drivers: Sequence[str] = (),
    review_by: str | None = None,
) -> int:
    """Record a decision citing facts (each with the value relied on); return its number.

    `drivers` (`day/35b-a3b/e2e < 1.0`, `a > b`: registry/drivers.py) are the comparisons the decision holds on;
    the facts they read are cited too. `review_by` (YYYY-MM-DD): the decision needs review after that date.

    Free text is redacted before it is stored: a credential pasted into the title, context or outcome never
    reaches the registry, the decision file (nor its name) or a commit."""
    title = redact(" ".join((title or "").split()))
    if not title:
        raise UsageError("a decision needs a title")
    if status not in STATUSES:
        raise UsageError(f"--status must be one of {', '.join(STATUSES)}, got {status!r}")
    if date is not None:
        clock.check_date(date, "--date")
    if review_by is not None:
        clock.check_date(review_by, "--review-by")
    found: dict[str, FactData] = {}

    def fact_of(fid: str) -> FactData:
        if fid not in found:
            found[fid] = factmod.get(registry, fid)
        return found[fid]

    checked = [drv.check(d, fact_of) for d in drv.parse_all(drivers)]
    cites = list(cites)
    cited = {fid for fid, _ in cites}
    for d in checked:
        cites += [(fid, None) for fid in d.facts if fid not in cited]
        cited.update(d.facts)
    if not cites:
        raise UsageError("--cites needs at least one fact id (or give a --driver)")
    rows = []
    for fid, version in cites:
        data = factmod.get(registry, fid, version)
        rows.append(
            {
                "fact_id": fid,
                "fact_version": data["version"],
                "value": data["value"],
                "spread": data["spread"],
                "unit": data["unit"],
            }
        )
    names = list(dict.fromkeys(redact(n.strip()) for n in by if n and n.strip()))
    context = None if context is None else redact(context)
    outcome = None if outcome is None else redact(outcome)
    from sqlalchemy import func, insert, select

    DECISION, CITE = _tables()

    def work(conn: Connection) -> int:
        number = int(conn.execute(select(func.coalesce(func.max(DECISION.c.number), 0))).scalar() or 0) + 1
        conn.execute(
            insert(DECISION),
            [
                {
                    "number": number,
                    "title": title,
                    "slug": slugify(title),
                    "status": status,
                    "date": date or _today(),
                    "decided_by": json.dumps(names, ensure_ascii=False),
                    "context": context,
                    "outcome": outcome,
                    "created_at": clock.iso(),
                    "drivers": drv.dumps(checked),
                    "review_by": review_by,
                }
            ],
        )
        conn.execute(insert(CITE), [{"decision": number, **r} for r in rows])
        return number

    return int(registry.write_retrying(work))


def _row(conn: Connection, number: int) -> Mapping[str, Any]:
    from sqlalchemy import select

    DECISION, _ = _tables()
    row = conn.execute(select(DECISION).where(DECISION.c.number == number)).mappings().first()
    if row is None:
        raise NotFound(f"no decision {number}")
    return dict(row)


def revert(registry: Registry, number: int, because: str, date: str | None = None) -> None:
    """Mark decision `number` reverted, because of a fact (when `because` names one) or a reason in words."""
    because = redact(" ".join((because or "").split()))
    if not because:
        raise UsageError("--because needs a fact id or a reason")
    fact_id = None
    try:
        check_id(because)
        factmod.get(registry, because)
        fact_id = because
    except UsageError:
        fact_id = None
    if date is not None:
        clock.check_date(date, "--date")
    from sqlalchemy import update

    DECISION, _ = _tables()

    def work(conn: Connection) -> None:
        row = _row(conn, number)
        if row["status"] in ("reverted", "superseded"):
            raise UsageError(f"decision {number} is already {row['status']}")
        conn.execute(
            update(DECISION)
            .where(DECISION.c.number == number)
            .values(
                status="reverted",
                reverted_at=date or _today(),
                revert_reason=None if fact_id else because,
                revert_fact=fact_id,
            )
        )

    registry.write_retrying(work)


def supersede(registry: Registry, number: int, by: int) -> None:
    """Mark decision `number` superseded by decision `by`."""
    if number == by:
        raise UsageError("a decision cannot supersede itself")
    from sqlalchemy import update

    DECISION, _ = _tables()

    def work(conn: Connection) -> None:
        row = _row(conn, number)
        _row(conn, by)
        if row["status"] in ("reverted", "superseded"):
            raise UsageError(f"decision {number} is already {row['status']}")
        conn.execute(update(DECISION).where(DECISION.c.number == number).values(status="superseded", superseded_by=by))

    registry.write_retrying(work)


# ---------------------------------------------------------------- reading and review


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


def cite_review(cite: CiteRow, current: FactData | CitedFact | None, cited: _PastVersion | None) -> list[str]:
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


def _versions(registry: Registry, pairs: Iterable[tuple[str, int]]) -> dict[tuple[str, int], _PastVersion]:
    """(fact id, version) → that version's tolerance, identity conditions, median and 95% interval, for the versions
    that exist."""
    wanted = set(pairs)
    ids = sorted({fid for fid, _ in wanted})
    out: dict[tuple[str, int], _PastVersion] = {}
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


def _load(
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
            cur = current.get(c["fact_id"])
            cited_version: _PastVersion | None = None
            if cur is not None and cur["version"] != c["fact_version"]:
                cited_version = past.get((c["fact_id"], c["fact_version"]))
            review = cite_review(c, cur, cited_version)
            fix = corrected.get((c["fact_id"], c["fact_version"]))
            if fix is not None:
                review.append(f"{c['fact_id']} v{c['fact_version']} was corrected by v{fix['new_version']}"
                              + (f" ({fix['note_path']})" if fix["note_path"] else ""))
            reasons.extend(review)
            entries.append(
                {
                    "id": c["fact_id"],
                    "version": c["fact_version"],
                    "value": c["value"],
                    "spread": c["spread"],
                    "unit": c["unit"],
                    "relied_on": display.text(c),
                    "current": None
                    if cur is None
                    else {**display.fields(cur, CURRENT_FIELDS), "status_reason": stable_reason(cur)},
                    "successor": _successor(current, cur),
                    "review": review,
                }
            )
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


def file_name(row: Mapping[str, Any]) -> str:
    """`0001-voice-front-end-35b-a3b.md`. The slug is made a slug again: a slug `add` made stays the same, one
    edited into the database cannot name another folder."""
    return f"{int(row['number']):04d}-{slugify(str(row['slug']), MAX_SLUG)}.md"


def list_decisions(
    registry: Registry,
    config: Mapping[str, Any] | None = None,
    current: Mapping[str, FactData | CitedFact] | None = None,
    statuses: Sequence[FactStatus] | None = None,
) -> list[DecisionData]:
    """Every decision with its effective status (`needs review` when a cited fact changed).

    `current` (fact id → `facts.list_facts` data) or `statuses` (`status.statuses`), when the caller has them,
    save reading the cited facts' statuses again."""
    return _load(registry, config, current=current, statuses=statuses)


def get(registry: Registry, number: int, config: Mapping[str, Any] | None = None) -> DecisionData:
    """One decision with its cited facts, their current state and any review reasons."""
    return _load(registry, config, [number])[0]


def needing_review(
    registry: Registry, config: Mapping[str, Any] | None = None, statuses: Sequence[FactStatus] | None = None
) -> list[DecisionData]:
    """Open decisions (proposed or accepted) that rely on a fact that has since changed.

    `statuses`: every current fact with its status (`status.statuses`), when the caller has them already."""
    return [d for d in _load(registry, config, statuses=statuses) if d["status"] == NEEDS_REVIEW]


def citing(decisions: Iterable[DecisionData], fact_id: str) -> list[DecisionData]:
    """The decisions among `decisions` that cite `fact_id`."""
    return [d for d in decisions if any(c["id"] == fact_id for c in d["cites"])]


def render(decision: DecisionData, templates: Path | str | None = None, lang: str | None = None) -> str:
    """The MADR-compatible Markdown of one decision (in `lang`: English by default, or Korean)."""
    from factreg.publish import render as rendering

    return rendering.render("decision.md.j2", {"d": decision}, templates, lang)


def write_files(
    registry: Registry,
    config: Mapping[str, Any] | None,
    out: Path,
    templates: Path | str | None = None,
    numbers: Sequence[int] | None = None,
    decisions: Sequence[DecisionData] | None = None,
) -> tuple[dict[Path, str], list[Path]]:
    """Render decision files under `out/decisions/`; return (every file rendered with its text, the files that
    changed). Every path goes through `writer.write`, which refuses one outside `out`."""
    from factreg.publish import writer

    items = list(decisions) if decisions is not None else _load(registry, config, numbers)
    if numbers is not None:
        items = [d for d in items if d["number"] in set(numbers)]
    lang = ((config or {}).get("report") or {}).get("lang")  # `[report] lang`, as `report` renders them
    texts = {Path(out) / d["path"]: render(d, templates, lang) for d in items}  # render all before writing any
    return texts, writer.write(texts, Path(out))
