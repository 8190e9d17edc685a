"""Unsourced claims: performance numbers in documents that cite no fact (`factreg docs lint`).

A *claim* is a number with a performance unit, in English or Korean prose:

- durations: `ms`, `s`, `sec`, `secs`, `second(s)`, `min`, `minute(s)`, `µs`, `초`, `밀리초`, `분`
  (`0.13초`, `3.75초에`, `2.27초로` — Korean particles attach directly; `a 30-second prefill`);
- rates: `tok/s`, `t/s`, `tokens/s`, `tokens per second`, `토큰/초`, `초당 28토큰`, `req/s`, `ms/token`;
- ratios: `28×`, `28x faster`, `3 times slower`, `3.1배`; percentages only with a comparative
  (`60% slower`, `20% 더 빨라졌다`);
- `±` spreads, with or without a unit (`11.9 ± 7.2 tok/s`, `| tg32 | 11.9 ± 7.2 |`);
- ranges (`30~60초`, `3.6–8 tok/s`, `30-60 s`, `2 to 3 seconds`, `between 0.4 and 0.9 s`, `2–3×`).

Not claims: clock times (`02:30`, `새벽 2시 30분`, `2:30 PM`), dates, counts (`3번`, `3 runs`, `n=5`), model and
hardware names (`27B`, `35B-A3B`, `RTX 2080s`, `2 × RTX 2080 Super` — a `×` or `x` followed by a capitalised
word or a number is a hardware count or a product, not a ratio), sizes (`22 GB`), versions, ports and
addresses, test names (`tg32`), HTTP status codes (`401s`), hours and days (`6h`, `30d`, `14 days`: schedules
and freshness settings, not latencies), and *settings*: a duration right after `timeout`, `interval`, `sleep`,
`retry`, `every`, `타임아웃`, `주기`, `간격`… or followed by `마다`/`timeout` (`the probe timeout is 30 s`,
`5초마다`), and minutes used as a schedule (`30분마다`, `10분 후`, `5 minutes ago`).

Skipped regions: citation markers `<!-- fact: ID -->…<!-- /fact -->` (the number is sourced), every other HTML
comment, YAML front matter (metadata, not prose), fenced and indented code blocks and inline code spans (as
`factreg.docs.markdown` reads them, the same reading as the citation markers'), `<pre>`/`<code>` elements
(examples and commands; `include_code=True` lints code too), and URLs
(`?timeout=30s`). Directives, as HTML comments outside code: `<!-- factreg: ignore -->` drops its own line's
claims, `<!-- factreg: ignore-next-line -->` the next line's, `<!-- factreg: ignore-start -->` …
`<!-- factreg: ignore-end -->` a region, and `<!-- factreg: ignore-file -->` anywhere the whole file.

Positions: `line` is 1-based and counts `\\n`; `col` is the 1-based column of the claim's first character in
characters (code points), so Korean text has the columns an editor shows. The claim `text` starts at the
number (`~4 s` → `4 s`; `초당 28토큰` starts at `초당`); an English comparative right after a ratio is part of
it (`3.1× slower`).

Speed: every pattern is compiled once; a file without digits costs one scan; candidate claims are found with one
regular expression over the whole text, and the skipped regions (code, comments, markers) are only worked out
for files that have candidates.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from factreg.docs import markdown


@dataclass(frozen=True)
class Finding:
    """One unsourced claim: where it is, its text, the number(s) as written and the normalised unit."""

    path: str  # as given
    line: int  # 1-based
    col: int  # 1-based, in characters
    text: str  # e.g. "28 tok/s", "30~60초", "3.1× slower", "11.9 ± 7.2 tok/s"
    value: str  # e.g. "28", "30~60", "3.1", "11.9 ± 7.2"
    unit: str  # e.g. "tok/s", "s", "ms", "×", "min", "%", "" (a bare spread)


# ---------------------------------------------------------------------------------------------------------------
# The claim pattern

_SP = r"[ \t\u00a0\u2009\u202f]"  # one space (never a newline: a claim stays on one line)
# A number; the look-behind (after the first digit, so the search can skip to digits fast) keeps numbers that are
# part of a word, version, address or clock time out: `tg32`, `b6012`, `A3B`, `v1.2`, `02:30`, `:8080`.
_NUM_FIRST = r"\d(?<![A-Za-z0-9.:#@$\\]\d)\d*(?:,\d{3})*(?:\.\d+)?"
_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
_END = r"(?![A-Za-z0-9])"  # an ASCII unit ends at a word boundary (a Korean particle may follow: `28 tok/s로`)

_UNITS = [
    # rates
    ("rate", rf"(?i:tok(?:en)?s?|tks?|t){_SP}?/{_SP}?(?i:s|secs?|seconds?){_END}"),
    ("rate", rf"(?i:tok(?:en)?s?){_SP}(?i:per|a){_SP}(?i:second|sec){_END}"),
    ("rate", rf"토큰{_SP}?/{_SP}?(?:초|s{_END}|sec{_END})"),
    ("req", rf"(?i:req(?:uest)?s?){_SP}?/{_SP}?(?i:s|sec){_END}|(?i:requests){_SP}per{_SP}second{_END}"),
    # time per token
    ("mstok", rf"ms{_SP}?/{_SP}?(?i:tok(?:en)?){_END}|ms{_SP}per{_SP}token{_END}"),
    ("stok", rf"s{_SP}?/{_SP}?(?i:tok(?:en)?){_END}"),
    # durations
    ("ms", rf"(?:ms|msecs?|(?i:milli-?seconds?|millisecs?)){_END}|밀리초"),
    ("us", rf"(?:[µμ]s|(?i:micro-?seconds?)){_END}|마이크로초"),
    ("s", rf"(?:s|(?i:secs?|seconds?)){_END}"),
    ("s", r"초(?![과기반록등월석점콜소])"),
    ("min", rf"(?:min|mins|(?i:minutes?)){_END}"),
    ("min", r"분(?![기의류포산할배석리량야위자모해명노수출란담쟁열필실비단지들께])"),
    # ratios and relative changes (checked further in Python: what follows decides)
    ("ratio", r"[×✕✖]"),
    ("x", rf"(?<=\d)x{_END}|(?<=\d)X(?={_SP}?(?i:faster|slower|quicker|speedup|speed-up|slowdown){_END})"),
    ("xsp", rf"(?<={_SP})x(?={_SP}+(?i:faster|slower|quicker|speedup|speed-up|slowdown){_END})"),
    ("times", rf"(?i:times)(?={_SP}+(?i:faster|slower|quicker|as{_SP}|more|less|longer|shorter|higher|lower))"),
    ("ratio", r"배(?![포치열경터송달출선당제관우추꼽양심수율속신탈려])"),
    ("pct", r"%"),
]
_UNIT_NAMES = [name for name, _ in _UNITS]
_UNIT_ALT = "|".join(f"(?P<u{i}>{rx})" for i, (_, rx) in enumerate(_UNITS))
_NORMAL = {
    "rate": "tok/s",
    "req": "req/s",
    "mstok": "ms/tok",
    "stok": "s/tok",
    "ms": "ms",
    "us": "µs",
    "s": "s",
    "min": "min",
    "ratio": "×",
    "x": "×",
    "xsp": "×",
    "times": "×",
    "pct": "%",
}

_PM = rf"{_SP}?(?:±|\+/-|\+-){_SP}?"
_RANGE = rf"(?:{_SP}?[~～〜–—‒-]{_SP}?|{_SP}(?:to|and|through){_SP}|{_SP}?(?:에서|부터){_SP}?)"

# What may follow a number that starts a claim (a cheap test that turns most numbers away before the units are
# tried): not a digit, not punctuation that ends it, not a capital that cannot start a unit (`27B`, `8 GB`).
_NEXT = r"(?=[ \t\u00a0\u2009\u202f]?[^ \t\n\u00a0\u2009\u202f0-9A-LN-QU-WYZ.,:;)\]|/(\"'])"

_CLAIM = re.compile(
    rf"(?P<n1>{_NUM_FIRST}){_NEXT}"
    rf"(?:"
    rf"(?P<pm>{_PM})(?P<n2>{_NUM})(?:{_SP}?(?:{_UNIT_ALT.replace('(?P<u', '(?P<p')}))?"
    rf"|"
    rf"(?:{_RANGE}(?P<n3>{_NUM}))?(?P<sp>{_SP}?|-(?=(?i:second|minute|millisecond)))(?:{_UNIT_ALT})"
    rf")"
)
# Korean "per second, N tokens": 초당 28토큰, 초당 약 22 토큰, 초당 12개의 토큰.
_PER_SECOND = re.compile(
    rf"초당{_SP}?(?:(?:약|평균|최대|최소|대략){_SP}?)?(?P<n1>{_NUM})(?:{_SP}?[~～〜–-]{_SP}?(?P<n3>{_NUM}))?"
    rf"{_SP}?(?:개의?{_SP}?)?토큰"
)

_DIGIT = re.compile(r"\d")
_COMPARATIVE = re.compile(rf"{_SP}?(?i:(faster|slower|quicker|speedup|speed-up|slowdown){_END})")
_KO_COMPARATIVE = re.compile(
    rf"{_SP}?(?:더{_SP}?)?(?:빠르|빨라|빠른|빨리|느리|느려|느린|늦|향상|개선|단축|줄|감소|증가|저하)"
)
_PCT_OTHER = re.compile(
    rf"{_SP}?(?i:lower|higher|less|more){_SP}(?i:latency|throughput|ttft|decode|decoding)|"
    rf"{_SP}?(?i:improvement|regression|speed-?up|slow-?down)"
)
# After `N×` / `Nx`: a capitalised word, a number or a count noun makes it a hardware count or a product.
_NOT_RATIO_NEXT = re.compile(
    rf"{_SP}*(?:[A-Z]|\d|(?i:gpus?|cards?|nodes?|machines?|servers?|cores?|sockets?|dimms?|sticks?|boxes?|"
    rf"instances?|replicas?|workers?|threads?){_END})"
)
# `the 401s`, `404s`, `5xx`: HTTP status codes in the plural, not seconds (`120s` stays a duration)
_HTTP_CODES = frozenset({200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 408, 409, 429, 500, 502, 503, 504})
# A duration that is a setting, not a measurement.
_SETTING_BEFORE = re.compile(
    rf"(?:(?i:time-?outs?|time out|sleeps?|intervals?|retry|retries|cool-?down|back-?off|ttl|deadline|keep-?alive|defaults?|"
    rf"freshness|warn_after|error_after|max_age|poll(?:ing)?)|타임아웃|주기|간격|재시도|기본값|제한\s?시간)"
    rf"[^.;,\d\n]{{0,20}}$|(?i:every|each){_SP}+$"
)
# Substrings one of which every _SETTING_BEFORE match contains, lower-cased (a fast first test).
_SETTING_HINT = re.compile(
    "time|sleep|interval|retr|cool|back|ttl|deadline|keep|default|fresh|warn_|error_|max_age|poll|every|each|"
    "타임아웃|주기|간격|재시도|기본값|제한"
)
_SETTING_AFTER = re.compile(
    rf"{_SP}*(?:(?i:time-?outs?|intervals?|cool-?down|ttl|deadline){_END}|마다|간격|주기|타임아웃|제한)"
)
_MINUTE_SCHEDULE_AFTER = re.compile(rf"{_SP}*(?:후|뒤|전|(?i:ago|later|from{_SP}now|before){_END})")
_CLOCK_HOUR_BEFORE = re.compile(rf"\d{_SP}?시{_SP}?$")
_CLOCK_SECOND_BEFORE = re.compile(rf"\d{_SP}?시{_SP}?\d{{1,2}}{_SP}?분{_SP}?$")

# ---------------------------------------------------------------------------------------------------------------
# Regions that are not prose

# Where one of these may start (a cheap search; the whole pattern is then matched there).
_INLINE_START = re.compile(r"<!--|<(?:pre|code|PRE|CODE|script|style)\b|\]\(")
_INLINE = re.compile(
    # a marker's text stops at the next `<!-- fact` or `<!-- /fact`, so an unclosed marker costs one short scan
    r"<!--(?:(?P<marker>[ \t\r\n]*fact[ \t]*:[^>]*?-->[^<]*(?:<(?!!--[ \t\r\n]*/?fact)[^<]*)*"
    r"<!--[ \t\r\n]*/fact[ \t\r\n]*-->)|(?P<comment>.*?(?:-->|\Z)))"
    r"|<(?P<element>(?P<tag>pre|code|PRE|CODE|script|style)\b[^>]*>.*?</(?P=tag)[ \t]*>)"
    r"|\](?P<target>\([^)\s]*(?:[ \t]+\"[^\"\n]*\")?\))",
    re.S,
)
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,15}\Z")
_URL_REST = re.compile(r"[^\s<>()\[\]\"'`]*(?:\([^\s<>()]*\)[^\s<>()\[\]\"'`]*)*")
_DIRECTIVE = re.compile(
    r"<!--[ \t]*factreg[ \t]*:[ \t]*(ignore-file|ignore-next-line|ignore-start|ignore-end|ignore)[ \t]*-->"
)


def _line_end(text: str, pos: int) -> int:
    """Offset of the newline ending the line at `pos` (or the end of the text)."""
    nl = text.find("\n", pos)
    return len(text) if nl == -1 else nl


def _inside(pos: int, ranges: list[tuple[int, int]]) -> bool:
    return any(lo <= pos < hi for lo, hi in ranges)


def _line_span(text: str, pos: int) -> tuple[int, int]:
    return text.rfind("\n", 0, pos) + 1, _line_end(text, pos)


def _urls(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = 0
    while True:
        i = text.find("://", pos)
        if i == -1:
            return out
        scheme = _URL_SCHEME.search(text, max(0, i - 16), i)
        rest = _URL_REST.match(text, i + 3)
        end = rest.end() if rest else i + 3
        out.append((scheme.start() if scheme else i, end))
        pos = max(end, i + 3)


def _inline(
    text: str, begin: int, code: list[tuple[int, int]], spans: list[tuple[int, int]], skip: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Markers, comments and link targets outside code blocks (added to `skip`), and the inline code: the code
    spans and `<pre>`/`<code>` elements. Of a code span and one of these, the one that starts first wins."""
    inline_code: list[tuple[int, int]] = []
    spans = [*spans, (len(text), len(text))]
    j = 0
    pos = begin
    for lo, hi in [*code, (len(text), len(text))]:
        while pos < lo:
            while spans[j][0] < pos:
                j += 1  # inside a comment or marker that started before it
            start = _INLINE_START.search(text, pos, min(lo, spans[j][0]))
            if start is None:
                if spans[j][0] >= lo:
                    break
                inline_code.append(spans[j])
                pos = spans[j][1]
                continue
            m = _INLINE.match(text, start.start(), lo)
            if m is None:
                pos = start.start() + 1
            elif m.group("element") is not None and m.group("tag").lower() in ("pre", "code"):
                inline_code.append(m.span())
                pos = m.end()
            else:
                skip.append(m.span())  # markers, comments, link targets
                pos = m.end()
        pos = max(pos, hi)
    return inline_code


