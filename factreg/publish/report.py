"""Reports: the stale-fact report, one page per fact with an SVG history chart, the index, and llms.txt.

Everything is rendered from templates and derived only from the registry and the documents, never from
the clock: re-rendering an unchanged registry writes the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from factreg import fmt
from factreg.publish import decisions as decmod
from factreg.publish.corrections import CorrectionData, doc_roots, list_corrections
from factreg.registry import display
from factreg.registry.freshness import parse_time
from factreg.registry.store import Registry
from factreg.registry.types import FactData, LastVerification

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.docs.markers import Citation

FOLDER = "facts"
PROBLEM_STATUSES = ("refuted", "conditions_changed", "stale", "unverifiable", "shifted")
RESERVED = {"readme", "stale", "llms", "index"}
CHART_W, CHART_H = 480, 180
PAD_L, PAD_R, PAD_T, PAD_B = 56, 16, 24, 32


class DocLink(TypedDict):
    """A document citing a fact: where, the link from the page, and the text it cites."""

    path: str
    link: str
    line: int
    text: str


class DecisionLink(TypedDict):
    """A decision citing a fact, with its status and the link from the page."""

    number: int
    title: str
    status: str
    link: str


class OpenCorrection(CorrectionData):
    """A correction as the report lists it: open while a document or an open decision still relies on the old fact."""

    open: bool
    note_link: str | None
    still_cited_in: list[str]
    decisions: list[int]


class Page(TypedDict):
    """What a fact's page shows (`fact.md.j2`), and what the index, STALE.md and llms.txt list."""

    fact: FactData
    reason: str
    page: str
    svg: str
    text: str
    history: list[FactData]
    docs: list[DocLink]
    decisions: list[DecisionLink]
    corrections: list[OpenCorrection]
    todo: str
    index_link: str
    successor_link: str | None


def page_name(fact_id: str) -> str:
    """The page of a fact under `facts/`: `<id>.md`, or `<id>.fact.md` where that would clash with a
    report file (README, STALE, llms) or the corrections folder."""
    first = fact_id.split("/", 1)[0]
    if ("/" not in fact_id and fact_id.lower() in RESERVED) or first == "corrections":
        return f"{fact_id}.fact.md"
    return f"{fact_id}.md"


def _rel(target: Path, start_dir: Path) -> str:
    return Path(os.path.relpath(target, start_dir)).as_posix()


