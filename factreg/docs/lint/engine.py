"""Finding claims in a document: candidates, the rules' decisions, findings with the rule that made each."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from factreg.docs.findings import Finding
from factreg.docs.lint.clocks import clock_durations, may_hold
from factreg.docs.lint.context import _Context
from factreg.docs.lint.families import _line_of, _sub_rule
from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.prefilter import _extra_runs, _finditer, _windows, whole_text_hit
from factreg.docs.lint.regions import _skipped
from factreg.docs.lint.tables import _by_column, _has_table, _header_cells
from factreg.docs.lint.units import _CLAIM, _HTTP_CODES, _KIND, _NORMAL
from factreg.docs.lint.vocab import (
    _B,
    _DIGIT,
    _E,
    _EXTRA,
    _RELATIVE,
    _SP,
    BARE_DURATION_RULE,
    FAMILY_RULE,
    MATCHABLE,
    SPREAD_RULE,
    Candidate,
)

if TYPE_CHECKING:
    from factreg.docs.walk import Problem


def _candidates(
    text: str,
    skipped: Callable[[int, int], bool] = lambda a, b: False,
    windows: list[tuple[int, int]] | None = None,
    dismissed: list[Candidate] | None = None,
) -> list[Candidate]:
    """(start, end, value, unit, kind, rule) of every claim and target in `text` outside the `skipped` regions; with
    `windows` (from _windows), the patterns are only run there. With a `dismissed` list, the numbers with a unit
    that the rules found to be neither (a name, a clock time, a size, a hypothetical, …) are appended to it, of
    kind "dismissed" (what bench/claimmodel.py, an experiment, reads)."""
    out: list[Candidate] = []
    append = out.append
    ctx = _Context(text)
    for m in _finditer(_CLAIM, text, windows):
        start = m.start()
        if skipped(start, m.end()):
            continue
        if dismissed is not None:
            before = len(out)
            _claim_match(m, text, ctx, append)
            if len(out) == before:
                group = m.lastgroup or ""
                dismissed.append((start, m.end(), m.group("n1"), _NORMAL.get(_KIND.get(group, ""), ""), "dismissed", ""))
            continue
        _claim_match(m, text, ctx, append)
    for rx, rx_windows in _extra_runs(text, windows):
        for m in _finditer(rx, text, rx_windows):
            if skipped(m.start(), m.end()):
                continue
            found = ctx.extra(m, rx)
            if found is not None:
                out.append(found)
            elif dismissed is not None:
                dismissed.append((m.start(), m.end(), m.group("n1"), "", "dismissed", ""))
    if may_hold(text):  # `Time Elapsed 00:00:41.91`: read over the whole text, as no unit marks their lines
        out.extend(clock_durations(text, ctx, skipped))
    if "|" in text and "--" in text:
        taken = [(c[0], c[1]) for c in out]
        for c in _header_cells(text, skipped):
            if not any(a < c[1] and c[0] < b for a, b in taken):
                out.append(c)
    out.sort()
    # keep the first of overlapping claims (`초당 28 토큰/초` is found twice)
    kept: list[Candidate] = []
    for c in out:
        if kept and c[0] < kept[-1][1]:
            continue
        kept.append(c)
    kept = _pair_ends(text, kept, skipped)
    kept = ctx.rows(kept)
    if kept and "|" in text and "--" in text:
        kept = _by_column(text, kept)
    return [_sub_rule(text, c) for c in kept]


# `from ~250s to ~13`, `from 4 minutes to less than 1.5`: a change whose unit is written on its first figure only.
_FROM_BEFORE = lazy(rf"{_B}(?i:from){_SP}+(?:[~≈]|(?i:about|around|roughly){_SP}+)?$")
# ` to ~`, ` to under `, ` to just over `: the words between a change's two ends
_TO_BOUND = rf"{_SP}+to{_SP}+(?:[~≈]|(?i:about|around|roughly|nearly|almost|less{_SP}+than|under|over|just(?:{_SP}+(?:over|under))?){_SP}*)?"
_BARE_END_AFTER = lazy(
    rf"{_TO_BOUND}(?P<n>\d+(?:\.\d+)?)(?![\w%:/×~-]|[.,]\w|{_SP}?(?:[%×]|[A-Za-z]+/|[KMGT]i?B{_E}|(?i:x){_E}))"
)
_KO_BARE_END_AFTER = lazy(rf"{_SP}*에서{_SP}*(?P<n>\d[\d,]*(?:\.\d+)?)(?=으?로(?![가-힣]))")
_PAIRED_UNITS = frozenset({"s", "ms", "min", "h", "us", "µs", "tok/s", "req/s", "/s", "fps"})


_END_TO = lazy(rf"{_TO_BOUND}$|{_SP}+to{_SP}+(?i:more){_SP}+(?i:than){_SP}*$")  # what stands between `from <first>` and `<c>`


_BARE_BEFORE_ARROW = lazy(rf"(?<![\w.,=:/-])(?P<n>\d+(?:\.\d+)?){_SP}*(?:→|->|⟶){_SP}*(?:[~≈]{_SP}*)?$")


def _second_end(text: str, first: Candidate, c: Candidate) -> bool:
    """Whether `c` is the second end of `from <first> to <c>` (`from 30 seconds to over 5 minutes`): a measured
    duration of the same kind as the first, read by the first's rule."""
    return (
        first[4] == c[4] == "claim"
        and first[5] == "FR101"
        and c[5] in ("FR102", "FR103")
        and bool(_FROM_BEFORE.search(text, max(0, first[0] - 20), first[0]))
        and bool(_END_TO.match(text, first[1], c[0]))
    )


