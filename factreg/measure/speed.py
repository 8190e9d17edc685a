"""The machine's speed in a llama-bench verdict: the speed factor (control now / control then), the measured run's
own CPU share and run-queue delay, the control-relative comparison of the interleaved control, and how they amend
the statistics' verdict (`adjust`; docs/machine.md). `measure/control.py` runs the control; probes are judged by the
endpoint's own evidence instead (`measure/endpoint.py`).

- control held (within the tolerance) → the verdict stands as the statistics reached it;
- control moved → the measurement is also judged scaled by the factor (a rate ÷ factor, a latency × factor),
  against the tolerance widened by the factor's own 95% interval and `TRACKING` × |ln factor| (at most
  `MAX_GAP`): refuted only when both the measurement and the scaled measurement refute; otherwise `inconclusive`
  with the factor, the controls and the scaled value. A confirmation stands unless the control moved
  significantly and scaled the measurement would not agree;
- both sides measured with the interleaved control → the control-relative comparison decides what the raw one
  cannot (`_decide_paired`, `measure/interleave.py`)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from factreg import fmt
from factreg.measure import interleave, machine
from factreg.measure.control import KEY, MAX_GAP, TRACKING, of_fact, parse

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.measure.judge import Side
    from factreg.measure.measurement import Measurement
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData

@dataclass(frozen=True)
class Factor:
    """The speed factor (control now / control then), its relative 95% half-width, and the p-value of the
    controls' difference (Welch; None when a side has fewer than two samples)."""

    value: float
    half_width: float
    p_value: float | None


def _side(ctl: Mapping[str, Any]) -> tuple[float, float, int] | None:
    xs = [float(x) for x in ctl.get("samples") or [] if isinstance(x, (int, float))]
    if len(xs) >= 2:
        return statistics.fmean(xs), statistics.stdev(xs), len(xs)
    value = ctl.get("value")
    return (float(value), 0.0, 1) if isinstance(value, (int, float)) else None


def speed_factor(then: Mapping[str, Any], now: Mapping[str, Any]) -> tuple[Factor | None, str]:
    """How much faster the machine ran now than then (control now / control then), or None and why not."""
    import math

    from factreg import stats

    if not then:
        return None, "the fact was recorded without a control measurement"
    if not now:
        return None, "this verification ran no control measurement"
    if now.get("error") and not now.get("value"):
        return None, f"the control could not run now ({now['error']})"
    if then.get("error") and not then.get("value"):
        return None, f"the fact's control could not run ({then['error']})"
    if then.get("kind") != now.get("kind") or then.get("spec") != now.get("spec"):
        return None, "the control differs from the fact's (another workload or device settings)"
    a, b = _side(then), _side(now)
    if a is None or b is None or a[0] <= 0 or b[0] <= 0:
        return None, "a control has no value"
    rel_se = math.sqrt((a[1] ** 2 / a[2]) / a[0] ** 2 + (b[1] ** 2 / b[2]) / b[0] ** 2)
    test = stats.welch(a[0], a[1], a[2], b[0], b[1], b[2])
    return Factor(b[0] / a[0], 1.96 * rel_se, test.p_value if test else None), ""


def share_factor(then: Mapping[str, Any], now: Mapping[str, Any]) -> float | None:
    """How much more CPU the measured run got now than then (CPU-seconds per second of its run), or None."""
    a, b = then.get("run_cpu_share"), now.get("run_cpu_share")
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0:
        return float(b) / float(a)
    return None


def wait_factor(then: Mapping[str, Any], now: Mapping[str, Any]) -> float | None:
    """How much more of the CPU it wanted the measured run got now than then, from its own run-queue delay and
    the steal over it: (1 − wait now)(1 − steal now) / ((1 − wait then)(1 − steal then)); a side that did not
    record it counts as unhindered. None when the run now did not record it."""

    def got(side: Mapping[str, Any]) -> float:
        wait, steal = side.get("run_wait"), side.get("run_steal")
        w = float(wait) if isinstance(wait, (int, float)) and 0 <= wait < 1 else 0.0
        st = float(steal) if isinstance(steal, (int, float)) and 0 <= steal < 1 else 0.0
        return (1 - w) * (1 - st)

    if not isinstance(now.get("run_wait"), (int, float)):
        return None
    return got(now) / got(then)


def moved(factor: float, tolerance: float) -> bool:
    """The control moved: by more than the tolerance, either way (2× faster and 2× slower alike)."""
    return max(factor, 1 / factor) - 1 > tolerance


