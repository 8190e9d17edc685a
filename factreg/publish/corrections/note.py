"""What a correction note says: its data (old and new, the deciding evidence, the ranked causes, the documents and
decisions that cite the fact), its opening summary, and its text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg import fmt, terminal
from factreg.docs.markers import Citation
from factreg.errors import NotFound
from factreg.publish.corrections.causes import (
    _common_model,
    _lower_is_better,
    cause_lines,
    comparison,
    interval_of,
    ranked_causes,
    relation,
    sides_of,
)
from factreg.publish.corrections.listing import _rel, _with_marker
from factreg.publish.corrections.wording import say, say_evidence
from factreg.registry import conditions as cond
from factreg.registry import display
from factreg.registry import facts as factmod
from factreg.registry.ids import ref
from factreg.registry.store import Registry
from factreg.registry.types import FactData, VerificationData
from factreg.verdicts import FAILURES

if TYPE_CHECKING:
    from factreg.publish.decisions import DecisionData


# What a note shows of the old and the new fact (registry.display fields): value with spread, interval, n, flags,
# conditions.
NOTE_FIELDS = ("id", "version", "metric", "unit", "text", "value", "n", "ci95", "flags", "measured_at", "samples",
               "identity", "info")


def status_once_superseded(decision: DecisionData) -> str:
    """A decision's status once a fact it cites is superseded: an open decision then needs review."""
    from factreg.publish import decisions as decmod

    recorded = decision["recorded_status"]
    return decmod.NEEDS_REVIEW if recorded in decmod.OPEN else str(recorded)