def _skipped(text: str, include_code: bool) -> tuple[list[tuple[int, int]], bool]:
    """Regions that are not linted, and whether the file asks to be ignored entirely."""
    skip: list[tuple[int, int]] = []
    begin = markdown.front_matter_end(text)
    if begin:
        skip.append((0, begin))
    regions = markdown.code_regions(text, begin)
    code = regions.blocks
    inline_code: list[tuple[int, int]] = regions.spans
    if "<" in text or "](" in text:
        inline_code = _inline(text, begin, code, regions.spans, skip)
    if "://" in text:
        skip.extend(_urls(text))
    if not include_code:
        skip.extend(code)
        skip.extend(inline_code)
    if "factreg" in text:
        all_code = sorted(code + inline_code)
        open_at = -1
        for d in _DIRECTIVE.finditer(text):
            if _inside(d.start(), all_code):
                continue  # a directive shown as an example
            kind = d.group(1)
            if kind == "ignore-file":
                return [], True
            if kind == "ignore":
                skip.append(_line_span(text, d.start()))
            elif kind == "ignore-next-line":
                nl = text.find("\n", d.end())
                if nl != -1:
                    skip.append(_line_span(text, nl + 1))
            elif kind == "ignore-start":
                if open_at < 0:
                    open_at = d.start()
            elif open_at >= 0:
                skip.append((open_at, d.end()))
                open_at = -1
        if open_at >= 0:
            skip.append((open_at, len(text)))
    skip.sort()
    return skip, False


