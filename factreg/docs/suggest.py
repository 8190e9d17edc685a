"""From unsourced to cited: the facts that could back each unsourced claim (`docs lint --suggest`), and the claims
wrapped in a citation marker when exactly one fact backs them unambiguously (`docs lint --fix`).

A fact is a *candidate* for a claim when its unit is the claim's (or the same dimension: `130 ms` and a fact in
`s`) and its metric family is the one the unit speaks of (a duration: latency; `tok/s`: a rate; `×`: a ratio),
and the claim's number lies within the fact's 95% interval or within its tolerance of the fact's value (default
`verdicts.DEFAULT_TOLERANCE`); a range claim (`30~60초`) when the value lies in the range. Candidates are
ranked by the words of the claim's sentence that name the fact: its id and subject parts, its condition values
(`flash-next`, `35B-A3B`, `gamebox`) and its metric's usual names (`end to end`, `first token`, `첫 토큰`).

`--fix` wraps a claim only when all of these hold:

- exactly one candidate is *citable*: its status is fresh or aging (not refuted, superseded, stale, retracted,
  shifted, unverifiable, conditions_changed) and it carries none of `NOT_CITABLE_FLAGS` (`cold`, `few_samples`);
- that fact's marker renders the author's own text with its current value: the plain rendering (`1.49 s`), or a
  `format=` that writes the number as the author did (`{value:.2f}초` for `0.13초`); otherwise it is left alone;
- at least one word of the sentence names what the fact was measured on (its model, machine, endpoint host or
  subject: a metric's name alone is not enough), more words than name any other citable candidate (two
  facts named equally are ambiguous), and no other candidate is named by more words (the sentence may be about
  that other, uncitable, fact).

The marker keeps the author's text, so a fixed document reads the same and `docs check` passes on it; lint skips
what is inside markers, so a second `--fix` changes nothing. Only prose is touched: the claims come from
`docs.lint`, which never reads code, front matter or comments. Files are written with `atomic.replace_if_unchanged`
(an edit made meanwhile is kept, the file is not written), in their own encoding.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.docs import markdown
from factreg.docs import markers as mk
from factreg.errors import UsageError
from factreg.registry import display
from factreg.registry.metrics import VOCABULARY
from factreg.verdicts import DEFAULT_TOLERANCE

if TYPE_CHECKING:
    from factreg.docs import lint
    from factreg.registry.types import FactData

# Statuses a marker may cite (docs check passes on them); flags that make a fact too weak to cite unasked.
CITABLE_STATUSES = ("fresh", "aging")
NOT_CITABLE_FLAGS = ("cold", "few_samples")

# Units as seconds, to compare a claim in ms with a fact in s.
_SECONDS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "min": 60.0, "h": 3600.0, "d": 86400.0}
# The metric family a claim's unit speaks of (a custom metric matches on its unit alone).
_FAMILY = {"tok/s": "rate", "×": "derived", **{u: "latency" for u in _SECONDS}}
# What people call a metric in a sentence.
_METRIC_WORDS = {
    "ttft": ("ttft", "first token", "first-token", "first audio", "time to first", "첫 토큰", "첫 음성", "첫토큰"),
    "ttft_any": ("ttft", "first token", "첫 토큰"),
    "ttfb": ("ttfb", "first byte"),
    "e2e": ("e2e", "end to end", "end-to-end", "full response", "whole reply", "full sentence", "전체 응답",
            "전체 시간"),
    "reasoning_time": ("reasoning", "thinking", "추론"),
    "decode_rate": ("decod", "generat", "디코딩", "생성"),
    "tg_rate": ("decod", "generat", "tg", "llama-bench", "디코딩", "생성"),
    "prefill_rate": ("prefill", "prompt processing", "프리필"),
    "pp_rate": ("prefill", "prompt processing", "pp", "프리필"),
    "ratio": ("faster", "slower", "빠르", "느리", "배"),
}
_METRIC_TERMS = frozenset(w for words in _METRIC_WORDS.values() for w in words) | frozenset(VOCABULARY)
# Condition values too common to say which fact a sentence is about.
_GENERIC = frozenset({"true", "false", "on", "off", "yes", "no", "none", "http", "https", "v1", "cuda", "cpu"})
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
# The parts of a duration written in several units (`6m58s`, `2h 3m`, `18min37s`).
_COMPOUND = re.compile(r"(\d+(?:\.\d+)?)\s?(h|min|m|s|시간|분|초)(?![a-z])")
_COMPOUND_UNIT = {"h": "h", "min": "min", "m": "min", "s": "s", "시간": "h", "분": "min", "초": "s"}
_COMMENT = re.compile(r"<!--.*?-->")
_SENTENCE_END = re.compile(r"[.!?。](?=\s|$)")


@dataclass(frozen=True)
class Candidate:
    """A fact that could back a claim, how well the sentence names it, and whether `--fix` may cite it."""

    fact_id: str
    text: str  # the fact's current rendering, `11.9 ± 7.2 tok/s`
    status: str
    status_reason: str
    flags: tuple[str, ...]
    words: tuple[str, ...]  # the words of the sentence that name it
    distance: float  # |claim − value| / |value|
    citable: bool
    why_not: str | None  # why --fix will not cite it
    marker: str | None  # a marker that keeps the author's text, when the current value renders it

    def as_json(self) -> dict[str, Any]:
        return {
            "fact_id": self.fact_id,
            "text": self.text,
            "status": self.status,
            "status_reason": self.status_reason,
            "flags": list(self.flags),
            "words": list(self.words),
            "citable": self.citable,
            "why_not": self.why_not,
            "marker": self.marker,
        }


@dataclass(frozen=True)
class Suggestion:
    """One unsourced claim, where it is in its text, and the facts that could back it (best first)."""

    finding: lint.Finding
    start: int  # offset of the claim in the document's text
    end: int
    sentence: str
    candidates: tuple[Candidate, ...]
    fix: Candidate | None  # the one fact `--fix` cites, when unambiguous
    why_no_fix: str | None

    def as_json(self) -> dict[str, Any]:
        f = self.finding
        return {
            "path": f.path,
            "line": f.line,
            "col": f.col,
            "text": f.text,
            "value": f.value,
            "unit": f.unit,
            "candidates": [c.as_json() for c in self.candidates],
            "fix": self.fix.marker if self.fix else None,
            "why_no_fix": self.why_no_fix,
        }


def _numbers(value: str, unit: str = "s") -> tuple[list[float], bool]:
    """The numbers of a claim's value (`28`, `30~60`, `11.9 ± 7.2`, a clock's `3:39` in its unit) and whether it
    is a range."""
    if ":" in value:  # `3:39 min`, `00:00:41.91`: minutes and seconds, or hours, minutes and seconds
        # imported here: a value with no clock never loads the lint
        from factreg.docs.lint.clocks import seconds as clock_seconds

        return [clock_seconds(value) / _SECONDS.get(unit, 1.0)], False
    pieces: list[tuple[str, str]] = _COMPOUND.findall(value)
    if len(pieces) > 1:  # `6m58s`, `2h 3m`, `1h 16m 51s`
        seconds = sum(float(x) * _SECONDS[_COMPOUND_UNIT[u]] for x, u in pieces)
        return [seconds / _SECONDS.get(unit, 1.0)], False
    if "±" in value or "+/-" in value or "+-" in value:
        found = _NUMBER.findall(value)
        return ([float(found[0].replace(",", ""))] if found else []), False
    nums = [float(x.replace(",", "")) for x in _NUMBER.findall(value)]
    return nums, len(nums) > 1


def _convert(x: float, unit: str, fact_unit: str) -> float | None:
    """`x` in the claim's unit, in the fact's unit; None when they are not the same dimension."""
    if unit == fact_unit:
        return x
    if unit in _SECONDS and fact_unit in _SECONDS:
        return x * _SECONDS[unit] / _SECONDS[fact_unit]
    return None


def _same_family(unit: str, fact: Mapping[str, Any]) -> bool:
    metric = VOCABULARY.get(str(fact.get("metric")))
    if metric is None:  # a custom metric: its unit says it all
        return True
    return _FAMILY.get(unit) == metric.family


def _within(values: list[float], is_range: bool, fact: Mapping[str, Any]) -> float | None:
    """How far the claim is from the fact (relative), when it is within its interval or tolerance; else None."""
    v = fact.get("value")
    if not isinstance(v, (int, float)) or not math.isfinite(v) or not values:
        return None
    if is_range:
        lo, hi = min(values), max(values)
        return 0.0 if lo <= v <= hi else None
    x = values[0]
    scale = abs(v) or 1.0
    distance = abs(x - v) / scale
    ci = (fact.get("stats") or {}).get("ci95")
    if ci and ci[0] is not None and ci[1] is not None and ci[0] <= x <= ci[1]:
        return distance
    tolerance = fact.get("tolerance")
    tol = float(tolerance) if isinstance(tolerance, (int, float)) and tolerance > 0 else DEFAULT_TOLERANCE
    return distance if distance <= tol else None


def _terms(fact: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """What may name a fact in a sentence, each entry a group of alternatives counted once."""
    out: list[tuple[str, ...]] = []
    seen: set[str] = set()

    def add(*alts: str) -> None:
        alts = tuple(a.lower() for a in alts if len(a) >= 2 and a.lower() not in _GENERIC and a.lower() not in seen)
        if alts:
            seen.update(alts)
            out.append(alts)

    ident = (fact.get("conditions") or {}).get("identity") or {}
    for key in ("model", "machine", "model_type", "model_filename"):
        if ident.get(key):
            add(str(ident[key]))
    endpoint = ident.get("endpoint")
    if endpoint:
        host = re.sub(r"^[a-z]+://", "", str(endpoint)).split("/")[0].split(":")[0]
        add(host, host.split(".")[0])
    parts = [p for p in re.split(r"[/]", str(fact.get("id") or "")) if p]
    for part in parts[:-1] if len(parts) > 1 else parts:
        pieces = [x for x in re.split(r"[-_.]", part) if len(x) >= 3 and re.search(r"[a-z]", x, re.I)]
        add(part, *pieces)
    metric = str(fact.get("metric") or "")
    add(*_METRIC_WORDS.get(metric, (metric,)))
    return out


def _named(sentence: str, terms: list[tuple[str, ...]]) -> tuple[str, ...]:
    low = sentence.lower()
    found: list[str] = []
    for alts in terms:
        for a in alts:
            if re.search(rf"(?<![a-z0-9]){re.escape(a)}", low):
                found.append(a)
                break
    return tuple(found)


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around a claim: from the last sentence end before it to the next after it, on its line."""
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    hi = len(text) if hi < 0 else hi
    before = [m.end() for m in _SENTENCE_END.finditer(text, lo, start)]
    after = _SENTENCE_END.search(text, end, hi)
    sentence = text[before[-1] if before else lo : after.end() if after else hi]
    return _COMMENT.sub(" ", sentence).strip()  # a marker's id and options are not the author's words


