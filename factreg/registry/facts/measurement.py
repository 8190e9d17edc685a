"""A measurement as a caller gives it (`NewFact`), checked and turned into the rows of one version: its numbers
parsed, its statistics and its integrity flags computed. No database access."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from factreg import clock, stats
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import UsageError
from factreg.registry import conditions as cond
from factreg.registry import freshness, provenance
from factreg.registry.ids import check_id
from factreg.registry.metrics import Metric, check_value, get_metric, missing_required
from factreg.registry.types import STAT_COLUMNS, Prepared, StatColumns, VersionRef, VersionRow
from factreg.secrets import redact

METHOD_KINDS = ("manual", "llama-bench", "probe", "sweep", "derived", "imported")


def _plugin_kind(kind: Any) -> bool:
    """Whether an installed plugin provides this method kind (plugins are looked for only for a kind not factreg's)."""
    from factreg import plugins

    return isinstance(kind, str) and plugins.verifier(kind) is not None


@dataclass
class NewFact:
    """What a caller knows about one measurement; `build_rows` turns it into registry rows."""

    id: str
    metric: str
    value: float | None = None
    samples: Sequence[float] | None = None
    unit: str | None = None
    spread: float | None = None
    n: int | None = None
    identity: Mapping[str, Any] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)
    subject: str | None = None
    measured_at: str | None = None
    warn_after: str | None = None
    error_after: str | None = None
    tolerance: float | None = None
    note: str | None = None
    method: Mapping[str, Any] | None = None
    raw: str | None = None
    direction: str | None = None
    derived_from: list[VersionRef] | None = None
    extra_flags: Sequence[str] = ()
    # The value's own 95% interval when it is not the mean's (a percentile: its order-statistic interval).
    interval: tuple[float | None, float | None] | None = None
    # Provenance: recorded here (and so trusted), or imported from `source` (trusted only when the user says so).
    origin: str = provenance.RECORDED
    source: str | None = None
    trusted: bool = True


# Bounds of what a fact holds: statistics of numbers up to 1e100 cannot overflow a float (squares, sums), and a
# sample count fits every database's integer.
MAX_MAGNITUDE = 1e100
MAX_N = 1_000_000_000


def _finite(x: Any, what: str) -> float:
    # float() also takes `1_000` and non-ASCII digits: a number on the command line or in a file is plain ASCII.
    if isinstance(x, bool) or (isinstance(x, str) and ("_" in x or not x.isascii())):
        raise UsageError(f"{what} must be a number, got {str(x)[:40]!r}")
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        raise UsageError(f"{what} must be a number, got {str(x)[:40]!r}") from None
    if not math.isfinite(v):
        raise UsageError(f"{what} must be a finite number, got {str(x)[:40]!r}")
    if abs(v) > MAX_MAGNITUDE:
        raise UsageError(f"{what} must be within ±{MAX_MAGNITUDE:g}, got {str(x)[:40]!r}")
    return v


def parse_number(text: str, what: str) -> float:
    """A finite number from the command line (plain decimal: no `nan`, `inf` or `1_000`)."""
    return _finite(text.strip(), what)


def parse_samples(text: str) -> list[float]:
    """`"0.43,0.73,0.85"` → floats; empty, non-numeric, NaN and inf are refused, and more than
    stats.MAX_SAMPLES before any is read."""
    parts = [p.strip() for p in text.replace(";", ",").split(",")]
    if len(parts) > stats.MAX_SAMPLES:
        raise UsageError(f"{len(parts):,} samples: at most {stats.MAX_SAMPLES:,} are kept per version")
    if not text.strip() or any(p == "" for p in parts):
        raise UsageError(f"--samples takes comma-separated numbers, got {text!r}")
    return [_finite(p, "every sample") for p in parts]


def in_range(metric: str, value: float, samples: Sequence[float], where: str) -> None:
    """UsageError naming `where` when a stored version holds more samples than a version keeps, or (for a
    vocabulary metric) a value or sample its metric cannot have (a negative latency): what `build_rows` refuses,
    for rows that arrive whole (an import's `fact` lines)."""
    from factreg.registry.metrics import known

    if len(samples) > stats.MAX_SAMPLES:
        raise UsageError(f"{where}: {len(samples):,} samples: at most {stats.MAX_SAMPLES:,} are kept per version")
    found = known(metric)
    if found is None:
        return
    try:
        check_value(found, value, "the value")
        for x in samples:
            check_value(found, x, "a sample")
    except UsageError as exc:
        raise UsageError(f"{where}: {exc.message}") from None


