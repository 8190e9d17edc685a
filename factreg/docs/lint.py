"""Unsourced claims: performance numbers in documents that cite no fact (`factreg docs lint`).

Policy (the same as tests/data/claims-real/README.md, which labels real sentences by it): a *claim* is a measured
or asserted performance of a system — a rate, a latency, a duration of work, a throughput, a speed-up or
slow-down, or a percent change of a performance figure — in English or Korean prose. **Targets, SLOs, limits,
budgets, requirements and settings are not claims** (`TTFT < 150 ms target`, `keep ITL under 50 ms`, `30초 이내로
응답해야`, `timeout 30 s`, `5초마다`); they are reported as findings of kind `target` only when asked
(`lint_text(..., targets=True)`, `factreg docs lint --targets`), and never fail the lint. Neither are clock times,
dates, counts, sizes and size ratios, model and hardware names (`Vega 10s`, `RTX 2080s`, `27B`), lengths of media
(`a 5 second video`, `2~4초 분량`), quality figures (accuracy, memory, cost, energy), time spent by people
(workshops, set-up steps, study plans), uptime and progress, and hypothetical numbers (`would`, `~라면`).

What the rules read:

- units: durations (`ms`, `s`, `sec`, `min`, `µs`, `6m58s`, `초`, `밀리초`, `분`; hours and days only with work
  done by a system nearby: `a training run takes 2 hours`, `2시간이 소요`), rates (`tok/s`, `t/s`, `tg/s`,
  `tokens per second`, `10 to 29 tokens max per second`, `토큰/초`, `초당 28토큰`, `it/s`, `files/sec`,
  `words per second`, `chars/초`, `req/s`, `RPS`, `fps` unless the line is about a video, `GB/s`, `TOPS`),
  `ms/token`, ratios (`28×`, `28x faster`, `3 times slower`, `3.1배`, `x2.88`) and percentages, `±` spreads,
  ranges (`30~60초`, `2 to 3 seconds`, `155 → 732 chars/초`), and units written elsewhere (`Benchmark duration
  (s): 19.08`, `pp512 560 -> 180`, `8000pp / 400tg t/s`, `| **195** t/s |`);
- ratios and percentages are claims when a comparative follows (`3.1× slower`, `20% 더 빠름`, `4.1x 향상`) or the
  nearest noun is a performance one (`TTFT 50% 감소`, `+50% TG uplift`, `improves performance by ~20%`,
  `20~40% 속도 향상`), not when it is memory, size, cost, quality or a count (`모델 크기를 4-8배 줄여`,
  `compresses 16x`, `메모리 사용량 50-75% 감소`); a percentage needs a change (`85% 성능 유지` is quality kept); a
  bare ratio in a table cell or after a performance noun is a speed-up; percentages in a table row of measured
  times are its changes; `−17% from d0 to d32K` is a change between two conditions;
- targets: an unchecked `[ ]` item, target words near the number (`target`, `goal`, `SLO`, `budget`,
  `threshold`, `목표`, `요구`, `권장`, `해야`, `유지`), a rubric (`Good: < 600ms`), `keep … under N`, and in Korean
  an upper bound (`< 200ms`, `500ms 이하`, `이내`, `미만`) unless the clause states a fact (`✅`, `[x]`, `달성`,
  `수 있다`, a past tense or a present declarative: `5ms 이내로 돌아온다`); thresholds in conditions (`2초
  넘으면`, `5초 이상 … 경우`, `exceeds 200 ms`), quotas (`15분에 5회`), delays before a retry (`500ms 후 한 번
  더`) and *settings*: a duration after or before `timeout`, `interval`, `sleep`, `retry`, `every`, `keep-alive`,
  `TTL`, `expiry`, `animation`, `타임아웃`, `주기`, `간격`, `대기`, `만료`… or a configuration key (`duration:
  600초`, `jitterBufferTarget: 150ms`), a test's configured length (`10초 벤치마크`, `1분간 … 테스트`), a literal
  (`"30s"`); a time between tokens is measured, not a setting (`Chunk interval: ~15ms between tokens`).

Not claims either: clock times (`02:30`, `새벽 2시 30분`, `2:30 PM`), dates, counts (`3번`, `3 runs`, `n=5`),
hardware counts and products (`2 × RTX 2080 Super`: a `×` or `x` followed by a capitalised word or a number),
sizes (`22 GB`), versions, ports and addresses, test names (`tg32`, `tg_3s`), HTTP status codes (`401s`), names
(`-5s-Diffusers`, `high-load-5min`), minutes used as a schedule (`30분마다`, `10분 후`, `5 minutes ago`, `Last 5
minutes`), resolutions (`1초 단위`), reading times (`6 min read`), and quoted examples (`"…2초로 증가했다"처럼`).

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
for files that have candidates. The words around a number are read in windows of at most a few hundred
characters, and what holds for a whole line (a check mark, a rubric, Hangul) is worked out once per line, and only
when the line holds one of the literals every match of its pattern holds (`factreg.docs.literals`; the window
searches before and after a number are pre-tested the same way). tests/test_lint_speed_equivalence.py compares
the findings with these shortcuts and without them.

Quality on real sentences by other authors: bench/lint_real.py, results in docs/performance.md.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from factreg.docs import literals, markdown


@dataclass(frozen=True)
class Finding:
    """One unsourced claim: where it is, its text, the number(s) as written and the normalised unit."""

    path: str  # as given
    line: int  # 1-based
    col: int  # 1-based, in characters
    text: str  # e.g. "28 tok/s", "30~60초", "3.1× slower", "11.9 ± 7.2 tok/s"
    value: str  # e.g. "28", "30~60", "3.1", "11.9 ± 7.2"
    unit: str  # e.g. "tok/s", "s", "ms", "×", "min", "%", "" (a bare spread)
    kind: str = "claim"  # "claim", or "target" (a target, limit or setting; reported only when asked)


# ---------------------------------------------------------------------------------------------------------------
# The claim pattern

_SP = r"[ \t\u00a0\u2009\u202f]"  # one space (never a newline: a claim stays on one line)
# A number; the look-behind (after the first digit, so the search can skip to digits fast) keeps numbers that are
# part of a word, version, address or clock time out: `tg32`, `b6012`, `A3B`, `v1.2`, `02:30`, `:8080`.
_NUM_FIRST = r"\d(?<![A-Za-z0-9_.:#@$\\]\d)\d*(?:,\d{3})*(?:\.\d+)?"
_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
_END = r"(?![A-Za-z0-9])"  # an ASCII unit ends at a word boundary (a Korean particle may follow: `28 tok/s로`)

_UNITS = [
    # rates
    ("rate", rf"(?i:tok(?:en)?s?|tks?|t){_SP}?/{_SP}?(?i:s|secs?|seconds?){_END}"),
    ("rate", rf"(?i:tok(?:en)?s?){_SP}(?i:per|a){_SP}(?i:second|sec){_END}"),
    ("rate", rf"토큰{_SP}?/{_SP}?(?:초|s{_END}|sec{_END})"),
    ("rate", rf"(?i:tok(?:en)?s?|tg|pp){_SP}(?i:max|min|avg){_SP}(?i:per|a){_SP}(?i:second|sec){_END}"),
    ("rate", rf"(?i:tg|pp){_SP}?/{_SP}?(?i:s|secs?|seconds?){_END}"),
    ("req", rf"(?i:req(?:uest)?s?){_SP}?/{_SP}?(?i:s|sec){_END}|(?i:requests){_SP}per{_SP}second{_END}"),
    # other things per second: it/s, files/sec, chars/초, words per second, RPS, fps
    (
        "persec",
        rf"(?i:its?|iters?|iterations?|files?|chars?|characters?|words?|images?|imgs?|samples?|queries|"
        rf"steps?|sentences?|pages?|documents?|docs?|lines?|ops|rows?){_SP}?(?:/{_SP}?|{_SP}per{_SP})"
        rf"(?:(?i:s|secs?|seconds?){_END}|초)",
    ),
    ("persec", rf"(?:RPS|QPS|TPS|rps|qps){_END}"),
    ("fps", rf"(?i:fps){_END}"),
    ("bw", rf"(?:[KMGT]i?B|[KMGT]b){_SP}?/{_SP}?(?:s|sec){_END}"),
    ("flops", rf"(?:[GTP]?FLOPS|TOPS){_END}"),
    # time per token
    ("mstok", rf"ms{_SP}?/{_SP}?(?i:tok(?:en)?){_END}|ms{_SP}per{_SP}token{_END}"),
    ("stok", rf"s{_SP}?/{_SP}?(?i:tok(?:en)?){_END}"),
    # durations
    ("ms", rf"(?:ms|msecs?|(?i:milli-?seconds?|millisecs?)){_END}|밀리초"),
    ("us", rf"(?:[µμ]s|(?<=\d)us|(?i:micro-?seconds?)){_END}|마이크로초"),
    ("s", rf"(?:s|(?i:secs?|seconds?)){_END}"),
    ("s", rf"m[0-5]?\d(?:\.\d+)?s{_END}"),  # 6m58s
    ("s", r"초(?![과기반록등월석점콜소])"),
    ("min", rf"(?:min|mins|(?i:minutes?)){_END}"),
    ("min", r"분(?![기의류포산할배석리량야위자모해명노수출란담쟁열필실비단지들께])"),
    ("h", rf"(?i:hours?|hrs?){_END}|시간(?![당대표제외차])"),
    ("d", rf"(?i:days?){_END}"),
    # ratios and relative changes (checked further in Python: what follows decides)
    ("ratio", r"[×✕✖]"),
    ("x", rf"(?<=\d)x{_END}|(?<=\d)X(?={_SP}?(?i:faster|slower|quicker|speedup|speed-up|slowdown){_END})"),
    ("xcap", r"(?<=\d)X(?=[.,;)]|$)"),
    ("xsp", rf"(?<={_SP})x(?={_SP}+(?i:faster|slower|quicker|speedup|speed-up|slowdown){_END})"),
    ("times", rf"(?i:times)(?={_SP}+(?i:faster|slower|quicker|as{_SP}|more|less|longer|shorter|higher|lower)|[.;)]|$)"),
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
    "h": "h",
    "d": "d",
    "persec": "/s",
    "fps": "fps",
    "bw": "B/s",
    "flops": "FLOPS",
    "ratio": "×",
    "x": "×",
    "xsp": "×",
    "xcap": "×",
    "times": "×",
    "pct": "%",
}

_PM = rf"{_SP}?(?:±|\+/-|\+-){_SP}?"
_RANGE = (
    rf"(?:{_SP}?[~～〜–—‒-]{_SP}?|{_SP}(?:to|and|through){_SP}|{_SP}?(?:에서|부터){_SP}?"
    rf"|{_SP}?(?:→|->|⇒){_SP}?)"  # a before → after pair whose unit is written once: 155 → 732 chars/초
)

# What may follow a number that starts a claim (a cheap test that turns most numbers away before the units are
# tried): not a digit, not punctuation that ends it, not a capital that cannot start a unit (`27B`, `8 GB`).
_NEXT = r"(?=[ \t\u00a0\u2009\u202f]{0,2}[^ \t\n\u00a0\u2009\u202f0-9A-EH-JLN-QU-WYZ.,:;)\]|/(\"'])"

_CLAIM = re.compile(
    rf"(?P<n1>{_NUM_FIRST}){_NEXT}"
    rf"(?:"
    rf"(?P<pm>{_PM})(?P<n2>{_NUM})(?:{_SP}?(?:{_UNIT_ALT.replace('(?P<u', '(?P<p')}))?"
    rf"|"
    rf"(?:{_RANGE}(?P<n3>{_NUM}))?(?P<sp>\+?(?:\*\*|__)?{_SP}{{0,2}}|-(?=(?i:second|minute|millisecond|hour)))"
    rf"(?:{_UNIT_ALT})"
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
_RELATIVE = frozenset({"x", "xcap", "xsp", "times", "pct", "ratio"})  # what surrounds the number decides
_DURATIONS = frozenset({"s", "ms", "min", "us", "h", "d"})
_SPAN_KINDS = frozenset({"rate", "req", "persec", "mstok", "stok", "bw", "flops", "fps"})

Candidate = tuple[int, int, str, str, str]  # start, end, value, unit, kind ("claim" or "target")


# Where a claim can be: one cheap pattern whose matches hold every line on which _CLAIM or an extra pattern (but
# _LABEL_UNIT, whose match may span lines: it is always searched in the whole text) can match. A claim's number is
# a whole run of digits, commas and dots (_NEXT keeps any of them from following the first number; the second
# number of a range is followed by a unit) that ends in a digit and starts at one that does not follow a letter,
# digit or one of `_.:#@$\\` (_NUM_FIRST; the second number of a range follows its separator). It is followed by an
# optional `+`, `**` or `__`, up to two spaces and the start of a unit: the first two characters of one of _UNITS,
# case-insensitively (a few longer for `tokens`, which prose often counts), a sign or a syllable; or by a `±`
# spread, or by `-second`. The extra patterns need a digit before `pp`/`tg` (`8000pp`), or `초당`, or `pp`, `tg`,
# `x` or `×` before a digit (`pp512 560`, `x2.88`: found with str.find, as these letters are too common to start a
# regular expression's search at each of them). A line without any of these cannot hold a claim, so the full
# patterns only run over the lines that have one (tests/test_lint_prefilter.py shows the findings are the same
# with and without it).
_UNIT_START = (
    rf"(?i:ch|d[oa]|f[ipl]|g[ibf]|h[or]|i[tm]|k[ib]|li|m[sib0-9]|op|p[paf]|q[up]|r[eop]|s[eat]|us|wo|x[fsq]"
    rf"|t[kgpibf]|top|to(?:k(?:en)?s?)?(?:{_SP}?/|{_SP}[pam]))"
    rf"|(?i:t){_SP}?/|(?i:[sx])(?![A-Za-z0-9])|[µμ%×✕✖토마밀초분시배]"
)
_PREFILTER = re.compile(
    # Every match starts with a digit, and the pattern with `\d` (not with an alternation), so that `re` skips to
    # the next digit in C instead of trying the pattern at every character (twice as fast); `초당` is found with
    # str.find (_PREFILTER_LITERALS).
    rf"\d(?:"
    # the run of the number; (?![\d,.]) makes a shorter run fail at once instead of trying every unit again
    rf"(?<![A-Za-z0-9_.:#@$\\]\d)[\d,.]*(?<=\d)(?![\d,.])"
    rf"(?:\+?(?:\*\*|__)?{_SP}{{0,2}}(?=(?i:[cdfghiklmopqrstuwx])|[µμ%×✕✖토마밀초분시배])(?:{_UNIT_START})"
    rf"|{_SP}?(?:±|\+/-|\+-)|-(?i:[smh]))"
    r"|pp|tg)"
)
_PREFILTER_BEFORE_DIGIT = ("pp", "tg", "x", "×")
_PREFILTER_LITERALS = ("초당",)


def _windows(text: str) -> list[tuple[int, int]]:
    """Runs of consecutive lines that may hold a claim, as (start of the first line, end of the last line: the
    offset of its newline, or the end of the text)."""
    n = len(text)
    find = text.find
    lines: dict[int, int] = {}  # start of a line -> its end
    search = _PREFILTER.search
    pos = 0
    while (m := search(text, pos)) is not None:
        start = m.start()
        lo = text.rfind("\n", 0, start) + 1
        hi = find("\n", start)
        if hi == -1:
            hi = n
        lines[lo] = hi
        pos = hi + 1
    for lit in _PREFILTER_LITERALS:
        i = find(lit)
        while i != -1:
            lo = text.rfind("\n", 0, i) + 1
            hi = find("\n", i)
            if hi == -1:
                hi = n
            lines[lo] = hi
            i = find(lit, hi + 1)
    digit = _DIGIT.match
    for lit in _PREFILTER_BEFORE_DIGIT:
        i = find(lit)
        while i != -1:
            after = i + len(lit)
            if digit(text, after):
                lo = text.rfind("\n", 0, i) + 1
                hi = find("\n", i)
                if hi == -1:
                    hi = n
                lines[lo] = hi
                i = find(lit, hi + 1)
            else:
                i = find(lit, after)
    out: list[tuple[int, int]] = []
    for lo in sorted(lines):
        hi = lines[lo]
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


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
        return [(rx, None if rx is _LABEL_UNIT else windows) for rx, hint in _EXTRA if hint in text]
    runs: list[tuple[re.Pattern[str], list[tuple[int, int]] | None]] = []
    folded: list[str] | None = None
    for rx, hints in _extra_hints().items():
        if not any(hint in text for hint in hints):
            continue
        if rx is _LABEL_UNIT or windows is None:
            runs.append((rx, None if rx is _LABEL_UNIT else windows))
            continue
        if folded is None:  # a match holds no newline: its literals are in its window
            folded = [literals.fold(text[lo:hi]) for lo, hi in windows]
        screen = _EXTRA_SCREENS[rx]
        runs.append((rx, [w for w, f in zip(windows, folded, strict=True) if screen.may_match_all(f)]))
    return runs


_EXTRA_SCREENS: dict[re.Pattern[str], literals.Screen] = {}


def _extra_hints() -> dict[re.Pattern[str], tuple[str, ...]]:
    """Each extra pattern once, with its hints; their pre-tests in _EXTRA_SCREENS (worked out on first use)."""
    hints: dict[re.Pattern[str], tuple[str, ...]] = {}
    for rx, hint in _EXTRA:
        hints[rx] = (*hints.get(rx, ()), hint)
    if not _EXTRA_SCREENS:
        _EXTRA_SCREENS.update({rx: literals.screen(rx) for rx in hints})
    return hints


def _candidates(
    text: str,
    skipped: Callable[[int, int], bool] = lambda a, b: False,
    windows: list[tuple[int, int]] | None = None,
) -> list[Candidate]:
    """(start, end, value, unit, kind) of every claim and target in `text` outside the `skipped` regions; with
    `windows` (from _windows), the patterns are only run there."""
    out: list[Candidate] = []
    append = out.append
    ctx = _Context(text)
    for m in _finditer(_CLAIM, text, windows):
        start = m.start()
        if skipped(start, m.end()):
            continue
        group = m.lastgroup or ""
        kind = _KIND.get(group)
        if group[0] == "p" or group == "n2":  # a ± spread, with or without a unit
            n2_end = m.end("n2")
            value = text[start:n2_end]
            if kind is None or kind in _RELATIVE:
                append((start, n2_end, value, "", ctx.spread_kind(start, n2_end)))
                continue
            end = m.end()
            append((start, end, value, _NORMAL[kind], ctx.spread_kind(start, end)))
            continue
        if kind is None:  # pragma: no cover - the pattern always ends with a unit here
            continue
        u_start = m.start(group)
        end = m.end()
        n3_end = m.end("n3")
        num_end = n3_end if n3_end >= 0 else m.end("n1")
        if num_end == u_start and n3_end < 0 and kind in ("s", "x", "xcap", "h"):
            digits = m.group("n1")
            if digits.isdigit() and (len(digits) >= 4 or (kind == "s" and int(digits) in _HTTP_CODES)):
                continue  # `RTX 2080s`, `3700x`, `the 401s`
            if kind == "s" and digits.isdigit() and _PRODUCT_BEFORE.search(text, max(0, start - 20), start):
                continue  # `Vega 10s`, `Radeon 7s`: a product's name in the plural
        if _NAME_AFTER.match(text, end):
            continue  # `-5s-Diffusers`: part of a name
        verdict = ctx.classify(start, u_start, end, kind)
        if verdict is None:
            continue
        end, what = verdict
        append((start, end, text[start:num_end], _NORMAL[kind], what))
    for rx, rx_windows in _extra_runs(text, windows):
        for m in _finditer(rx, text, rx_windows):
            if skipped(m.start(), m.end()):
                continue
            found = ctx.extra(m)
            if found is not None:
                out.append(found)
    out.sort()
    # keep the first of overlapping claims (`초당 28 토큰/초` is found twice)
    kept: list[Candidate] = []
    for c in out:
        if kept and c[0] < kept[-1][1]:
            continue
        kept.append(c)
    return ctx.rows(kept)


# ---------------------------------------------------------------------------------------------------------------
# Telling claims from targets, settings and numbers that are not performance (the policy in the module docstring)

_B = r"(?<![A-Za-z])"  # an English word starts here
_E = r"(?![A-Za-z])"  # and ends here

# Where a clause ends: a table cell, a sentence, a list of items (a comma), a dash between statements.
_CLAUSE_STOP = re.compile(r"\||[.!?](?:\s|$)|[;,，。]|\s[—–]\s|\n")
# Performance nouns and verbs: a ratio or a percentage near one of these is a speed-up or slow-down.
_PERF = (
    rf"{_B}(?i:speed(?:s|ed)?(?:[- ]?up)?|fast(?:er|est)?|slow(?:er|ed|s)?|quick(?:er)?|perf(?:ormance)?|"
    rf"throughput|latency|latencies|ttft|ttfb|tpot|itl|inference|decod\w*|prefill\w*|pp|tg|"
    rf"token[- ]generation|generation|prompt processing|runtime|run time|wall[- ]clock|duration|delay|"
    rf"build(?:s|ing)?|compil\w*|execution|response|load(?:ing)? time|startup|start-up|accelerat\w*|"
    rf"time|times|it/s|t/s|tok/s|tokens/s|tps|rps|outperform\w*|surpass\w*){_E}"
    r"|속도|성능|처리량|처리 속도|응답|지연|레이턴시|추론|빌드|컴파일|로딩|로드|실행|변환|번역|처리|가속|"
    r"시간|빠르|빨라|빠름|빠른|빨리|느리|느려|느림|느린|늦|프리필|디코딩|디코드|첫 토큰|토큰 생성|첫 음성|"
    r"TTFT|TPS|RPS|FPS|fps|CPS"
)
# Nouns that make a ratio or percentage something other than speed: memory, size, cost, quality, counts.
_NONPERF = (
    rf"{_B}(?i:memory|vram|ram|size|sizes|smaller|larger|bigger|fewer|compress\w*|batch|weights?|cost|costs|"
    rf"cheaper|price|energy|power|accuracy|quality|params|parameters|resolution|disk|storage|co2|emissions|"
    rf"sparsity|data|share|utili[sz]ation|coverage|errors?|bugs?|lines|lexemes|heads|more tokens|calibration|"
    rf"activation|zoom|scale|dimensions?|success|hz|khz){_E}"
    r"|메모리|크기|용량|공간|비용|저렴|싸|에너지|전력|정확도|품질|만족도|에러|오류|버그|커버리지|번들|요청 수|"
    r"(?:Onboarding|온보딩|개발|설정|작업|수동|검토|리뷰)\s?시간|시간 절약|비중|성능\s?유지|"
    r"코드|라인|줄|보안|부하|사용량|절약|가능성|I/O|네트워크 요청|"
    r"이용률|사용률|점유율|가동률|할인|세금|이미지 크기|압축|tolerance|완화|정밀도|재현율|승률|정확|유지|"
    r"호출|필요|증가로|완료|진행률"
)
_CHANGE = (
    rf"{_B}(?i:faster|slower|quicker|speed-?ups?|slow-?downs?|uplift|gain|gains|boost|improv\w*|increase[sd]?|"
    rf"decrease[sd]?|reduc\w*|drop\w*|regress\w*|cut|cuts|higher|lower|better|worse|savings?|difference|"
    rf"accelerat\w*|outperform\w*|less|more|speeds? up|sped up){_E}"
    r"|향상|개선|단축|감소|증가|저하|하락|절감|빨라|빠르|빠름|빠른|느려|느리|느림|느린|가속|줄|↑|↓|⬆|⬇|영향|차이"
)
_LEX = re.compile(rf"(?P<nonperf>{_NONPERF})|(?P<perf>{_PERF})")
_CHANGE_RX = re.compile(_CHANGE)
# A comparative right after a ratio or percentage makes it a speed-up or slow-down on its own.
_COMP_AFTER = re.compile(
    rf"(?:\*\*|__|\)|{_SP})*(?:나|가|이|는|의|로|만큼)?{_SP}?(?:(?:더|빠른|높은){_SP}?)?"
    rf"(?:(?i:faster|slower|quicker|speed-?ups?|slow-?downs?|accelerations?){_E}"
    r"|빠[르른름]|빨[라랐리]|느[리려렸림린]|늦|↑|⬆|가속|⚡)"
)
_RATIO_CHANGE_AFTER = re.compile(
    rf"(?:\*\*|__|{_SP})*(?:의{_SP}?)?(?:향상|개선|단축|(?i:improvement|gain|boost|uplift|acceleration){_E})"
)
_CONJUNCTION = re.compile(rf"{_SP}(?i:and|but|while|whereas|with){_SP}|하고{_SP}|하며{_SP}|고{_SP}|며{_SP}")
_BY_BEFORE = re.compile(rf"{_B}(?i:by|from){_SP}*(?:(?i:up to|about|around|nearly|as much as|over)|~)?{_SP}*$")
_NUMBER_UNIT = re.compile(r"\d[\d.,]*\s?(?:%|[A-Za-z/µ]+|[초분배]|시간)?")


def _last(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of `rx` in `text`, or None."""
    found = None
    for found in rx.finditer(text):  # noqa: B007 - the loop keeps the last one
        pass
    return found


