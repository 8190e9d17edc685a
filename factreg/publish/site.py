"""The HTML report: a static site of the registry — an index of facts with a filter, a page per fact with its
history chart, the decisions and the corrections (`factreg report --html`).

Static: plain files that work from `file://` and from any static host (GitHub Pages). Nothing is fetched: no
fonts, scripts, styles or images from elsewhere; each page carries its style and (the index) its filter script
inline, and a Content-Security-Policy that allows exactly those two (by hash) and nothing else. Without
JavaScript the index is the full table. Charts are inline SVG drawn here, from a fact's series
(`registry/series.py`: versions and verifications in time order) and its change points (`registry/changes.py`).

Deterministic like the Markdown report: the same registry renders the same bytes. The one date on the pages is
the day the statuses are computed for (`clock`, which `--as-of` and `FACTREG_NOW` pin). Every value is escaped
(autoescaped `.html.j2` templates) and redacted (`secrets.redact_data` before rendering). Files are written by
`publish/writer.py`, under a manifest (`report.claim`): a file factreg did not write is never overwritten.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from markupsafe import Markup, escape

from factreg import clock, fmt, secrets
from factreg.publish import decisions as decmod
from factreg.publish import report
from factreg.publish.chart import VERDICT_CLASS, nice_ticks, tick_label
from factreg.publish.corrections import list_corrections
from factreg.registry import display
from factreg.registry.freshness import parse_time

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.changes import Change
    from factreg.registry.series import Series
    from factreg.registry.store import Registry

INDEX = "index.html"
CHART_W, CHART_H = 720, 260
PAD_L, PAD_R, PAD_T, PAD_B = 64, 24, 40, 36
MAX_SAMPLES = 200  # sample dots drawn per point; a point with more shows its first MAX_SAMPLES


def html_name(fact_id: str) -> str:
    """The page of a fact in the site: its Markdown page name (`report.page_name`) with `.html` for `.md`, and
    `+` after a folder ending in `.html` (`a.html/x` would be a folder where `a`'s page is a file). `index` is
    among the reserved names, so no fact's page is the site's `index.html`."""
    parts = report.page_name(fact_id)[: -len(".md")].split("/")
    folders = [p + report.ESC if p.endswith(".html") else p for p in parts[:-1]]
    return "/".join([*folders, parts[-1]]) + ".html"


def _href(target: str, start_dir: str) -> str:
    """A relative link from a page in `start_dir` (relative to the site) to `target`, URL-quoted."""
    rel = Path(os.path.relpath(target, start_dir or ".")).as_posix()
    return quote(rel.encode("utf-8", "surrogateescape"), safe="/+.-_~")  # a name that is not UTF-8: its bytes


def _csp_hash(text: str) -> Markup:
    """The Content-Security-Policy source that allows exactly this inline style or script."""
    return Markup("'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'")


def chart(s: Series, found: Sequence[Change], spreads: Mapping[str, float | None],
          verdicts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The chart of a series, in pixels: each point (value, its ± spread as an interval, its samples), the level
    of each segment between change points (median and interval), the change points, the recorded value."""
    times = [parse_time(p.at).timestamp() for p in s.points]
    values: list[float] = []
    for p, src in zip(s.points, s.sources, strict=True):
        half = spreads.get(src) or 0.0
        values += [p.value - half, p.value + half, *(p.samples or [])[:MAX_SAMPLES]]
    for c in found:
        values += [c.before.ci_low, c.before.ci_high, c.after.ci_low, c.after.ci_high]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    ticks = nice_ticks(lo, hi)  # round 1-2-5 steps, as the Markdown report's charts
    lo, hi = ticks[0], ticks[-1]
    plot_w, plot_h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    t0, t1 = (min(times), max(times)) if times else (0.0, 0.0)

    def x(t: float) -> float:
        return PAD_L + (plot_w / 2 if t1 == t0 else (t - t0) / (t1 - t0) * plot_w)

    def y(v: float) -> float:
        return PAD_T + (hi - v) / (hi - lo) * plot_h

    xs = [x(t) for t in times]
    points = []
    for i, (p, src) in enumerate(zip(s.points, s.sources, strict=True)):
        spread = spreads.get(src)
        kind = "verification" if src.startswith("verification") else "version"
        label = f"{src}, {p.at[:16].replace('T', ' ')}: {fmt.value(p.value, spread, s.unit)}"
        if p.samples:
            label += f" (n={len(p.samples)})"
        points.append({
            "x": xs[i],
            "y": y(p.value),
            "bar": [y(p.value - spread), y(p.value + spread)] if spread else None,
            "samples": [y(v) for v in (p.samples or [])[:MAX_SAMPLES]],
            "kind": kind,
            "verdict": VERDICT_CLASS.get((verdicts or {}).get(src, ""), "other") if kind == "verification"
            else "",
            "current": i == s.current,
            "source": src,
            "label": label,
        })
    bounds = [0, *(c.index for c in found), len(s.points)]
    levels = []
    if found:
        sides = [found[0].before, *(c.after for c in found)]
        for k, level in enumerate(sides):
            a, b = bounds[k], bounds[k + 1] - 1
            levels.append({
                "x1": xs[a] - 3,
                "x2": xs[b] + 3,
                "y": y(level.median),
                "y_hi": y(level.ci_high),
                "y_lo": y(level.ci_low),
                "label": f"level {fmt.num(level.median)} {s.unit}, interval [{fmt.num(level.ci_low)}, "
                f"{fmt.num(level.ci_high)}] ({level.ci_level * 100:.4g}%, {level.n} points)",
            })
    changes = []
    for c in found:
        rel = c.relative_change
        short = "changed" if rel is None else f"{'−' if rel < 0 else '+'}{abs(rel) * 100:.1f}%"
        changes.append({"x": (xs[c.index - 1] + xs[c.index]) / 2, "short": short, "label": c.describe()})
    return {
        "width": CHART_W,
        "height": CHART_H,
        "left": PAD_L,
        "right": CHART_W - PAD_R,
        "top": PAD_T,
        "bottom": CHART_H - PAD_B,
        "points": points,
        "levels": levels,
        "changes": changes,
        "recorded": y(s.value),
        "ticks": [{"y": y(v), "label": tick_label(v, ticks)} for v in ticks],
        "first": s.points[0].at[:10] if s.points else "",
        "last": s.points[-1].at[:10] if s.points else "",
        "unit": s.unit,
        "title": f"{s.id}: {len(s.points)} points over time ({s.unit})",
    }


def _spreads(history: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Each series source (`v3`, `verification 12`) → its spread (the ± of its value)."""
    out: dict[str, float | None] = {}
    for v in history:
        out[f"v{v['version']}"] = v.get("spread")
        for r in v.get("verifications") or []:
            out[f"verification {r['pk']}"] = r.get("spread")
    return out


def _decision(d: Mapping[str, Any], pages: Mapping[str, str], start: str) -> dict[str, Any]:
    """A decision as the site shows it: its fields as they are (a `drivers` list included when there is one),
    each cited fact with a link to its page."""
    out = dict(d)
    out["cites"] = [{**c, "href": _href(pages[c["id"]], start) if c["id"] in pages else None} for c in d["cites"]]
    out["anchor"] = f"decision-{d['number']}"
    out["drivers"] = list(d.get("drivers") or [])
    return out


def build(
    registry: Registry, settings: Settings, out: Path | None = None, templates: Path | str | None = None
) -> dict[Path, str]:
    """Render every file of the site under `out` (default: `site/` under the project root): path → text."""
    from factreg.publish import render as rendering
    from factreg.registry import facts as factmod
    from factreg.registry import series as seriesmod

    config = settings.file_config
    out = Path(out) if out is not None else Path(settings.root) / "site"
    facts = factmod.list_facts(registry, config)
    by_id = {f["id"]: f for f in facts}
    decisions = decmod.list_decisions(registry, config, current=by_id)
    with registry.read() as conn:
        last = factmod.last_verifications(conn)
    with registry.reader() as conn:
        all_series = seriesmod.load(conn, [f["id"] for f in facts])
    cites = report._citations(settings)
    corrections = list_corrections(registry)
    pages = {f["id"]: html_name(f["id"]) for f in facts}

    # Our own style and script, printed as they are inside <style> and <script> (raw text: not escaped, not data).
    style = Markup(rendering.render("site.css.j2", {}, templates))
    script = Markup(rendering.render("site.js.j2", {}, templates))
    as_of = clock.iso()[:10]
    common = {
        "style": style,
        "csp_style": _csp_hash(style),
        "as_of": as_of,
    }
    files: dict[Path, str] = {}

    def doc_links(fid: str) -> list[dict[str, Any]]:
        return [
            {"path": report._rel(c.path.resolve(), Path(settings.root).resolve()),
             "line": c.line, "text": c.text}
            for c in cites.get(fid, [])
        ]

    def correction_rows(start: str, fid: str | None = None) -> list[dict[str, Any]]:
        rows = []
        for c in corrections:
            if fid is not None and fid not in (c["old_id"], c["new_id"]):
                continue
            rows.append({
                **c,
                "old_href": _href(pages[c["old_id"]], start) if c["old_id"] in pages else None,
                "new_href": _href(pages[c["new_id"]], start) if c["new_id"] in pages else None,
            })
        return rows

    entries = []
    for f in facts:
        fid = f["id"]
        name = pages[fid]
        start = os.path.dirname(name)
        history = factmod.history(registry, fid)
        s = all_series.get(fid)
        found = s.detect() if s is not None else []
        verdicts = {f"verification {r['pk']}": r["verdict"] for v in history for r in v.get("verifications") or []}
        geometry = chart(s, found, _spreads(history), verdicts) if s is not None and s.points else None
        changes = [seriesmod.change_data(s, c) for c in found] if s is not None else []
        successor = f.get("superseded_by")
        entry = {
            "fact": f,
            "reason": decmod.stable_reason(f),
            "headline": display.headline(f),
            "href": _href(name, ""),
            "changes": changes,
            "last_change": changes[-1]["summary"] if changes else None,
            "last_change_short": _short_change(changes[-1]) if changes else None,
            "care": report.care_reasons(f),
        }
        entries.append(entry)
        versions = [
            {**v, "shown": fmt.value(v["value"], v["spread"], v["unit"]),
             "charted": s is not None and f"v{v['version']}" in s.sources}
            for v in history
        ]
        page = {
            **common,
            "e": entry,
            "title": fid,
            "index_href": _href(INDEX, start),
            "home_href": _href(INDEX, start),
            "successor_href": _href(pages[successor], start) if successor and successor in pages else None,
            "chart": geometry,
            "versions": versions,
            "verifications": [
                {**r, "version": v["version"], "shown": fmt.value(r["value"], r["spread"], v["unit"])}
                for v in history for r in v.get("verifications") or []
            ],
            "docs": doc_links(fid),
            "decisions": [_decision(d, pages, start) for d in decmod.citing(decisions, fid)],
            "decision_base": _href(INDEX, start),
            "corrections": correction_rows(start, fid),
            "todo": _code_spans(report.what_to_do(f, last.get(fid)))
            if f["status"] in (*report.PROBLEM_STATUSES, "superseded") else None,
        }
        files[out / name] = rendering.render("site-fact.html.j2", secrets.redact_data(page), templates)

    counts: dict[str, int] = {}
    for f in facts:
        counts[f["status"]] = counts.get(f["status"], 0) + 1
    index = {
        **common,
        "title": "Facts",
        "home_href": INDEX,
        "decision_base": "",
        "script": script,
        "csp_script": _csp_hash(script),
        "entries": entries,
        "counts": sorted(counts.items()),
        "problems": " ".join(report.PROBLEM_STATUSES),
        "decisions": [_decision(d, pages, "") for d in decisions],
        "corrections": correction_rows(""),
    }
    files[out / INDEX] = rendering.render("site-index.html.j2", secrets.redact_data(index), templates)
    return files


def _code_spans(text: str) -> Markup:
    """`text` escaped, with its `backquoted` spans as <code> (a command to run)."""
    escaped = str(escape(secrets.redact(text)))
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped))


def _short_change(c: Mapping[str, Any]) -> str:
    rel = c["change"]
    what = "changed" if rel is None else f"{'dropped' if rel < 0 else 'rose'} {abs(rel) * 100:.1f}%"
    return f"{what} on {c['at'][:10]}"


def write(
    registry: Registry,
    settings: Settings,
    out: Path | None = None,
    templates: Path | str | None = None,
    do_commit: bool = False,
) -> dict[str, Any]:
    """Render and write the site (only files that changed) under its manifest; with `do_commit`, commit them."""
    from factreg.publish import writer as publish

    out = Path(out) if out is not None else Path(settings.root) / "site"
    files = build(registry, settings, out, templates)
    files = {**report.claim(out, files), **files}  # the manifest first: a kill after it leaves no unlisted page
    from factreg.registry import snapshot

    copies = snapshot.for_commit(registry, settings) if do_commit else {}
    changed, sha = publish.write_and_commit(files, "factreg report --html: the site of facts", do_commit, root=out,
                                            also=copies)
    snapshot.save(copies)
    return {"written": sorted(str(p) for p in files), "changed": sorted(str(p) for p in changed), "commit": sha}