def note_data(
    date: str,
    old: FactData,
    new: FactData,
    verification: VerificationData | None,
    cause: str | None,
    citations: Sequence[Citation],
    decisions: Sequence[DecisionData],
    out: Path,
    note_path: Path,
    compared: Mapping[str, FactData] | None = None,
    lang: str = "en",
    decided_by: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Step 3a: what the correction note shows, as plain data (`decisions` with their status after it).

    `compared`: the facts that ratio facts among old and new compare (`comparison_facts`), by id."""
    folder = note_path.parent
    ranked = ranked_causes(old, new, cause, compared, lang)
    opening = summary(old, new, ranked, compared, lang)
    shown_old, shown_new = display.fields(old, NOTE_FIELDS), display.fields(new, NOTE_FIELDS)
    shown_old["ci95"], shown_new["ci95"] = interval_of(old), interval_of(new)
    return {
        "date": date,
        "lang": lang,
        "same_id": old["id"] == new["id"],  # corrected by a new version of the same id, not superseded
        "summary": opening["text"],
        "comparisons": {"old": opening["old"], "new": opening["new"]},
        "old": shown_old,
        "new": shown_new,
        "verification": None
        if verification is None
        else {
            "pk": verification["pk"],
            "verdict": verification["verdict"],
            "verified_at": verification["verified_at"],
            "message": verification["message"],
        },
        "change": _change(old, new) if opening["comparable"] else None,
        "evidence": say_evidence(lang, deciding_evidence(old, new, verification or decided_by)),
        "conditions": [
            {"key": k, "kind": kind, "old": a, "new": b}
            for kind in ("identity", "info")
            for k, (a, b) in cond.diff(old["conditions"][kind], new["conditions"][kind]).items()
        ],
        "causes": cause_lines(ranked),
        "ranked": ranked,
        "documents": _documents(citations, out, folder),
        "decisions": _decision_links(decisions, out, folder),
    }


def render_note(data: Mapping[str, Any], old_id: str, version: int, templates: Path | str | None = None) -> str:
    """Step 3b: the correction note's text (with the marker that ties the file to `old_id` v`version`)."""
    from factreg.publish import render as rendering

    return _with_marker(rendering.render("correction.md.j2", {"c": data}, templates, data.get("lang")), old_id,
                        version)


def _interval_text(ci: Sequence[float] | None, unit: str, lang: str = "en") -> str:
    if not ci:
        return say(lang, "no interval recorded")
    u = unit if unit in ("×", "%") else f" {unit}" if unit and unit != "bool" else ""
    return say(lang, "95% interval {lo}–{hi}{unit}", lo=fmt.num(ci[0]), hi=fmt.num(ci[1]), unit=u)


def last_verdict(registry: Registry, old: Mapping[str, Any]) -> dict[str, Any] | None:
    """The newest verification of `old`'s version that measured something (the one that refuted it, as a rule)."""
    try:
        versions = factmod.history(registry, old["id"])
    except NotFound:
        return None
    found = [dict(r) for v in versions if v["version"] == old["version"] for r in v.get("verifications") or []
             if r.get("value") is not None and r.get("verdict") not in FAILURES]
    return max(found, key=lambda r: (r["verified_at"], r["pk"])) if found else None


def _named(fact: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    """How a note names one side of a correction: its id, or `ID@vN` when both sides are versions of one id."""
    if fact.get("id") == other.get("id") and fact.get("version") is not None:
        return ref(str(fact["id"]), int(fact["version"]))
    return str(fact.get("id"))


def deciding_evidence(old: Mapping[str, Any], new: Mapping[str, Any],
                      verification: Mapping[str, Any] | None) -> str:
    """The measurement that decided the correction, quoted: the verification's verdict and p-value, or the new
    fact's interval and n, and whether the old value lies inside that interval."""
    parts: list[str] = []
    if verification is not None:
        bits = [verification["verdict"]]
        if verification.get("p_value") is not None:
            bits.append(f"p = {fmt.num(verification['p_value'], 2)}")
        if verification.get("n"):
            bits.append(f"n={verification['n']}")
        parts.append(f"verification {verification['pk']} ({', '.join(bits)}, {verification['verified_at'][:10]})"
                     + (f": {' '.join(str(verification['message']).split())}" if verification.get("message") else ""))
    ci = interval_of(new)
    unit = str(new.get("unit") or "")
    parts.append(f"`{_named(new, old)}` {display.text(new)}, {_interval_text(ci, unit)}, "
                 f"n={new.get('n') or 'unknown'}")
    old_ci = interval_of(old)
    parts.append(f"`{_named(old, new)}` {display.text(old)}, {_interval_text(old_ci, unit)}, "
                 f"n={old.get('n') or 'unknown'}")
    if ci and old.get("value") is not None and not sides_of(new):
        inside = ci[0] <= old["value"] <= ci[1]
        parts.append("the old value lies inside the new interval" if inside
                     else "the old value lies outside the new interval")
    return "; ".join(parts)


def summary(old: Mapping[str, Any], new: Mapping[str, Any], causes: Sequence[Mapping[str, Any]],
            facts: Mapping[str, FactData] | None = None, lang: str = "en") -> dict[str, Any]:
    """The note's opening: what was claimed, what holds now, by how much and which way, and the one or two best
    supported causes; `comparable` is False when the two values compare different things (no percent change)."""
    facts = facts or {}
    sentences: list[str] = []
    shared = _common_model(old, new, facts)
    old_cmp, new_cmp = comparison(old, facts, shared, lang), comparison(new, facts, shared, lang)
    comparable = True
    if old_cmp and new_cmp:
        claim = str(old["conditions"]["info"].get("claim") or "")
        sides = {"metric", "subject", "subject_setting", "other", "other_setting", "interval", "sentence"}
        sentences.append(say(
            lang, "Claimed{said}: {sentence} — {metric} of {subject} ({subject_setting}) against {other} "
            "({other_setting}); {interval}.", said=f" (“{claim}”)" if claim else "",
            **{k: v for k, v in old_cmp.items() if k in sides}))
        sentences.append(say(
            lang, "Holds now: {sentence} — {metric} of {subject} ({subject_setting}) against {other} "
            "({other_setting}); {interval}{n}.", n=f", n={new_cmp['n']}" if new_cmp["n"] else "",
            **{k: v for k, v in new_cmp.items() if k in sides}))
        same = (old_cmp["metric"], old_cmp["subject"], old_cmp["other"]) == \
            (new_cmp["metric"], new_cmp["subject"], new_cmp["other"])
        comparable = same
        turn = say(lang, " — the direction is reversed") if old_cmp["word"] != new_cmp["word"] else ""
        if not same:
            times = "배 " if lang == "ko" else "× "
            sentences.append(say(
                lang, "From {a} to {b}{turn}; the two ratios compare different things, so no percent change between "
                "them is given.", a=old_cmp["factor"] + times + say(lang, old_cmp["word"]),
                b=new_cmp["factor"] + times + say(lang, new_cmp["word"]), turn=turn))
    else:
        ci = interval_of(new)
        unit = str(new.get("unit") or "")
        sentences.append(say(
            lang, "`{old}` said {metric} = {old_text}; measured now (`{new}`) it is {new_text} ({interval}, n={n}).",
            old=_named(old, new), metric=old["metric"], old_text=display.text(old), new=_named(new, old),
            new_text=display.text(new), interval=_interval_text(ci, unit, lang), n=new.get("n") or "unknown"))
        if old.get("value") and new.get("value") is not None:
            rel = (new["value"] - old["value"]) / abs(old["value"])
            factor, word = relation(new["value"] / old["value"], _lower_is_better(new)) \
                if new["value"] / old["value"] > 0 else ("?", "different")
            outside = ci is not None and not ci[0] <= old["value"] <= ci[1]
            sentences.append(say(
                lang, "That is {pct} {how} ({factor}× {word}), and the old value lies outside the new interval."
                if outside else "That is {pct} {how} ({factor}× {word}).", pct=f"{abs(rel):.0%}",
                how=say(lang, "higher" if rel > 0 else "lower"), factor=factor, word=say(lang, word)))
    best = [c for c in causes if c["rank"] >= 0][:2]
    if best:
        sentences.append(say(lang, "Best supported causes: {causes}." if len(best) > 1
                             else "Best supported cause: {causes}.", causes="; ".join(c["text"] for c in best)))
    return {"text": " ".join(sentences), "comparable": comparable,
            "old": _strip(old_cmp), "new": _strip(new_cmp)}


def _strip(c: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if c is None else {k: v for k, v in c.items() if k != "facts"}


def _change(old: FactData, new: FactData) -> str:
    if not old["value"]:
        return "—"
    rel = (new["value"] - old["value"]) / abs(old["value"])
    ratio = new["value"] / old["value"] if old["value"] else None
    text = f"{rel:+.0%}"
    if ratio and ratio > 0:
        text += f" (× {fmt.num(ratio, 2)})"
    return text


def _documents(citations: Sequence[Citation], out: Path, folder: Path) -> list[dict[str, Any]]:
    return [{"path": _rel(c.path, out), "link": terminal.link(_rel(c.path, folder)), "line": c.line, "text": c.text}
            for c in citations]


def _decision_links(decisions: Sequence[DecisionData], out: Path, folder: Path) -> list[dict[str, Any]]:
    return [{"number": d["number"], "title": d["title"], "status": d["status"], "link": _rel(out / d["path"], folder)}
            for d in decisions]
