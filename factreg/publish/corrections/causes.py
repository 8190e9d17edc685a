"""Why a corrected value probably differed: the conditions and flags of the two facts ranked by how much they are
known to move the metric, and a ratio fact read as a comparison of its two sides."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factreg import fmt
from factreg.errors import NotFound, UsageError
from factreg.publish.corrections.wording import say, say_evidence
from factreg.registry import conditions as cond
from factreg.registry import display
from factreg.registry import facts as factmod
from factreg.registry.store import Registry
from factreg.registry.types import FactData

BUILD_KEYS = ("build", "build_commit", "llama_build", "server_build")


# Condition keys by how much they are known to move a latency or throughput metric: lower ranks come first.
CAUSE_RANKS: dict[str, int] = {
    "metric": 0, "of_metric": 0, "thinking": 1, "reasoning": 1, "warm": 2, "cold": 2, "uptime_s": 2,
    "body_sha256": 3, "body": 3, "stream": 3, "cache_hit": 3, "prompt_cache": 3,
    "model": 4, "model_type": 4, "quant": 4, "model_file": 4,
    "build": 5, "build_commit": 5, "build_number": 5, "llama_build": 5, "server_build": 5,
    "n_cpu_moe": 6, "n_gpu_layers": 6, "threads": 6, "n_threads": 6, "offload": 6, "flash_attn": 6,
    "gpu_info": 7, "cpu_info": 7, "machine": 7, "backends": 7, "hardware": 7, "gpu": 7,
}


OTHER_RANK, STATS_RANK = 8, 9


# How the collapsed line of conditions one value never recorded names them.
CONDITION_NAMES: dict[str, str] = {
    "build_commit": "build", "build_number": "build", "llama_build": "build", "server_build": "build",
    "gpu_info": "GPU", "cpu_info": "CPU", "model_type": "model type", "n_cpu_moe": "offload", "n_gpu_layers": "offload",
    "n_threads": "threads", "backends": "backend", "n_gen": "test size", "n_prompt": "test size",
    "body_sha256": "request body",
}


TIME_UNITS = ("s", "ms", "us", "µs", "min")


def _is_number(text: Any) -> bool:
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


def _on(value: Any) -> bool:
    return str(value or "").lower() in ("on", "true", "1", "yes")


def _short(h: Any) -> str:
    return "(none)" if h is None else str(h)[:12]


def _rank(key: str) -> int:
    return CAUSE_RANKS.get(key, OTHER_RANK)


def interval_of(fact: Mapping[str, Any]) -> list[float] | None:
    """A fact's 95% interval: its statistics', or one a derived fact stores in its info (`ci95 = "lo..hi"`)."""
    ci = (fact.get("stats") or {}).get("ci95")
    if ci and ci[0] is not None and ci[1] is not None:
        return [float(ci[0]), float(ci[1])]
    raw = str(((fact.get("conditions") or {}).get("info") or {}).get("ci95") or "")
    parts = raw.split("..")
    if len(parts) == 2 and _is_number(parts[0]) and _is_number(parts[1]):
        return [float(parts[0]), float(parts[1])]
    return None


def sides_of(fact: Mapping[str, Any]) -> tuple[str, str] | None:
    """The two facts a ratio fact compares (numerator, denominator), from its conditions or its method."""
    conds = fact.get("conditions") or {}
    merged = {**(conds.get("info") or {}), **(conds.get("identity") or {})}
    if merged.get("numerator") and merged.get("denominator"):
        return str(merged["numerator"]), str(merged["denominator"])
    method = fact.get("method") or {}
    if method.get("kind") == "derived" and method.get("a") and method.get("b"):
        return str(method["a"]), str(method["b"])
    return None


def comparison_facts(registry: Registry, config: Mapping[str, Any], *facts: Mapping[str, Any]) -> dict[str, FactData]:
    """The facts that ratio facts among `facts` compare, by id (those the registry holds)."""
    out: dict[str, FactData] = {}
    for f in facts:
        for fid in sides_of(f) or ():
            if fid not in out:
                with contextlib.suppress(NotFound, UsageError):
                    out[fid] = factmod.get(registry, fid, config=config)
    return out


def _lower_is_better(fact: Mapping[str, Any]) -> bool | None:
    direction = fact.get("direction")
    if direction in ("lower", "higher"):
        return direction == "lower"
    unit = str(fact.get("unit") or "")
    if unit in TIME_UNITS:
        return True
    if unit.endswith("/s"):
        return False
    return None


def _factor(q: float) -> str:
    """`3.1`, `28.8`, `150`: one decimal below 100."""
    return f"{q:.1f}" if q < 100 else f"{q:.0f}"


def relation(q: float, lower_better: bool | None) -> tuple[str, str]:
    """`q` (subject ÷ other) as a factor ≥ 1 and a direction word: (`3.1`, `slower`)."""
    if q <= 0 or q != q:
        return "?", "different"
    big = q >= 1
    factor = _factor(q if big else 1 / q)
    if lower_better is None:
        return factor, "higher" if big else "lower"
    return factor, ("slower" if big else "faster") if lower_better else ("faster" if big else "slower")


def _who(fact: Mapping[str, Any] | None, fid: str) -> str:
    if fact is None:
        return f"`{fid}`"
    ident = fact["conditions"]["identity"]
    return str(ident.get("model") or ident.get("machine") or f"`{fid}`")


def _setting(fact: Mapping[str, Any]) -> str:
    """`thinking off, cold, n=1: 0.130 s`: the conditions that move a latency most, and the value."""
    ident = {**fact["conditions"]["info"], **fact["conditions"]["identity"]}
    flags = fact.get("flags") or []
    bits = []
    if "thinking" in ident:
        bits.append(f"thinking {'on' if _on(ident['thinking']) else 'off'}")
    elif "thinking_on" in flags:
        bits.append("thinking on")
    if "cold" in flags or str(ident.get("warm", "")).lower() in ("false", "0", "no", "off"):
        bits.append("cold")
    elif "warm" in ident:
        bits.append("warm")
    if fact.get("n"):
        bits.append(f"n={fact['n']}")
    return (", ".join(bits) + ": " if bits else "") + display.text(fact)


def comparison(fact: Mapping[str, Any], facts: Mapping[str, FactData], subject_model: str | None,
               lang: str = "en") -> dict[str, Any] | None:
    """A ratio fact read as a comparison: both sides (metric, model, conditions, values), the ratio said from the
    side of `subject_model` when it is one of them, with a direction word and the interval turned the same way."""
    pair = sides_of(fact)
    if pair is None or not fact.get("value"):
        return None
    num_id, den_id = pair
    num, den = facts.get(num_id), facts.get(den_id)
    flip = den is not None and subject_model is not None and _who(den, den_id) == subject_model \
        and _who(num, num_id) != subject_model
    subj_id, other_id = (den_id, num_id) if flip else (num_id, den_id)
    subj, other = (den, num) if flip else (num, den)
    q = 1 / fact["value"] if flip else float(fact["value"])
    ci = interval_of(fact)
    if ci and flip:
        ci = [1 / ci[1], 1 / ci[0]] if ci[0] > 0 else None
    probe: Mapping[str, Any] = subj or other or {}
    metric = str(probe.get("metric") or fact["conditions"]["identity"].get("of_metric") or "value")
    factor, word = relation(q, _lower_is_better(probe) if probe else None)
    shown_ci = None
    if ci and ci[0] > 0:
        if (ci[0] >= 1) == (ci[1] >= 1):
            ends = sorted(x if x >= 1 else 1 / x for x in ci)
            shown_ci = say(lang, "95% interval {lo}–{hi}× {word}", lo=fmt.num(ends[0]), hi=fmt.num(ends[1]),
                           word=say(lang, word))
        else:
            shown_ci = say(lang, "95% interval {lo}–{hi}× (either way)", lo=fmt.num(ci[0]), hi=fmt.num(ci[1]))
    return {
        "metric": metric,
        "subject": _who(subj, subj_id),
        "other": _who(other, other_id),
        "subject_id": subj_id,
        "other_id": other_id,
        "subject_setting": _setting(subj) if subj else say(lang, "not in the registry"),
        "other_setting": _setting(other) if other else say(lang, "not in the registry"),
        "factor": factor,
        "word": word,
        "interval": shown_ci or say(lang, "no interval recorded"),
        "n": fact.get("n"),
        "sentence": say(lang, "{subject} is {factor}× {word} than {other}", subject=_who(subj, subj_id),
                        factor=factor, word=say(lang, word), other=_who(other, other_id)),
        "facts": (subj, other),
    }


def _common_model(old: Mapping[str, Any], new: Mapping[str, Any], facts: Mapping[str, FactData]) -> str | None:
    def models(f: Mapping[str, Any]) -> list[str]:
        return [_who(facts.get(fid), fid) for fid in sides_of(f) or ()]

    shared = [m for m in models(new) if m in models(old)]
    return shared[0] if shared else None


def _unrecorded(diff: Mapping[str, Sequence[Any]], side: int) -> list[str]:
    """The condition names one side (0 old, 1 new) did not record while the other did, named once each."""
    names: list[str] = []
    for key, pair in sorted(diff.items(), key=lambda kv: (_rank(kv[0]), kv[0])):
        if pair[side] is None and pair[1 - side] is not None:
            name = CONDITION_NAMES.get(key, key)
            if name not in names:
                names.append(name)
    return names


def ranked_causes(old: Mapping[str, Any], new: Mapping[str, Any], cause: str | None = None,
                  facts: Mapping[str, FactData] | None = None, lang: str = "en") -> list[dict[str, Any]]:
    """Why the old value probably differed, most likely first: each {text, evidence, rank}. Conditions known to
    move the metric most come first (thinking, cold/warm, request body, model, build, offload/threads, hardware),
    then the others, then the statistics; the conditions one side never recorded make a single line."""
    out: list[dict[str, Any]] = []
    facts = facts or {}

    def add(rank: int, text: str, evidence: str = "", **kw: Any) -> None:
        out.append({"rank": rank, "text": say(lang, text, **kw), "evidence": say_evidence(lang, evidence)})

    old_pair, new_pair = sides_of(old), sides_of(new)
    if old_pair and new_pair:
        _comparison_causes(old, new, old_pair, new_pair, facts, add)
    else:
        _value_causes(old, new, add)
    out.sort(key=lambda c: c["rank"])
    if cause:
        out.insert(0, {"rank": -1, "text": " ".join(cause.split()),
                       "evidence": say(lang, "stated when the fact was corrected")})
    return out


def _value_causes(old: Mapping[str, Any], new: Mapping[str, Any], add: Callable[..., None]) -> None:
    flags = old.get("flags") or []
    info = {**old["conditions"]["info"], **old["conditions"]["identity"]}
    diff = cond.diff(old["conditions"]["identity"], new["conditions"]["identity"])
    for key, (a, b) in diff.items():
        if a is None or b is None:
            continue
        if key == "body_sha256":
            add(_rank(key), "another request body", f"sha256 {_short(a)} → {_short(b)}")
        elif key == "thinking":
            add(_rank(key), "thinking {a} → {b} (old value measured with thinking on)" if _on(a)
                else "thinking {a} → {b}", "recorded in both facts' conditions", a=a, b=b)
        elif key == "warm":
            uptime = info.get("uptime_s")
            after = f"; old value {fmt.num(float(str(uptime)), 2)} s after a server restart" if _is_number(uptime) else ""
            add(_rank(key), "cold vs warm server" if not _on(a) else "warm vs cold server", f"warm {a} → {b}{after}")
        elif key in BUILD_KEYS:
            add(_rank(key), "another build ({a} → {b})", "recorded in both facts' conditions", a=a, b=b)
        else:
            add(_rank(key), "{key} differs ({a} → {b})", "recorded in both facts' conditions", key=key, a=a, b=b)
    if "cold" in flags and "warm" not in diff:
        uptime = info.get("uptime_s")
        when = (f"{fmt.num(float(str(uptime)), 2)} s after a server restart" if _is_number(uptime)
                else "cold (right after a restart or without warm-up)")
        add(_rank("cold"), "cold server", f"old value measured {when} (flag cold)")
    if "thinking_on" in flags and "thinking" not in diff:
        add(_rank("thinking"), "old value measured with thinking on", "flag thinking_on")
    if "cache_hit" in flags:
        add(_rank("cache_hit"), "old value may have hit a prompt cache", "flag cache_hit")
    if "cold" not in flags and "cold" in (new.get("flags") or []):
        add(_rank("cold"), "the new value was measured cold", "flag cold on the new fact")
    missing = _unrecorded(diff, 0)
    if missing:
        recorded = ", ".join(sorted(old["conditions"]["identity"])) or "nothing"
        add(OTHER_RANK, "the old value recorded no conditions for {names}: cannot be compared",
            f"`{old['id']}` records only {recorded}", names=", ".join(missing))
    gone = _unrecorded(diff, 1)
    if gone:
        add(OTHER_RANK, "the new value does not record {names}: not compared", "", names=", ".join(gone))
    if "few_samples" in flags:
        n = old.get("n")
        add(STATS_RANK, "old value rests on few samples", f"n={n if n else 'unknown'}")
    if "high_variance" in flags:
        cv = (old.get("stats") or {}).get("cv")
        add(STATS_RANK, "old value had high variance", f"CV {cv:.0%}" if cv is not None else "flag high_variance")


def _comparison_causes(old: Mapping[str, Any], new: Mapping[str, Any], old_pair: tuple[str, str],
                       new_pair: tuple[str, str], facts: Mapping[str, FactData], add: Callable[..., None]) -> None:
    """A ratio against a ratio: what the old comparison mixed up (its two sides under different conditions), and
    what differs between the two comparisons (metric, the facts compared)."""
    o_num, o_den = facts.get(old_pair[0]), facts.get(old_pair[1])
    n_num, n_den = facts.get(new_pair[0]), facts.get(new_pair[1])
    old_side: Mapping[str, Any] = o_num or o_den or {}
    new_side: Mapping[str, Any] = n_num or n_den or {}
    old_metric = old_side.get("metric")
    new_metric = new_side.get("metric") or new["conditions"]["identity"].get("of_metric")
    if old_metric and new_metric and old_metric != new_metric:
        add(_rank("metric"), "another metric: the old comparison used {a}, the new one {b}",
            f"`{old_pair[0]}`, `{old_pair[1]}` are {old_metric}; `{new_pair[0]}`, `{new_pair[1]}` are {new_metric}",
            a=old_metric, b=new_metric)
    if o_num is not None and o_den is not None:
        a_cond = {**o_num["conditions"]["info"], **o_num["conditions"]["identity"]}
        b_cond = {**o_den["conditions"]["info"], **o_den["conditions"]["identity"]}
        a_name, b_name = _who(o_num, old_pair[0]), _who(o_den, old_pair[1])
        ta, tb = _on(a_cond.get("thinking")), _on(b_cond.get("thinking"))
        if ("thinking" in a_cond or "thinking" in b_cond) and ta != tb:
            add(_rank("thinking"), "the old comparison mixed thinking on and off",
                f"{a_name} thinking {'on' if ta else 'off'} (`{old_pair[0]}`) against {b_name} thinking "
                f"{'on' if tb else 'off'} (`{old_pair[1]}`)")
        ca, cb = ("cold" in (o_num.get("flags") or [])), ("cold" in (o_den.get("flags") or []))
        if ca != cb:
            cold_f, cold_id = (o_num, old_pair[0]) if ca else (o_den, old_pair[1])
            uptime = {**cold_f["conditions"]["info"]}.get("uptime_s")
            when = f", {fmt.num(float(str(uptime)), 2)} s after a server restart" if _is_number(uptime) else ""
            add(_rank("warm"), "the old comparison set a cold server against a warm one",
                f"{_who(cold_f, cold_id)} measured cold (`{cold_id}`, flag cold{when})")
        if a_cond.get("body_sha256") != b_cond.get("body_sha256"):
            add(_rank("body_sha256"), "the old comparison used two request bodies",
                f"sha256 {_short(a_cond.get('body_sha256'))} vs {_short(b_cond.get('body_sha256'))}")
        small = [f"`{fid}` n={f.get('n') or '?'}" for fid, f in zip(old_pair, (o_num, o_den), strict=True)
                 if "few_samples" in (f.get("flags") or [])]
        if small:
            add(STATS_RANK, "the old comparison rests on few samples", ", ".join(small))
    elif not old["conditions"]["identity"]:
        add(OTHER_RANK, "the old ratio recorded no conditions: its two sides cannot be checked",
            f"`{old['id']}` names {old_pair[0]} over {old_pair[1]}, which the registry does not hold")
    old_models = {_who(f, fid) for fid, f in zip(old_pair, (o_num, o_den), strict=True)}
    new_models = {_who(f, fid) for fid, f in zip(new_pair, (n_num, n_den), strict=True)}
    if old_models != new_models:
        add(_rank("model"), "other models compared",
            f"old: {' vs '.join(sorted(old_models))}; new: {' vs '.join(sorted(new_models))}")


def cause_lines(causes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Ranked causes as plain lines (the `correct --json` output)."""
    return [c["text"] + (f" ({c['evidence']})" if c["evidence"] else "") for c in causes]


def probable_causes(old: FactData, new: FactData, cause: str | None = None,
                    facts: Mapping[str, FactData] | None = None) -> list[str]:
    """Why the old value probably differed, most likely first, each with its evidence (`ranked_causes`)."""
    return cause_lines(ranked_causes(old, new, cause, facts))