def _pair_ends(text: str, found: list[Candidate], skipped: Callable[[int, int], bool]) -> list[Candidate]:
    """`found` and the bare second figure of each `from <claim> to <number>` or `<claim>에서 <number>로` pair (the
    claim's unit, kind and rule), unless a unit of its own follows it (`from 2 s to 20 GB`)."""
    out: list[Candidate] = []
    for i, c in enumerate(found):
        if out and out[-1][5] != c[5] and _second_end(text, out[-1], c):
            c = (*c[:5], out[-1][5])
        b = _BARE_BEFORE_ARROW.search(text, max(0, c[0] - 24), c[0]) if c[3] in _PAIRED_UNITS else None
        if b is not None and (not out or out[-1][1] <= b.start("n")) and not skipped(b.start("n"), b.end("n")):
            out.append((b.start("n"), b.end("n"), b.group("n"), c[3], c[4], c[5]))
        out.append(c)
        if c[3] not in _PAIRED_UNITS:
            continue
        # `TPS는 236에서 1,968로`: the Korean pair's second figure, bare before `로`
        m = _KO_BARE_END_AFTER.match(text, c[1])
        if m is None and _FROM_BEFORE.search(text, max(0, c[0] - 20), c[0]):
            m = _BARE_END_AFTER.match(text, c[1])
        if m is None or skipped(m.start("n"), m.end("n")) or _CLAIM.match(text, m.start("n")):
            continue
        if i + 1 < len(found) and found[i + 1][0] < m.end():
            continue  # the second figure is a claim of its own
        out.append((m.start("n"), m.end("n"), m.group("n"), c[3], c[4], c[5]))
    return out




# A rating named on a line (`Elo difference: 19.5 +/- 16.8`, a CCRL list's `3020±21`): its spreads are no performance.
_RATING = lazy(r"(?<![A-Za-z])(?:Elo|ELO|CCRL)(?![A-Za-z])")