def marker_for(fact: Mapping[str, Any], claim: str, number: str | None = None) -> str | None:
    """A marker citing `fact` whose current rendering is `claim` exactly (the plain rendering, or a `format=`
    writing the number as `claim` does), checked by parsing it back; None when the current value does not render
    the author's text."""
    fact_id = str(fact.get("id"))
    options: list[str | None] = [None]
    m = _NUMBER.search(claim) if number is None else re.search(re.escape(number), claim)
    if m is not None and '"' not in claim:
        written = m.group()
        decimals = len(written.split(".")[1]) if "." in written else 0
        grouping = "," if "," in written else ""
        rest_before = claim[: m.start()].replace("{", "{{").replace("}", "}}")
        rest_after = claim[m.end() :].replace("{", "{{").replace("}", "}}")
        options.append(f"{rest_before}{{value:{grouping}.{decimals}f}}{rest_after}")
    for template in options:
        try:
            rendered = mk.render(fact, template)
        except UsageError:
            continue
        if rendered != claim:
            continue
        option = f' format="{template}"' if template else ""
        marker = f"<!-- fact: {fact_id}{option} -->{claim}<!-- /fact -->"
        parsed, problems = mk.parse(marker)
        if problems or len(parsed) != 1 or parsed[0].fact_id != fact_id or parsed[0].text != claim:
            continue
        return marker
    return None


