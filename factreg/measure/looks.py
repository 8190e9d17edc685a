"""The batches of a verification beyond its first: whether another batch could decide a verdict, two batches
pooled as one measurement, and the re-run that must reproduce a refutation — its share of the budget, its looks
beside the first run's, and when two refuting runs agree (`steady`). The looks themselves are
`measure/sequential.py`; `measure/verify.py` runs them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from factreg.measure import control
from factreg.measure.measurement import Measurement
from factreg.measure.result import VerifyResult
from factreg.verdicts import DEFAULT_TOLERANCE, Verdict


def needs_more(result: VerifyResult) -> bool:
    """Another batch could decide it: inconclusive only because the re-run was too noisy (it, or its comparison
    relative to the interleaved control, asked for more new samples) — not limited by the fact's own imprecision,
    nor by co-runners or a confirmation the control withdrew (those ask for no samples)."""
    # A server kept from a CPU during the run (`denied`, measure/endpoint.py): more batches beside the same
    # co-runners would measure them, not the server — a busier machine must not refute by sheer sample size.
    return result["verdict"] == Verdict.INCONCLUSIVE and result.get("needed_n") is not None and "denied" not in result


def left(result: VerifyResult) -> float:
    """What a run left of its budget, for the re-run that must reproduce its refutation (0 when it had none)."""
    looks = result.get("sequential") or {}
    budget, spent = looks.get("budget_s"), looks.get("spent_s")
    if not isinstance(budget, (int, float)) or not isinstance(spent, (int, float)):
        return 0.0
    return max(0.0, float(budget) - float(spent))


def runs(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The looks of a refutation's re-run, with the first run's beside them and the time both spent."""
    if not second:
        return dict(first) if first else None
    out = dict(second)
    if first:
        out["first_run"] = dict(first)
        out["budget_s"] = first.get("budget_s")
        out["spent_s"] = round(float(first.get("spent_s") or 0) + float(second.get("spent_s") or 0), 3)
    return out


def pool(kind: str, a: Measurement, b: Measurement) -> Measurement:
    """Two batches as one measurement: their samples together, the newer batch's conditions and state."""
    import statistics

    if b.failure or a.failure or not a.samples or not b.samples:
        return b
    xs = [*a.samples, *b.samples]
    value = statistics.fmean(xs) if kind == "llama-bench" else statistics.median(xs)
    observed = dict(b.observed)
    if control.KEY in a.observed and control.KEY in b.observed:  # both batches' controls, each beside its samples
        from factreg.measure import interleave

        both = interleave.pooled(control.parse(a.observed[control.KEY]), len(a.samples),
                                 control.parse(b.observed[control.KEY]), len(b.samples))
        observed[control.KEY] = json.dumps(both, sort_keys=True, separators=(",", ":"))
    return Measurement(samples=xs, value=value, spread=statistics.stdev(xs) if len(xs) > 1 else None, n=len(xs),
                       observed=observed, message=b.message, raw=b.raw,
                       flags=list(dict.fromkeys([*a.flags, *b.flags])))  # fmt: skip


def refutes(result: VerifyResult) -> bool:
    """Refuted, or refuted as measured and only explained by the machine's speed (`speed.adjust`): either way
    re-measured, so that one control run that moved by chance can neither refute nor excuse a fact alone."""
    return result["verdict"] == Verdict.REFUTED or result.get("as_measured") == Verdict.REFUTED


def steady(first: VerifyResult, second: VerifyResult, attempt: int) -> VerifyResult:
    """Both runs refute: keep `refuted` only when the gap to the fact exceeds tolerance plus the runs' own drift.

    On a shared machine the mean of a run moves between runs by more than a run's own samples show; two
    re-runs that disagree with each other by X% cannot refute a fact by less than tolerance + X%. Relative to the
    interleaved control (`measure/interleave.py`) that drift cancels and each run's interval already holds the
    rest: two runs that each refute relative to their own controls, the same way, reproduce the refutation.
    """
    r1, r2 = first.get("rel_diff"), second.get("rel_diff")
    rel1, rel2 = first.get("relative"), second.get("relative")
    if rel1 and rel2:
        r1, r2 = rel1.get("rel_diff"), rel2.get("rel_diff")
        if (rel1.get("verdict") == rel2.get("verdict") == Verdict.REFUTED and r1 is not None and r2 is not None
                and (r1 > 0) == (r2 > 0)):  # fmt: skip
            second["message"] += (f" (reproduced in {attempt + 2} runs, each relative to its own interleaved "
                                  f"control: {r1 * 100:+.0f}% and {r2 * 100:+.0f}%)")
            return second
    tol = second.get("tolerance", DEFAULT_TOLERANCE)
    if r1 is None or r2 is None:
        second["message"] += f" (reproduced in {attempt + 2} runs)"
        return second
    drift = abs(r1 - r2)
    if (r1 > 0) == (r2 > 0) and min(abs(r1), abs(r2)) > tol + drift:
        second["message"] += f" (reproduced in {attempt + 2} runs, which differ by {drift * 100:.0f}%)"
        return second
    return {
        **second,
        "verdict": Verdict.INCONCLUSIVE,
        "message": second["message"] + f"; but the machine is not steady: the two runs found {r1 * 100:+.0f}% and "
        f"{r2 * 100:+.0f}%, {drift * 100:.0f}% of the fact's value apart, so a gap of {min(abs(r1), abs(r2)) * 100:.0f}% "
        "does not refute it (re-verify on a quieter machine)",
    }