def _claim_match(m: re.Match[str], text: str, ctx: _Context, append: Callable[[Candidate], None]) -> None:
    """The claim or target a match of _CLAIM is, appended; nothing when it is neither."""
    start = m.start()
    group = m.lastgroup or ""
    kind = _KIND.get(group)
    if group[0] == "p" or group == "n2":  # a ± spread, with or without a unit
        n2_end = m.end("n2")
        value = text[start:n2_end]
        if kind is None or kind in _RELATIVE:
            if kind is None and _RATING.search(text, *ctx._line(start)):
                return  # `Elo difference: 19.5 +/- 16.8`: a rating's spread, not performance
            append((start, n2_end, value, "", ctx.spread_kind(start, n2_end), SPREAD_RULE))
            return
        end = m.end()
        append((start, end, value, _NORMAL[kind], ctx.spread_kind(start, end), FAMILY_RULE[kind]))
        return
    if kind is None:  # pragma: no cover - the pattern always ends with a unit here
        return
    u_start = m.start(group)
    end = m.end()
    n3_end = m.end("n3")
    num_end = n3_end if n3_end >= 0 else m.end("n1")
    if num_end == u_start and n3_end < 0 and kind in ("s", "x", "xcap", "h"):
        digits = m.group("n1")
        if (
            digits.isdigit()
            and (len(digits) >= 4 or (kind == "s" and int(digits) in _HTTP_CODES))
            and not (kind == "x" and _FASTER_AFTER.match(text, end))
            and not (kind == "s" and len(digits) >= 4 and _alone_in_cell(text, start, end))
        ):
            return  # `RTX 2080s`, `3700x`, `the 401s` (not `1000x faster`, nor `| 1056s |`: a cell of seconds)
        if kind == "s" and digits.isdigit() and _PRODUCT_BEFORE.search(text, max(0, start - 20), start):
            return  # `Vega 10s`, `Radeon 7s`: a product's name in the plural
    if _NAME_AFTER.match(text, end):
        return  # `-5s-Diffusers`: part of a name
    if kind == "pct" and _INTERVAL_BEFORE.search(text, max(0, start - 30), start):
        return  # `+4.7% [+1.1%, +8.3%]`: the bounds of the change's interval, not changes of their own
    verdict = ctx.classify(start, u_start, end, kind)
    if verdict is None:
        return
    end, what = verdict
    rule = FAMILY_RULE[kind]
    if rule == "FR101" and what == "claim" and not ctx.measured(start, end):
        rule = BARE_DURATION_RULE  # no word of measured work near it: a preview rule
    value = text[start:end] if _DIGIT.search(text, u_start, end) else text[start:num_end]  # `6m58s`, `2h 3m`: whole
    append((start, end, value, _NORMAL[kind], what, rule))