def cite(fact: Mapping[str, Any], template: str | None = None, asof: bool = False) -> str:
    """The marker citing `fact` with its current rendering, ready to paste (`factreg cite ID`)."""
    fact_id = str(fact.get("id"))
    text = mk.render(fact, template, asof)
    options = (f' format="{template}"' if template is not None else "") + (" asof" if asof else "")
    if template is not None and '"' in template:
        raise UsageError('a format for a marker cannot hold a double quote (")')
    return f"<!-- fact: {fact_id}{options} -->{text}<!-- /fact -->"


def why_not_citable(fact: Mapping[str, Any]) -> str | None:
    """Why a marker should not cite `fact` unasked (its status or integrity flags), or None."""
    status = str(fact.get("status") or "")
    if fact.get("superseded_by") or status == "superseded":
        return f"superseded by {fact.get('superseded_by')}"
    if status not in CITABLE_STATUSES:
        return f"{status}: {fact.get('status_reason') or ''}".rstrip(": ")
    flagged = [f for f in (fact.get("flags") or []) if f in NOT_CITABLE_FLAGS]
    if flagged:
        return "flagged " + ", ".join(flagged)
    return None


def _offset(text: str, line: int, col: int, starts: list[int]) -> int:
    return starts[line - 1] + col - 1


def suggest_text(text: str, facts: Iterable[FactData], path: str = "<text>", limit: int = 5) -> list[Suggestion]:
    """For each unsourced claim of `text`, the facts that could back it (best first, at most `limit`), and the one
    `--fix` would cite."""
    from factreg.docs import lint  # its rules compiled only when a document is read for claims

    findings = [f for f in lint.lint_text(text, path) if f.kind == "claim"]
    if not findings:
        return []
    pool = list(facts)
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    out: list[Suggestion] = []
    for finding in findings:
        start = _offset(text, finding.line, finding.col, starts)
        end = start + len(finding.text)
        if text[start:end] != finding.text:  # never edit a span that is not the claim
            continue
        sentence = _sentence(text, start, end)
        out.append(_suggest_one(finding, start, end, sentence, pool, limit))
    return out


