"""Guarded comparisons: the ratio of two facts' medians with a 95% interval, refused when they differ.

Two facts are only compared when they measure the same metric in the same unit under the same identity
conditions; warm and cold count as a condition (the `cold` flag). Every difference is a reason to refuse,
unless it is allowed by name (`--allow-different model`): that is how a user says what the comparison is
about. The ratio is A's median over B's, worded by the metric's direction.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict

from factreg import fmt, stats
from factreg.registry.ids import ref
from factreg.registry.metrics import HIGHER, LOWER, get_metric

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - exercised on 3.10 only
    from typing_extensions import NotRequired

if TYPE_CHECKING:
    from factreg.registry.facts import NewFact
    from factreg.registry.types import FactData

BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 20261026
# Keys whose state is read from the `cold` flag instead of compared as text.
WARM_KEYS = ("warm", "cold")


class Difference(TypedDict):
    """Why A and B are not comparable: the key that differs, each side's value, and a line for people."""

    key: str
    a: str | float | None
    b: str | float | None
    message: str


class IntegrityWarning(TypedDict):
    """An integrity warning about the comparison (`few_samples`, `high_variance`, `cold`, `no_interval`)."""

    code: str
    message: str


class Comparison(TypedDict):
    """The ratio of A's median to B's, with its interval and wording, or why it was refused (`compare --json`)."""

    a: str
    b: str
    metric: str | None
    unit: str | None
    direction: str | None
    a_median: float
    b_median: float
    allowed: list[str]
    ratio: float | None
    ci95: list[float] | None
    interval_method: str | None
    wording: str | None
    refused: bool
    reasons: list[Difference]
    warnings: list[IntegrityWarning]
    recorded: NotRequired[str]  # `ID@vN` of the derived fact, when the comparison was recorded (`--record`)


def median_of(fact: FactData) -> float:
    """A fact's median: of its samples when it has them, else its value."""
    samples = fact.get("samples") or []
    if samples:
        return stats.summarize(samples).median
    return float(fact["value"])


def warm_state(fact: FactData) -> str:
    """`cold` when the fact was measured cold, else `warm`."""
    return "cold" if "cold" in (fact.get("flags") or []) else "warm"


def parse_allowed(values: Iterable[str] | None) -> set[str]:
    """`--allow-different` values, repeatable and comma-separated; `warm` is the same key as `cold`."""
    out: set[str] = set()
    for value in values or []:
        for key in value.split(","):
            key = key.strip()
            if key:
                out.add("cold" if key == "warm" else key)
    return out


def _label(fact: FactData) -> str:
    return ref(fact["id"], fact["version"])


def reasons_to_refuse(a: FactData, b: FactData, allowed: set[str]) -> list[Difference]:
    """Every difference that makes A and B incomparable, as {key, a, b, message}."""
    reasons: list[Difference] = []
    if a["metric"] != b["metric"]:
        reasons.append(
            {
                "key": "metric",
                "a": a["metric"],
                "b": b["metric"],
                "message": f"different metrics: {a['metric']} vs {b['metric']} (never compared with each other)",
            }
        )
    if a["unit"] != b["unit"]:
        reasons.append(
            {"key": "unit", "a": a["unit"], "b": b["unit"], "message": f"different units: {a['unit']} vs {b['unit']}"}
        )
    ia, ib = a["conditions"]["identity"], b["conditions"]["identity"]
    for key in sorted(set(ia) | set(ib)):
        if key in WARM_KEYS or key in allowed or ia.get(key) == ib.get(key):
            continue
        va, vb = ia.get(key), ib.get(key)
        shown_a = va if va is not None else "(not recorded)"
        shown_b = vb if vb is not None else "(not recorded)"
        reasons.append(
            {
                "key": key,
                "a": va,
                "b": vb,
                "message": f"{key} differs: {shown_a} vs {shown_b} (allow with --allow-different {key})",
            }
        )
    wa, wb = warm_state(a), warm_state(b)
    if wa != wb and "cold" not in allowed:
        reasons.append(
            {
                "key": "cold",
                "a": wa,
                "b": wb,
                "message": f"cold vs warm: A was measured {wa}, B {wb} (allow with --allow-different cold)",
            }
        )
    return reasons


