"""How the machine's state and the control measurement of a fact or verification are shown (`status`, the report,
correction notes): the two info conditions `machine_state` and `control` are compact JSON written by
`measure/machine.py` and `measure/control.py`; here they are read back and summarised in one line each, for
`measure/` and for `publish/`, which ranks above it."""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from typing import Any

MACHINE_KEY = "machine_state"
CONTROL_KEY = "control"
SERVER_KEY = "server_state"


def parse(text: Any) -> dict[str, Any]:
    """A `machine_state` condition back as data ({} for anything that is not a JSON object)."""
    if isinstance(text, Mapping):
        return dict(text)
    if not isinstance(text, str) or not text.startswith("{"):
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def summary(state: Any) -> str:
    """One line: `load 6.5/2 CPUs, CPU pressure 72%, steal 0.3%, 2596 MHz, busiest: python3 80%, cc1 40%`."""
    s = parse(state)
    if not s:
        return "not recorded"
    parts: list[str] = []
    if "load1" in s:
        parts.append(f"load {s['load1']:g}" + (f"/{s['ncpu']} CPUs" if s.get("ncpu") else ""))
    if "cpu_pressure_pct" in s:
        parts.append(f"CPU pressure {s['cpu_pressure_pct']:.0f}%")
    if "steal_pct" in s:
        parts.append(f"steal {s['steal_pct']:g}%")
    if "cpu_mhz" in s:
        parts.append(f"{s['cpu_mhz']:g} MHz")
    top = [t for t in s.get("top") or [] if isinstance(t, dict)]
    if top:
        parts.append("busiest: " + ", ".join(f"{t.get('name')} {t.get('cpu_pct')}%" for t in top))
    for g in s.get("gpu") or []:
        if isinstance(g, dict):
            gtext = f"GPU{g.get('index', '')} {g.get('util_pct', '?')}% {g.get('sm_mhz', '?')} MHz " \
                    f"{g.get('temp_c', '?')}°C {g.get('power_w', '?')} W"
            if g.get("processes"):
                gtext += " (also: " + ", ".join(str(p) for p in g["processes"]) + ")"
            parts.append(gtext)
    return ", ".join(parts) if parts else "not recorded"


def control_summary(ctl: Any) -> str:
    """One line: `40.5k tok/s (tiny tg64, 48 samples, 0.21 s)`, or why there is none."""
    c = parse(ctl)
    if not c:
        return "none"
    xs = [float(x) for x in c.get("samples") or [] if isinstance(x, (int, float))]
    value = c.get("value") if isinstance(c.get("value"), (int, float)) else (statistics.fmean(xs) if xs else None)
    if value is None:
        return f"could not run: {c.get('error') or 'no value'}"
    shown = f"{value / 1000:.1f}k" if abs(value) >= 1000 else f"{value:.3g}"
    raw_spec = c.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    what = ", ".join(str(x) for x in (spec.get("workload"), f"{len(xs)} samples" if xs else None,
                                      f"{c['seconds']:g} s" if isinstance(c.get("seconds"), (int, float)) else None)
                     if x)
    text = f"{shown} {c.get('unit') or ''}".rstrip() + (f" ({what})" if what else "")
    chunks = c.get("chunks")
    if isinstance(chunks, list) and chunks:
        text += f", interleaved with {len(chunks)} measured run{'s' if len(chunks) > 1 else ''}"
    health = [float(x) for x in c.get("server_ms") or [] if isinstance(x, (int, float))]
    if health:
        text += f"; server 1-token request {statistics.median(health):.1f} ms"
    return text


def competitors(ev: Mapping[str, Any]) -> str:
    """`burn 98%, cc1 40%`: the busiest other processes of a machine state or a server's evidence."""
    top = [t for t in ev.get("top") or [] if isinstance(t, Mapping) and t.get("name")]
    return ", ".join(f"{t['name']} {t.get('cpu_pct', '?')}%" for t in top)


def server_summary(ev: Any) -> str:
    """One line of a probe's evidence about its server (`server_state`, measure/endpoint.py): `local; server kept
    from a CPU 34% of the run; busiest: burn 98%; no other traffic`."""
    e = parse(ev)
    if not e:
        return "not recorded"
    if e.get("error"):
        return str(e["error"])
    parts = ["local" if e.get("local") else "remote"]
    d = e.get("denied")
    server = e.get("server") if isinstance(e.get("server"), Mapping) else {}
    if e.get("local"):
        if isinstance(d, (int, float)) and e.get("denied_source"):
            parts.append(f"server process not read, machine-wide CPU pressure {d * 100:.0f}% of the run")
        elif isinstance(d, (int, float)):
            parts.append(f"server kept from a CPU {d * 100:.0f}% of the run")
        elif server:
            parts.append("server process not read")
    busiest = competitors(e)
    if busiest:
        parts.append(f"busiest: {busiest}")
    load = e.get("load")
    if isinstance(load, Mapping):
        if not load.get("available"):
            parts.append("no load gauges")
        elif load.get("busy"):
            parts.append(f"server busy: {float(load.get('other_max') or 0):g} other requests")
        else:
            parts.append("no other traffic")
    return "; ".join(parts)


def condition_text(value: Any, key: str) -> str:
    """A condition's value as shown: the machine state and the control summarised, anything else as it is."""
    if key == MACHINE_KEY:
        return summary(value)
    if key == CONTROL_KEY:
        return "control " + control_summary(value)
    if key == SERVER_KEY:
        return "server " + server_summary(value)
    return "" if value is None else str(value)


def sides(fact_info: Mapping[str, Any], observed: Mapping[str, Any] | None) -> dict[str, str]:
    """Both sides as text: the fact's (when measured) and a verification's (when verified)."""
    observed = observed or {}

    def one(side: Mapping[str, Any]) -> str:
        text = summary(side.get(MACHINE_KEY))
        if side.get(CONTROL_KEY) or not side.get(SERVER_KEY):  # a probe has the server's evidence, no control
            text += f"; control {control_summary(side.get(CONTROL_KEY))}"
        if side.get(SERVER_KEY):
            text += f"; server {server_summary(side.get(SERVER_KEY))}"
        return text

    return {"fact": one(fact_info), "verification": one(observed)}


def for_facts(registry: Any, ids: list[str]) -> dict[str, dict[str, str]]:
    """id → both sides as text (`sides`): each fact's current version and its newest verification (only facts
    with a machine state or a control on either side)."""
    if not ids:
        return {}
    marks = {f"i{n}": i for n, i in enumerate(ids)}
    clause = ", ".join(f":{k}" for k in marks)
    info: dict[str, dict[str, str]] = {i: {} for i in ids}
    for r in registry.query(
        "SELECT c.fact_id, c.key, c.value FROM condition c JOIN fact f ON f.id = c.fact_id AND "
        f"f.current_version = c.version WHERE c.key IN ('{MACHINE_KEY}', '{CONTROL_KEY}', '{SERVER_KEY}') AND c.fact_id IN ({clause})",
        marks,
    ):
        info[r["fact_id"]][r["key"]] = r["value"]
    observed: dict[str, dict[str, Any]] = {}
    for r in registry.query(
        "SELECT r.fact_id, r.observed FROM verification r JOIN fact f ON f.id = r.fact_id AND "
        f"f.current_version = r.fact_version WHERE r.fact_id IN ({clause}) ORDER BY r.pk",
        marks,
    ):
        observed[r["fact_id"]] = parse(r["observed"])
    return {i: sides(info[i], observed.get(i)) for i in ids
            if info[i] or {MACHINE_KEY, CONTROL_KEY, SERVER_KEY} & set(observed.get(i, {}))}