# ---------------------------------------------------------------------------------------------------------------
# Finding claims


_KIND = {f"{prefix}{i}": name for i, name in enumerate(_UNIT_NAMES) for prefix in ("u", "p")}
_LENIENT = frozenset({"x", "xsp", "times", "pct", "min", "ratio"})  # what follows the unit decides
_DURATIONS = frozenset({"s", "ms", "min", "us"})


def _candidates(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, value, unit) of every claim in `text`, before skipped regions are removed."""
    out: list[tuple[int, int, str, str]] = []
    append = out.append
    for m in _CLAIM.finditer(text):
        start = m.start()
        group = m.lastgroup or ""
        kind = _KIND.get(group)
        if group[0] == "p" or group == "n2":  # a ± spread, with or without a unit
            n2_end = m.end("n2")
            value = text[start:n2_end]
            if kind is None:
                append((start, n2_end, value, ""))
                continue
            end = m.end()
            if kind in _LENIENT:
                checked = _check(text, start, m.start(group), end, kind)
                if checked is None:  # keep the spread; what follows is not part of it
                    append((start, n2_end, value, ""))
                    continue
                end = checked
            append((start, end, value, _NORMAL[kind]))
            continue
        if kind is None:  # pragma: no cover - the pattern always ends with a unit here
            continue
        u_start = m.start(group)
        end = m.end()
        n3_end = m.end("n3")
        num_end = n3_end if n3_end >= 0 else m.end("n1")
        if num_end == u_start and n3_end < 0 and (kind == "s" or kind == "x"):
            digits = m.group("n1")
            if digits.isdigit() and (len(digits) >= 4 or (kind == "s" and int(digits) in _HTTP_CODES)):
                continue  # `RTX 2080s`, `3700x`, `the 401s`
        if kind in _LENIENT:
            checked = _check(text, start, u_start, end, kind)
            if checked is None:
                continue
            end = checked
        if kind in _DURATIONS and _is_setting(text, start, end):
            continue
        if text[u_start] == "초" and _CLOCK_SECOND_BEFORE.search(text, max(0, start - 16), start):
            continue  # 오전 2시 30분 10초: a clock time
        append((start, end, text[start:num_end], _NORMAL[kind]))
    if "초당" in text:
        for m in _PER_SECOND.finditer(text):
            num_end = m.end("n3") if m.group("n3") is not None else m.end("n1")
            out.append((m.start(), m.end(), text[m.start("n1") : num_end], "tok/s"))
        out.sort()
        # `초당 28 토큰/초` would be found twice: keep the first of overlapping claims
        kept: list[tuple[int, int, str, str]] = []
        for c in out:
            if kept and c[0] < kept[-1][1]:
                continue
            kept.append(c)
        out = kept
    return out


def _check(text: str, start: int, u_start: int, end: int, kind: str) -> int | None:
    """The claim's end offset after what follows the unit is taken into account, or None if it is no claim."""
    if kind in ("ratio", "x", "xsp", "times", "pct"):
        after = text[end : end + 40]
        comp = _COMPARATIVE.match(after)
        if comp:
            return end + comp.end()
        if kind == "xsp" or kind == "times":
            return end  # the pattern already required a comparative
        if kind == "pct":
            if _KO_COMPARATIVE.match(after) or _PCT_OTHER.match(after):
                return end
            return None
        if text[u_start] == "배":
            return end
        if _NOT_RATIO_NEXT.match(after):
            return None  # `2 × RTX 2080 Super`, `2x 8 GB`, `4× A100`
        return end
    if kind == "min":
        before = text[max(0, start - 12) : start]
        if text[u_start] == "분" and _CLOCK_HOUR_BEFORE.search(before):
            return None  # 새벽 2시 30분: a clock time
        if _MINUTE_SCHEDULE_AFTER.match(text, end):
            return None  # 10분 후, 5 minutes ago: a schedule, not a duration that was measured
    return end