def _after_last_number(before: str) -> str:
    """The words before a number back to the previous number (which has words of its own)."""
    last = _last(_NUMBER_UNIT, before)
    return before[last.end() :] if last is not None else before


# A measured time or rate somewhere on the line (a percentage change with no noun then speaks of it).
_TIMED = re.compile(r"\d\s?(?:ms|s|sec|seconds|초|분|tok/s|t/s|tokens/s)(?![A-Za-z])")
_SIGN_BEFORE = re.compile(r"[+−-]\s?$")
# A bound written before the number: `< 200ms`, `≤ 800ms`, `under 50 ms`.
_BOUND_BEFORE = re.compile(rf"(?:[<>≤≥]=?|(?i:under|below|within|at most|no more than|less than)){_SP}*$")
_BOUND_AFTER = re.compile(rf"(?:\*\*|__)?{_SP}*(?:이하|미만|이내|안에|내\b|이상)")
# Targets, limits and requirements: a number in such a clause is not a measurement.
_TARGET_WORDS = re.compile(
    rf"{_B}(?i:targets?|goals?|slos?|slas?|budgets?|requirements?|required|thresholds?|criteria|"
    rf"suggested|recommended|aim(?:ing)?|exceed(?:s|ed|ing)?|should|must){_E}"
    r"|목표|요구|기준치|한도|권장|해야|하도록|유지|SLO|SLA"
)
_ACHIEVED = re.compile(r"✅|☑|✔|\[[xX]\]|달성|(?i:achieved|measured)")
_LABEL = re.compile(r"^\s*(?:[-*+>]\s+)?([^:|\d]{1,24}):")
_UPPER_BEFORE = re.compile(rf"(?:<|≤|<=){_SP}*$")
_UPPER_AFTER = re.compile(rf"(?:\*\*|__)?{_SP}*(?:이하|미만|이내|안에|내\b)")


