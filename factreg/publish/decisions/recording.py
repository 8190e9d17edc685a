"""Recording decisions: a decision citing facts with the value each relied on (`add`), and the revert and
supersede links, stored as data."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from factreg import clock
from factreg.errors import NotFound, UsageError
from factreg.publish.decisions.data import STATUSES
from factreg.registry import drivers as drv
from factreg.registry import facts as factmod
from factreg.registry.ids import check_id, parse_ref, slugify
from factreg.registry.store import Registry
from factreg.secrets import redact

if TYPE_CHECKING:
    from sqlalchemy import Connection, Table

    from factreg.registry.types import FactData


def _tables() -> tuple[Table, Table]:
    """The SQLAlchemy tables (decision, decision_cite) for writing, imported on first use: reading decisions
    goes through `Registry.reader()` (sqlite3 for a SQLite file), so `status` does not load SQLAlchemy."""
    from factreg.registry.models import Decision, DecisionCite, table

    return table(Decision), table(DecisionCite)


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
