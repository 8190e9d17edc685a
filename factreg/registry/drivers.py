"""Decision drivers: the comparisons a decision holds on, parsed, written as one canonical text, and judged
against the facts as they are now.

A driver compares a fact with a number in the fact's unit (`day/35b-a3b/e2e < 1.0 s`) or with another fact of
the same metric (`a/x/decode_rate > b/y/decode_rate`); the comparisons are `<`, `<=`, `>`, `>=`. A right side
that reads as a number (optionally followed by a unit) is a number; anything else is a fact id.

A driver is judged on the median of the fact's current version (its value when it has no samples) and reported
with its 95% interval: it holds when the medians satisfy the comparison — "but not clearly" when the interval
reaches across the threshold (against another fact: when some values of the two intervals would not satisfy
it). Nothing of the outcome is stored: a decision's drivers are judged whenever it is read, from the facts as
they are then, so the truth shown can never be older than the registry.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from factreg import fmt
from factreg.errors import UsageError
from factreg.registry.ids import check_id

OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
MAX_TEXT = 500
MAX_DRIVERS = 50

_SPLIT = re.compile(r"^\s*([^<>=!\s]+)\s*(<=|>=|<|>)\s*(\S.*?)\s*$")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_NUMBER_AND_UNIT = re.compile(rf"({_NUMBER.pattern})(?:\s+(\S.*))?")

HOLDS = "holds"
UNCLEAR = "holds, but not clearly"
BROKEN = "does not hold"
UNKNOWN = "cannot be judged"


@dataclass(frozen=True)
class Driver:
    """`fact op threshold [unit]` or `fact op other`."""

    fact: str
    op: str
    threshold: float | None = None
    unit: str | None = None  # the threshold's unit (the fact's unit when recorded); None: the fact's unit
    other: str | None = None

    @property
    def text(self) -> str:
        """The canonical text, as stored and shown: `day/35b-a3b/e2e < 1.0 s`, `a > b`."""
        if self.other is not None:
            return f"{self.fact} {self.op} {self.other}"
        right = repr(self.threshold)
        return f"{self.fact} {self.op} {right}" + (f" {self.unit}" if self.unit else "")

    @property
    def facts(self) -> tuple[str, ...]:
        """The facts this driver reads."""
        return (self.fact,) if self.other is None else (self.fact, self.other)


def parse(text: object, what: str = "--driver") -> Driver:
    """A driver from its text; a UsageError saying what is wrong otherwise. Checks the syntax only (`check`
    looks the facts up)."""
    if not isinstance(text, str):
        raise UsageError(f"{what}: a driver is a text such as 'ID < 1.0', got {text!r}")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if len(text) > MAX_TEXT or not text.isprintable():
        raise UsageError(f"{what} {shown!r}: a driver is one printable line of at most {MAX_TEXT} characters")
    match = _SPLIT.match(text)
    if match is None:
        raise UsageError(
            f"{what} {shown!r}: write FACT OP NUMBER or FACT OP OTHER_FACT, with OP one of < <= > >= "
            "(e.g. 'day/35b-a3b/e2e < 1.0')"
        )
    left, op, right = match.groups()
    try:
        check_id(left)
    except UsageError as exc:
        raise UsageError(f"{what} {shown!r}: {exc.message}") from None
    if re.search(r"[<>=!]", right):
        raise UsageError(f"{what} {shown!r}: one comparison per driver (< <= > >=)")
    if re.fullmatch(r"[-+]?(nan|inf|infinity)", right, flags=re.IGNORECASE):
        raise UsageError(f"{what} {shown!r}: the threshold must be a finite number")
    number = _NUMBER_AND_UNIT.fullmatch(right)
    if number is not None:
        value = float(number.group(1))
        if not math.isfinite(value):
            raise UsageError(f"{what} {shown!r}: the threshold must be a finite number")
        return Driver(left, op, threshold=value, unit=number.group(2))
    try:
        check_id(right)
    except UsageError as exc:
        raise UsageError(f"{what} {shown!r}: the right side is neither a number nor a fact id ({exc.message})") from None
    if right == left:
        raise UsageError(f"{what} {shown!r}: a fact compared with itself always gives the same answer")
    return Driver(left, op, other=right)


def parse_all(values: Iterable[object], what: str = "--driver") -> list[Driver]:
    """Every driver of `values` (each one text), in order; the same driver twice is refused."""
    out: list[Driver] = []
    seen: set[str] = set()
    for value in values:
        driver = parse(value, what)
        if driver.text in seen:
            raise UsageError(f"{what} {driver.text!r} given twice")
        seen.add(driver.text)
        out.append(driver)
    if len(out) > MAX_DRIVERS:
        raise UsageError(f"{what}: at most {MAX_DRIVERS} drivers per decision")
    return out


def check(driver: Driver, fact_of: Callable[[str], Mapping[str, Any]], what: str = "--driver") -> Driver:
    """`driver` checked against the facts it reads (`fact_of(id)` gives a fact's current version, or raises
    NotFound): a threshold is in the fact's unit (a driver written without one gets it), another fact is of the
    same metric and unit."""
    fact = fact_of(driver.fact)
    if driver.other is None:
        if driver.unit is not None and driver.unit != fact["unit"]:
            raise UsageError(
                f"{what} {driver.text!r}: {driver.fact} is measured in {fact['unit']!r}; give the threshold in "
                "that unit"
            )
        named = Driver(driver.fact, driver.op, threshold=driver.threshold, unit=fact["unit"] or None)
        try:
            if parse(named.text, what) == named:
                return named
        except UsageError:
            pass
        return Driver(driver.fact, driver.op, threshold=driver.threshold)  # a unit the text cannot carry: implied
    other = fact_of(driver.other)
    if (fact["metric"], fact["unit"]) != (other["metric"], other["unit"]):
        raise UsageError(
            f"{what} {driver.text!r}: {driver.fact} is {fact['metric']} ({fact['unit']}) but {driver.other} is "
            f"{other['metric']} ({other['unit']}); compare facts of the same metric"
        )
    return driver


def dumps(drivers: Sequence[Driver]) -> str | None:
    """The `decision.drivers` column: a JSON list of driver texts, None when there are none."""
    return json.dumps([d.text for d in drivers], ensure_ascii=False) if drivers else None


def loads(column: object, what: str = "'drivers'") -> list[Driver]:
    """The drivers a `decision.drivers` column holds (None: none); a UsageError when it is not a JSON list of
    driver texts."""
    if column is None:
        return []
    try:
        texts = json.loads(column) if isinstance(column, str) else None
    except ValueError:
        texts = None
    if not isinstance(texts, list):
        raise UsageError(f"{what} must be a JSON list of driver texts, as the export writes it")
    return parse_all(texts, what)


def center(fact: Mapping[str, Any]) -> tuple[float, list[float] | None]:
    """A fact's median (its value when it has no samples) and its 95% interval, or None."""
    stats = fact.get("stats") or {}
    median = stats.get("median")
    ci = stats.get("ci95")
    return (float(fact["value"]) if median is None else float(median)), (list(ci) if ci else None)