def _declarative(after: str) -> bool:
    """Whether a Korean clause ends in the plain present declarative (`끝난다`, `돌아온다`, `걸린다`): a statement
    of fact about the system, not a limit it must keep (`이하다`, `이하로 유지해야 한다` are caught before)."""
    m = re.search(r"([\uac00-\ud7a3])다(?:[.!]|\s*$)", after)
    if m is None:
        return False
    syllable = ord(m.group(1)) - 0xAC00
    return syllable % 28 == 4 or m.group(1) == "는"  # a final ㄴ (`난`, `온`, `린`), or `-는다`


_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_CAPABLE = re.compile(r"수 있|했|됐|였|왔|(?i:took|was|were|ran|got){_E}".replace("{_E}", _E))
# `keep ITL under 50 ms`, `to keep it below 2 s`: an instruction or an aim (`latency stays under 1 s` is a fact)
_KEEP = re.compile(rf"(?:^|[:*-]|{_B}(?i:to|must|should|please|and|we|you)){_SP}*(?i:keep){_E}")
_UNCHECKED = re.compile(r"(?m)^\s*(?:[-*+]\s+|\d+[.)]\s+)?\[ \]")
_RUBRIC = re.compile(
    rf"{_B}(?i:good|poor|excellent|acceptable|painful|great|fair|bad|okay|needs improvement|usable|unusable){_E}"
)
# A duration that is a setting rather than a measurement (besides the existing _SETTING_BEFORE/_SETTING_AFTER).
_SETTING_WORDS = re.compile(
    rf"{_B}(?i:time-?outs?|timeoutseconds|sleeps?|intervals?|keep[-_ ]?alive|ttl|expir\w*|evict\w*|unload\w*|"
    rf"heartbeat|debounce|throttle|animation|transition|easing|polling|poll|backoff|back-off|cron|schedule\w*|"
    rf"retention|cache for){_E}"
    r"|타임아웃|주기|간격|재시도|만료|보관|애니메이션|자동 닫힘|지속 시간|대기|하트비트|스크래핑|백오프|"
    r"재연결|지연 삭제|스케줄|동안 보관|설정:|\*\*설정\*\*"
)
_SETTING_NOUN_AFTER = re.compile(
    rf"^(?:\*\*)?{_SP}*\S*{_SP}?(?:타임아웃|만료|간격|주기|대기|닫힘|(?i:time-?out|interval|ttl|expiry|keep-?alive){_E})"
    r"|\((?:[a-z]+[A-Z]\w*)?(?:Duration|Timeout|Interval|Delay|TTL)\)"
)
_PER_ITEM_AFTER = re.compile(
    rf"{_SP}*(?i:between|per|each|/){_SP}*(?:(?i:each|two|consecutive|successive){_SP}+)?"
    rf"(?i:tokens?|chunks?|steps?|frames?|requests?|iterations?|batch(?:es)?|words?){_E}"
)
_SETTING_LABEL = re.compile(  # `duration: 600초`, a configuration key naming a duration
    r"(?m)^\s*(?:[-*+]\s+)?[a-z_]*(?:duration|timeout|interval|ttl|delay|wait|period|expir\w*)[a-z_]*\s*[:=]\s"
)
# `jitterBufferTarget: 150ms`, `keep_alive=5m`: an identifier (camelCase or snake_case) set to the number
_KEY_BEFORE = re.compile(r"(?:[a-z]+[A-Z][A-Za-z]*|[a-z]+_[a-z_]+)\s*[:=]\s*$")
_TEST_LENGTH_AFTER = re.compile(rf"(?:\*\*)?{_SP}?(?:간{_SP}|테스트|벤치마크|(?i:tests?|benchmarks?|runs?){_E})")
_QUOTED = re.compile(r"[\"'“‘]$")
# Lengths of media: `a 5 second video`, `6 seconds of video`, `2~4초 분량의`, `13 minutes of audio`.
_MEDIA_AFTER = re.compile(
    rf"(?:\*\*|__|\]\([^)]*\)|{_SP}|\([^)]{{0,20}}\))*(?:(?:of|in){_SP}+)?(?:(?:long|stereo|high-res\w*|HD){_SP}+)?"
    rf"(?i:videos?|audio|clips?|songs?|speech|recordings?|footage|music|movies?|length|long{_SP}+(?:video|audio)){_E}"
    r"|(?:\*\*)?\s?(?:분량|오디오|음성|비디오|영상|동영상|녹음|데이터|의 데이터|의 저잡음|가량의|연속 음성)"
)
_MEDIA_BEFORE = re.compile(
    rf"(?i:audio|video|videos|clip|speech|silence|recording|오디오|음성|비디오|영상)[^.;|]{{0,30}}"
    rf"(?:\([^)]{{0,30}}|(?i:longer than|shorter than|up to){_SP}*|최대{_SP}?)$"
    rf"|(?i:variable-length){_SP}?\((?i:up to){_SP}*$"
)
_READ_AFTER = re.compile(rf"{_SP}*(?i:read|reading){_E}")
# Time spent by people, not by a system: workshops, study plans, set-up steps (minutes and hours only).
_HUMAN = re.compile(
    rf"{_B}(?i:workshops?|sessions?|lessons?|courses?|tutorials?|exercises?|hands-on|break|level|difficulty|"
    rf"study|agenda|read){_E}"
    r"|세션|실습|휴식|워크숍|강의|과정|학습 경로|난이도|소요 시간|예상 시간|과제|프로젝트|모듈|설정 완료|시작하기|"
    r"하세요|해 보세요|하십시오|작업 시간|마이그레이션 작업|수동|Q&A|읽기|회의|일정|수업|교육|커피|끝장|⏱️|"
    r"완료 처리|접속|시간 배분|강의 일정|총 예상|추천|권장하는|에피소드|성공한 사람|트레이닝 세트|데이터로|튜토리얼"
)
# Work done by a system, which makes hours a measurement: `training takes 2 hours`, `2시간이 소요`.
_WORK = re.compile(
    rf"{_B}(?i:takes?|took|taking|lasts?|lasted|runs?|ran|trained|training|execution|export|build|inference|"
    rf"finish(?:es|ed)?|completes?|completed|needs?|requires?|processing){_E}"
    r"|소요|걸리|걸린|걸려|걸림|학습|훈련|빌드|추론|실행|생성|변환|처리"
)
_DELAY_AFTER = re.compile(
    rf"{_SP}*(?:후|뒤)에?{_SP}*(?:한{_SP}?번{_SP}?더|다시|재시도|재실행|재전송)|{_SP}*(?i:later|after that){_E}"
)
_NOT_MEASURED_AFTER = re.compile(rf"(?:\*\*)?{_SP}*(?:단위|(?i:resolution|granularity|window){_E})")
_WINDOW_BEFORE = re.compile(rf"(?:{_B}(?i:last|past|previous|next|over the)|최근|지난){_SP}+$")
_IDENT_BEFORE = re.compile(r"[a-z]+-[a-z]+-$")
_CONDITION_AFTER = re.compile(
    rf"(?:\*\*)?{_SP}?(?:을|를|이|가)?{_SP}?(?:이상|초과|이하|미만)?{_SP}?"
    rf"(?:넘으면|넘는|넘어가는|넘을|이상이면|초과 시|초과하면|걸리면|걸리는{_SP}\S+(?:은|는)|[^|.,]{{0,12}}(?:경우|없어도|없으면|않으면))"
)
_QUOTA_AFTER = re.compile(rf"에{_SP}?\d+{_SP}?(?:회|번|건)")
_PAREN_ESTIMATE = re.compile(r"\)\s*$|\)\s*[|*]")
_SYSTEM_WORK = re.compile(
    r"빌드|컴파일|테스트 실행|추론|학습|훈련|변환|번역|다운로드|로딩|(?i:build|compile|inference|training)"
)
_ELAPSED_AFTER = re.compile(
    rf"(?:\*\*)?{_SP}*(?:경과|실행 중|남음|동안 Critical|(?i:elapsed|ago|left|remaining|uptime){_E})"
)
_ELAPSED_LINE = re.compile(r"진행:|남은 시간|(?i:uptime)|\bUp \d|\d{1,2}:\d{2}\s*→")
_HYPOTHETICAL = re.compile(
    rf"{_B}(?i:would|suppose|imagine|hypothetical\w*|for instance|if the system){_E}|라도|라면|다면|쏟아진다면"
)
# `"응답 시간이 2초로 증가했다"처럼`: a quoted example of what one could say
_QUOTE_OPEN = re.compile(r"[\"“][^\"”]*$")
_QUOTE_EXAMPLE = re.compile(rf"^[^\"”]*[\"”]{_SP}?(?:처럼|같은|같이|과{_SP}같|와{_SP}같|(?i:like|such as){_E})")
# `Vega 10s`: a capitalised word (not the first of the line) before a number in the plural is a product name.
_PRODUCT_BEFORE = re.compile(rf"(?<=[^\s\n|>*#-])[ \t]+[A-Z][a-z]+{_SP}$")
_NAME_AFTER = re.compile(r"-[A-Za-z]")
# Numbers whose unit is written elsewhere:
# `8000pp / 400tg t/s`: llama-bench test names glued to their numbers, the rate after the last.
_PPTG = re.compile(rf"(?<![\w.])(?P<n1>{_NUM})(?:pp|tg)(?:{_SP}?/{_SP}?{_NUM}(?:pp|tg))*{_SP}?(?i:t/s|tok/s|tokens/s)")
# `pp512 560 -> 180`: a test name, then its rate(s) without a unit.
_TEST_THEN_NUMBER = re.compile(rf"(?<![\w])(?:pp|tg)\d+{_SP}+(?P<n1>{_NUM})(?:{_SP}*(?:->|→){_SP}*{_NUM})?(?![\w.%/])")
# `Benchmark duration (s): 19.08`, `Request throughput (req/s): 46.13`: the unit in a label before a colon.
_LABEL_UNIT = re.compile(
    r"\((?:s|ms|sec|secs|seconds|ms/tok|tok/s|tokens/s|t/s|req/s|requests/s)\)\s*:?\s*(?P<n1>\d+(?:,\d{3})*(?:\.\d+)?)"
    r"(?![\w.])"
)
# `x2.88`: a ratio written with the sign first.
_PREFIX_X = re.compile(r"(?<![\w.])[x×](?P<n1>\d+\.\d+)(?![\w.])")
_EXTRA = (
    (_PER_SECOND, "초당"),
    (_PPTG, "/s"),
    (_TEST_THEN_NUMBER, "p"),
    (_TEST_THEN_NUMBER, "tg"),
    (_LABEL_UNIT, ")"),
    (_PREFIX_X, "x"),
    (_PREFIX_X, "×"),
)
_CELL_NUMBER = re.compile(
    rf"^(?:\*\*|__|~|≈|약|{_SP})*[+−-]?(?:\*\*)?[x×]?{_NUM}(?:{_SP}?[~–-]{_SP}?{_NUM})?{_SP}?[%×xX배]?(?:\*\*|__|{_SP})*"
    rf"(?:\(.*\))?(?:{_SP}|⬇️|⬆️|↓|↑|⚡|✅)*$"
)
_TIME_UNITS = frozenset({"s", "ms", "min", "us", "h", "tok/s", "req/s", "/s", "ms/tok", "s/tok", "fps"})


