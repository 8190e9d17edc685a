"""`factreg sweep`: the probe at rising concurrency, goodput under SLOs at each level, and the capacity.

Each level is one probe run (`probe.probe` with `concurrency` set: identity check, warm-up, n measured requests).
A request is good when it meets every SLO (`slo.meets`: its own ttft, its own itl gaps, ...); a level's
goodput is the share of good requests with its Wilson interval; the capacity is the highest level such that it and
every lower level keep goodput ≥ the threshold (95% by default; `slo.capacity`). A level whose probe failed
counts as goodput 0 (every request bad) with its verdict shown: an endpoint that errors at 8 streams has no
capacity there. Each SLO is also checked on the level's pooled observations (`slo.run_check`), with the
percentile's interval and whether n supports it.

Facts (`--record PREFIX`): `PREFIX/capacity` (streams), and `PREFIX/goodput_c<N>` per level (a share, its samples
the 0/1 outcome of each request). Their method is `{"kind": "sweep", ...}`: the probe recipe, the levels, the SLOs
and the threshold. `verify` re-runs the levels the facts need (`needed_levels`): for a capacity C, every recorded
level up to C and the next one above; for a goodput fact, its own level. A capacity is judged by those levels'
goodput and Wilson intervals (`slo.verify_capacity`: refuted when a level up to C now misses with its whole
interval below the threshold).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from factreg import secrets
from factreg.errors import UsageError
from factreg.measure import slo
from factreg.measure.probe import OK, ProbeResult, ProbeSpec, probe, spec_from_method

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.measure.measurement import Measurement
    from factreg.registry.facts import NewFact
    from factreg.registry.types import FactData, Method

MAX_LEVELS = 16
# Probe verdicts that say the server could not be measured, rather than that it failed under load.
_UNMEASURED = ("auth_failed", "unreachable")


def parse_levels(text: str) -> list[int]:
    """`1,2,4,8` → [1, 2, 4, 8] (rising, distinct, each 1…1024)."""
    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit() or not 1 <= int(part) <= 1024:
            raise UsageError(f"--concurrency {text!r}: give levels such as 1,2,4,8 (each 1 to 1024)")
        out.append(int(part))
    if not out or len(out) > MAX_LEVELS:
        raise UsageError(f"--concurrency needs 1 to {MAX_LEVELS} levels, such as 1,2,4,8")
    if sorted(set(out)) != out:
        raise UsageError(f"--concurrency levels must rise: {text!r}")
    return out


def request_values(result: ProbeResult) -> list[dict[str, Any]]:
    """Per measured request, the values an SLO can name: its metrics and its itl gaps."""
    out = []
    for r in result.requests:
        if r.kind != "measured":
            continue
        values: dict[str, Any] = dict(r.metrics())
        values["itl"] = r.gaps()["itl"]
        out.append(values)
    return out


@dataclass
class Level:
    """One load level of a sweep: its probe result, goodput and SLO checks."""

    concurrency: int
    result: ProbeResult
    goodput: slo.Goodput
    outcomes: list[int]  # 1 good, 0 not, per measured request (failed level: all 0)
    checks: list[slo.SloCheck]

    def as_json(self) -> dict[str, Any]:
        g = self.goodput
        return {
            "concurrency": self.concurrency,
            "verdict": self.result.verdict,
            "message": self.result.message,
            "goodput": {"good": g.good, "total": g.total, "share": g.share, "ci95": [g.low, g.high],
                        "missed": g.missed},
            "slo_checks": [
                {"slo": c.slo.text, "met": c.met, "estimate": c.estimate.as_dict(), "message": c.message}
                for c in self.checks
            ],
            "metrics": self.result.summary(),
            "info": dict(self.result.info),
        }


@dataclass
class Sweep:
    levels: list[Level]
    capacity: slo.Capacity
    slos: list[slo.Slo]
    observed: dict[str, str]

    @property
    def ok(self) -> bool:
        return any(lv.result.verdict == OK for lv in self.levels)

    def as_json(self) -> dict[str, Any]:
        data = {
            "slos": [s.text for s in self.slos],
            "threshold": self.capacity.threshold,
            "capacity": self.capacity.level,
            "capacity_message": self.capacity.message,
            "observed": dict(self.observed),
            "levels": [lv.as_json() for lv in self.levels],
        }
        return dict(secrets.redact_data(data))


def _level(concurrency: int, result: ProbeResult, slos: Sequence[slo.Slo]) -> Level:
    if result.verdict != OK:
        n = max(1, int(result.info.get("requests_sent") or 0) or 1)
        low, high = slo.wilson(0, n)
        missed = {f"probe {result.verdict}": n}
        return Level(concurrency, result, slo.Goodput(0, n, low, high, missed), [0] * n, [])
    values = request_values(result)
    outcomes = [int(slo.meets(v, slos)) for v in values]
    good = slo.goodput(values, slos)
    checks = [slo.run_check(s, values) for s in slos]
    return Level(concurrency, result, good, outcomes, checks)


def sweep(
    base: ProbeSpec,
    levels: Sequence[int],
    slos: Sequence[slo.Slo],
    *,
    hostname: str,
    threshold: float = slo.CAPACITY_THRESHOLD,
    progress: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
    allowed_env: frozenset[str] | None = None,
) -> Sweep:
    """Probe `base` at each concurrency level in turn; goodput per level and the capacity."""
    say = progress or (lambda _m: None)
    if not slos:
        raise UsageError("a sweep needs at least one --slo, e.g. ttft:p90<0.5")
    out: list[Level] = []
    observed: dict[str, str] = {}
    for c in levels:
        say(f"level {c}: {base.n} requests, {c} in flight")
        spec = replace(base, concurrency=c, rate=0.0)
        result = probe(spec, hostname=hostname, progress=say, env=env, allowed_env=allowed_env)
        if result.verdict == OK and not observed:
            observed = {k: v for k, v in result.observed.items() if k not in ("load", "concurrency")}
        out.append(_level(c, result, slos))
    cap = slo.capacity({lv.concurrency: lv.goodput for lv in out}, threshold)
    return Sweep(out, cap, list(slos), observed)


def method(base: ProbeSpec, levels: Sequence[int], slos: Sequence[slo.Slo], threshold: float) -> dict[str, Any]:
    recipe = {k: v for k, v in base.method().items() if k not in ("concurrency", "rate", "burstiness")}
    return {**recipe, "kind": "sweep", "levels": list(levels), "slos": [s.text for s in slos], "threshold": threshold}


def new_facts(result: Sweep, prefix: str, recipe: Mapping[str, Any]) -> list[NewFact]:
    """`PREFIX/capacity` and `PREFIX/goodput_c<N>` per level that ran (never when no level ran)."""
    from factreg.registry.facts import NewFact
    from factreg.registry.ids import check_id

    if not result.ok:
        raise UsageError("nothing recorded: no level of the sweep gave an ok probe")
    prefix = check_id(prefix.rstrip("/"))
    identity = {k: secrets.redact(v) for k, v in result.observed.items()}
    info = {"slos": ",".join(s.text for s in result.slos), "threshold": f"{result.capacity.threshold:g}",
            "capacity": secrets.redact(result.capacity.message)[:500]}
    out = []
    cap = result.capacity.level
    out.append(NewFact(
        id=f"{prefix}/capacity", metric="capacity", value=float(cap or 0), identity=identity, info=info,
        subject=prefix, method={**recipe, "select": {"metric": "capacity"}}, note=result.capacity.message[:500],
    ))
    for lv in result.levels:
        out.append(NewFact(
            id=f"{prefix}/goodput_c{lv.concurrency}", metric="goodput", samples=[float(x) for x in lv.outcomes],
            value=lv.goodput.share, identity={**identity, "concurrency": str(lv.concurrency)}, info=info,
            subject=prefix, method={**recipe, "select": {"metric": "goodput", "concurrency": lv.concurrency}},
            interval=(lv.goodput.low, lv.goodput.high),
        ))
    return out


def _bounded_recipe(recipe: Mapping[str, Any]) -> tuple[ProbeSpec, list[int], list[slo.Slo], float]:
    spec = spec_from_method({**recipe, "kind": "probe"})
    levels_raw = recipe.get("levels")
    if not isinstance(levels_raw, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in levels_raw):
        raise UsageError("the stored sweep method's levels must be a list of whole numbers")
    levels = parse_levels(",".join(str(x) for x in levels_raw))
    slos_raw = recipe.get("slos")
    if not isinstance(slos_raw, list) or not all(isinstance(x, str) for x in slos_raw):
        raise UsageError("the stored sweep method's slos must be a list of strings")
    slos = slo.parse_slos(slos_raw)
    threshold = recipe.get("threshold", slo.CAPACITY_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise UsageError("the stored sweep method's threshold must be a share in (0, 1]")
    return spec, levels, slos, float(threshold)


def needed_levels(levels: Sequence[int], facts: Sequence[FactData]) -> list[int]:
    """The recorded levels a verification must re-run: for a capacity C, every level up to C and the next one
    above (what decides whether C still holds); for a goodput fact, its own level."""
    need: set[int] = set()
    for fact in facts:
        select = (fact.get("method") or {}).get("select") or {}
        if fact.get("metric") == "capacity":
            cap = float(fact.get("value") or 0)
            need.update(lv for lv in levels if lv <= cap)
            higher = [lv for lv in levels if lv > cap]
            if higher:
                need.add(higher[0])
        elif isinstance(select.get("concurrency"), int) and select["concurrency"] in levels:
            need.add(select["concurrency"])
    return sorted(need) or list(levels)


def remeasure(recipe: Method, facts: list[FactData], settings: Settings | None) -> dict[str, Measurement]:
    """Verifier for method kind `sweep`: one sweep of the levels the group needs serves the capacity and every
    goodput fact of the group."""
    from factreg.measure.measurement import Measurement
    from factreg.verdicts import Verdict

    hostname = getattr(settings, "hostname", None) or socket.gethostname()
    try:
        spec, levels, slos, threshold = _bounded_recipe(recipe)
        allowed = settings.allowed_env() if settings is not None and hasattr(settings, "allowed_env") else frozenset()
        result = sweep(spec, needed_levels(levels, facts), slos, hostname=hostname, threshold=threshold,
                       allowed_env=allowed)
    except UsageError as exc:
        return {f["id"]: Measurement(failure=Verdict.ERROR, message=secrets.redact(exc.message)) for f in facts}
    raw = json.dumps(result.as_json(), ensure_ascii=False)
    out: dict[str, Measurement] = {}
    by_level = {lv.concurrency: lv for lv in result.levels}
    # The server could not be measured at all (refused, unreachable, another model), or the probe's own times were
    # impossible at a level (`stream.MeasurementError`): no level says anything.
    unmeasured = next(
        (lv.result for lv in result.levels
         if lv.result.verdict in _UNMEASURED or lv.result.info.get("measurement_errors")),
        None,
    )
    for fact in facts:
        select = (fact.get("method") or {}).get("select") or {}
        ident = fact.get("conditions", {}).get("identity", {})
        observed = {k: v for k, v in result.observed.items() if k in ident}
        if fact.get("metric") == "capacity":
            if unmeasured is not None or not result.ok:
                failed = unmeasured or result.levels[0].result
                out[fact["id"]] = Measurement(failure=failed.verdict, message=failed.message, raw=raw)
                continue
            cap = float(result.capacity.level or 0)
            out[fact["id"]] = Measurement(
                samples=[cap], value=cap, n=1, observed=observed, message=result.capacity.message, raw=raw,
                levels={float(lv.concurrency): (lv.goodput.good, lv.goodput.total) for lv in result.levels},
            )
            continue
        lv = by_level.get(int(select.get("concurrency") or 0))
        if lv is None:
            out[fact["id"]] = Measurement(failure=Verdict.ERROR, message="the sweep did not run this level", raw=raw)
        elif lv.result.failed:
            out[fact["id"]] = Measurement(failure=lv.result.verdict, message=lv.result.message, raw=raw)
        else:
            out[fact["id"]] = Measurement(samples=[float(x) for x in lv.outcomes], value=lv.goodput.share,
                                          n=lv.goodput.total, observed=observed, message=lv.goodput.message, raw=raw)
    return out
