"""Skipped regions: code, comments, citation markers, front matter, URLs, and the `factreg: ignore` directives
(`ignore[FR101]` silences only the rules it names)."""

from __future__ import annotations

import re

from factreg.docs import markdown
from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.vocab import _line_end

# Where one of these may start (a cheap search; the whole pattern is then matched there).
_INLINE_START = lazy(r"<!--|<(?:pre|code|PRE|CODE|script|style)\b|\]\(")


_INLINE = lazy(
    # a marker's text stops at the next `<!-- fact` or `<!-- /fact`, so an unclosed marker costs one short scan
    r"<!--(?:(?P<marker>[ \t\r\n]*fact[ \t]*:[^>]*?-->[^<]*(?:<(?!!--[ \t\r\n]*/?fact)[^<]*)*"
    r"<!--[ \t\r\n]*/fact[ \t\r\n]*-->)|(?P<comment>.*?(?:-->|\Z)))"
    r"|<(?P<element>(?P<tag>pre|code|PRE|CODE|script|style)\b[^>]*>.*?</(?P=tag)[ \t]*>)"
    r"|\](?P<target>\([^)\s]*(?:[ \t]+\"[^\"\n]*\")?\))",
    re.S,
)


_URL_SCHEME = lazy(r"[A-Za-z][A-Za-z0-9+.-]{0,15}\Z")


_URL_REST = lazy(r"[^\s<>()\[\]\"'`]*(?:\([^\s<>()]*\)[^\s<>()\[\]\"'`]*)*")


# `<!-- factreg: ignore -->` and its forms; `[FR101, FR122]` after the form silences only the rules named.
_DIRECTIVE = lazy(
    r"<!--[ \t]*factreg[ \t]*:[ \t]*(ignore-file|ignore-next-line|ignore-start|ignore-end|ignore)"
    r"(?:\[[ \t]*([A-Za-z0-9, \t]*?)[ \t]*\])?[ \t]*-->"
)

# A region where only some rules are silenced: (start, end, the rule ids).
Scoped = tuple[int, int, frozenset[str]]


class Skipped:
    """What is not linted in a document: regions of every rule, regions of some rules, or the whole file."""

    def __init__(self) -> None:
        self.all: list[tuple[int, int]] = []
        self.scoped: list[Scoped] = []
        self.whole_file = False

    def add(self, lo: int, hi: int, rules: frozenset[str] | None) -> None:
        if rules is None:
            self.all.append((lo, hi))
        else:
            self.scoped.append((lo, hi, rules))

    def silenced(self, pos: int, rule: str) -> bool:
        """Whether a finding at `pos` of `rule` is silenced by a scoped directive."""
        return any(lo <= pos < hi and rule in rules for lo, hi, rules in self.scoped)


def _rule_ids(listed: str | None) -> frozenset[str] | None:
    """The rule ids of a directive's `[…]` (upper-cased), or None for a directive without one (every rule)."""
    if listed is None:
        return None
    return frozenset(part.strip().upper() for part in listed.split(",") if part.strip())


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


# A code span that holds a value alone (`1.664s`, `570578.327 ms`, `28 tok/s`, `6,365 TPS`), or a value and its
# equivalents in parentheses (`23.8 ns/op (10.1 GB/s)`, `11.0 ns/op (5.91 GB/s - 8.84 GB/s)`), is prose set in code
# font, read as prose; a span with anything else (`--timeout 30s`, `sleep(5)`) stays code.
_SPAN_VALUE = (
    r"~?\d[\d,]*(?:\.\d+)?[ \t]?(?:ms|s|sec|secs|seconds|µs|us|ns|ns/op|min|mins|minutes|tok/s|t/s|tokens/s|req/s|x|×"
    r"|TPS|QPS|RPS|tps|qps|rps|ops/s|ops/sec|req/sec|rows/s|it/s|fps|FPS|[KMG]i?B/s|MB/sec|GB/sec"
    # `14분`, `1분 54초로`: a Korean time, whole or in two units, a particle of direction kept in the span
    r"|(?:초|분|시간|밀리초)(?:[ \t]*\d+(?:\.\d+)?[ \t]?(?:초|분))?(?:으로|로|에서)?)"
)
_VALUE_SPAN = lazy(
    rf"`+[ \t]*{_SPAN_VALUE}(?:[ \t]*\([ \t]*{_SPAN_VALUE}(?:[ \t]*[-–][ \t]*{_SPAN_VALUE})?[ \t]*\))?[ \t]*`+"
)


# A code span that quotes a tool's report of how long something took (`compiled successfully in 238077 ms`,
# `Time:        1.995 s, estimated 3 s`, `0.52s user 0.76s system 26% cpu`) is read too, through the rules; one
# with an option, an assignment or a call (`--timeout 30s`, `ttl=30s`, `sleep(5)`) stays code.
_REPORT_SPAN = lazy(
    r"`+(?=[^`\n]*(?:\b(?:compiled|built|finished|done|completed|collected|passed|failed|took|elapsed|user|real)\b"
    r"|\b(?:Time|Duration):))(?=[^`\n]*\d[ \t]?(?:ms|s|sec|secs|seconds|µs|us|ns|min|mins|minutes)\b)[^`\n=$(){}<>]*`+"
)


def _read_span(text: str, span: tuple[int, int]) -> bool:
    """Whether an inline code span is read as prose: a value alone, or a tool's report of a time."""
    return bool(_VALUE_SPAN.fullmatch(text, *span) or (
        text.find("--", *span) == -1 and _REPORT_SPAN.fullmatch(text, *span)))


def _skipped(text: str, include_code: bool) -> Skipped:
    """Regions that are not linted, of every rule or of the rules a directive names, and whether the file asks to
    be ignored entirely."""
    out = Skipped()
    skip = out.all
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
        skip.extend(span for span in inline_code if not _read_span(text, span))
    if "factreg" in text:
        _directives(text, sorted(code + inline_code), out)
    skip.sort()
    return out


def _directives(text: str, all_code: list[tuple[int, int]], out: Skipped) -> None:
    """The regions the `factreg: ignore` directives outside code silence, added to `out`."""
    open_at = -1
    open_rules: frozenset[str] | None = None
    for d in _DIRECTIVE.finditer(text):
        if _inside(d.start(), all_code):
            continue  # a directive shown as an example
        kind, rules = d.group(1), _rule_ids(d.group(2))
        if kind == "ignore-file":
            if rules is None:
                out.whole_file = True
                out.all.clear()
                out.scoped.clear()
                return
            out.add(0, len(text), rules)
        elif kind == "ignore":
            out.add(*_line_span(text, d.start()), rules)
        elif kind == "ignore-next-line":
            nl = text.find("\n", d.end())
            if nl != -1:
                out.add(*_line_span(text, nl + 1), rules)
        elif kind == "ignore-start":
            if open_at < 0:
                open_at, open_rules = d.start(), rules
        elif open_at >= 0:
            out.add(open_at, d.end(), open_rules)
            open_at = -1
    if open_at >= 0:
        out.add(open_at, len(text), open_rules)