_NEWLINE = re.compile("\n")
_LINE_FLAGS = {
    "unchecked": _UNCHECKED,
    "achieved": _ACHIEVED,
    "rubric": _RUBRIC,
    "hangul": _HANGUL,
    "video": re.compile(r"(?i:video|frames|export|frame_rate|hz|비디오|영상)"),
    "elapsed": _ELAPSED_LINE,
    "human": _HUMAN,
    "system_work": _SYSTEM_WORK,
    "setting_label": _SETTING_LABEL,
    "timed": _TIMED,
    "target_words": _TARGET_WORDS,
    "hypothetical": re.compile(rf"{_HYPOTHETICAL.pattern}|[\"“]"),
    "media": re.compile(
        r"(?i:video|audio|clip|song|speech|recording|footage|music|movie|length|silence)|분량|오디오|음성|비디오|영상|녹음|데이터"
    ),
    "setting_words": re.compile(rf"{_SETTING_WORDS.pattern}|\(|(?i:time-?out|interval|ttl|expiry|keep-?alive)"),
}
_REACH = 300  # how far around a number its line is read
_SCREENS: dict[str, literals.Screen] = {}


def _line_screens() -> dict[str, literals.Screen]:
    """The literal pre-tests of the line flags' patterns, worked out on first use."""
    if not _SCREENS:
        _SCREENS.update({name: literals.screen(rx) for name, rx in _LINE_FLAGS.items()})
    return _SCREENS