def _alone_in_cell(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` is all a table cell holds (but spaces, emphasis and code marks)."""
    lo, hi = _line_of(text, start, end)
    left, right = text.rfind("|", lo, start), text.find("|", end, hi)
    return left >= 0 and right >= 0 and not text[left + 1 : start].strip(" \t*_`") and not text[end:right].strip(" \t*_`")


_FASTER_AFTER = lazy(rf"{_SP}+(?i:faster|slower|quicker|speed-?up|more{_SP}+throughput){_E}")


# `Vega 10s`: a capitalised word (not the first of the line) before a number in the plural is a product name.
_PRODUCT_BEFORE = lazy(rf"(?<=[^\s\n|>*#-])[ \t]+[A-Z][a-z]+{_SP}$")


_NAME_AFTER = lazy(r"-[A-Za-z]")
_INTERVAL_BEFORE = lazy(r"%[ \t]*\[[ \t]*(?:[+−-]?\d[\d.]*%[ \t]*,[ \t]*)?[+−-]?$")


def lint_text(
    text: str,
    path: str = "<text>",
    include_code: bool = False,
    targets: bool = False,
    rules: frozenset[str] | None = None,
) -> list[Finding]:
    """Every unsourced claim in a document's text, in order; with `targets`, also the targets, limits and
    settings (findings of kind "target"). Each finding names the rule that reports it (`rule`); with `rules`
    (rule ids, factreg.docs.lint.rules.selected), only those rules' findings, else every rule's."""
    return _lint(text, path, include_code, targets, prefilter=True, rules=rules)


def _scan(text: str, include_code: bool, prefilter: bool, dismissed: list[Candidate] | None) -> list[Candidate]:
    """The claims and targets the rules find in a document's text (and, with a `dismissed` list, the numbers
    with a unit they found to be neither). The patterns read thin spaces as no-break spaces (vocab.MATCHABLE);
    a candidate's offsets are the document's own."""
    if "\u2009" in text or "\u202f" in text:  # scanned once, translated; the values given back as written
        matched = text.translate(MATCHABLE)
        unwritten: list[Candidate] | None = [] if dismissed is not None else None
        found = _scan(matched, include_code, prefilter, unwritten)
        if dismissed is not None and unwritten:
            dismissed.extend(_as_written(c, text, matched) for c in unwritten)
        return [_as_written(c, text, matched) for c in found]
    if not _DIGIT.search(text) and not whole_text_hit(text):  # a ratio in words holds no digit
        return []
    windows: list[tuple[int, int]] | None = None
    if prefilter:
        windows = _windows(text)
        if (
            not windows
            and not whole_text_hit(text)
            and not _has_table(text)
            and not may_hold(text)
        ):
            return []  # no line can hold a claim
    elif (
        _CLAIM.search(text) is None
        and not any(hint in text for _, hint in _EXTRA)
        and not _has_table(text)
        and not may_hold(text)
    ):
        return []
    regions = _skipped(text, include_code)
    if regions.whole_file:
        return []
    skip = regions.all
    # merge the regions so that one bisect tells whether a number overlaps any of them; numbers in them are
    # dropped before their words are read
    merged: list[list[int]] = []
    for lo, hi in skip:
        if merged and lo <= merged[-1][1]:
            if hi > merged[-1][1]:
                merged[-1][1] = hi
        else:
            merged.append([lo, hi])
    starts = [lo for lo, _ in merged]

    def skipped(start: int, end: int) -> bool:
        i = bisect_right(starts, end - 1) - 1  # the last region starting before the number's end
        return i >= 0 and merged[i][1] > start

    found = _candidates(text, skipped, windows, dismissed)
    if regions.scoped:  # `ignore[FR101]`: the rule is known only once the number is read
        found = [c for c in found if not regions.silenced(c[0], c[5])]
    return found


def _as_written(c: Candidate, text: str, matched: str) -> Candidate:
    """A candidate found in `matched` (`text` with its thin spaces read as no-break spaces) with its value as the
    document writes it: a value is a slice of the text at or after the candidate's start."""
    value = c[2]
    if "\u00a0" in value:
        at = matched.find(value, c[0], max(c[1], c[0] + len(value)))
        if at >= 0:
            value = text[at : at + len(value)]
    return (c[0], c[1], value, c[3], c[4], c[5])


def _lint(
    text: str,
    path: str,
    include_code: bool,
    targets: bool,
    prefilter: bool,
    rules: frozenset[str] | None = None,
) -> list[Finding]:
    """lint_text; `prefilter=False` runs every pattern over the whole text (the reference the prefilter is tested
    against)."""
    found = _scan(text, include_code, prefilter, None)
    return _findings(text, path, [(*c[:5], "rules", c[5]) for c in found], targets, rules)


def _findings(
    text: str,
    path: str,
    decided: list[tuple[int, int, str, str, str, str, str]],
    targets: bool,
    rules: frozenset[str] | None,
) -> list[Finding]:
    """Findings, in order, from candidates and who decided each (start, end, value, unit, kind, by, rule): claims
    only unless `targets`, only the rules of `rules` when given."""
    if not targets:
        decided = [c for c in decided if c[4] == "claim"]
    if rules is not None:
        decided = [c for c in decided if c[6] in rules]
    out: list[Finding] = []
    line = 1
    line_start = 0
    last = 0
    for start, end, value, unit, kind, by, rule in decided:
        newlines = text.count("\n", last, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", last, start) + 1
        last = start
        out.append(Finding(path, line, start - line_start + 1, text[start:end], value, unit, kind, by, rule))
    return out


def lint_file(
    path: Path | str, include_code: bool = False, targets: bool = False, rules: frozenset[str] | None = None
) -> list[Finding]:
    """Every unsourced claim in one file; BadInput when it cannot be read as UTF-8 text."""
    from factreg.textfile import read_text

    return lint_text(read_text(path), str(path), include_code, targets, rules=rules)


def lint_documents(
    paths: Iterable[Path | str],
    include_code: bool = False,
    targets: bool = False,
    rules: frozenset[str] | None = None,
) -> tuple[list[Finding], list[Problem]]:
    """Findings under `paths` and the files that could not be read (walk.Problem), for the CLI to report."""
    from factreg.docs import walk

    findings: list[Finding] = []
    problems: list[Problem] = []
    for path, text in walk.documents(paths):
        if isinstance(text, walk.Problem):
            problems.append(text)
            continue
        findings.extend(lint_text(text, str(path), include_code, targets, rules=rules))
    return findings, problems


def lint_paths(
    paths: list[Path], include_code: bool = False, targets: bool = False, rules: frozenset[str] | None = None
) -> list[Finding]:
    """Every unsourced claim in the Markdown files under `paths`; files that cannot be read are skipped. With
    `targets`, the targets, limits and settings too (findings of kind "target")."""
    return lint_documents(paths, include_code, targets, rules)[0]