def chart(fact_id: str, unit: str, points: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Chart geometry for `points` ({at, value, spread, kind, label}): value ± spread over time, in pixels."""
    pts = [p for p in points if p.get("value") is not None]
    times = [parse_time(p["at"]).timestamp() for p in pts]
    lows = [p["value"] - (p.get("spread") or 0) for p in pts]
    highs = [p["value"] + (p.get("spread") or 0) for p in pts]
    lo, hi = (min(lows), max(highs)) if pts else (0.0, 1.0)
    if hi - lo <= 0:
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    else:
        pad = (hi - lo) * 0.08
        lo, hi = lo - pad, hi + pad
    plot_w, plot_h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    t0, t1 = (min(times), max(times)) if times else (0.0, 0.0)

    def x(t: float) -> float:
        return PAD_L + (plot_w / 2 if t1 == t0 else (t - t0) / (t1 - t0) * plot_w)

    def y(v: float) -> float:
        return PAD_T + (hi - v) / (hi - lo) * plot_h

    drawn = []
    for p, t, low, high in zip(pts, times, lows, highs, strict=True):
        drawn.append(
            {
                "x": x(t),
                "y": y(p["value"]),
                "y_lo": y(low),
                "y_hi": y(high),
                "has_bar": bool(p.get("spread")),
                "kind": p["kind"],
                "label": p["label"],
            }
        )
    versions = [d for d in drawn if d["kind"] == "version"]
    return {
        "id": fact_id,
        "unit": unit,
        "width": CHART_W,
        "height": CHART_H,
        "points": drawn,
        "trend": " ".join(f"{d['x']:.1f},{d['y']:.1f}" for d in versions) if len(versions) > 1 else "",
        "left": PAD_L,
        "right": CHART_W - PAD_R,
        "top": PAD_T,
        "bottom": CHART_H - PAD_B,
        "y_max_label": fmt.num(hi),
        "y_min_label": fmt.num(lo),
        "x_first_label": pts[times.index(t0)]["at"][:10] if pts else "",
        "x_last_label": pts[times.index(t1)]["at"][:10] if pts else "",
    }


def history_points(history: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every version and every verification with a value, as chart points, oldest first."""
    pts: list[dict[str, Any]] = []
    for v in history:
        pts.append(
            {
                "at": v["measured_at"],
                "value": v["value"],
                "spread": v["spread"],
                "kind": "version",
                "label": f"v{v['version']} {v['measured_at'][:16].replace('T', ' ')}: "
                f"{display.text(v)}",
            }
        )
        for ver in v.get("verifications") or []:
            if ver.get("value") is None:
                continue
            pts.append(
                {
                    "at": ver["verified_at"],
                    "value": ver["value"],
                    "spread": ver["spread"],
                    "kind": "verification",
                    "label": f"verification {ver['pk']} {ver['verified_at'][:16].replace('T', ' ')} "
                    f"({ver['verdict']}): {fmt.value(ver['value'], ver['spread'], v['unit'])}",
                }
            )
    pts.sort(key=lambda p: (parse_time(p["at"]), p["kind"] != "version"))
    return pts


def what_to_do(fact: FactData, last_verification: LastVerification | None) -> str:
    """The next step for a fact that no longer holds."""
    fid, status = fact["id"], fact["status"]
    kind = (fact.get("method") or {}).get("kind")
    if kind == "derived" and status == "stale":
        m = fact["method"]
        allow = "".join(f" --allow-different {k}" for k in m.get("allow_different") or [])
        return f"re-run `factreg compare {m.get('a')} {m.get('b')}{allow} --record {fid}`"
    if status == "superseded":
        return (
            f"cite `{fact['superseded_by']}` instead: `factreg docs sync` rewrites the markers; "
            "review the decisions listed"
        )
    if status == "refuted":
        pk = last_verification["pk"] if last_verification else "V"
        return f"correct it from the refuting measurement: `factreg correct {fid} --verification {pk}`"
    if status == "conditions_changed":
        return (
            "it describes a situation that no longer exists: record the current one as a new fact and "
            f"`factreg correct {fid} --by NEW_ID`, or keep it if the old situation still matters"
        )
    if status == "shifted":
        return (
            f"its measured level moved after this value (`factreg changes {fid}` says when and which conditions "
            f"changed): record the new level as a new version (`factreg record {fid} …`), or correct it"
        )
    if status == "unverifiable":
        return (
            f"the measurement could not be made: fix the endpoint or credentials, then `factreg verify {fid}`; "
            "documents citing it may point at a dead service"
        )
    if kind in ("llama-bench", "probe"):
        return f"re-verify it: `factreg verify {fid}`"
    return f"re-measure it and record a new version: `factreg record {fid} …`"


def _citations(settings: Settings) -> dict[str, list[Citation]]:
    roots = [r for r in doc_roots(settings) if r.exists()]
    if not roots:
        return {}
    from factreg.docs.sync import find_citations

    out: dict[str, list[Citation]] = {}
    for c in find_citations(roots):
        out.setdefault(c.fact_id, []).append(c)
    return out


def build(
    registry: Registry, settings: Settings, out: Path | None = None, templates: Path | str | None = None
) -> dict[Path, str]:
    """Render every report file: path → text. Also renders the decision files (their status can change)."""
    from factreg.publish import render as rendering
    from factreg.registry import facts as factmod

    config = settings.file_config
    out = Path(out) if out is not None else Path(settings.root)
    folder = out / FOLDER
    facts = factmod.list_facts(registry, config)
    by_id = {f["id"]: f for f in facts}
    decisions = decmod.list_decisions(registry, config, current=by_id)
    with registry.read() as conn:
        last = factmod.last_verifications(conn)
    cites = _citations(settings)
    corrections = list_corrections(registry)
    files: dict[Path, str] = {}

    def docs_for(fid: str, page_dir: Path) -> list[DocLink]:
        return [
            {
                "path": _rel(c.path.resolve(), out.resolve()),
                "link": _rel(c.path.resolve(), page_dir.resolve()),
                "line": c.line,
                "text": c.text,
            }
            for c in cites.get(fid, [])
        ]

    def decisions_for(fid: str, page_dir: Path) -> list[DecisionLink]:
        return [
            {"number": d["number"], "title": d["title"], "status": d["status"], "link": _rel(out / d["path"], page_dir)}
            for d in decmod.citing(decisions, fid)
        ]

    open_corrections: list[OpenCorrection] = []
    for c in corrections:
        still = [x.path for x in cites.get(c["old_id"], [])]
        relying = [d for d in decmod.citing(decisions, c["old_id"]) if d["status"] == decmod.NEEDS_REVIEW]
        open_corrections.append({
            **c,
            "open": bool(still or relying),
            "note_link": _rel(out / c["note_path"], folder) if c["note_path"] else None,
            "still_cited_in": [_rel(p.resolve(), out.resolve()) for p in still],
            "decisions": [d["number"] for d in relying],
        })

    pages: list[Page] = []
    for f in facts:
        page = folder / page_name(f["id"])
        svg = page.with_name(page.name[:-3] + ".svg")
        history = factmod.history(registry, f["id"])
        geometry = chart(f["id"], f["unit"], history_points(history))
        files[svg] = rendering.render("chart.svg.j2", {"chart": geometry}, templates)
        lv = last.get(f["id"])
        successor = f.get("superseded_by")
        entry: Page = {
            "fact": f,
            "reason": decmod.stable_reason(f),
            "page": _rel(page, folder),
            "svg": svg.name,
            "text": display.text(f),
            "history": history,
            "docs": docs_for(f["id"], page.parent),
            "decisions": decisions_for(f["id"], page.parent),
            "corrections": [c for c in open_corrections if f["id"] in (c["old_id"], c["new_id"])],
            "todo": what_to_do(f, lv),
            "index_link": _rel(folder / "README.md", page.parent),
            "successor_link": _rel(folder / page_name(successor), page.parent) if successor else None,
        }
        pages.append(entry)
        files[page] = rendering.render("fact.md.j2", {"p": entry}, templates)

    problems: list[Page] = []
    for entry in pages:
        fact = entry["fact"]
        docs = docs_for(fact["id"], folder)
        links = decisions_for(fact["id"], folder)
        open_relying = [d for d in links if d["status"] in (*decmod.OPEN, decmod.NEEDS_REVIEW)]
        if fact["status"] in PROBLEM_STATUSES or (fact["status"] == "superseded" and (docs or open_relying)):
            problems.append({**entry, "docs": docs, "decisions": links})
    review = [
        {
            "number": d["number"],
            "title": d["title"],
            "reasons": d["review_reasons"],
            "link": _rel(out / d["path"], folder),
        }
        for d in decisions
        if d["status"] == decmod.NEEDS_REVIEW
    ]
    counts: dict[str, int] = {}
    for f in facts:
        counts[f["status"]] = counts.get(f["status"], 0) + 1
    common = {
        "pages": pages,
        "problems": problems,
        "review": review,
        "corrections": open_corrections,
        "counts": sorted(counts.items()),
        "decisions": [
            {"number": d["number"], "title": d["title"], "status": d["status"], "link": _rel(out / d["path"], folder)}
            for d in decisions
        ],
    }
    files[folder / "STALE.md"] = rendering.render("stale.md.j2", common, templates)
    files[folder / "README.md"] = rendering.render("index.md.j2", common, templates)
    files[folder / "llms.txt"] = rendering.render("llms.txt.j2", common, templates)
    for d in decisions:
        files[out / d["path"]] = decmod.render(d, templates)
    return files


def write(
    registry: Registry,
    settings: Settings,
    out: Path | None = None,
    templates: Path | str | None = None,
    do_commit: bool = False,
) -> dict[str, Any]:
    """Render and write the reports (only files that changed); with `do_commit`, commit exactly them."""
    from factreg.publish import writer as publish

    out = Path(out) if out is not None else Path(settings.root)
    files = build(registry, settings, out, templates)
    changed, sha = publish.write_and_commit(
        files, "factreg report: stale facts, fact pages, index", do_commit, root=out
    )
    return {"written": sorted(str(p) for p in files), "changed": sorted(str(p) for p in changed), "commit": sha}
