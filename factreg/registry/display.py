"""How a fact is shown outside the registry: the one set of display fields that a correction note, a decision, a
report page and a citation marker's format take from a fact, each defined once here.

`text(fact)` is its value as people read it (`11.9 ± 7.2 tok/s`), what a citation marker writes unless its author
chose a format; `headline(fact)` is the value with its estimators named (`median 0.730 s · sd 0.216 · n=3`), what
`show`, `list`, `status`, the reports and the HTML pages print; `fields(fact, names)` gives the named display
fields, in the order asked. A field the fact lacks is None (a status row has no samples, a preview no status).

The headline's convention, the one home of it: the value's estimator first — `median` or `mean` of the samples
(whichever the value is), `p90` for a percentile fact, `value` when no samples say which (a number typed or
imported with its spread) —, then `sd` (the sample standard deviation, the fact's spread) when there is one, then
`n=` (`n=?` when unknown), joined by ` · `.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict, cast

from factreg import fmt


class Shown(TypedDict, total=False):
    """Display fields of a fact (those asked for): see FIELDS."""

    id: str
    version: int
    metric: str
    unit: str
    value: float
    spread: float | None
    n: int | None
    text: str
    headline: str
    median: float | None
    mean: float | None
    min: float | None
    max: float | None
    ci95: list[float] | None
    ci_lo: float | None
    ci_hi: float | None
    flags: list[str]
    measured_at: str
    date: str
    samples: list[float]
    identity: dict[str, str]
    info: dict[str, str]
    status: str | None
    status_reason: str | None
    superseded_by: str | None


# Integrity flags that keep a value from being presented as plainly current: they travel with the number (llms.txt
# "Use with care", the index, fact pages, a citation marker's `flags` option).
CARE_FLAGS = ("cold", "thinking_on", "cache_hit", "few_samples", "high_variance")


def care_flags(fact: Mapping[str, Any]) -> list[str]:
    """The integrity flags of `fact` that call for care, in CARE_FLAGS order."""
    flags = fact.get("flags") or []
    return [f for f in CARE_FLAGS if f in flags]


def text(fact: Mapping[str, Any]) -> str:
    """A fact's value with its spread and unit, as people read it: `11.9 ± 7.2 tok/s`."""
    return fmt.value(fact.get("value"), fact.get("spread"), fact.get("unit"))


def estimator(fact: Mapping[str, Any]) -> str:
    """What a fact's value is: `median` or `mean` of its samples, `p90` for a percentile fact, else `value`."""
    import math

    from factreg.registry.metrics import split_percentile

    split = split_percentile(str(fact.get("metric") or ""))
    if split is not None:
        return f"p{round(split[1] * 100, 4):g}"
    stats = fact.get("stats") or fact  # JSON data keeps them under `stats`, a status row beside the value
    v, median, mean = fact.get("value"), stats.get("median"), stats.get("mean")
    if v is None or median is None:  # no samples: the number says nothing of how it was summarised
        return "value"
    if math.isclose(v, median, rel_tol=1e-6, abs_tol=1e-12):
        return "median"
    if mean is not None and math.isclose(v, mean, rel_tol=1e-6, abs_tol=1e-12):
        return "mean"
    return "value"


def headline(fact: Mapping[str, Any]) -> str:
    """A fact's value with its estimators named: `median 0.730 s · sd 0.216 · n=3` (the convention above)."""
    v = fact.get("value")
    if v is None:
        return "—"
    shown = fmt.num(v)
    parts = [f"{estimator(fact)} {fmt.with_unit(shown, fact.get('unit'))}"]
    if fact.get("spread") is not None:
        parts.append(f"sd {fmt.alongside(shown, fact['spread'])}")
    parts.append(f"n={fact.get('n') or '?'}")
    return " · ".join(parts)


def method_text(method: Mapping[str, Any] | None) -> str:
    """A fact's method as people read it: `probe`, `llama-bench`, `manual` (typed), `llama-bench, imported` (a result
    file of another tool's, which factreg cannot re-run until it has a method)."""
    method = method or {}
    kind = str(method.get("kind") or "manual")
    if kind == "imported":
        return f"{method.get('tool') or 'another tool'}, imported"
    return kind


def missing_identity(fact: Mapping[str, Any]) -> list[str]:
    """The identity conditions behind a fact's `no_conditions` flag: the ones its metric needs and it lacks (`a|b`:
    either), or every one when it has none at all; [] when nothing is missing."""
    from factreg.errors import UsageError
    from factreg.registry.metrics import get_metric, missing_required

    identity = dict((fact.get("conditions") or {}).get("identity") or {})
    try:
        metric = get_metric(str(fact.get("metric")), fact.get("unit"))
    except UsageError:
        return []
    missing = missing_required(metric, identity)
    if not identity and not missing:
        return ["any identity condition"]
    return missing


def _stat(name: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda f: (f.get("stats") or {}).get(name)


def _ci(end: int) -> Callable[[Mapping[str, Any]], Any]:
    return lambda f: ((f.get("stats") or {}).get("ci95") or [None, None])[end]


def _conditions(kind: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda f: dict((f.get("conditions") or {}).get(kind) or {})


_FIELDS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "id": lambda f: f.get("id"),
    "version": lambda f: f.get("version"),
    "metric": lambda f: f.get("metric"),
    "unit": lambda f: f.get("unit") or "",
    "value": lambda f: f.get("value"),
    "spread": lambda f: f.get("spread"),
    "n": lambda f: f.get("n"),
    "text": text,
    "headline": headline,
    "median": _stat("median"),
    "mean": _stat("mean"),
    "min": _stat("min"),
    "max": _stat("max"),
    "ci95": _stat("ci95"),
    "ci_lo": _ci(0),
    "ci_hi": _ci(1),
    "flags": lambda f: list(f.get("flags") or []),
    "measured_at": lambda f: f.get("measured_at") or "",
    "date": lambda f: (f.get("measured_at") or "")[:10],
    "samples": lambda f: list(f.get("samples") or []),
    "identity": _conditions("identity"),
    "info": _conditions("info"),
    "status": lambda f: f.get("status"),
    "status_reason": lambda f: f.get("status_reason"),
    "superseded_by": lambda f: f.get("superseded_by"),
}
FIELDS: tuple[str, ...] = tuple(_FIELDS)


def fields(fact: Mapping[str, Any], names: Sequence[str] = FIELDS) -> Shown:
    """The display fields `names` of `fact` (JSON data or a status row), in that order."""
    return cast(Shown, {name: _FIELDS[name](fact) for name in names})