def warnings_for(a: FactData, b: FactData) -> list[IntegrityWarning]:
    """Integrity warnings: few samples, high variance, measured cold."""
    out: list[IntegrityWarning] = []
    for code, text in (("few_samples", "n={n}"), ("high_variance", "CV {cv}"), ("cold", "measured cold")):
        which = []
        for name, fact in (("A", a), ("B", b)):
            flagged = code in (fact.get("flags") or [])
            if code == "few_samples":
                flagged = flagged or (fact.get("n") or 0) < stats.FEW_SAMPLES
            if flagged:
                cv = (fact.get("stats") or {}).get("cv")
                which.append(
                    f"{name} {fact['id']}: "
                    + text.format(n=fact.get("n") or "unknown", cv=f"{cv:.0%}" if cv is not None else "unknown")
                )
        if which:
            hint = {
                "few_samples": "trust the direction, not the exact factor",
                "high_variance": "the interval is wide",
                "cold": "cold numbers are not typical of a settled server",
            }[code]
            out.append({"code": code, "message": f"{code}: {'; '.join(which)} — {hint}"})
    return out


def _machine_warnings(a: FactData, b: FactData) -> list[IntegrityWarning]:
    """The two facts' control measurements differ, or one has none (`measure/control.py`)."""
    from factreg.measure import speed

    return [{"code": w["code"], "message": w["message"]} for w in speed.compare_warnings(a, b)]