def _is_setting(text: str, start: int, end: int) -> bool:
    """Whether a duration is a setting (`timeout 30 s`, `5초마다`, `every 5 seconds`) rather than a measurement."""
    if _SETTING_AFTER.match(text, end):
        return True
    lo = max(0, start - 40)
    nl = text.rfind("\n", lo, start)
    before = text[nl + 1 if nl >= 0 else lo : start]
    if _SETTING_HINT.search(before.lower()) is None:
        return False  # the common case, decided by one quick search
    return _SETTING_BEFORE.search(before) is not None


def lint_text(text: str, path: str = "<text>", include_code: bool = False) -> list[Finding]:
    """Every unsourced claim in a document's text, in order."""
    if not _DIGIT.search(text):
        return []
    found = _candidates(text)
    if not found:
        return []
    skip, ignore_file = _skipped(text, include_code)
    if ignore_file:
        return []
    if skip:
        # merge the regions so that one bisect tells whether a claim overlaps any of them
        merged: list[list[int]] = []
        for lo, hi in skip:
            if merged and lo <= merged[-1][1]:
                if hi > merged[-1][1]:
                    merged[-1][1] = hi
            else:
                merged.append([lo, hi])
        starts = [lo for lo, _ in merged]
        kept = []
        for c in found:
            i = bisect_right(starts, c[1] - 1) - 1  # the last region starting before the claim's end
            if i >= 0 and merged[i][1] > c[0]:
                continue
            kept.append(c)
        found = kept
    out: list[Finding] = []
    line = 1
    line_start = 0
    last = 0
    for start, end, value, unit in found:
        newlines = text.count("\n", last, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", last, start) + 1
        last = start
        out.append(Finding(path, line, start - line_start + 1, text[start:end], value, unit))
    return out


def lint_file(path: Path | str, include_code: bool = False) -> list[Finding]:
    """Every unsourced claim in one file; BadInput when it cannot be read as UTF-8 text."""
    from factreg.textfile import read_text

    return lint_text(read_text(path), str(path), include_code)


TEXT_SUFFIXES = (".md", ".markdown", ".mdx", ".txt")


def lint_documents(paths: Iterable[Path | str], include_code: bool = False) -> tuple[list[Finding], list]:  # type: ignore[type-arg]
    """Findings under `paths` and the files that could not be read (walk.Problem), for the CLI to report."""
    from factreg.docs import walk

    findings: list[Finding] = []
    problems: list = []  # type: ignore[type-arg]
    for path, text in walk.documents(paths):
        if isinstance(text, walk.Problem):
            problems.append(text)
            continue
        findings.extend(lint_text(text, str(path), include_code))
    return findings, problems


def lint_paths(paths: list[Path], include_code: bool = False) -> list[Finding]:
    """Every unsourced claim in the Markdown files under `paths`; files that cannot be read are skipped."""
    return lint_documents(paths, include_code)[0]