def _suggest_one(
    finding: lint.Finding, start: int, end: int, sentence: str, pool: Sequence[FactData], limit: int
) -> Suggestion:
    values, is_range = _numbers(finding.value, finding.unit)
    found: list[Candidate] = []
    for fact in pool:
        fact_unit = str(fact.get("unit") or "")
        if not _same_family(finding.unit, fact):
            continue
        converted = [_convert(x, finding.unit, fact_unit) for x in values]
        if not converted or any(c is None for c in converted):
            continue
        distance = _within([c for c in converted if c is not None], is_range, fact)
        if distance is None:
            continue
        why = why_not_citable(fact)
        marker = None
        written = _NUMBER.search(finding.value)
        if not is_range and finding.unit == fact_unit and written is not None and ":" not in finding.value:
            marker = marker_for(fact, finding.text, written.group())
        found.append(
            Candidate(
                fact_id=str(fact["id"]),
                text=display.text(fact),
                status=str(fact.get("status") or ""),
                status_reason=str(fact.get("status_reason") or ""),
                flags=tuple(fact.get("flags") or ()),
                words=_named(sentence, _terms(fact)),
                distance=distance,
                citable=why is None,
                why_not=why,
                marker=marker,
            )
        )
    found.sort(key=lambda c: (-len(c.words), not c.citable, c.distance, c.fact_id))
    fix, why_no_fix = _pick(found)
    return Suggestion(finding, start, end, sentence, tuple(found[:limit]), fix, why_no_fix)


def _pick(found: list[Candidate]) -> tuple[Candidate | None, str | None]:
    if not found:
        return None, "no fact matches its unit and value"
    usable = [c for c in found if c.citable and c.marker is not None and any(w not in _METRIC_TERMS for w in c.words)]
    if not usable:
        best = found[0]
        if not best.citable:
            return None, f"{best.fact_id} is {best.why_not}"
        if best.marker is None:
            return None, f"{best.fact_id}'s current value does not render the text as written"
        return None, f"no word of the sentence names what {best.fact_id} was measured on (model, machine, subject)"
    most = max(len(c.words) for c in usable)
    tops = [c for c in usable if len(c.words) == most]
    if len(tops) > 1:
        return None, "ambiguous: " + ", ".join(c.fact_id for c in tops) + " match it equally"
    one = tops[0]
    stronger = [c for c in found if c is not one and len(c.words) > len(one.words)]
    if stronger:
        return None, f"the sentence names {stronger[0].fact_id} ({stronger[0].why_not or 'not renderable'}) more"
    return one, None


def fix_text(text: str, facts: Iterable[FactData], path: str = "<text>") -> tuple[str, list[Suggestion]]:
    """`text` with every unambiguously backed claim wrapped in its marker, and the suggestions that were applied."""
    suggestions = suggest_text(text, facts, path)
    applied = [s for s in suggestions if s.fix is not None and s.fix.marker is not None]
    if not applied:
        return text, []
    begin = markdown.front_matter_end(text)
    code = markdown.code_regions(text, begin)
    safe = [s for s in applied if s.start >= begin and not code.covers(s.start) and not code.covers(s.end - 1)]
    edits = [(s.start, s.end, s.fix.marker) for s in safe if s.fix is not None and s.fix.marker is not None]
    return mk.replace_spans(text, edits), safe


@dataclass
class FixResult:
    """What `docs lint --fix` did: the claims it cited, the files it wrote, and the files it left alone."""

    cited: list[Suggestion] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def fix_paths(paths: Iterable[Path | str], facts: Sequence[FactData], dry_run: bool = False) -> FixResult:
    """Wrap the unambiguously backed claims of the Markdown files under `paths`, each file atomically and only
    if it did not change meanwhile."""
    from factreg.atomic import replace_if_unchanged
    from factreg.docs import sync, walk

    roots = [Path(p) for p in paths]
    result = FixResult()
    files, _problems = walk.markdown_files(roots)
    for path in files:
        data = walk.read_bytes(path)
        if isinstance(data, walk.Problem):
            continue
        text = walk.decode(path, data)
        if isinstance(text, walk.Problem):
            continue
        new, applied = fix_text(text, facts, str(path))
        if not applied or new == text:
            continue
        target = sync._target(path, roots)  # noqa: SLF001 - the one rule for where a document may be written
        if not isinstance(target, Path):
            result.notes.append(f"{path}: {target.message}")
            continue
        if dry_run or replace_if_unchanged(target, new.encode(walk.encoding_of(data)), data):
            result.cited.extend(applied)
            result.changed.append(path)
        else:
            result.notes.append(f"{path}: changed while docs lint --fix ran: not written")
    return result