class Judged(TypedDict):
    """A driver and its truth now (JSON data, shown by `decision show` and rendered in the decision's file)."""

    text: str
    fact: str
    op: str
    threshold: float | None
    unit: str | None
    other: str | None
    verdict: str  # holds | holds, but not clearly | does not hold | cannot be judged
    holds: bool | None  # None: cannot be judged
    clearly: bool | None  # whether the whole interval agrees with the median; None without an interval
    detail: str  # the medians and intervals it was judged on, as people read them


def _shown(fact: Mapping[str, Any], median: float, ci: list[float] | None) -> str:
    unit = fact.get("unit")
    text = f"median {fmt.value(median, None, unit)}"
    if ci:
        text += f", 95% interval {fmt.num(ci[0])}–{fmt.value(ci[1], None, unit)}"
    else:
        text += ", no interval"
    return f"{fact.get('id')} v{fact.get('version')}: {text}"


def _agrees(op: str, a: tuple[float, float], b: tuple[float, float]) -> tuple[bool, bool]:
    """(every value of interval a compared with every value of b satisfies op, none does)."""
    cmp = OPS[op]
    if op in ("<", "<="):
        return cmp(a[1], b[0]), not cmp(a[0], b[1])
    return cmp(a[0], b[1]), not cmp(a[1], b[0])


def judge(driver: Driver, fact: Mapping[str, Any] | None, other: Mapping[str, Any] | None = None) -> Judged:
    """Whether `driver` holds for `fact` (and `other`, the fact it is compared with), as the facts are now.

    `fact`/`other`: the version to judge on (`facts.get` data, or a status row with `stats`); None when the fact
    is not in the registry."""
    out: Judged = {
        "text": driver.text, "fact": driver.fact, "op": driver.op, "threshold": driver.threshold,
        "unit": driver.unit, "other": driver.other, "verdict": UNKNOWN, "holds": None, "clearly": None,
        "detail": "",
    }
    missing = [fid for fid, f in ((driver.fact, fact), (driver.other, other)) if fid is not None and f is None]
    if missing:
        out["detail"] = f"{missing[0]} is not in the registry"
        return out
    assert fact is not None
    median, ci = center(fact)
    if driver.other is None:
        assert driver.threshold is not None
        if driver.unit is not None and driver.unit != (fact.get("unit") or ""):
            out["detail"] = f"{driver.fact} is now measured in {fact.get('unit')!r}, the threshold in {driver.unit!r}"
            return out
        right, right_ci, shown_right = driver.threshold, None, fmt.value(driver.threshold, None, fact.get("unit"))
        detail = _shown(fact, median, ci)
    else:
        assert other is not None
        if (fact.get("metric"), fact.get("unit")) != (other.get("metric"), other.get("unit")):
            out["detail"] = (f"{driver.fact} is now {fact.get('metric')} ({fact.get('unit')}), {driver.other} "
                             f"{other.get('metric')} ({other.get('unit')})")
            return out
        right, right_ci = center(other)
        shown_right = driver.other
        detail = f"{_shown(fact, median, ci)}; {_shown(other, right, right_ci)}"
    holds = OPS[driver.op](median, right)
    clearly: bool | None = None
    if ci or right_ci:
        all_true, none_true = _agrees(driver.op, (ci[0], ci[1]) if ci else (median, median),
                                      (right_ci[0], right_ci[1]) if right_ci else (right, right))
        clearly = all_true if holds else none_true
    if clearly is False:
        detail += (f" (the interval reaches across {shown_right})" if driver.other is None
                   else " (the intervals overlap)")
    out["holds"], out["clearly"], out["detail"] = holds, clearly, detail
    out["verdict"] = (UNCLEAR if clearly is False else HOLDS) if holds else BROKEN
    return out
