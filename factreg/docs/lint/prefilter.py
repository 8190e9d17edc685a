"""Where a claim can be: one cheap pattern whose matches hold every line on which a claim can be found, and the
windows of lines the full patterns then run over."""

from __future__ import annotations

import re
from collections.abc import Iterable

from factreg.docs import literals
from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.vocab import _DIGIT, _EXTRA, _LABEL_UNIT, _MAGNITUDE, _METRIC_LABEL, _SP, _TOOL_ROW, _WORD_RATIO

_WHOLE_TEXT = (_LABEL_UNIT, _METRIC_LABEL, _TOOL_ROW, _WORD_RATIO)  # patterns whose lines the prefilter does not know: run over the whole text

# Where a claim can be: one cheap pattern whose matches hold every line on which _CLAIM or an extra pattern (but
# _LABEL_UNIT, whose match may span lines, and _METRIC_LABEL, whose number has no unit: they are always searched in the
# whole text) can match. A claim's number is
# a whole run of digits, commas and dots (_NEXT keeps any of them from following the first number; the second
# number of a range is followed by a unit) that ends in a digit and starts at one that does not follow a letter,
# digit or one of `_.:#@$\\` (_NUM_FIRST; the second number of a range follows its separator). It is followed by an
# optional `+`, `**` or `__`, up to two spaces and the start of a unit: the first two characters of one of units.py's _UNITS,
# case-insensitively (a few longer for `tokens`, which prose often counts, and for `events`, `connections`,
# `inserts`, `transactions`, `writes` and `frames`, whose first two letters start common words; for benchstat's `207.0n ± 2%`, an `n` or
# `m` before ` ±`), a sign or a syllable; or by a `±` spread, or by `-second`. The extra patterns need a digit
# before `pp`/`tg` (`8000pp`), or `초당`, `/sec:`, `thrpt` or `avgt`, or `pp`, `tg`, `x` or `×` before a digit (`pp512 560`, `x2.88`: found with str.find, as these letters are too common to start a
# regular expression's search at each of them). A line without any of these cannot hold a claim, so the full
# patterns only run over the lines that have one (tests/test_lint_prefilter.py shows the findings are the same
# with and without it).
_UNIT_START = (
    rf"(?i:ch|d[oa]|el|f[ipl]|g[ibf]|ge|h[or]|i[tmo]|k[ibe]|li|m[sib0-9]|me|ns|na|op|p[paf]|perc|q[up]|r[eopu]|s[eat]|tera|us|wo|x[fsq]"
    rf"|ev(?=ent)|cy(?=cle)|co(?=nn)|in(?=ser|fer)|tr(?=ans)|tx|wr(?=ite)|fr(?=ames)|per(?={_SP}sec)|ve(?=ctor)|ba(?=tch)"
    rf"|pr(?=edict)|em(?=bed)|jo(?=b)|sp(?=an)|ob(?=j)|ti(?=le)|ta(?=sk)|ha(?=sh)|pk(?=t)|lo(?=okup)|ca(?=ll)"
    rf"|t[kgpibf]|top|to(?:k(?:en)?s?)?(?:{_SP}?/|{_SP}[pam]|-[pa]))"
    rf"|(?i:[tg]){_SP}?/|(?i:[sx])(?![A-Za-z0-9])|h(?={_SP}?\d)|i(?=/s)|\[(?=#/sec\]|ms\]|Kbytes/sec\])|[µμ%×✕✖토마밀초분시배기테페나]|프(?=레임)|[nm](?=[ \t]±)|[건장개회](?={_SP}?/)|(?:요청|쿼리|트랜잭션|메시지|이벤트)(?={_SP}?/)"
)


_PREFILTER = lazy(
    # Every match starts with a digit, and the pattern with `\d` (not with an alternation), so that `re` skips to
    # the next digit in C instead of trying the pattern at every character (twice as fast); `초당` is found with
    # str.find (_PREFILTER_LITERALS).
    rf"\d(?:"
    # the run of the number; (?![\d,.]) makes a shorter run fail at once instead of trying every unit again
    rf"(?<![A-Za-z0-9_.#@$\\]\d)(?<!(?<![A-Za-z]):\d)[\d,.]*(?<=\d)(?![\d,.])(?:{_MAGNITUDE})?"
    rf"(?:\+?(?:\*\*|__)?(?:{_SP}{{0,2}}|&nbsp;)(?=(?i:[bcdefghijklmnopqrstuvwx])|[µμ%×✕✖토마밀초분시배기테페나건장개회프요쿼트메이[])(?:{_UNIT_START})"
    rf"|{_SP}?(?:±|\+/-|\+-)|-(?i:[smh])|/[s\d])"  # `/[s\d]`: `16.7/sec`, `1/3 the speed`
    r"|pp|tg)"
)


_PREFILTER_BEFORE_DIGIT = ("pp", "tg", "x", "×")


_PREFILTER_UNIT_KEYS = ("PS", "ps")  # the ends of _UNIT_BEFORE's keys: `TPS`, `qps`, `TFLOPS`


