"""A fact's history chart as geometry, in pixels, for the report's SVG: every version and verification as a point
(its median, interval and samples), the value documents cite, round 1-2-5 ticks (the site's charts use the same
ticks and verdict classes)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factreg import fmt
from factreg.registry import display
from factreg.registry.freshness import parse_time

CHART_W, CHART_H = 640, 300
PAD_L, PAD_R, PAD_T, PAD_B = 64, 24, 44, 64
MAX_SAMPLES = 200  # sample dots drawn per point


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] in 1-2-5 steps (…, 0.1, 0.2, 0.5, 1, 2, 5, 10, …): the first tick at
    or below lo, the last at or above hi."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi <= lo:
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(1, count - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * 0.999)
    first = math.floor(lo / step + 1e-9) * step
    out: list[float] = []
    k = 0
    while True:
        v = first + k * step
        out.append(round(v, 12) + 0.0)
        if v >= hi - step * 1e-9 or k > 4 * count:
            break
        k += 1
    return out


def tick_label(v: float, ticks: Sequence[float]) -> str:
    """A tick's value with as many decimals as its step needs (`0.5`, `2`, `0.25` never: steps are 1-2-5)."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    return f"{v:.{decimals}f}"


VERDICT_CLASS = {"confirmed": "confirmed", "refuted": "refuted", "inconclusive": "inconclusive",
                 "conditions_changed": "changed"}


def _point_interval(p: Mapping[str, Any]) -> list[float] | None:
    ci = p.get("ci95")
    if ci and ci[0] is not None and ci[1] is not None:
        return [float(ci[0]), float(ci[1])]
    if p.get("spread"):
        return [p["value"] - p["spread"], p["value"] + p["spread"]]
    return None