def bootstrap_ci(
    xs: list[float], ys: list[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval of median(xs)/median(ys); fixed seed, so it is deterministic."""
    rng = random.Random(seed)
    ratios: list[float] = []
    for _ in range(resamples):
        mx = stats.summarize([xs[rng.randrange(len(xs))] for _ in xs]).median
        my = stats.summarize([ys[rng.randrange(len(ys))] for _ in ys]).median
        if my == 0:
            continue
        ratios.append(mx / my)
    if len(ratios) < resamples // 2:
        return None
    ratios.sort()
    return (stats.quantile(ratios, 0.025), stats.quantile(ratios, 0.975))


def _stdev_n(fact: FactData) -> tuple[float | None, int | None]:
    samples = fact.get("samples") or []
    if len(samples) >= 2:
        s = stats.summarize(samples)
        return s.stdev, s.n
    return fact.get("spread"), fact.get("n")


def delta_ci(a: FactData, b: FactData, ratio: float) -> tuple[float, float] | None:
    """Delta-method 95% interval of the ratio on the log scale, from each side's spread and n."""
    sa, na = _stdev_n(a)
    sb, nb = _stdev_n(b)
    ma, mb = median_of(a), median_of(b)
    if None in (sa, sb, na, nb) or not na or not nb or ma <= 0 or mb <= 0 or ratio <= 0:
        return None
    assert sa is not None and sb is not None
    var = (sa / ma) ** 2 / na + (sb / mb) ** 2 / nb
    half = stats.norm_ppf(0.975) * math.sqrt(var)
    return (ratio * math.exp(-half), ratio * math.exp(half))


def wording(ratio: float, direction: str | None, family: str | None = None) -> str:
    """`3.1× slower`: how A compares with B, by the metric's direction."""
    if ratio == 1:
        return "the same"
    if ratio <= 0:
        return f"A/B = {fmt.num(ratio, 2)}"
    bigger = ratio > 1
    factor = fmt.num(ratio if bigger else 1 / ratio, 2)
    factor = factor[:-2] if factor.endswith(".0") else factor
    if direction == LOWER:
        word = "slower" if bigger else "faster"
        if family not in ("latency", None):
            word = "worse" if bigger else "better"
    elif direction == HIGHER:
        word = "faster" if bigger else "slower"
        if family != "rate":
            word = "better" if bigger else "worse"
    else:
        word = "higher" if bigger else "lower"
    return f"{factor}× {word}"


def compare(a: FactData, b: FactData, allowed: Iterable[str] = ()) -> Comparison:
    """Compare fact A with fact B: {ratio, ci95, direction, wording, refused, reasons, warnings, ...}."""
    allow = parse_allowed(allowed)
    reasons = reasons_to_refuse(a, b, allow)
    direction = a.get("direction") if a.get("direction") == b.get("direction") else None
    try:
        family: str | None = get_metric(a["metric"], a["unit"], direction).family
    except Exception:  # a custom metric whose unit clashes: family is only used for wording
        family = None
    result: Comparison = {
        "a": _label(a),
        "b": _label(b),
        "metric": a["metric"] if a["metric"] == b["metric"] else None,
        "unit": a["unit"] if a["unit"] == b["unit"] else None,
        "direction": direction,
        "a_median": median_of(a),
        "b_median": median_of(b),
        "allowed": sorted(allow),
        "ratio": None,
        "ci95": None,
        "interval_method": None,
        "wording": None,
        "refused": bool(reasons),
        "reasons": reasons,
        "warnings": warnings_for(a, b) + _machine_warnings(a, b),
    }
    if reasons:
        return result
    mb = result["b_median"]
    if mb == 0:
        result["refused"] = True
        result["reasons"] = [
            {"key": "zero", "a": result["a_median"], "b": 0, "message": "B's median is 0: a ratio is undefined"}
        ]
        return result
    ratio = result["a_median"] / mb
    xs, ys = list(a.get("samples") or []), list(b.get("samples") or [])
    ci: tuple[float, float] | None
    method: str | None
    if len(xs) >= 2 and len(ys) >= 2:
        ci, method = bootstrap_ci(xs, ys), "bootstrap"
    else:
        ci, method = delta_ci(a, b, ratio), "delta"
    if ci is None:
        method = None
        result["warnings"].append(
            {"code": "no_interval", "message": "no_interval: a spread or n is missing, so there is no interval"}
        )
    result.update(
        {"ratio": ratio, "ci95": list(ci) if ci else None, "interval_method": method,
         "wording": wording(ratio, direction, family)}
    )
    return result


def summary_line(result: Comparison) -> str:
    """One line for people: `A is 3.1× slower than B (ratio 3.11, 95% interval 2.4–9.5, bootstrap)`."""
    if result["refused"]:
        return f"refused: {result['a']} and {result['b']} are not comparable"
    text = (
        f"{result['a']} is {result['wording']} than {result['b']} ({result['metric']}, ratio of medians "
        f"{fmt.num(result['ratio'])}"
    )
    if result["ci95"]:
        lo, hi = result["ci95"]
        text += f", 95% interval {fmt.num(lo)}–{fmt.num(hi)} ({result['interval_method']})"
    return text + ")"


def derived_fact(result: Comparison, a: FactData, b: FactData, fact_id: str) -> NewFact:
    """The comparison as a derived fact (metric `ratio`) that depends on the two versions compared."""
    from factreg.registry.facts import NewFact

    assert result["ratio"] is not None, "a refused comparison is never recorded"
    info: dict[str, str] = {"wording": str(result["wording"])}
    if result["ci95"]:
        info["ci95"] = f"{result['ci95'][0]:.6g}..{result['ci95'][1]:.6g}"
        info["interval_method"] = str(result["interval_method"])
    if result["allowed"]:
        info["allowed_differences"] = ",".join(result["allowed"])
    flags = [w["code"] for w in result["warnings"] if w["code"] in ("few_samples", "high_variance", "cold")]
    return NewFact(
        id=fact_id,
        metric="ratio",
        value=float(result["ratio"]),
        n=min(a.get("n") or 1, b.get("n") or 1),
        identity={"numerator": a["id"], "denominator": b["id"], "of_metric": str(a["metric"])},
        info=info,
        subject=None,
        measured_at=max(a["measured_at"], b["measured_at"]),
        method={
            "kind": "derived",
            "op": "ratio_of_medians",
            "a": a["id"],
            "b": b["id"],
            "allow_different": list(result["allowed"]),
        },
        derived_from=[{"id": a["id"], "version": a["version"]}, {"id": b["id"], "version": b["version"]}],
        note=f"{a['id']} is {result['wording']} than {b['id']}",
        extra_flags=flags,
    )