_PREFILTER_LITERALS = (
    "초당",
    "_seconds",
    "_milliseconds",
    "_ms",
    "_sec",
    'Ms"',
    "Ms:",
    "Ms=",
    'Seconds"',
    "Seconds:",
    "Seconds=",
    "RTF",
    "factor",
    "/sec:",
    "/s:",
    "thrpt",
    "avgt",
)  # `_seconds`: a metric's name holding its unit; `/sec:`, `/s:`: wrk's `Requests/sec:   1170.78`, `MiB/s: 50.17`; JMH's rows


def _windows(text: str) -> list[tuple[int, int]]:
    """Runs of consecutive lines that may hold a claim, as (start of the first line, end of the last line: the
    offset of its newline, or the end of the text)."""
    find = text.find
    lines: dict[int, int] = {}  # start of a line -> its end
    search = _PREFILTER.search
    pos = 0
    while (m := search(text, pos)) is not None:
        pos = _take_line(text, m.start(), lines) + 1
    for lit in _PREFILTER_LITERALS:
        i = find(lit)
        while i != -1:
            i = find(lit, _take_line(text, i, lines) + 1)
    for lit in _PREFILTER_UNIT_KEYS:  # a unit before its number: `TPS 15.4`, `tps는 약 620`, `TFLOPS=6.1`
        i = find(lit)
        while i != -1:
            key = text[max(0, i - 3) : i]
            if not (key[-1:] in ("T", "Q", "t", "q") or key == "FLO"):
                i = find(lit, i + len(lit))  # not one of _UNIT_BEFORE's keys (`https`, `steps`)
                continue
            i = find(lit, _take_line(text, i, lines) + 1)
    digit = _DIGIT.match
    for lit in _PREFILTER_BEFORE_DIGIT:
        i = find(lit)
        while i != -1:
            after = i + len(lit)
            i = find(lit, _take_line(text, i, lines) + 1) if digit(text, after) else find(lit, after)
    out: list[tuple[int, int]] = []
    for lo in sorted(lines):
        hi = lines[lo]
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _take_line(text: str, pos: int, lines: dict[int, int]) -> int:
    """Record the line holding `pos` in `lines` (its start -> its end) and return its end."""
    lo = text.rfind("\n", 0, pos) + 1
    hi = text.find("\n", pos)
    if hi == -1:
        hi = len(text)
    lines[lo] = hi
    return hi


def _finditer(rx: re.Pattern[str], text: str, windows: list[tuple[int, int]] | None) -> Iterable[re.Match[str]]:
    """`rx.finditer(text)`, restricted to the `windows` (None: the whole text). The same matches, for a pattern
    whose matches never hold a newline: the search runs from each window's first line start (where a search over
    the whole text is too, as no match crosses a line) and stops two characters past its last newline, so that
    `$` and look-aheads see what they see in the whole text."""
    if windows is None:
        yield from rx.finditer(text)
        return
    n = len(text)
    for lo, hi in windows:
        for m in rx.finditer(text, lo, min(n, hi + 2)):
            if m.start() >= hi:
                break
            yield m


def _extra_runs(
    text: str, windows: list[tuple[int, int]] | None
) -> list[tuple[re.Pattern[str], list[tuple[int, int]] | None]]:
    """The extra patterns whose hint is in the text, each with where to run it. Shortcuts (off with
    literals.ENABLED = False): a pattern listed under two hints runs once (the second run finds the same matches,
    dropped as overlaps), and only over the windows that hold a literal of each group its every match holds."""
    if not literals.ENABLED:
        return [(rx, None if rx in _WHOLE_TEXT else windows) for rx, hint in _EXTRA if hint in text]
    runs: list[tuple[re.Pattern[str], list[tuple[int, int]] | None]] = []
    folded: list[str] | None = None
    for rx, hints in _extra_hints().items():
        if not any(hint in text for hint in hints):
            continue
        if rx in _WHOLE_TEXT or windows is None:
            runs.append((rx, None if rx in _WHOLE_TEXT else windows))
            continue
        if folded is None:  # a match holds no newline: its literals are in its window
            folded = [literals.fold(text[lo:hi]) for lo, hi in windows]
        screen = _EXTRA_SCREENS.get(rx)
        if screen is None:  # worked out (and the pattern compiled) when a window first needs it
            screen = _EXTRA_SCREENS[rx] = literals.screen(rx)
        runs.append((rx, [w for w, f in zip(windows, folded, strict=True) if screen.may_match_all(f)]))
    return runs


_EXTRA_SCREENS: dict[re.Pattern[str], literals.Screen] = {}


_EXTRA_HINTS: dict[re.Pattern[str], tuple[str, ...]] = {}


def whole_text_hit(text: str) -> bool:
    """Whether a pattern searched over the whole text (_WHOLE_TEXT) matches in it, one of its hints first: a claim
    on a line no window holds."""
    hints = _extra_hints()
    return any(any(h in text for h in hints[rx]) and rx.search(text) is not None for rx in _WHOLE_TEXT)


def _extra_hints() -> dict[re.Pattern[str], tuple[str, ...]]:
    """Each extra pattern once, with its hints (their pre-tests: _EXTRA_SCREENS, each worked out on its first use)."""
    if _EXTRA_HINTS:
        return _EXTRA_HINTS
    hints: dict[re.Pattern[str], tuple[str, ...]] = {}
    for rx, hint in _EXTRA:
        hints[rx] = (*hints.get(rx, ()), hint)
    _EXTRA_HINTS.update(hints)
    return hints