def history_points(history: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every version and every verification with a value, as chart points, oldest first: value (the median),
    interval (95% interval, else value ± spread), samples, kind and verdict."""
    from factreg.publish.corrections import interval_of

    pts: list[dict[str, Any]] = []
    for v in history:
        pts.append({
            "at": v["measured_at"],
            "value": v["value"],
            "spread": v["spread"],
            "ci95": interval_of(v),
            "samples": list(v.get("samples") or []),
            "kind": "version",
            "verdict": None,
            "label": f"v{v['version']} {v['measured_at'][:16].replace('T', ' ')}: {display.text(v)}",
        })
        for ver in v.get("verifications") or []:
            if ver.get("value") is None:
                continue
            pts.append({
                "at": ver["verified_at"],
                "value": ver["value"],
                "spread": ver["spread"],
                "ci95": None,
                "samples": list(ver.get("samples") or []),
                "kind": "verification",
                "verdict": ver["verdict"],
                "label": f"verification {ver['pk']} {ver['verified_at'][:16].replace('T', ' ')} "
                f"({ver['verdict']}): {fmt.value(ver['value'], ver['spread'], v['unit'])}",
            })
    pts.sort(key=lambda p: (parse_time(p["at"]), p["kind"] != "version"))
    return pts


def chart(fact_id: str, unit: str, points: Sequence[Mapping[str, Any]], metric: str = "",
          cited: float | None = None, cited_label: str = "", flags: Sequence[str] = ()) -> dict[str, Any]:
    """Chart geometry for `points` (`history_points`), in pixels: every sample as a faint dot, each point's median
    and interval, verifications by verdict, the value documents cite as a line, round (1-2-5) y ticks, a title
    and a legend. One measurement is drawn as its samples' spread (a strip) instead of a timeline."""
    pts = [p for p in points if p.get("value") is not None]
    ticks = _ticks(pts, cited)
    lo, hi = ticks[0], ticks[-1]
    left, right, top, bottom = PAD_L, CHART_W - PAD_R, PAD_T, CHART_H - PAD_B
    plot_w = right - left
    single = len(pts) == 1
    times = [parse_time(p["at"]).timestamp() for p in pts]
    t0, t1 = (min(times), max(times)) if times else (0.0, 0.0)

    def x(t: float) -> float:
        inner = plot_w - 40
        return left + 20 + (inner / 2 if t1 == t0 else (t - t0) / (t1 - t0) * inner)

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * (bottom - top)

    drawn = [_drawn(p, x(t), y, (lo, hi), plot_w, single) for p, t in zip(pts, times, strict=True)]
    verdicts = sorted({d["verdict"] for d in drawn if d["kind"] == "verification"})
    versions = [d for d in drawn if d["kind"] == "version"]
    n_samples = sum(len(d["samples"]) for d in drawn)
    what = f"{metric} ({unit})" if metric else f"({unit})"
    first = pts[times.index(t0)]["at"][:10] if pts else ""
    last = pts[times.index(t1)]["at"][:10] if pts else ""
    return {
        "id": fact_id,
        "unit": unit,
        "title": f"{fact_id} — {what}",
        "width": CHART_W,
        "height": CHART_H,
        "points": drawn,
        "trend": " ".join(f"{d['x']:.1f},{d['y']:.1f}" for d in versions) if len(versions) > 1 else "",
        "left": left,
        "right": right,
        "top": top,
        "bottom": bottom,
        "ticks": [{"y": y(v), "label": tick_label(v, ticks)} for v in ticks],
        "x_first_label": "" if single else first,
        "x_last_label": "" if single or last == first else last,
        "x_note": _x_note(pts[0]) if single else "",
        "cited": None if cited is None else {"y": y(cited), "label": cited_label},
        "verdicts": verdicts,
        "n_samples": n_samples,
        "legend_y": CHART_H - 12,
        "care": "use with care: " + ", ".join(f for f in display.CARE_FLAGS if f in flags)
        if set(flags) & set(display.CARE_FLAGS) else "",
    }


def _ticks(pts: Sequence[Mapping[str, Any]], cited: float | None) -> list[float]:
    """The y ticks: round steps covering every value, drawn sample, interval and the cited value."""
    values: list[float] = []
    for p in pts:
        values += [p["value"], *(p.get("samples") or [])[:MAX_SAMPLES], *(_point_interval(p) or [])]
    if cited is not None:
        values.append(cited)
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if lo < 0 <= min((p["value"] for p in pts), default=0.0) and all(s >= 0 for p in pts for s in p.get("samples") or []):
        lo = 0.0  # an interval reaching below zero of a value that cannot be negative: the axis stops at zero
    return nice_ticks(lo, hi)


def _drawn(p: Mapping[str, Any], cx: float, y: Callable[[float], float], span: tuple[float, float], plot_w: float,
           single: bool) -> dict[str, Any]:
    """One point at `cx`: its median, its interval as a bar (within `span`), its samples as dots."""
    lo, hi = span
    samples = (p.get("samples") or [])[:MAX_SAMPLES]
    if single and samples:  # one measurement: its samples spread side by side across the plot
        width = min(plot_w * 0.7, 36.0 * len(samples))
        dots = [{"x": cx - width / 2 + (i + 0.5) * width / len(samples), "y": y(s), "value": s}
                for i, s in enumerate(samples)]
    else:
        offsets = [((i % 5) - 2) * 2.0 for i in range(len(samples))]
        dots = [{"x": cx + dx, "y": y(s), "value": s} for dx, s in zip(offsets, samples, strict=True)]
    interval = _point_interval(p)
    return {
        "x": cx,
        "y": y(p["value"]),
        "bar": [y(max(lo, interval[0])), y(min(hi, interval[1]))] if interval else None,
        "half": (min(plot_w * 0.37, 18.0 * len(samples) + 8) if single and samples else 6.0),
        "samples": dots,
        "kind": p["kind"],
        "verdict": VERDICT_CLASS.get(p.get("verdict") or "", "other") if p["kind"] == "verification" else "",
        "label": p["label"],
    }


def _x_note(p: Mapping[str, Any]) -> str:
    """What the x axis says under one measurement drawn as a strip."""
    when = p["at"][:16].replace("T", " ")
    k = len(p.get("samples") or [])
    return (f"one measurement, {when}: " + ("1 sample" if k == 1 else f"{k} samples, each a dot") if k
            else f"one measurement, {when}: one value, its samples not recorded")
