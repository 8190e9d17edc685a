"""Re-verifying facts: group facts by method, call each method's verifier once, decide and record verdicts.

A verifier is chosen by method kind (`load_verifier`: the kinds the loaded plugins register, factreg's own
`llama-bench`, `probe` and `sweep` among them, `factreg/plugins/`); each is
`remeasure(method: dict, facts: list[FactData], settings: Settings) -> dict[str, Measurement]`, where `facts`
share `method` apart from its "select" key. Methods of kind `manual`, `derived` and `imported` cannot be re-run
and are reported as skipped (an imported one with how to give it a method). A stored method is data: nothing in
it is run except through a known verifier, and only when this registry trusts the method (recorded here, or
trusted on import); each verifier checks every field again. Each fact's result is a `VerifyResult`, what
`factreg verify --json` prints.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

from factreg.errors import FactregError, UsageError
from factreg.measure import control, machine, speed
from factreg.measure import judge as judging
from factreg.measure.measurement import Measurement
from factreg.registry import conditions as cond
from factreg.registry import provenance
from factreg.registry.ids import ref
from factreg.verdicts import DEFAULT_TOLERANCE, FAILURES, FINDINGS, Verdict

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - exercised on 3.10 only
    from typing_extensions import NotRequired

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData, VerificationRow

NOT_RERUNNABLE = ("manual", "derived", "imported")
SKIPPED = "skipped"


def not_rerunnable_message(fact: Mapping[str, Any], kind: str) -> str:
    """Why a fact is skipped: its method cannot be re-run here, and (an imported result) how to give it one."""
    method = fact.get("method") or {}
    how = (f"`factreg method {fact['id']} --bench -- ARGS`" if method.get("tool") == "llama-bench"
           else f"`factreg method {fact['id']} --probe URL --body FILE` (or `--bench -- ARGS`)")
    if kind == "imported":
        tool = str(method.get("tool") or "another tool")[:60]
        return f"imported from {tool} output: there is nothing factreg can re-run; give it a method to verify it by, {how}"
    if kind == "manual":
        return f"typed by hand: there is nothing factreg can re-run; give it a method to verify it by, {how}"
    return f"method {kind!r} cannot be re-run"


class Values(TypedDict):
    """One side of a verification: value ± spread and n (all None when nothing was measured)."""

    value: float | None
    spread: float | None
    n: int | None


class _Compared(TypedDict):
    id: str
    version: int
    metric: str
    unit: str
    old: Values
    new: Values
    p_value: float | None
    rel_diff: float | None
    needed_n: int | None
    diff: dict[str, list[Any]]  # condition key → [old, new], when conditions changed
    observed: dict[str, str]
    flags: list[str]


class VerifyResult(_Compared):
    """The result of verifying one fact: what `verify` returns and `factreg verify --json` prints per fact."""

    verdict: str  # a Verdict, or SKIPPED for a method that cannot be re-run
    message: str
    tolerance: NotRequired[float]  # when the statistics decided
    recorded: NotRequired[bool]  # whether a verification was written to the registry
    verification: NotRequired[int]  # the number of the verification written (`correct ID --verification N`)
    # The machine's side (`measure/control.py`): speed factor (control now / then, None when not comparable),
    # the measurement scaled by it (when the control moved), both sides' machine state and control.
    speed_factor: NotRequired[float | None]
    cpu_share_factor: NotRequired[float | None]  # the measured run's CPU share now / then (llama-bench)
    as_measured: NotRequired[str]  # the statistics' verdict, when the machine's speed changed it
    relative: NotRequired[dict[str, Any]]  # relative to the interleaved control (measure/interleave.py)
    decided_by: NotRequired[str]  # "control-relative" when that comparison set the verdict
    scaled: NotRequired[dict[str, Any]]
    machine: NotRequired[dict[str, Any]]
    control: NotRequired[dict[str, Any]]
    # The endpoint's own evidence (`measure/endpoint.py`, probes): both sides' `server_state`, and what excused a
    # difference (`server_busy`, `server_cpu_wait`) with the share of the run the server was kept from a CPU.
    server: NotRequired[dict[str, Any]]
    excused_by: NotRequired[str]
    denied: NotRequired[dict[str, Any]]
    resolve: NotRequired[str]  # for an inconclusive verdict: what would resolve it (`resolution`)
    sequential: NotRequired[dict[str, Any]]  # the looks: batches, each look's level, the budget and time spent


def method_key(method: Mapping[str, Any]) -> str:
    """Facts whose methods are equal apart from "select" share one re-run."""
    return json.dumps({k: v for k, v in method.items() if k != "select"}, sort_keys=True, default=str)


def load_verifier(kind: str) -> Callable[..., dict[str, Measurement]]:
    """The `remeasure` function of the plugin (factreg's own included) that provides a method kind; UsageError
    for a kind that no installed plugin provides (never guessed, nothing run)."""
    from factreg import plugins

    found = plugins.verifier(kind)
    if found is None:
        raise UsageError(no_verifier(kind))
    return plugins.load(found.remeasure)


def no_verifier(kind: Any) -> str:
    """Why a method kind is not run: no installed plugin provides it."""
    return f"no verifier for method kind {str(kind)[:40]!r}: no installed plugin provides it (`factreg plugins`)"


def rerunnable(fact: Mapping[str, Any]) -> bool:
    """Whether a fact's method is of a kind some loaded plugin can re-run (its trust is checked apart)."""
    from factreg import plugins

    method = fact.get("method")
    kind = method.get("kind") if isinstance(method, dict) else None
    return isinstance(kind, str) and kind not in NOT_RERUNNABLE and plugins.verifier(kind) is not None


def select_facts(
    registry: Registry,
    settings: Settings,
    ids: Sequence[str] = (),
    *,
    all_: bool = False,
    stale: bool = False,
    here: bool = False,
) -> list[FactData]:
    """The facts to verify: the given ids, or all/stale ones, optionally only those measured on this host."""
    from factreg.registry import facts

    if not ids and not (all_ or stale or here):
        raise UsageError("name facts to verify, or use --all, --stale or --here")
    if ids:
        from factreg.registry.ids import check_id

        wanted = [check_id(i) for i in dict.fromkeys(ids)]
        found = facts.list_facts(registry, settings.file_config, ids=wanted)
        missing = sorted(set(wanted) - {f["id"] for f in found})
        if missing:
            from factreg.errors import NotFound

            raise NotFound(f"no fact {missing[0]!r} in the registry")
        chosen = found
    else:
        chosen = [f for f in facts.list_facts(registry, settings.file_config) if f["status"] != "superseded"]
    if stale:
        chosen = [f for f in chosen if f["status"] not in ("fresh", "superseded")]
    if here:
        chosen = [f for f in chosen if f["conditions"]["identity"].get("machine") == settings.hostname]
    return chosen


def _old(fact: FactData) -> Values:
    return {"value": fact["value"], "spread": fact["spread"], "n": fact["n"]}


def _quantile_outcome(fact: FactData, m: Measurement, tolerance: float, alpha: float) -> judging.Outcome | None:
    """A percentile fact (`ttft_p90`) is judged by the quantile test on the new samples (how many exceed the
    recorded value, binomial), not by comparing means; None for any other fact."""
    from factreg.registry.metrics import split_percentile
    from factreg.stats import quantiles

    split = split_percentile(str(fact["metric"]))
    if split is None or not m.samples:
        return None
    check = quantiles.verify_quantile(
        float(fact["value"]), split[1], m.samples, tolerance=tolerance, alpha=alpha, unit=fact["unit"]
    )
    return check.outcome


def _capacity_outcome(fact: FactData, m: Measurement) -> judging.Outcome | None:
    """A capacity fact re-measured by its sweep is judged by the goodput of the levels it needs
    (`slo.verify_capacity`), not by comparing two level numbers; None for any other fact."""
    from factreg.measure import slo

    if fact["metric"] != "capacity" or not m.levels:
        return None
    method = fact.get("method") or {}
    threshold = method.get("threshold", slo.CAPACITY_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        threshold = slo.CAPACITY_THRESHOLD
    levels = {}
    for level, (good, total) in m.levels.items():
        low, high = slo.wilson(good, total)
        levels[level] = slo.Goodput(good, total, low, high)
    return slo.verify_capacity(fact["value"], levels, float(threshold))


MAX_N = 1000


def with_n(method: Mapping[str, Any], n: int | None) -> dict[str, Any]:
    """The method with `n` samples for this run (`verify --n`): a probe's requests, llama-bench's repetitions
    (`-r`), a plugin's `samples_key`; other kinds unchanged. Nothing but the count changes, and the stored method
    stays as it was."""
    out = dict(method)
    if n is None:
        return out
    if not 1 <= n <= MAX_N:
        raise UsageError(f"--n takes a whole number from 1 to {MAX_N}")
    if out.get("kind") == "probe":
        out["n"] = n
    elif out.get("kind") == "llama-bench" and isinstance(out.get("args"), list):
        args, kept, skip = [str(a) for a in out["args"]], [], False
        for a in args:
            if skip:
                skip = False
                continue
            if a in ("-r", "--repetitions"):
                skip = True
                continue
            if a.startswith("--repetitions="):
                continue
            kept.append(a)
        out["args"] = [*kept, "-r", str(n)]
    elif isinstance(out.get("kind"), str) and out["kind"] not in NOT_RERUNNABLE:  # a plugin's kind: its own field
        from factreg import plugins

        spec = plugins.verifier(out["kind"])
        if spec is not None and spec.samples_key:
            out[spec.samples_key] = n
    return out


def _names(result: Mapping[str, Any]) -> list[str]:
    """The busiest other processes a result's evidence names (the server's side first, then the machine's)."""
    for side in ((result.get("server") or {}).get("now"), (result.get("machine") or {}).get("now")):
        if isinstance(side, Mapping) and isinstance(side.get("top"), list):
            names = [str(t.get("name")) for t in side["top"] if isinstance(t, Mapping) and t.get("name")]
            if names:
                return list(dict.fromkeys(names))
    return []


def resolution(result: Mapping[str, Any]) -> str | None:
    """For an inconclusive verdict, what would resolve it, as commands to run; None for any other verdict."""
    if result.get("verdict") != Verdict.INCONCLUSIVE:
        return None
    fid = result["id"]
    steps: list[str] = []
    names = _names(result)
    excused = result.get("excused_by")
    if excused == "server_busy":
        steps.append(f"re-run when the server has no other traffic: `factreg verify {fid}`")
    elif excused == "server_cpu_wait" or result.get("as_measured") or "not steady" in str(result.get("message")):
        when = f"when {', '.join(names)} {'is' if len(names) == 1 else 'are'} done" if names \
            else "on a quieter machine"
        steps.append(f"re-run {when}: `factreg verify {fid}`")
    if "the fact itself is too imprecise" in str(result.get("message")):
        steps.append(f"re-record the fact with more samples (`factreg history {fid}` shows how it was measured): "
                     "no re-run can confirm a fact whose own interval is wider than the tolerance")
    needed = result.get("needed_n")
    if isinstance(needed, int) and needed > 0:
        steps.append(f"measure more samples: `factreg verify {fid} --n {min(needed, MAX_N)}`")
    if result.get("speed_factor") is not None and result.get("as_measured"):
        steps.append("or judge without the control: `[verify] control = false` in .factreg/config.toml")
    if not steps:
        steps.append(f"re-run it with more samples: `factreg verify {fid} --n N`")
    return "; ".join(steps)


def judge(
    fact: FactData, m: Measurement, settings: Settings | None = None, alpha: float | None = None
) -> VerifyResult:
    """Compare one measurement with its fact: failure, changed conditions, or the statistics decide (at `alpha`,
    else `verify.alpha`: a sequential look's level, `measure/sequential.py`)."""
    base: _Compared = {
        "id": fact["id"],
        "version": fact["version"],
        "metric": fact["metric"],
        "unit": fact["unit"],
        "old": _old(fact),
        "new": {"value": m.value, "spread": m.spread, "n": m.n},
        "p_value": None,
        "rel_diff": None,
        "needed_n": None,
        "diff": {},
        "observed": dict(m.observed),
        "flags": list(m.flags),
    }
    if m.failure:
        verdict = m.failure if m.failure in FAILURES else Verdict.ERROR
        base["new"] = {"value": None, "spread": None, "n": None}
        return cast("VerifyResult", {**base, "verdict": verdict, "message": m.message or verdict})
    ident = fact["conditions"]["identity"]
    shared = [k for k in m.observed if k in ident]
    changed = cond.diff(ident, m.observed, keys=shared)
    if changed:
        return cast("VerifyResult", {
            **base,
            "verdict": Verdict.CONDITIONS_CHANGED,
            "diff": changed,
            "message": judging.condition_message(changed),
        })
    new = judging.new_side(m.samples, m.value, m.spread, m.n)
    if new is None:
        return cast("VerifyResult", {**base, "verdict": Verdict.ERROR, "message": "the verifier returned no value"})
    if m.value is None:
        base["new"]["value"] = new.mean
    capacity = _capacity_outcome(fact, m)
    if capacity is not None:  # levels judged against fixed SLOs: the machine's control does not rescale them
        return cast("VerifyResult", {**base, "verdict": capacity.verdict, "p_value": None, "rel_diff": None,
                                     "needed_n": None, "message": capacity.message})
    tolerance = judging.tolerance_for(fact, settings)
    if alpha is None:
        alpha = float(settings.get("verify.alpha", judging.DEFAULT_ALPHA)) if settings is not None else 0.05
    outcome = _quantile_outcome(fact, m, tolerance, alpha)
    if outcome is None:
        outcome = judging.compare(judging.old_side(fact), new, tolerance, alpha, unit=fact["unit"])
    result = cast("VerifyResult", {
        **base,
        "verdict": outcome.verdict,
        "p_value": outcome.p_value,
        "rel_diff": outcome.rel_diff,
        "needed_n": outcome.needed_n,
        "tolerance": tolerance,
        "message": outcome.message,
    })
    return cast("VerifyResult", speed.adjust(fact, m, dict(result), settings))


def _llama_bench(kind: str, method: Mapping[str, Any], settings: Settings | None) -> Any:
    """The llama-bench a llama-bench method's control runs with: None for other kinds, or unless the method
    passes every check its own run would (`llamabench.prepare`): nothing of a refused method is run."""
    if kind != "llama-bench":
        return None
    from factreg.measure import llamabench

    try:
        return llamabench.prepare(method, settings)[1]
    except FactregError:
        return None


@functools.lru_cache(maxsize=4)
def _requests_of(raw: str) -> Any:
    """The `requests` of a probe's raw run, parsed once for the callbacks that read it (None when unreadable)."""
    try:
        return json.loads(raw).get("requests")
    except (ValueError, AttributeError):
        return None


def _identity_ms(measured: Mapping[str, Measurement]) -> float | None:
    """A probe's identity request time (ms), read from a measurement's raw run (the control sends nothing)."""
    for m in measured.values():
        if m.raw and not m.failure:
            return control.identity_ms(_requests_of(m.raw))
    return None


def _spans(measured: Mapping[str, Measurement]) -> list[tuple[float, float]]:
    """A probe's requests as (start, end) spans, read from a measurement's raw run (for the server's /metrics)."""
    from factreg.measure import endpoint

    for m in measured.values():
        if m.raw:
            return endpoint.spans_of_requests(_requests_of(m.raw))
    return []


def _probe_headers(kind: str, method: Mapping[str, Any], settings: Settings | None) -> dict[str, str] | None:
    """The stored probe's headers as its own run sends them (only the `${VAR}`s it may expand), for reading the
    same server's /metrics; None when the method will be refused (a field out of bounds, a variable it may not
    expand): then nothing is watched and no request is sent, and the probe itself says why."""
    from factreg import secrets
    from factreg.measure import probe

    if kind != "probe":
        return {}
    headers = method.get("headers")
    allowed = settings.allowed_env() if settings is not None and hasattr(settings, "allowed_env") else frozenset()
    try:
        probe.spec_from_method(method)
        if not isinstance(headers, Mapping):
            return {}
        return secrets.expand_headers({str(k): str(v) for k, v in headers.items()}, allowed=allowed)
    except FactregError:
        return None


def _measure_group(
    kind: str, method: Mapping[str, Any], group: Sequence[FactData], settings: Settings | None
) -> dict[str, Measurement]:
    try:
        remeasure = load_verifier(kind)
        headers = _probe_headers(kind, method, settings)
        run_s = control.of_fact(group[0]).get("run_s") if group else None
        result, seen = control.bracket(method, settings, lambda: remeasure(dict(method), list(group), settings),
                                       run_s if isinstance(run_s, (int, float)) else None,
                                       _llama_bench(kind, method, settings), server_ms=_identity_ms,
                                       spans=_spans, headers=headers, watch_server=headers is not None)
        for measured in result.values():
            if isinstance(measured, Measurement):
                measured.observed.update(seen.conditions())
    except FactregError as exc:
        return {f["id"]: Measurement(failure="error", message=exc.message) for f in group}
    except Exception as exc:  # a verifier bug must not lose the other groups' verdicts
        return {f["id"]: Measurement(failure="error", message=f"{type(exc).__name__}: {exc}") for f in group}
    out = {}
    for f in group:
        m = result.get(f["id"])
        if not isinstance(m, Measurement):
            m = Measurement(failure="error", message="the verifier returned nothing for this fact")
        out[f["id"]] = m
    return out


def verify(
    registry: Registry,
    settings: Settings | None,
    fact_list: Sequence[FactData],
    progress: Callable[[int, str], None] | None = None,
    *,
    trust_imported: bool = False,
    n: int | None = None,
    budget_s: float | None = None,
) -> list[VerifyResult]:
    """Re-run every fact's method (once per group), judge and record one verification per re-runnable fact.
    `n` overrides the number of samples of each batch (`with_n`). A group that one batch cannot decide is measured
    again in batches (`measure/sequential.py`) within `budget_s` seconds, else `verify.budget` × its first batch.

    Only methods this registry trusts run (registry/provenance.py); an untrusted one (imported, or written
    before provenance was kept) gets an `error` verdict saying so, unless `trust_imported` trusts it now.

    A refutation must reproduce: a group with a refuted fact is measured once more (`verify.confirm_refutes`,
    default 1 re-run), and the fact is refuted only when the re-run refutes it too.
    """
    results: dict[str, VerifyResult] = {}
    groups: dict[tuple[str, str], list[FactData]] = {}
    runnable = [f for f in fact_list if rerunnable(f)]
    vouched = provenance.trusted(registry, runnable)
    untrusted = [f for f in runnable if (f["id"], f["version"]) not in vouched]
    if untrusted and trust_imported:  # the user trusts them now: tagged, so later runs need no flag
        provenance.trust(registry, untrusted)
        untrusted = []
    refused = {f["id"] for f in untrusted}
    for fact in fact_list:
        if fact["id"] in refused:  # nothing of an untrusted method is run: no process, no request
            results[fact["id"]] = _unrunnable(fact, provenance.why_untrusted(fact))
            continue
        fact = speed.with_baseline(registry, fact)
        method = fact.get("method")
        if not isinstance(method, dict):
            results[fact["id"]] = _unrunnable(fact, "its method is not structured data; it is never executed")
            continue
        kind = method.get("kind")
        if kind in NOT_RERUNNABLE:
            results[fact["id"]] = {**_unrunnable(fact, not_rerunnable_message(fact, str(kind))), "verdict": SKIPPED}
            continue
        if not rerunnable(fact):
            results[fact["id"]] = _unrunnable(fact, no_verifier(kind))
            continue
        groups.setdefault((str(kind), method_key(method)), []).append(fact)

    reruns = int(settings.get("verify.confirm_refutes", 1)) if settings is not None else 1
    done = 0
    for (kind, _key), group in groups.items():
        method = with_n(group[0]["method"], n)
        judged = _looks(kind, method, group, settings, budget_s)
        for attempt in range(reruns):
            refuted = [f for f in group if _refutes(judged[f["id"]][0])]
            if not refuted:
                break
            # The re-run is a verification of its own, looked at in batches like the first, within what is left
            # of the first run's budget (its first batch always runs: a refutation must reproduce).
            left = min(_left(judged[f["id"]][0]) for f in refuted)
            again = _looks(kind, method, refuted, settings, left)
            for f in refuted:
                first = judged[f["id"]][0]
                second = again[f["id"]][0]
                looks = _runs(first.get("sequential"), second.get("sequential"))
                if looks is not None:
                    second["sequential"] = looks
                if second["verdict"] == Verdict.REFUTED:
                    second = _steady(first, second, attempt)
                elif first["verdict"] == Verdict.REFUTED:
                    second["message"] += " (a first run refuted it; the re-run did not reproduce that)"
                else:
                    second["message"] += f" (measured twice; the first run too was {first['verdict']})"
                judged[f["id"]] = (second, again[f["id"]][1])
        for f in group:
            hint = resolution(judged[f["id"]][0])
            if hint:
                judged[f["id"]][0]["resolve"] = hint
        _record(registry, settings, [(f, *judged[f["id"]]) for f in group])
        for f in group:
            results[f["id"]] = judged[f["id"]][0]
            done += 1
            if progress:
                progress(done, f["id"])
    return [results[f["id"]] for f in fact_list]


def _looks(
    kind: str, method: Mapping[str, Any], group: Sequence[FactData], settings: Settings | None,
    budget_s: float | None,
) -> dict[str, tuple[VerifyResult, Measurement]]:
    """One group measured in batches until each fact is decided or the budget is spent (`sequential.run`)."""
    from factreg.measure import sequential

    by_id = {f["id"]: f for f in group}
    get = settings.get if settings is not None and hasattr(settings, "get") else (lambda _k, d=None: d)
    alpha = float(get("verify.alpha", judging.DEFAULT_ALPHA))
    planned = max(1, int(get("verify.looks", sequential.DEFAULT_LOOKS)))
    verdicts, pooled, looks = sequential.run(
        list(by_id),
        measure=lambda ids: _measure_group(kind, method, [by_id[i] for i in ids], settings),
        judge=lambda fid, m, a: judge(by_id[fid], m, settings, alpha=a),
        pool=lambda a, b: _pool(kind, a, b),
        more=_needs_more,
        size=lambda m: len(m.samples) if m.samples else int(m.n or 0),
        alpha=alpha, planned=planned, budget=float(get("verify.budget", sequential.DEFAULT_BUDGET)),
        budget_s=budget_s,
    )  # fmt: skip
    out = {}
    for fid in by_id:
        res = verdicts[fid]
        res["sequential"] = looks.as_json(fid)
        out[fid] = (res, pooled[fid])
    return out


def _needs_more(result: VerifyResult) -> bool:
    """Another batch could decide it: inconclusive only because the re-run was too noisy (it, or its comparison
    relative to the interleaved control, asked for more new samples) — not limited by the fact's own imprecision,
    nor by co-runners or a confirmation the control withdrew (those ask for no samples)."""
    return result["verdict"] == Verdict.INCONCLUSIVE and result.get("needed_n") is not None


def _left(result: VerifyResult) -> float:
    """What a run left of its budget, for the re-run that must reproduce its refutation (0 when it had none)."""
    looks = result.get("sequential") or {}
    budget, spent = looks.get("budget_s"), looks.get("spent_s")
    if not isinstance(budget, (int, float)) or not isinstance(spent, (int, float)):
        return 0.0
    return max(0.0, float(budget) - float(spent))


def _runs(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The looks of a refutation's re-run, with the first run's beside them and the time both spent."""
    if not second:
        return dict(first) if first else None
    out = dict(second)
    if first:
        out["first_run"] = dict(first)
        out["budget_s"] = first.get("budget_s")
        out["spent_s"] = round(float(first.get("spent_s") or 0) + float(second.get("spent_s") or 0), 3)
    return out


def _pool(kind: str, a: Measurement, b: Measurement) -> Measurement:
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


def _refutes(result: VerifyResult) -> bool:
    """Refuted, or refuted as measured and only explained by the machine's speed (`speed.adjust`): either way
    re-measured, so that one control run that moved by chance can neither refute nor excuse a fact alone."""
    return result["verdict"] == Verdict.REFUTED or result.get("as_measured") == Verdict.REFUTED


def _steady(first: VerifyResult, second: VerifyResult, attempt: int) -> VerifyResult:
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
        "message": second["message"] + f"; but the machine is not steady: two runs differ by {drift * 100:.0f}% "
        f"of the fact's value, so a gap of {min(abs(r1), abs(r2)) * 100:.0f}% does not refute it "
        "(re-verify on a quieter machine)",
    }


def against(registry: Registry, settings: Settings | None, fact: FactData, other: FactData) -> VerifyResult:
    """Judge `fact` by a measurement already in the registry (`other`, the same metric) and record the verdict.

    For facts that cannot be re-run here (a number quoted in a doc, a measurement on another machine): the
    newer measurement stands in for a re-run. Its identity conditions count as observed, so a fact measured
    under other conditions comes out `conditions_changed`, not `refuted`."""
    from factreg.errors import UsageError

    if other["id"] == fact["id"]:
        raise UsageError("a fact cannot be verified against itself")
    if other["metric"] != fact["metric"] or other["unit"] != fact["unit"]:
        raise UsageError(f"{fact['id']} is {fact['metric']} ({fact['unit']}) but {other['id']} is "
                         f"{other['metric']} ({other['unit']}): only the same metric can verify a fact")
    m = Measurement(
        samples=list(other["samples"]), value=other["value"], spread=other["spread"], n=other["n"],
        observed={**other["conditions"]["identity"],
                  **{k: v for k, v in other["conditions"]["info"].items() if k in (control.KEY, machine.KEY)}},
        raw=json.dumps({"against": other["id"], "version": other["version"]}),
        message=None,
    )
    result = judge(fact, m, settings)
    result["message"] = f"against {ref(other['id'], other['version'])}: {result['message']}"
    hint = resolution(result)
    if hint:
        result["resolve"] = hint
    _record(registry, settings, [({**fact, "method": {"kind": f"fact:{other['id']}"}}, result, m)])
    return result


def _unrunnable(fact: FactData, message: str) -> VerifyResult:
    return {
        "id": fact["id"],
        "version": fact["version"],
        "metric": fact["metric"],
        "unit": fact["unit"],
        "verdict": Verdict.ERROR,
        "old": _old(fact),
        "new": {"value": None, "spread": None, "n": None},
        "p_value": None,
        "rel_diff": None,
        "needed_n": None,
        "diff": {},
        "observed": {},
        "flags": [],
        "message": message,
        "recorded": False,
    }


def _record(
    registry: Registry, settings: Settings | None, rows: Sequence[tuple[FactData, VerifyResult, Measurement]]
) -> None:
    """One Verification row per judged fact, in one transaction."""
    from sqlalchemy import insert

    from factreg import clock
    from factreg.registry.facts import VERIFICATION

    now = clock.iso()
    values: list[VerificationRow] = []
    for fact, res, m in rows:
        failed = res["verdict"] in FAILURES
        values.append(
            {
                "fact_id": fact["id"],
                "fact_version": fact["version"],
                "verified_at": now,
                "verdict": res["verdict"],
                "method_kind": fact["method"]["kind"],
                "hostname": getattr(settings, "hostname", None),
                "value": None if failed else res["new"]["value"],
                "spread": None if failed else m.spread,
                "n": None if failed else res["new"]["n"],
                "samples": json.dumps([] if failed else list(m.samples)),
                "p_value": res["p_value"],
                "rel_diff": res["rel_diff"],
                "needed_n": res["needed_n"],
                "observed": json.dumps(m.observed, sort_keys=True),
                "diff": json.dumps(res["diff"], sort_keys=True),
                "message": res["message"],
                "raw": m.raw,
            }
        )
        res["recorded"] = True
    if values:
        from factreg.registry.facts import prune_raw

        def work(conn: Any) -> list[int]:
            # One insert a row: each verification's number is printed (`correct ID --verification N` takes it).
            pks = [int(conn.execute(insert(VERIFICATION), dict(v)).inserted_primary_key[0]) for v in values]
            prune_raw(registry, conn, sorted({v["fact_id"] for v in values}))
            return pks

        for (_fact, res, _m), pk in zip(rows, registry.write_retrying(work), strict=True):
            res["verification"] = pk


FAIL_ON = ("inconclusive", "skipped")  # what `verify --fail-on` (or `[verify] fail_on`) may add to the findings


def fail_on(values: Sequence[str] | str | None) -> frozenset[str]:
    """`--fail-on inconclusive` / `[verify] fail_on = ["inconclusive"]` → the verdicts that also fail a run."""
    if values is None:
        return frozenset()
    items = [values] if isinstance(values, str) else list(values)
    words = {w.strip() for item in items for w in str(item).split(",") if w.strip()}
    wrong = sorted(words - set(FAIL_ON))
    if wrong:
        raise UsageError(f"--fail-on takes {' or '.join(FAIL_ON)}, not {wrong[0]!r}")
    return frozenset(words)


def exit_code(results: Sequence[VerifyResult], also: frozenset[str] = frozenset()) -> int:
    """1 when anything was refuted or its conditions changed (or had a verdict in `also`, e.g. inconclusive),
    else 3 when something could not run, else 0."""
    verdict_set = {r["verdict"] for r in results}
    if verdict_set & (FINDINGS | also):
        return 1
    if verdict_set & FAILURES:
        return 3
    return 0
