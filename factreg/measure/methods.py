"""Giving a fact a method `verify` can re-run: `factreg method ID... --probe URL --body FILE` or `--bench -- ARGS`.

Any fact may get one: a number typed with `record` (measured elsewhere, now made re-runnable), a result imported
from another tool, or a fact whose method is to change. Each fact gets a new version with the same numbers,
conditions and date, whose method is the one given; nothing is measured now. The method is recorded here, by the
user, so this registry trusts it (registry/provenance.py, unchanged): `verify` runs it next time.

Which of a re-run's results is the fact's is its `select`: a probe's metric (`ttft`, `decode_rate`, a percentile's
base metric); a llama-bench test (`n_prompt`, `n_gen`, `n_depth`) from the fact's own conditions when it was
imported from llama-bench output, else from the arguments (`-p 0 -n 32` for a `tg_rate` fact).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from factreg.errors import UsageError

# What `record` says once, when a typed fact is new: how to make it re-runnable.
HOW = "`factreg method {id} --probe URL --body FILE` (or `--bench -- ARGS` for llama-bench)"
# llama-bench's metrics and the test each is: (prompt tokens, generated tokens) given or not.
BENCH_METRICS = ("tg_rate", "pp_rate", "pptg_rate")


def typed_note(fact_id: str) -> str:
    """The line `record` prints once, when it creates a typed fact."""
    return (f"{fact_id} was typed by hand: `verify` cannot re-measure it until it has a method — "
            + HOW.format(id=fact_id))


def _values(args: Sequence[str], *names: str) -> list[str] | None:
    """The values given to one of the options `names` (`-n 32`, `-n 32,64`, `--n-gen=32`), None when not given."""
    found: list[str] | None = None
    for i, a in enumerate(args):
        for name in names:
            if a == name and i + 1 < len(args):
                found = [v for v in str(args[i + 1]).split(",") if v]
            elif a.startswith(name + "="):
                found = [v for v in a.split("=", 1)[1].split(",") if v]
    return found


def bench_select(fact: Mapping[str, Any], args: Sequence[str]) -> dict[str, str]:
    """Which test of a llama-bench run is `fact`: from its conditions (an imported or benched fact), else from the
    arguments, which must then run exactly one test of its metric."""
    metric = str(fact.get("metric"))
    if metric not in BENCH_METRICS:
        raise UsageError(f"{fact['id']}: llama-bench measures {', '.join(BENCH_METRICS)}, not {metric}; give it a "
                         "probe instead (--probe URL --body FILE)")
    old = (fact.get("method") or {}).get("select")
    if isinstance(old, Mapping) and {"n_prompt", "n_gen"} <= set(old):
        return {str(k): str(v) for k, v in old.items()}
    ident = (fact.get("conditions") or {}).get("identity") or {}
    if "n_prompt" in ident and "n_gen" in ident:
        return {"n_prompt": str(ident["n_prompt"]), "n_gen": str(ident["n_gen"]),
                "n_depth": str(ident.get("n_depth", "0"))}
    prompts = _values(args, "-p", "--n-prompt") or ["512"]
    gens = _values(args, "-n", "--n-gen") or ["128"]
    depths = _values(args, "-d", "--n-depth") or ["0"]
    chosen: list[tuple[str, str]]
    if metric == "tg_rate":
        chosen = [("0", g) for g in gens if g != "0"]
    elif metric == "pp_rate":
        chosen = [(p, "0") for p in prompts if p != "0"]
    else:  # -pg 512,128: one prompt-then-generate test
        pairs = [str(args[i + 1]) for i, a in enumerate(args) if a == "-pg" and i + 1 < len(args)]
        chosen = [(p, g) for p, _, g in (x.partition(",") for x in pairs) if p and g]
    if len(chosen) != 1 or len(depths) != 1:
        raise UsageError(f"{fact['id']} is one {metric} test: give llama-bench arguments that run exactly one, e.g. "
                         + ("`-p 0 -n 32`" if metric == "tg_rate" else "`-p 512 -n 0`" if metric == "pp_rate"
                            else "`-p 0 -n 0 -pg 512,128`"))
    prompt, gen = chosen[0]
    return {"n_prompt": str(prompt), "n_gen": str(gen), "n_depth": str(depths[0])}


def bench_method(args: Sequence[str]) -> dict[str, Any]:
    """A llama-bench method from `--bench -- ARGS`, checked as `bench` checks them (allow-listed arguments, a GGUF
    model that exists, made absolute); nothing is run."""
    from factreg.measure import llamabench_args, llamabench_facts

    return llamabench_facts.method_for(llamabench_args.checked_args(args))


def attach(registry: Any, fact_ids: Sequence[str], method: Mapping[str, Any], min_uptime_s: float) -> list[str]:
    """A new version of each fact, the same numbers, conditions and date, whose method is `method` (a probe or a
    llama-bench run, recorded here, so trusted). Every fact is checked first; all versions land in one transaction.
    Return `id@version`s."""
    from factreg.measure.probe import RECORDED
    from factreg.registry import facts
    from factreg.registry.facts import NewFact
    from factreg.registry.metrics import split_percentile

    kind = method.get("kind")
    if kind not in ("probe", "llama-bench"):
        raise UsageError("give a probe (--probe URL --body FILE) or a llama-bench run (--bench -- ARGS)")
    news = []
    for fid in dict.fromkeys(fact_ids):
        fact = facts.get(registry, fid)
        if fact.get("superseded_by"):
            raise UsageError(f"{fid} is superseded by {fact['superseded_by']}: give that fact the method")
        old = fact.get("method") or {}
        if old.get("kind") == "derived":
            raise UsageError(f"{fid} is derived from other facts (`compare --record`): it follows them, it has no "
                             "measurement of its own to re-run")
        if kind == "probe":
            split = split_percentile(str(fact["metric"]))
            base = split[0] if split else str(fact["metric"])
            if base not in RECORDED:
                raise UsageError(f"{fid}: the probe does not measure {base} (it measures {', '.join(RECORDED)}); "
                                 "give it a llama-bench run (--bench -- ARGS) if llama-bench measured it")
            select: dict[str, Any] = {"metric": base}
        else:
            select = bench_select(fact, method.get("args") or [])
        samples = list(fact.get("samples") or [])
        info = dict(fact["conditions"]["info"])
        if old.get("kind") == "imported":
            info["imported_by"] = str(old.get("tool") or "")
        news.append(NewFact(
            id=fid, metric=str(fact["metric"]), value=fact["value"], samples=samples or None, unit=fact["unit"],
            spread=fact["spread"], n=None if samples else fact["n"], identity=fact["conditions"]["identity"],
            info=info, subject=fact.get("subject"), measured_at=fact["measured_at"], warn_after=fact.get("warn_after"),
            error_after=fact.get("error_after"), tolerance=fact.get("tolerance"), note=fact.get("note"),
            method={**method, "select": select},
        ))
    for new in news:
        facts.build_rows(new, min_uptime_s)
    return facts.record_many(registry, news, min_uptime_s)