class _Context:
    """What surrounds a number in one document: its line, its clause, and the words there."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._newlines: list[int] | None = None
        # literals.ENABLED False: every shortcut below is off (the reference they are tested against)
        self._fast = literals.ENABLED
        self._screens = _line_screens() if self._fast else None
        # the line last asked about (numbers are read in order, so most questions are about the same line): its
        # start and end, its flags and its folded text
        self._lo = 0
        self._hi = -1
        self._flags: dict[str, bool] = {}
        self._folded: str | None = None
        self._clauses: dict[tuple[int, int], str] = {}

    def _bounds(self, pos: int) -> tuple[int, int]:
        """The whole line holding `pos`: its start, and its end (the offset of its newline or of the text's end)."""
        if self._lo <= pos <= self._hi and self._fast:
            return self._lo, self._hi
        if self._newlines is None:
            self._newlines = [m.start() for m in _NEWLINE.finditer(self.text)]
        nl = self._newlines
        i = bisect_right(nl, pos - 1)
        lo = nl[i - 1] + 1 if i > 0 else 0
        hi = nl[i] if i < len(nl) else len(self.text)
        self._lo, self._hi, self._flags, self._folded = lo, hi, {}, None
        return lo, hi

    def _line(self, pos: int) -> tuple[int, int]:
        """The line around `pos`, cut to _REACH characters either side (a very long line costs no more)."""
        lo, hi = self._bounds(pos)
        return max(lo, pos - _REACH), min(hi, pos + _REACH)

    def _flag(self, pos: int, name: str) -> bool:
        """A property of the whole line holding `pos`, worked out once per line and only when asked."""
        lo, hi = self._bounds(pos)
        value = self._flags.get(name)
        if value is None:
            flags = self._flags
            if self._screens is not None and not self._may_match(lo, hi, name):
                value = flags[name] = False  # the line holds none of the literals every match holds
            else:
                value = flags[name] = _LINE_FLAGS[name].search(self.text, lo, hi) is not None
        return value

    def _may_match(self, lo: int, hi: int, name: str) -> bool:
        """The pre-test of a line flag's pattern (factreg.docs.literals) on the line from `lo` to `hi`."""
        assert self._screens is not None
        screen = self._screens[name]
        if screen.needs is None:
            return True
        folded = self._folded
        if folded is None:
            folded = self._folded = literals.fold(self.text[lo:hi])
        return screen.may_match(folded)

    def _before(self, start: int, limit: int = 60) -> str:
        """The clause before a number: back to the previous cell, sentence or list item, at most `limit` chars."""
        key = (start, -limit)
        found = self._clauses.get(key) if self._fast else None
        if found is not None:
            return found
        lo = max(self._line(start)[0], start - limit)
        chunk = self.text[lo:start]
        cut = 0
        for m in _CLAUSE_STOP.finditer(chunk):
            if m.end() < len(chunk) or m.group() in ("|", ","):
                cut = m.end()
        found = self._clauses[key] = chunk[cut:]
        return found

    def _after(self, end: int, limit: int = 40) -> str:
        key = (end, limit)
        found = self._clauses.get(key) if self._fast else None
        if found is not None:
            return found
        hi = min(self._line(end)[1], end + limit)
        chunk = self.text[end:hi]
        m = _CLAUSE_STOP.search(chunk)
        found = self._clauses[key] = chunk[: m.start()] if m else chunk
        return found

    def _line_text(self, pos: int) -> str:
        lo, hi = self._line(pos)
        return self.text[lo:hi]

    # --- targets ---------------------------------------------------------------------------------------------

    def _target(self, start: int, end: int) -> bool:
        """Whether a number is a target, limit, threshold or requirement rather than a measurement."""
        if self._flag(start, "unchecked"):
            return True
        before = self._before(start, 40)
        after = self._after(end, 30).split("(", 1)[0]  # a parenthesis after the number speaks of another
        achieved = self._flag(start, "achieved")
        words = self._flag(start, "target_words")
        if words and _TARGET_WORDS.search(before[-16:]):
            return True  # `(목표: 2s 이하)`, `target is 500ms`, `Targets: P95 … ≤ 800ms`
        if words and not achieved:
            if _TARGET_WORDS.search(before) or _TARGET_WORDS.search(after):
                return True
            lo = self.text.rfind("\n", max(0, start - _REACH), start) + 1
            label = _LABEL.match(self.text, lo, start)
            if label and _TARGET_WORDS.search(label.group(1)) and label.end() <= start:
                return True  # `**성능 목표**: … (예: 300초 -> 100초 미만)`, `Targets: …, 200 RPS sustained`
        bound = _BOUND_BEFORE.search(before) is not None or _BOUND_AFTER.match(self.text, end) is not None
        if self._flag(start, "rubric") and (
            bound or re.search(r"^\s*[A-Za-z ]+:\s*$", before) or _RUBRIC.match(after.strip())
        ):
            return True  # `Good: < 600ms`, `>50 tok/s Excellent`, `Needs improvement: 600-1000ms`
        if bound and _KEEP.search(before):
            return True  # `keep ITL under 50 ms`
        if bound and not achieved:
            return self._bound_is_target(start, end)
        return False

    def _bound_is_target(self, start: int, end: int) -> bool:
        """A bound (`< 200ms`, `500ms 이하`) with nothing saying it was reached: in Korean notes, a limit."""
        if not self._flag(start, "hangul"):
            return False
        upper = _UPPER_BEFORE.search(self.text, max(0, start - 4), start) or _UPPER_AFTER.match(self.text, end)
        after = self._after(end, 40)
        return upper is not None and _CAPABLE.search(after) is None and not _declarative(after)

    # --- kinds of numbers ------------------------------------------------------------------------------------

    def spread_kind(self, start: int, end: int) -> str:
        return "target" if self._target(start, end) else "claim"

    def classify(self, start: int, u_start: int, end: int, kind: str) -> tuple[int, str] | None:
        """(end, "claim" or "target") for a number with a unit, or None when it is neither."""
        if kind in _RELATIVE:
            new_end = self._relative(start, u_start, end, kind)
            if new_end is None:
                return None
            return new_end, ("target" if self._target(start, new_end) else "claim")
        if kind in _DURATIONS:
            return self._duration(start, u_start, end, kind)
        if kind == "fps" and self._flag(start, "video"):
            return None  # the frame rate of a video, not the speed of a system
        if self._hypothetical(start):
            return None
        return end, ("target" if self._target(start, end) else "claim")

    def _hypothetical(self, start: int) -> bool:
        """Whether the sentence holding a number is hypothetical (`would`, `for instance`, `~라면`)."""
        if not self._flag(start, "hypothetical"):
            return False
        lo, hi = self._line(start)
        seg = self.text[max(lo, start - 200) : start]
        stop = max(seg.rfind(". "), seg.rfind("? "), seg.rfind("! "))
        tail = self.text[start : min(hi, start + 120)]
        m = re.search(r"[.?!](?:\s|$)", tail)
        if _QUOTE_OPEN.search(seg) and _QUOTE_EXAMPLE.search(tail):
            return True
        return _HYPOTHETICAL.search(seg[stop + 1 :] + tail[: m.start() if m else len(tail)]) is not None

    def _duration(self, start: int, u_start: int, end: int, kind: str) -> tuple[int, str] | None:
        text = self.text
        ch = text[u_start]
        before = text[max(0, start - 16) : start]
        if ch == "분" and _CLOCK_HOUR_BEFORE.search(before):
            return None  # 새벽 2시 30분: a clock time
        if ch == "초" and _CLOCK_SECOND_BEFORE.search(text, max(0, start - 16), start):
            return None  # 오전 2시 30분 10초: a clock time
        if kind in ("min", "h", "d") and _MINUTE_SCHEDULE_AFTER.match(text, end):
            return None  # 10분 후, 5 minutes ago: a schedule, not a duration that was measured
        if _DELAY_AFTER.match(text, end):
            return end, "target"  # `500ms 후 한 번 더`: a delay before doing something again
        if _NOT_MEASURED_AFTER.match(text, end) or _WINDOW_BEFORE.search(text, max(0, start - 12), start):
            return None  # `1초 단위로`: a resolution; `Last 5 minutes`: a window of time
        if _IDENT_BEFORE.search(text, max(0, start - 30), start):
            return None  # `high-load-5min`: part of a name
        if _CONDITION_AFTER.match(text, end) or _QUOTA_AFTER.match(text, end):
            return end, "target"  # `2초 넘으면`, `5초 이상 … 경우`, `15분에 5회`: a threshold or a quota
        if _ELAPSED_AFTER.match(text, end) or self._flag(start, "elapsed"):
            return None  # uptime, progress, elapsed time in a timeline
        if self._flag(start, "media") and (
            _MEDIA_AFTER.match(text, end) or _MEDIA_BEFORE.search(self._before(start, 60))
        ):
            return None  # the length of a video or a recording
        if kind == "min" and _READ_AFTER.match(text, end):
            return None  # `6 min read`
        if kind in ("min", "h", "d") and self._flag(start, "human"):
            return None  # time spent by people
        if (
            kind in ("min", "h")
            and _PAREN_ESTIMATE.match(text, end)
            and "(" in text[max(0, start - 6) : start]
            and not self._flag(start, "system_work")
        ):
            return None  # `확인으로 시작 (5분)`: how long a step takes a person
        if kind in ("h", "d"):
            clause = self._before(start, 60) + text[start:end] + self._after(end, 30)
            if not _WORK.search(clause):
                return None  # hours without work done by a system: schedules, plans, data sets
        if self._hypothetical(start):
            return None
        if self._setting(start, end):
            return end, "target"
        return end, ("target" if self._target(start, end) else "claim")

    def _setting(self, start: int, end: int) -> bool:
        text = self.text
        if _PER_ITEM_AFTER.match(text, end):
            return False  # `Chunk interval: ~15ms between tokens`: a time measured per token, not a setting
        if _SETTING_AFTER.match(text, end) or _TEST_LENGTH_AFTER.match(text, end):
            return True
        if _QUOTED.search(text, max(0, start - 1), start):
            return True  # `"30s"`: a value written as a literal
        before = self._before(start, 40)
        if self._flag(start, "setting_words") and (
            _SETTING_WORDS.search(before) or _SETTING_NOUN_AFTER.search(self._after(end, 16))
        ):
            return True
        if _KEY_BEFORE.search(text, max(0, start - 40), start):
            return True
        if self._flag(start, "setting_label"):
            return True
        lo = max(0, start - 40)
        nl = text.rfind("\n", lo, start)
        raw = text[nl + 1 if nl >= 0 else lo : start]
        return _SETTING_HINT.search(raw.lower()) is not None and _SETTING_BEFORE.search(raw) is not None

    def _relative(self, start: int, u_start: int, end: int, kind: str) -> int | None:
        """The end of a ratio or percentage that is a speed-up or slow-down, or None."""
        text = self.text
        comp = _COMPARATIVE.match(text, end)
        if comp and kind != "pct":
            return comp.end()
        if kind == "xsp" or (kind == "times" and text[end : end + 1] not in ".;)"):
            return end  # the pattern already required a comparative
        if kind != "pct" and _NOT_RATIO_NEXT.match(text, end):
            return None  # `2 × RTX 2080 Super`, `2x 8 GB`, `4× A100`
        value = text[start:u_start].strip("* _")
        if kind != "pct" and re.fullmatch(r"1(?:\.0+)?", value):
            return None  # `1x`, `1배`: the baseline
        if comp:
            return comp.end()
        if _COMP_AFTER.match(text, end):
            return end
        if kind != "pct" and _RATIO_CHANGE_AFTER.match(text, end):
            return end  # `4.1x 향상`, `3x improvement`
        after = _CONJUNCTION.split(self._after(end, 40), 1)[0]
        before = _after_last_number(self._before(start, 60))
        signed = _SIGN_BEFORE.search(text, max(0, start - 2), start) is not None
        first_after = _LEX.search(after)
        change_after = _CHANGE_RX.search(after)
        last_before = _last(_LEX, before)
        change = change_after or _CHANGE_RX.search(before)
        hits = [first_after, last_before]
        if _BY_BEFORE.search(before):
            hits = [last_before]  # `improves performance by ~20%`: the verb and its object come first
        elif change_after and (first_after is None or change_after.start() < first_after.start()):
            # `추론 시간을 85% 줄이고`: the object comes first; `**85% 감소**된 추론 시간`: or after the change
            hits = [last_before] if last_before is not None else [first_after]
        # the nearest noun decides: after the number first (`20~40% 속도 향상`), then before (`TTFT 50% 감소`)
        for hit in hits:
            if hit is None:
                continue
            if hit.lastgroup == "nonperf":
                return None
            if kind != "pct" or change or signed:
                return end
            return None
        if kind == "pct" and signed and re.match(rf"{_SP}+(?i:from){_SP}.+{_SP}to{_SP}", after):
            return end  # `−17% from d0 to d32K`: a change between two conditions
        if kind == "pct" and self._bare_cell(start, end):
            return None  # percentages alone in table cells: decided with their row (see rows)
        # no noun in the clause: look wider (the sentence, the row's label) for what the number measures
        wide = self._wide_before(start)
        last = _last(_LEX, wide)
        if last is not None and last.lastgroup == "nonperf":
            return None  # `compression ratio (e.g., 8x)`, `| 에너지 사용량 | … | 6.6-23배 감소 |`
        if kind == "xcap":
            return end if last is not None else None  # `by as much as 4X`, not `Ryzen 7 3700X and 3X`
        if kind == "pct":
            if (change or signed) and (last is not None or self._flag(start, "timed")):
                return end  # `| API 응답 시간 | **60% 감소** |`, `31% 개선 (19.57초 → 13.46초)`
            return None
        if self._bare_cell(start, end):
            return end
        if last is None and re.search(rf"(?i:{_B}by){_SP}*(?:(?i:up to|about|around|nearly)|~)?{_SP}*$", before):
            return None  # `increase by 1.1x`: by how much of what, the sentence does not say
        return end

    def _wide_before(self, start: int) -> str:
        """The sentence before a number (commas included) and, in a table row, the row's first cell."""
        text = self.text
        lo, _ = self._line(start)
        seg = text[max(lo, start - 100) : start]
        cut = max(seg.rfind(". "), seg.rfind("; "), seg.rfind("|"))
        seg = seg[cut + 1 :]
        if text.startswith("|", lo) or text[lo:start].lstrip().startswith("|"):
            first = text[lo:start].lstrip().lstrip("|").split("|", 1)[0]
            seg = first + " " + seg
        return seg

    def _bare_cell(self, start: int, end: int) -> bool:
        text = self.text
        lo, hi = self._line(start)
        left = text.rfind("|", lo, start)
        right = text.find("|", end, hi)
        if left < 0 or right < 0:
            return False
        return _CELL_NUMBER.match(text[left + 1 : right].replace("(", " (", 1)) is not None

    # --- numbers found by the extra patterns -----------------------------------------------------------------

    def extra(self, m: re.Match[str]) -> Candidate | None:
        rx = m.re
        start = m.start("n1")
        if rx is _PER_SECOND:
            num_end = m.end("n3") if m.group("n3") is not None else m.end("n1")
            start = m.start()
            return (start, m.end(), self.text[m.start("n1") : num_end], "tok/s", self.spread_kind(start, m.end()))
        if rx is _PREFIX_X:
            start = m.start()
            if self._relative(m.start(), m.start(), m.start(), "x") is None and not self._bare_cell(start, m.end()):
                return None
            return (start, m.end(), m.group("n1"), "×", "claim")
        if rx is _TEST_THEN_NUMBER:
            return (start, m.end(), m.group("n1"), "tok/s", self.spread_kind(start, m.end()))
        if rx is _LABEL_UNIT:
            return (start, m.end(), m.group("n1"), "", self.spread_kind(start, m.end()))
        return (start, m.end(), m.group("n1"), "tok/s", self.spread_kind(start, m.end()))

    # --- table rows ------------------------------------------------------------------------------------------

    def rows(self, found: list[Candidate]) -> list[Candidate]:
        """Percentages alone in a table cell are claims when their row holds a measured time or rate."""
        if "|" not in self.text or "%" not in self.text:
            return found
        text = self.text
        out = list(found)
        lines_with_times: set[int] = set()
        for c in found:
            if c[4] == "claim" and (c[3] in _TIME_UNITS or c[3] == "×"):
                lines_with_times.add(text.rfind("\n", 0, c[0]) + 1)
        if not lines_with_times:
            return found
        taken = [(c[0], c[1]) for c in found]
        for lo in lines_with_times:
            hi = _line_end(text, lo)
            for m in _PCT_CELL.finditer(text, lo, hi):
                a, b = m.start("n"), m.end("n") + 1
                if any(x < b and a < y for x, y in taken):
                    continue
                row_label = text[lo:hi].strip("| ").split("|", 1)[0]
                last = _last(_LEX, row_label)
                if last is not None and last.lastgroup == "nonperf":
                    continue
                if self._target(a, b):
                    continue
                out.append((a, b, m.group("n"), "%", "claim"))
        out.sort()
        return out


# A percentage in a row of measured times: its own cell, or with a sign or a change word (`PG +8%`, `(20%)`).
_PCT_CELL = re.compile(
    rf"(?:(?<=\|)|(?<=\()|(?<=[+−-])|(?<=\*\*))(?:\*\*|__|~|{_SP})*(?P<n>{_NUM}(?:{_SP}?[~–-]{_SP}?{_NUM})?)%"
    rf"(?=(?:\*\*|__|{_SP}|⬇️|⬆️|↓|↑|⚡|빠름|개선|감소|향상|단축|\)|\([^)|]*\))*\|)"
)

# The patterns searched over a window before or after each number, pre-tested for their literals (the same matches;
# factreg.docs.literals): most windows hold none, and a failed search costs one `str.find` per literal.
_KEY_BEFORE = literals.screened(_KEY_BEFORE)
_BOUND_BEFORE = literals.screened(_BOUND_BEFORE)
_WINDOW_BEFORE = literals.screened(_WINDOW_BEFORE)
_IDENT_BEFORE = literals.screened(_IDENT_BEFORE)
_TARGET_WORDS = literals.screened(_TARGET_WORDS)
_SETTING_WORDS = literals.screened(_SETTING_WORDS)
_SETTING_NOUN_AFTER = literals.screened(_SETTING_NOUN_AFTER)
_MEDIA_BEFORE = literals.screened(_MEDIA_BEFORE)
_HYPOTHETICAL = literals.screened(_HYPOTHETICAL)
_QUOTE_OPEN = literals.screened(_QUOTE_OPEN)
_QUOTE_EXAMPLE = literals.screened(_QUOTE_EXAMPLE)
_WORK = literals.screened(_WORK)
_CAPABLE = literals.screened(_CAPABLE)
_KEEP = literals.screened(_KEEP)
_BY_BEFORE = literals.screened(_BY_BEFORE)
_CHANGE_RX = literals.screened(_CHANGE_RX)
_CLOCK_HOUR_BEFORE = literals.screened(_CLOCK_HOUR_BEFORE)
_CLOCK_SECOND_BEFORE = literals.screened(_CLOCK_SECOND_BEFORE)


def lint_text(text: str, path: str = "<text>", include_code: bool = False, targets: bool = False) -> list[Finding]:
    """Every unsourced claim in a document's text, in order; with `targets`, also the targets, limits and
    settings (findings of kind "target")."""
    return _lint(text, path, include_code, targets, prefilter=True)


def _lint(text: str, path: str, include_code: bool, targets: bool, prefilter: bool) -> list[Finding]:
    """lint_text; `prefilter=False` runs every pattern over the whole text (the reference the prefilter is tested
    against)."""
    if not _DIGIT.search(text):
        return []
    windows: list[tuple[int, int]] | None = None
    if prefilter:
        windows = _windows(text)
        if not windows and (")" not in text or _LABEL_UNIT.search(text) is None):
            return []  # no line can hold a claim
    elif _CLAIM.search(text) is None and not any(hint in text for _, hint in _EXTRA):
        return []
    skip, ignore_file = _skipped(text, include_code)
    if ignore_file:
        return []
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

    found = _candidates(text, skipped, windows)
    if not targets:
        found = [c for c in found if c[4] == "claim"]
    out: list[Finding] = []
    line = 1
    line_start = 0
    last = 0
    for start, end, value, unit, kind in found:
        newlines = text.count("\n", last, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", last, start) + 1
        last = start
        out.append(Finding(path, line, start - line_start + 1, text[start:end], value, unit, kind))
    return out


def lint_file(path: Path | str, include_code: bool = False, targets: bool = False) -> list[Finding]:
    """Every unsourced claim in one file; BadInput when it cannot be read as UTF-8 text."""
    from factreg.textfile import read_text

    return lint_text(read_text(path), str(path), include_code, targets)


TEXT_SUFFIXES = (".md", ".markdown", ".mdx", ".txt")


def lint_documents(
    paths: Iterable[Path | str], include_code: bool = False, targets: bool = False
) -> tuple[list[Finding], list]:  # type: ignore[type-arg]
    """Findings under `paths` and the files that could not be read (walk.Problem), for the CLI to report."""
    from factreg.docs import walk

    findings: list[Finding] = []
    problems: list = []  # type: ignore[type-arg]
    for path, text in walk.documents(paths):
        if isinstance(text, walk.Problem):
            problems.append(text)
            continue
        findings.extend(lint_text(text, str(path), include_code, targets))
    return findings, problems


def lint_paths(paths: list[Path], include_code: bool = False, targets: bool = False) -> list[Finding]:
    """Every unsourced claim in the Markdown files under `paths`; files that cannot be read are skipped. With
    `targets`, the targets, limits and settings too (findings of kind "target")."""
    return lint_documents(paths, include_code, targets)[0]