def build_rows(new: NewFact, min_uptime_s: float = DEFAULT_MIN_UPTIME_S) -> Prepared:
    """Validate a measurement and compute its statistics and flags; no database access."""
    fact_id = check_id(new.id)
    metric = get_metric(new.metric, new.unit, new.direction)
    samples, spread = _checked_numbers(new, metric)
    _check_thresholds(new)
    method = dict(new.method or {"kind": "manual"})
    if method.get("kind") not in METHOD_KINDS and not _plugin_kind(method.get("kind")):
        raise UsageError(f"unknown method kind {method.get('kind')!r}")
    identity, info = cond.split(new.identity, new.info)
    measured_at = clock.iso(clock.parse(new.measured_at, "--measured-at")) if new.measured_at else clock.iso()

    value, spread, n, row_stats = _statistics(new, samples, spread)
    check_value(metric, value, "the value")
    if new.interval is not None:
        row_stats["ci_lo"], row_stats["ci_hi"] = new.interval
    flags = _flags(new, metric, n, row_stats["cv"], identity, info, min_uptime_s)

    subject = new.subject if new.subject is not None else (fact_id.rsplit("/", 1)[0] if "/" in fact_id else None)
    version_row = cast("VersionRow", {  # its `version` is given when the row is written
        "fact_id": fact_id, "subject": subject, "metric": metric.name, "unit": metric.unit,
        "direction": metric.direction, "value": value, "spread": spread, "n": n, **row_stats,
        "flags": json.dumps(flags), "measured_at": measured_at, "recorded_at": clock.iso(),
        "method": json.dumps(method, sort_keys=True), "warn_after": new.warn_after,
        "error_after": new.error_after, "tolerance": new.tolerance, "raw": new.raw,
        "note": None if new.note is None else redact(new.note),
        "derived_from": json.dumps(new.derived_from) if new.derived_from else None,
        "recorded_by": provenance.user(), "origin": new.origin, "source": new.source, "registry_id": None,
        "trust": None,
    })
    return {
        "version": version_row,
        "samples": samples,
        "conditions": [(k, v, cond.IDENTITY) for k, v in identity.items()]
        + [(k, v, cond.INFO) for k, v in info.items()],
        "trusted": new.trusted,
    }


def _checked_numbers(new: NewFact, metric: Metric) -> tuple[list[float], float | None]:
    """The samples and spread of `new`, checked (value or samples given, bounds, n, tolerance)."""
    if (new.value is None) == (new.samples is None or len(new.samples) == 0) and new.samples is None:
        raise UsageError("give --value or --samples")
    if new.samples is not None and len(new.samples) == 0:
        raise UsageError("--samples is empty: give at least one number")
    if new.samples is not None and len(new.samples) > stats.MAX_SAMPLES:
        raise UsageError(f"{len(new.samples):,} samples: at most {stats.MAX_SAMPLES:,} are kept per version "
                         "(summarise them, or record the run's percentiles as facts)")
    samples = [_finite(x, "every sample") for x in new.samples] if new.samples is not None else []
    for x in samples:
        check_value(metric, x, "a sample")
    spread = None if new.spread is None else _finite(new.spread, "--spread")
    if spread is not None and spread < 0:
        raise UsageError("--spread cannot be negative")
    if new.n is not None and (not isinstance(new.n, int) or isinstance(new.n, bool) or not 1 <= new.n <= MAX_N):
        raise UsageError(f"--n must be a whole number from 1 to {MAX_N:,}, got {str(new.n)[:40]!r}")
    if samples and new.n is not None and new.n != len(samples):
        raise UsageError(f"--n {new.n} does not match the {len(samples)} samples given")
    if new.tolerance is not None and not (0 < _finite(new.tolerance, "--tolerance") < 10):
        raise UsageError("--tolerance is a fraction, e.g. 0.1 for ±10%")
    return samples, spread


def _check_thresholds(new: NewFact) -> None:
    """UsageError when `warn_after` or `error_after` is no duration, or warns after the error."""
    for dur in (new.warn_after, new.error_after):
        if dur is not None:
            freshness.parse_duration(dur)
    if new.warn_after and new.error_after and (
        freshness.parse_duration(new.warn_after) > freshness.parse_duration(new.error_after)
    ):
        raise UsageError("--warn-after cannot be longer than --error-after")


def _statistics(new: NewFact, samples: list[float], spread: float | None
                ) -> tuple[float, float | None, int | None, StatColumns]:
    """(value, spread, n, stat columns): summarised from the samples, or from the value ± spread given."""
    if samples:
        summary = stats.summarize(samples)
        assert summary is not None
        value = _finite(new.value, "--value") if new.value is not None else summary.median
        if spread is None:
            spread = summary.stdev
        row_stats = StatColumns(
            mean=summary.mean, median=summary.median, stdev=summary.stdev, min=summary.min, max=summary.max,
            iqr=summary.iqr, cv=summary.cv, ci_lo=summary.ci95[0] if summary.ci95 else None,
            ci_hi=summary.ci95[1] if summary.ci95 else None,
        )
        return value, spread, summary.n, row_stats
    value = _finite(new.value, "--value")
    n = new.n
    row_stats = cast(StatColumns, dict.fromkeys(STAT_COLUMNS))
    row_stats["mean"] = value
    if spread is not None:
        row_stats["stdev"] = spread
        row_stats["cv"] = spread / abs(value) if value else None
        if n and n >= 2:
            half = stats.t_ppf(0.975, n - 1) * spread / math.sqrt(n)
            row_stats["ci_lo"], row_stats["ci_hi"] = value - half, value + half
    return value, spread, n, row_stats


def _flags(new: NewFact, metric: Metric, n: int | None, cv: float | None, identity: dict[str, str],
           info: dict[str, str], min_uptime_s: float) -> list[str]:
    """The integrity flags of a version: from its statistics, its conditions and the caller's extra flags."""
    flags = stats.flags_for(n, cv)
    if not identity or missing_required(metric, identity):
        flags.append("no_conditions")
    if cond.is_cold(identity, info, min_uptime_s):
        flags.append("cold")
    merged = {**info, **identity}
    if merged.get("thinking", "").lower() in ("on", "true", "1", "yes"):
        flags.append("thinking_on")
    if merged.get("cache_hit", "").lower() in ("true", "1", "yes"):
        flags.append("cache_hit")
    for extra in new.extra_flags:
        if extra not in flags:
            flags.append(extra)
    return flags