def allowed_gap(factor: Factor, tolerance: float) -> float:
    """How far a scaled measurement may lie from the fact and still agree: the tolerance, widened by the factor's
    own uncertainty and by how imperfectly two workloads follow one change of speed."""
    import math

    widened = tolerance + factor.half_width + TRACKING * abs(math.log(factor.value))
    return max(tolerance, min(widened, MAX_GAP))


def describe(factor: float) -> str:
    """`2.0× faster` / `1.6× slower`."""
    return f"{factor:.1f}× faster" if factor >= 1 else f"{1 / factor:.1f}× slower"


def control_text(then: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    unit = str(now.get("unit") or then.get("unit") or "")
    return f"control {_short(then.get('value'))} → {_short(now.get('value'))} {unit}".rstrip()


def _short(x: Any) -> str:
    if not isinstance(x, (int, float)):
        return "?"
    if abs(x) >= 1000:
        return f"{x / 1000:.1f}k"
    return fmt.num(float(x))


def scaled_side(side: Side, factor: float, direction: str | None) -> Side:
    """The new side as if measured on the machine as it was: a rate ÷ factor, a latency × factor."""
    from factreg.measure.judge import Side

    k = 1 / factor if direction != "lower" else factor
    return Side(side.mean * k, side.sd * k if side.sd is not None else None, side.n)


def adjust(fact: FactData, m: Measurement, result: dict[str, Any], settings: Settings | None) -> dict[str, Any]:
    """The verdict with the machine's speed taken into account (docs/machine.md). `result` is the statistics'
    verdict (a VerifyResult); returns it amended with `speed_factor`, `scaled`, `machine`, `control` and, when
    the machine's speed changed the verdict, `as_measured`.

    - refuted as measured: the control held and the measured run got the CPU share it had (both within the
      tolerance) → refuted, as the statistics said; otherwise judged again scaled by each factor that moved
      (the control's, then the CPU share's): still outside `allowed_gap` under each → refuted, else
      inconclusive;
    - confirmed as measured: the control moved beyond the tolerance, significantly, and scaled the measurement
      would lie outside `allowed_gap` → inconclusive; else confirmed;
    - inconclusive stays inconclusive; other verdicts are left alone.
    """
    from factreg.measure import endpoint
    from factreg.measure import judge as judging
    from factreg.verdicts import Verdict

    if (fact.get("method") or {}).get("kind") == "probe" or endpoint.KEY in m.observed:
        return endpoint.adjust(fact, m, result, settings)  # a probe: the server's own evidence, never a client loop
    then = of_fact(fact)
    now = parse(m.observed.get(KEY))
    state_then = machine.parse(((fact.get("conditions") or {}).get("info") or {}).get(machine.KEY))
    state_now = machine.parse(m.observed.get(machine.KEY))
    result["machine"] = {"fact": state_then, "now": state_now}
    result["control"] = {"fact": then, "now": now}
    verdict = result.get("verdict")
    if verdict not in (Verdict.CONFIRMED, Verdict.REFUTED, Verdict.INCONCLUSIVE):
        return result
    factor, why_not = speed_factor(then, now)
    load = f"machine now: {machine.summary(state_now)}" if state_now else ""
    if factor is None:
        result["speed_factor"] = None
        result["message"] += f"; the machine could not be compared: {why_not}"
        if not then and now.get("value"):
            result["message"] += " (this verification's control is kept as the fact's from now on)"
        return result
    f = factor.value
    result["speed_factor"] = round(f, 3)
    tolerance = float(result.get("tolerance") or judging.tolerance_for(fact, settings))
    alpha = float(settings.get("verify.alpha", judging.DEFAULT_ALPHA)) if settings is not None else 0.05
    held = not moved(f, tolerance)
    share = share_factor(then, now)
    result["cpu_share_factor"] = round(share, 3) if share is not None else None
    new = judging.new_side(m.samples, m.value, m.spread, m.n)
    # What could explain a difference: the control's factor, and the measured run's own CPU share (llama-bench).
    candidates: list[tuple[Factor, str]] = []
    if not held:
        candidates.append((factor, f"the machine ran {describe(f)} than when the fact was recorded: "
                                   f"{control_text(then, now)}"))
    waited = wait_factor(then, now)
    own = _own_share(then, now, share, waited, tolerance)
    if verdict == Verdict.REFUTED:
        prefix = "the machine held its speed, but " if held else ""
        candidates += [(cand, f"{prefix}{why}; {control_text(then, now)}" if i == 0 else why)
                       for i, (cand, why) in enumerate(own)]  # fmt: skip
    significant = factor.p_value is not None and factor.p_value < alpha
    paired = None if new is None else interleave.compare(fact, m.samples, then, now, tolerance,
                                                         tracking_gap(f, tolerance), alpha)  # fmt: skip
    if paired is not None and new is not None:
        contended = _contention(then, now, waited, tolerance)
        runs_moved = _runs_moved(then, now, tolerance, alpha)
        return _decide_paired(fact, result, paired, contended,
                              (moved(f, tolerance) and significant) if runs_moved is None else runs_moved, (then, now),
                              tolerance, alpha, load)  # fmt: skip
    if not candidates or new is None or (verdict == Verdict.CONFIRMED and not significant):
        how = "held its speed" if held else f"ran {describe(f)}, within the control's own noise"
        result["message"] += f"; the machine {how} ({control_text(then, now)}, ×{f:.2f})" + (
            f"; {load}" if load else "")
        return result
    tried = []
    for cand, speed in candidates:
        gap = allowed_gap(cand, tolerance)
        scaled = scaled_side(new, cand.value, fact.get("direction"))
        outcome = judging.compare(judging.old_side(fact), scaled, gap, alpha, unit=fact["unit"])
        rel = f"{outcome.rel_diff * 100:+.0f}%" if outcome.rel_diff is not None else "?"
        scaled_text = (f"scaled to the machine as it was: {fmt.value(scaled.mean, scaled.sd, fact['unit'])} "
                       f"({rel}; agreement within ±{gap * 100:.0f}%: the tolerance, the factor's noise and tracking)")
        raw = result.get("rel_diff")
        if (outcome.verdict == Verdict.REFUTED and raw is not None and outcome.rel_diff is not None
                and raw * outcome.rel_diff < 0):
            # Scaled by the whole factor the measurement overshoots to the other side of the fact: a part of the
            # factor explains the difference exactly, so the machine's change can account for it — not a refutation.
            outcome = replace(outcome, verdict=Verdict.INCONCLUSIVE)
            scaled_text += ": as measured below the fact, scaled above it (or the reverse), so part of the change explains it"
        tried.append((outcome, scaled, gap, f"{speed}; {scaled_text}"))
        if outcome.verdict != Verdict.REFUTED:
            break  # one change of the machine that explains the difference is enough to doubt it
    outcome, scaled, gap, detail = tried[-1]
    result["scaled"] = {"value": scaled.mean, "spread": scaled.sd, "n": scaled.n, "verdict": str(outcome.verdict),
                        "rel_diff": outcome.rel_diff, "allowed": round(gap, 3)}  # fmt: skip
    detail = "; ".join(d for *_, d in tried) + (f"; {load}" if load else "")
    refutes = outcome.verdict == Verdict.REFUTED
    if verdict == Verdict.REFUTED and refutes:
        result["message"] += f"; {detail}: scaled it still refutes the fact"
    elif verdict == Verdict.REFUTED:
        result["as_measured"] = str(verdict)
        result["verdict"] = Verdict.INCONCLUSIVE
        result["message"] = f"{detail}: scaled, the measurement agrees (as measured: {result['message']})"
    elif verdict == Verdict.CONFIRMED and refutes:
        result["as_measured"] = str(verdict)
        result["verdict"] = Verdict.INCONCLUSIVE
        result["message"] = (f"{detail}: as measured it agrees, but scaled it would not "
                             f"(as measured: {result['message']})")
    else:
        result["message"] += f"; {detail}"
    return result


def tracking_gap(factor: float, tolerance: float) -> float:
    """How far a control-relative measurement may lie from the fact before it refutes it: the tolerance widened
    by how imperfectly the measured workload follows a change of the control's speed."""
    import math

    return max(tolerance, min(tolerance + TRACKING * abs(math.log(factor)), MAX_GAP))


def _runs_moved(then: Mapping[str, Any], now: Mapping[str, Any], tolerance: float, alpha: float) -> bool | None:
    """Whether the machine runs at another speed now, judged on whole control runs (`parts`), not on their samples:
    the samples of one short run move together, so a test on them calls a run that happened to be slow a change
    of the machine. Beyond the tolerance and significant (Welch on ln of each run's value); None without two runs
    on each side."""
    import math

    from factreg import stats

    a, b = ([math.log(float(x)) for x in side.get("parts") or [] if isinstance(x, (int, float)) and x > 0]
            for side in (then, now))  # fmt: skip
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    test = stats.welch(ma, statistics.stdev(a), len(a), mb, statistics.stdev(b), len(b))
    return moved(math.exp(mb - ma), tolerance) and test is not None and test.p_value < alpha


def _contention(
    then: Mapping[str, Any], now: Mapping[str, Any], waited: float | None, tolerance: float
) -> tuple[float, str] | None:
    """The measured runs' own evidence of other processes, when it moved beyond the tolerance: (the share of the
    CPU they wanted that they got now ÷ then, the words), from their run-queue delay and the steal."""
    if waited is None or not moved(waited, tolerance):
        return None
    how = "more" if waited < 1 else "less"
    return waited, (f"the measured runs waited on a run-queue {how} than when the fact was recorded: "
                    f"{now.get('run_wait', 0) * 100:.0f}% of their runnable time (then "
                    f"{(then.get('run_wait') or 0) * 100:.0f}%)"
                    + (f", steal {now['run_steal'] * 100:.0f}%" if now.get("run_steal") else ""))


def _own_share(
    then: Mapping[str, Any], now: Mapping[str, Any], share: float | None, waited: float | None, tolerance: float
) -> list[tuple[Factor, str]]:
    """What the control cannot see: the measured run's own CPU share and run-queue delay, when they moved."""
    out = []
    if share is not None and moved(share, tolerance):
        out.append((Factor(share, 0.0, None),
                    f"the measured run got {share:.2f}× the CPU share it had when the fact was recorded "
                    f"({then['run_cpu_share']:.2f} → {now['run_cpu_share']:.2f} CPU-seconds per second)"))
    if waited is not None and moved(waited, tolerance):
        out.append((Factor(waited, 0.0, None),
                    f"the measured llama-bench waited on a run-queue {now.get('run_wait', 0) * 100:.0f}% of its "
                    f"runnable time (when the fact was recorded: {(then.get('run_wait') or 0) * 100:.0f}%)"
                    + (f", steal {now['run_steal'] * 100:.0f}%" if now.get("run_steal") else "")))
    return out


def _decide_paired(
    fact: FactData, result: dict[str, Any], paired: interleave.Paired, contended: tuple[float, str] | None,
    machine_moved: bool, controls: tuple[Mapping[str, Any], Mapping[str, Any]], tolerance: float, alpha: float,
    load: str,
) -> dict[str, Any]:
    """The verdict when both sides were measured with the interleaved control (`measure/interleave.py`): each
    sample relative to the control runs around it, so the machine's drift between runs cancels.

    - refuted: relative to the control it refutes (as measured it need not: drift within the runs can hide a
      difference), unless as measured it refutes the other way (faster as measured, slower relative to the
      control: the machine's change decides even the direction, so nothing is shown), or unless the measured runs
      waited on a run-queue more (or less) than when the fact was recorded and the difference goes the same way:
      other processes competed with them, and what that does to memory and caches follows neither the control nor
      the run queue in proportion — a busier machine never refutes as slower; nor when it refutes only relative to the control while the control itself moved significantly
      beyond the tolerance: a workload need not follow its control in proportion, so the machine's own change
      could flip that verdict;
    - confirmed: relative to the control it is equivalent and either the machine runs as it did (its control did
      not move significantly beyond the tolerance) or the value as measured is still inside the tolerance (a
      machine that slowed for good leaves it outside) — or as measured it is equivalent and relative to the
      control it does not refute;
    - inconclusive otherwise, naming what limits it."""
    from factreg.verdicts import Verdict

    verdict, pv = result["verdict"], paired.verdict
    rel = paired.outcome
    result["relative"] = paired.as_json()
    raw = result["message"]
    f = float(result["speed_factor"])
    held = not moved(f, tolerance)
    machine_text = (f"the machine held its speed ({control_text(*controls)}, ×{f:.2f})" if held else
                    f"the machine ran {describe(f)} than when the fact was recorded ({control_text(*controls)})")
    said = f"relative to the interleaved control: {rel.message}; {machine_text}"
    tail = f"; {load}" if load else ""
    if pv == Verdict.REFUTED:
        worse = (rel.rel_diff or 0) < 0 if fact.get("direction") != "lower" else (rel.rel_diff or 0) > 0
        if contended is not None and (contended[0] < 1) == worse:  # what the control cannot see: co-runners
            return _amend(result, Verdict.INCONCLUSIVE, f"{said}; but {contended[1]}, so the difference may be "
                          f"theirs (as measured: {raw}){tail}", None)  # fmt: skip
        if verdict == Verdict.CONFIRMED:
            return _amend(result, Verdict.INCONCLUSIVE, f"as measured it agrees, but {said} (as measured: {raw})"
                          f"{tail}", None)  # fmt: skip
        if verdict == Verdict.REFUTED and _opposite(result.get("rel_diff"), rel.rel_diff):
            return _amend(result, Verdict.INCONCLUSIVE, f"{said}: as measured it differs one way and relative to "
                          "the control the other, so the machine's change between the runs decides even the "
                          f"direction (as measured: {raw}) — verify again when it runs as it did{tail}", None)
        if verdict == Verdict.REFUTED:
            result["message"] = f"{raw}; {said}{tail}"
            return result
        if machine_moved:  # the refutation would rest on the control alone, and the control itself moved
            return _amend(result, Verdict.INCONCLUSIVE, f"{said}: only relative to the control does it differ, and "
                          "the machine itself changed beyond the tolerance, which a workload need not follow in "
                          f"proportion (as measured: {raw}) — verify again when it runs as it did{tail}", None)
        return _amend(result, Verdict.REFUTED, f"{said} (as measured: {raw}){tail}", None)
    if verdict == Verdict.REFUTED:
        return _amend(result, Verdict.INCONCLUSIVE, f"{said}: the machine's change between runs accounts for the "
                      f"difference (as measured: {raw}){tail}", rel.needed_n)  # fmt: skip
    if pv == Verdict.CONFIRMED and verdict == Verdict.INCONCLUSIVE:
        raw_gap = result.get("rel_diff")
        inside = isinstance(raw_gap, (int, float)) and abs(raw_gap) <= tolerance
        if machine_moved and not inside:
            return _amend(result, Verdict.INCONCLUSIVE, f"{said}, so the fact's value itself is not shown (as "
                          f"measured: {raw}) — verify again when it runs as it did{tail}", None)  # fmt: skip
        return _amend(result, Verdict.CONFIRMED, f"{said} (as measured: {raw}){tail}", None)
    if verdict == Verdict.INCONCLUSIVE:
        result["message"] = f"{raw}; {said}{tail}"
        if rel.needed_n is not None:
            result["needed_n"] = rel.needed_n if result.get("needed_n") is None else min(result["needed_n"],
                                                                                          rel.needed_n)
        return result
    result["message"] = f"{raw}; {said}{tail}"
    return result


def _opposite(a: Any, b: Any) -> bool:
    """Whether two differences point opposite ways (one faster, one slower)."""
    return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a * b < 0


def _amend(result: dict[str, Any], verdict: str, message: str, needed_n: int | None) -> dict[str, Any]:
    """The verdict the control-relative comparison reached, keeping the statistics' own as `as_measured`."""
    result["as_measured"] = str(result["verdict"])
    result["verdict"] = verdict
    result["message"] = message
    result["needed_n"] = needed_n
    result["decided_by"] = "control-relative"
    return result


def compare_warnings(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, str]]:
    """`compare`'s warnings about the machine: the two facts' controls differ beyond the default tolerance, or
    only one has a control, or they ran different workloads (nothing when neither has a control)."""
    from factreg.verdicts import DEFAULT_TOLERANCE

    ca, cb = of_fact(a), of_fact(b)
    if not ca and not cb:
        return []
    if not ca or not cb:
        missing = "A" if not ca else "B"
        return [{"code": "control_missing", "message": f"control_missing: {missing} was recorded without a control "
                 "measurement — the machine's speed at the two measurements cannot be compared"}]
    factor, why_not = speed_factor(cb, ca)
    if factor is None:
        return [{"code": "controls_differ", "message": f"controls_differ: {why_not} — the machine's speed at the two "
                 "measurements cannot be compared"}]
    if moved(factor.value, DEFAULT_TOLERANCE):
        return [{"code": "controls_differ", "message": f"controls_differ: A was measured on a machine running "
                 f"{describe(factor.value)} than B ({control_text(cb, ca).replace('→', 'vs', 1)} for B vs A) — "
                 "part of the ratio may be the machine's, not the setup's"}]
    return []


def with_baseline(registry: Registry, fact: FactData) -> FactData:
    """A fact recorded without a control takes the control of its first confirmed verification that ran one."""
    if of_fact(fact):
        return fact
    found = registry.query(
        "SELECT observed FROM verification WHERE fact_id = :id AND fact_version = :v AND verdict = 'confirmed' "
        "AND observed LIKE :k ORDER BY pk",
        {"id": fact["id"], "v": fact["version"], "k": f'%"{KEY}"%'},
    )
    for row in found:
        ctl = parse((json.loads(row["observed"] or "{}") or {}).get(KEY))
        for key in ("parts", interleave.KEY):  # they pair the verification's own samples, not the fact's
            ctl.pop(key, None)
        if ctl.get("value"):
            info = {**fact["conditions"]["info"], KEY: json.dumps(ctl, sort_keys=True, separators=(",", ":"))}
            return {**fact, "conditions": {**fact["conditions"], "info": info}}
    return fact
