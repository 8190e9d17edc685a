"""Which rule of its family a candidate falls under: the context that moves an item rate, a bandwidth, a ratio or a
percent change into the default set or out of it (`_sub_rule`), with the words each choice reads."""

from __future__ import annotations

import re

from factreg.docs.lint.base import _cell_context, in_row
from factreg.docs.lint.context import stat_summary, value_row
from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.tables import _timed_cells
from factreg.docs.lint.vocab import (
    _B,
    _CHANGE_HEADER,
    _DIGIT,
    _E,
    _HANGUL,
    _MEASURED_CELL,
    _SP,
    _TARGET_WORDS,
    BANDWIDTH_RULE,
    BARE_DURATION_RULE,
    BARE_PERCENT_RULE,
    BARE_RATIO_RULE,
    BYTE_BANDWIDTH_RULE,
    FAMILY_RULE,
    ITEM_RATE_RULE,
    LONE_PERCENT_RULE,
    PERCENT_RULE,
    PRECISE_DURATION_RULE,
    RATIO_RULE,
    SEEN_LINK_RULE,
    SEEN_RATE_RULE,
    SPREAD_RULE,
    TABLE_ITEM_RATE_RULE,
    TABLE_PERCENT_RULE,
    TARGET_RULE,
    TOOL_RATE_RULE,
    TOOL_UNIT,
    Candidate,
    _line_end,
)

_BIT_RATE = lazy(r"(?!(?<=[KMGT])Bps|(?<=[KMGT]i)Bps)(?i:bps)|(?i:bits?\s?/|bit/|bits\sper)|비트")  # not `MBps`: bytes


_OR_BOUND_AFTER = lazy(
    rf"(?:\*\*)?{_SP}+(?i:(?:or|and){_SP}+(?:better|more|higher|faster|less|lower|above|below|up)|(?:soft|hard){_SP}+limit){_E}"
)


_DEFAULT_BEFORE = lazy(r"(?i:default)|기본")
# What makes a rate a setting, not a run's: a limit or a quota before it, a load offered (`50 clients each publishing
# at 1000 msgs/s`), a rate wished for (`to allow more than 100k`).
_RATE_SET_BEFORE = lazy(
    rf"{_B}(?i:limit(?:s|ed)?|quotas?|throttl\w*){_E}[^.\n\d]{{0,30}}$|제한[^.\n\d]{{0,20}}$"
    rf"|{_B}(?i:publish\w*|send\w*|produc\w*|inject\w*|firing|fired){_SP}+at{_SP}*~?$"
    rf"|{_B}(?i:allow|support|handle){_SP}+(?i:more{_SP}+than|up{_SP}+to){_SP}*$"
)
# What makes a rate a setting, after it: a scope a provider meters (`20000req/sec per storage account`), a quota; the
# load a test or a tuning step offers (`800TPS test`, `1000 RPS 튜닝`; not `21.98/s 테스트 1이 …`, a test's name), or
# lists among its conditions.
_RATE_SET_AFTER = lazy(
    rf"{_SP}*(?i:per{_SP}+(?:storage{_SP}+)?(?:account|bucket|api{_SP}+key|tenant|subscription|project|organi[sz]ation))"
    rf"{_E}|{_SP}*(?:(?i:load{_SP}+)?(?i:tests?|tuning)|(?:부하{_SP}*)?(?:테스트|튜닝))(?![A-Za-z가-힣]|{_SP}*\d)"
    rf"|;{_SP}*[a-z]+:"  # `(QPS: 4000; key: 16 bytes)`: one condition of a run among others
)
_DEFAULT_OF_BEFORE = lazy(rf"{_B}(?i:(?:change|reduce|raise|increase|lower|set)s?{_SP}+the{_SP}+default{_SP}+(?:of|value|for)){_E}")


_PCT_AFTER = lazy(rf"{_SP}?(?:%|(?i:percent){_E})")


# A word of a rate seen on a run, near an item rate in prose (`I get only 18 fps`, `averaged just 43fps`, `the fps
# drops to about 20fps`, `handles 46 queries per second`, `초당 1,200건 처리를 기록`): what a run gave, not a load.
_RATE_SEEN = lazy(
    rf"{_B}(?i:get|gets|getting|got|hit|hits|hitting|averag\w*|avg|drops?|dropped|dips?|dipped|runs?{_SP}+at|"
    rf"ran{_SP}+at|running{_SP}+at|reach\w*|achiev\w*|deliver\w*|handl\w*|sustain\w*|measured|managed|"
    rf"down{_SP}+to|slower|faster|hover\w*|sticks?{_SP}+at|stuck{_SP}+at|end{_SP}+up{_SP}+with|consum(?:ed|es|ing)){_E}"
    # a run's report keyed by the figure it measures (`Throughput: 76 docs/sec`, `TPS: ~22 요청/초`, `TPS` 가 …)
    rf"|{_B}(?i:throughput|tps|rps|qps)`?(?:\*\*)?{_SP}*(?::|가|는)"
    r"|나왔|기록|측정|달성|처리했|처리(?:함|됨|되었|하였)|떨어|향상|개선|감소"
)


# What makes a rate beside such a word something else: goals, requirements, limits and examples (`_NOT_SEEN_WORDS`
# in English, `_NOT_SEEN_KO` in Korean).
_NOT_SEEN_WORDS = (
    rf"targets?|minimum|maximum|max|at{_SP}+(?:most|least)|requir\w*|expect\w*|should|must|limit\w*|cap|ceiling|"
    rf"goals?|e\.g\.|examples?"
)
_NOT_SEEN_KO = "목표|기준|예를|예:|가정|이상|설정"


# …unless its line speaks of goals, requirements, limits or examples, or of a load offered (`at 100 RPS`).
_RATE_NOT_SEEN = lazy(
    rf"{_B}(?i:{_NOT_SEEN_WORDS}|at{_SP}+~?\d[\d,.]*{_SP}*(?:rps|qps|req/s)){_E}|{_NOT_SEEN_KO}"
)


# A word of a link's speed seen on a run, near a bit rate in prose (`showed 800 Mbps on a quick iperf3 burst test`,
# `the total throughput dropped to just 582.37 Mbps`, `median download speed of 111.11 Mbps`)…
_LINK_SEEN = lazy(
    rf"{_B}(?i:show\w*|sustain\w*|measured|got|get|getting|reach\w*|achiev\w*|averag\w*|median|dropped|drops?|"
    rf"throughput|iperf\w*|speed{_SP}?test|download{_SP}+speed|upload{_SP}+speed|hit|hitting|delivered|maxed|peak\w*){_E}"
    r"|측정|기록|나왔|달성|다운로드\s?속도|업로드\s?속도|전송\s?속도|집계|조사"
)


# …unless its line names a goal, a limit, a preset, a theoretical or nominal figure, or a codec's bit rate.
_LINK_NOT_SEEN = lazy(
    rf"{_B}(?i:{_NOT_SEEN_WORDS}|theoretical|up{_SP}+to|throttl\w*|preset|default|bitrate){_E}"
    rf"|{_NOT_SEEN_KO}|최대|기본|이론"
)


# k6's summary lines: a metric's name, a run of dots, a colon (`http_reqs..................: 130736 3772.018811/s`).
_K6_METRIC = lazy(r"[ \t]*(?:[✓✗][ \t]*)?[a-z_]+\.{3,}:[^\n]*$")


# A line's speed that names a plan sold, not one measured: `1Gbps 상품`, `a 500 Mbps plan`.
_PLAN_AFTER = lazy(rf"{_SP}?(?:상품|요금제|(?i:plans?|tiers?|packages?){_E})")


_SENTENCE_END = lazy(r"[?!]|\.(?=\s|$)")


def _line_of(text: str, start: int, end: int) -> tuple[int, int]:
    """The start and end of the line holding text[start:end]."""
    return text.rfind("\n", 0, start) + 1, _line_end(text, end)


def _seen(text: str, c: Candidate, seen: re.Pattern[str], not_seen: re.Pattern[str]) -> bool:
    """Whether a word of `seen` stands within 40 characters before a number or 25 after it, and no word of
    `not_seen` on its line."""
    lo, hi = _line_of(text, c[0], c[1])
    if (end := _SENTENCE_END.search(text, c[1], hi)) is not None and end.group() == "?":
        return False  # `Can we hit 1M RPS out of an 8 VCPU instance?`: asked, not seen
    return seen.search(text, max(lo, c[0] - 40), min(hi, c[1] + 25)) is not None and not not_seen.search(text, lo, hi)


# FR104: an English line's duration written to a decimal, beside another duration or a verb of what happened.
_DECIMAL = lazy(r"\d\.\d")
_DURATION_FIGURE = lazy(
    rf"\d(?:\.\d+)?{_SP}?(?:ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|µs|us|ns)(?![A-Za-z])"
)
# a line of availability levels and their downtime (`99.9% | 8.77 hours | 43.8 min`), a rubric (`under 2.5 seconds
# is considered Good`), a recording's length (`audio=5.2 sec`)
_NOT_READ = lazy(
    rf"^[ \t|]*\d{{2}}(?:\.\d+)?%|{_B}(?i:downtime|good|poor|needs{_SP}improvement|audio|video|clip){_E}", re.M
)
_BOUND_JUST_BEFORE = lazy(rf"(?:{_B}(?i:under|below|less{_SP}than|at{_SP}most|up{_SP}to|within)|[<≤]){_SP}*~?$")
_KO_HAPPENED = lazy(r"(?:었|았|였|했|됐|걸렸|나왔|줄었|늘었)(?:다|고|으며|는데|습니다|어요|음)|기록|측정")
_KO_NOT_READ = lazy(r"목표|이상|이하|미만|이내|기본값|설정|예상|권장|제한|타임아웃|길이|분량")
_HAPPENED = lazy(
    rf"{_B}(?i:took|was|were|ran|got|saw|measured|reduced|dropped|went|finished|completed|spent|increased|"
    rf"decreased|improved|jumped|fell){_E}"
)


def _precise_reading(text: str, c: Candidate, line: tuple[int, int]) -> bool:
    """Whether a duration no word of measured work stands near (FR103) is still a figure read off a run (FR104): on
    an English line, written to a decimal (`7.5s`, `2.3 seconds`), with another duration on its line or a verb of
    what happened (`took`, `dropped`, `went`) — on the labelled sentences such durations are nearly all claims."""
    if not _DECIMAL.search(text, c[0], c[1]) or _NOT_READ.search(text, *line):
        return False
    if _HANGUL.search(text, *line):  # a Korean line: a verb in the past (`걸렸다`, `줄었다`, `측정했다`)
        return _KO_HAPPENED.search(text, *line) is not None and not _KO_NOT_READ.search(text, *line)
    if _TARGET_WORDS.search(text, *line):
        return False  # `Unable to complete 100 samples in 5.0s. You may wish to increase target time to 73.6s`
    if _BOUND_JUST_BEFORE.search(text, max(line[0], c[0] - 14), c[0]):
        return False  # `served in under 0.75 milliseconds`: a bound
    figures = _DURATION_FIGURE.finditer(text, *line)
    if next(figures, None) is not None and next(figures, None) is not None:
        return True
    return _HAPPENED.search(text, *line) is not None


# A `±` right before a percentage: a spread. A bound right before one (`not more than`, `at least`, `>`) on a line of
# a goal, a check or a challenge (`Ensure …`, `fails the job when …`, `regression detection`): a threshold.
_PM_BEFORE = lazy(r"(?:±|\+/-|\+-)[ \t]*\Z")
_PCT_BOUND_BEFORE = lazy(
    r"(?i:(?:more|less|fewer)[ \t]+than|at[ \t]+least|[>≥<≤])[ \t]*(?:\*\*)?[~≈]?[ \t]*(?:\*\*)?\Z"
)
_PCT_GOAL_LINE = lazy(r"(?i:\b(?:ensure|fails?|challenge|detection|should|must)\b)")


# A table row of a plan or an allowance, not a run: a load test's stages (`| 워밍업 | 60초 | 5 req/s |`), a provider's
# quotas and recommended rates (`| Per project (minutely) | … | ~2,000 QPS burst`, `1 tps 권장`).
_RATE_PLAN_ROW = lazy(
    r"(?i:\b(?:quotas?|recommended|per[ \t]+(?:project|account)|autoscal\w*|spike|warm-?up|ramp-?up)\b|\bburst(?![ \t]+load))"
    r"|권장|스파이크|워밍업|램프\s?업|최대\s?부하"
)


# A percentile's label right before a duration (`p(95)=148.92ms`, `P95: 419ms (목표 <200ms)`): the percentile read.
_PERCENTILE_READ = lazy(r"(?<![<>≤≥])(?i:\bp\(?\d{2}(?:\.\d+)?\)?)[ \t]*[=:][ \t]*(?:\*\*)?[~≈]?\Z")


# A mean time in brackets with the run's spread next (Crystal's Benchmark.ips: `1.33M (753.33ns) (± 0.91%)`).
_SPREAD_NEXT = lazy(r"[ \t]*\)[ \t]*\([ \t]*±[ \t]*\d+(?:\.\d+)?%[ \t]*\)")


# A bit rate written to a decimal on a line of no condition, goal or setting (`9.41 Gbits/sec`, `평균 943.2 Mbps`).
_CONDITION_LINE = lazy(
    rf"{_B}(?i:if|when|should|must|can|could|would|will|may|might|default|up{_SP}to|max(?:imum)?|min(?:imum)?|limit\w*|"
    rf"every|per|target\w*|goal|expect\w*|aim|require\w*|recommend\w*|at{_SP}least){_E}"
    r"|목표|이상|이하|미만|기본|설정|예상|권장|요구|최대|최소|경우"
)


_BENCH_LINE = lazy(r"(?i:bench\w*|throughput|latency|perf\w*|speed|fps|tok\w*)|속도|성능|처리량|벤치")


def _read_item_rate(text: str, c: Candidate, line: tuple[int, int]) -> bool:
    """Whether an item rate in prose (FR112) is a figure read off a run: written to a decimal, on a line that speaks
    of a benchmark or of speed and names no condition, goal, default or setting."""
    return (
        _DECIMAL.search(text, c[0], c[1]) is not None
        and _BENCH_LINE.search(text, *line) is not None
        and _CONDITION_LINE.search(text, *line) is None
    )


_THROUGHPUT_HEAD = lazy(
    r"[ \t*_]*(?i:(?:measured|avg|average|mean|median|tcp|udp)?[ \t]*(?:throughput|bandwidth|download|upload|speed|goodput))"
    r"(?:[ \t]*\([^)|]*\))?[ \t*_]*|[ \t*_]*(?:처리량|대역폭|다운로드|업로드|속도)[ \t*_]*"
)


def _read_bit_rate(text: str, c: Candidate, line: tuple[int, int]) -> bool:
    """Whether a bit rate (FR113) is a figure read off a run: written to a decimal, on a prose line that names no
    condition, goal, default or setting."""
    return _BIT_RATE.search(text, c[0], c[1]) is not None and _DECIMAL.search(text, c[0], c[1]) is not None and (
        _CONDITION_LINE.search(text, *line) is None
    )


def _sub_rule(text: str, c: Candidate) -> Candidate:
    """The candidate under the rule of its context: every target is FR201's; an item rate in a table row is
    FR114's (the default set's), in a unit only benchmark tools print FR115's (default), elsewhere in prose FR117's
    beside a word of what a run gave (default) or else FR112's (a preview rule); a bandwidth in bytes per second or a
    compute rate is FR116's (default), a bit rate or a default FR113's (a preview rule) but FR118's beside a word of
    a measured link speed (default); a ratio or a percent change with no word of performance near it — in prose, a
    window around it; in a table, its cell, its row's label and its column's header — is FR123's or FR124's (preview
    rules: share prices, price multipliers, token ratios, bounce rates), as is a percent change beside a business
    figure and a `±` spread of percentages; a percent change in a table row is FR126's (default), or FR125's (default)
    where the row holds the measured times it is worked from (FR124's where a count stands beside them)."""
    if c[4] == "target" or _OR_BOUND_AFTER.match(text, c[1]):  # `400 MB/s or better`: a threshold
        return (*c[:4], "target", TARGET_RULE)
    line = _line_of(text, c[0], c[1])
    if c[5] in (ITEM_RATE_RULE, FAMILY_RULE["rate"]) and (
        _RATE_SET_BEFORE.search(text, max(line[0], c[0] - 40), c[0]) or _RATE_SET_AFTER.match(text, c[1])
    ):
        return (*c[:4], "target", TARGET_RULE)  # `Rate limit: 25 requests per second`, `a default limit of 25 req/s`
    if _DEFAULT_OF_BEFORE.search(text, max(line[0], c[0] - 80), c[0]):
        return (*c[:4], "target", TARGET_RULE)  # `Reduce the default of `--max-block-duration` from 10% to 2%`: a setting
    row = in_row(text, line[0], c[0])
    if c[5] == SPREAD_RULE and _PCT_AFTER.match(text, c[1]) and not _performance_near(
        text, c[0], c[1], row, _PERF_NEAR, (40, 30)
    ):
        return (*c[:5], BARE_PERCENT_RULE)  # `| 요청 성공률 | 83.9 ± 1.76 % |`: a share's spread, not performance
    if c[5] == BARE_DURATION_RULE and not row and (
        _precise_reading(text, c, line)
        or _PERCENTILE_READ.search(text, max(line[0], c[0] - 12), c[0])
        or _SPREAD_NEXT.match(text, c[1])
    ):
        # `went from 15.1s … to 7.5s`, `took 2.3 seconds`, k6's `✓ 'p(95)<500' p(95)=148.92ms`: read off a run
        return (*c[:5], PRECISE_DURATION_RULE)
    if c[5] == ITEM_RATE_RULE and row and _RATE_PLAN_ROW.search(text, *line):
        return (*c[:4], "target", TARGET_RULE)  # `| 스파이크 | 15초 | 100 req/s |`, `| Per project | ~2,000 QPS burst |`
    if c[5] == ITEM_RATE_RULE and row:
        return (*c[:5], TABLE_ITEM_RATE_RULE)
    if c[5] == BANDWIDTH_RULE and not _BIT_RATE.search(text, c[0], c[1]) and not _DEFAULT_BEFORE.search(
        text, max(0, c[0] - 30), c[0]
    ):
        # `| L40S | 864 GB/s |`, `delivers 1010 GB/s`, `105.43 TFLOPS`: a device's or a run's figure (not `| 4G/LTE |
        # 4 Mbps |`: a link's or a codec's bit rate, as often a preset or a setting; nor a default)
        return (*c[:5], BYTE_BANDWIDTH_RULE)
    if c[5] == ITEM_RATE_RULE and (
        TOOL_UNIT.search(text, c[0], c[1]) or _K6_METRIC.match(text, line[0], c[0]) or stat_summary(text, *line)
    ):
        return (*c[:5], TOOL_RATE_RULE)  # `45487 ns/op`, `999.4 records/sec`, k6's `http_reqs....: 130736 3772.0/s`
    if c[5] == ITEM_RATE_RULE and (_seen(text, c, _RATE_SEEN, _RATE_NOT_SEEN) or _read_item_rate(text, c, line)):
        return (*c[:5], SEEN_RATE_RULE)  # `I get only 18 fps`: a rate a run gave
    if c[5] == BANDWIDTH_RULE and not row and not _PLAN_AFTER.match(text, c[1]) and (
        _seen(text, c, _LINK_SEEN, _LINK_NOT_SEEN) or _read_bit_rate(text, c, line)
    ):
        return (*c[:5], SEEN_LINK_RULE)  # `showed 800 Mbps on a quick iperf3 burst test`: a link's speed measured
    if c[5] == BANDWIDTH_RULE and row and _BIT_RATE.search(text, c[0], c[1]) and _THROUGHPUT_HEAD.fullmatch(
        _cell_context(text, c[0])[2]
    ):
        return (*c[:5], SEEN_LINK_RULE)  # `| OpenVPN UDP | 730 Mbps |` under `| VPN | Throughput |`: measured
    if c[5] == RATIO_RULE and c[2][:1].isdigit() and not _performance_near(text, c[0], c[1], row, _SPEED_NEAR, (25, 15)):
        return (*c[:5], BARE_RATIO_RULE)  # `3배 증가`, `100x more`, `| Output | $15.00 | 5× |`
    if c[5] == PERCENT_RULE and _PM_BEFORE.search(text, max(line[0], c[0] - 4), c[0]):
        return (*c[:5], BARE_PERCENT_RULE)  # `1.37M (728.87ns) (± 4.13%)`: a run's spread, not a change
    if c[5] == PERCENT_RULE and _PCT_BOUND_BEFORE.search(text, max(line[0], c[0] - 24), c[0]) and _PCT_GOAL_LINE.search(
        text, *line
    ):
        return (*c[:4], "target", TARGET_RULE)  # `Ensure the tail latency is not more than 15-20% above …`: a goal
    if (
        c[5] == PERCENT_RULE
        and not _performance_near(text, c[0], c[1], row, _PERF_NEAR, (40, 30))
        and not _RANKED_AFTER.match(text, c[1])
        and not (not row and _GAIN_AFTER.match(text, c[1]))
        and not (_BENCHSTAT_DELTA_AFTER.match(text, c[1]) and _BENCHSTAT_SPEED.search(text, *line))
    ):
        return (*c[:5], BARE_PERCENT_RULE)  # `주가 +2%`, `Bounce Rate: -25%`, `매출 +10%`
    if c[5] == PERCENT_RULE and not row and _business_change(text, c[0], c[1]):
        return (*c[:5], BARE_PERCENT_RULE)  # `reduce conversions by up to 20%`, `a 35% lower hourly rate`
    if c[5] == PERCENT_RULE and _PEOPLE_TIME.search(text, max(line[0], c[0] - 50), c[0]):
        return (*c[:5], BARE_PERCENT_RULE)  # `리뷰에 소요되는 평균 시간이 … 97% 단축`: the time people spend
    if c[5] == PERCENT_RULE and (
        _RESOURCE_AFTER.match(text, c[1])
        or _RESOURCE_BEFORE.search(text, max(line[0], c[0] - 16), c[0])
        or row and _change_of_other(text, c[0], c[1])
        or _level_change(text, c)
    ):
        return (*c[:5], BARE_PERCENT_RULE)  # `uses ~12% more memory`, `| 정확도 | 85.0% | +1.5% |`, a score's change
    if c[5] == PERCENT_RULE and row:
        if len(_MEASURED_CELL.findall(text, *line)) >= 2:
            if _COUNT_CELL.search(text, *line):
                return (*c[:5], BARE_PERCENT_RULE)  # `| 7,667건 · 쿼리 155 · 331ms | … | -97% |`: of which?
            return (*c[:5], TABLE_PERCENT_RULE)  # `| 250ms | 60ms | 76% 단축 |`: beside the times it is worked from
        return (*c[:5], LONE_PERCENT_RULE)  # `| API 응답 시간 | **60% 감소** |`: the row's own figure
    return c


# One system placed against another right after a percentage (`1.5% behind the Ryzen 7 7800X3D`, `4.4% ahead of
# the 7600X`): a comparison of their performance (not `10% behind schedule`).
_RANKED_AFTER = lazy(
    rf"(?:\*\*)?{_SP}+(?i:behind|ahead{_SP}+of){_SP}+(?!(?:the{_SP}+|our{_SP}+|its{_SP}+)?(?i:schedule|plan|target|budget|"
    rf"forecast|estimates?|expectations?|last{_SP}+year|competitors?{_SP}+in{_SP}+(?:sales|revenue)){_E})"
)


# A percent change named an improvement or a gain in prose (`a 4.1% improvement simply upgrading from PostgreSQL 14`,
# `a 93 % gain`): a system's (a quality's, `a 2% improvement in accuracy`, is no claim at all: relative.py).
_GAIN_AFTER = lazy(rf"(?:\*\*)?{_SP}+(?i:improvements?|gains?){_E}")


# A share's level changed to another (`87%에서 98%로`, `71% → 100%`): the ends are levels, not changes (not `16%에서
# 35% 더 빠르다`, `improved 19% to 27%`: a change's range).
_LEVEL_TO_AFTER = lazy(rf"{_SP}*(?:에서{_SP}*\d[\d.]*{_SP}?%{_SP}*(?:로|으로)|(?:→|->|⟶){_SP}*~?\d[\d.]*{_SP}?%)")
_LEVEL_FROM_BEFORE = lazy(rf"\d%{_SP}*(?:에서|→|->|⟶){_SP}*~?$")
_TO_AFTER = lazy(rf"{_SP}*(?:로|으로)")


def _level_change(text: str, c: Candidate) -> bool:
    """Whether a percentage is either end of a level changed to another."""
    if _LEVEL_TO_AFTER.match(text, c[1]):
        return True
    before = _LEVEL_FROM_BEFORE.search(text, max(0, c[0] - 8), c[0])
    return before is not None and ("에서" not in before.group() or _TO_AFTER.match(text, c[1]) is not None)


# benchstat's delta (`+67.47%  (p=0.008 n=5+5)`) on a row of times or speeds (`303MB/s ± 2%`, `1.25µs ± 1%`), not of
# sizes or allocations (`72.0B ± 0%`, `76.6k ± 0%`).
_BENCHSTAT_DELTA_AFTER = lazy(rf"{_SP}+\(p=[01]?\.\d+{_SP}n=\d")
_BENCHSTAT_SPEED = lazy(r"\d(?:[nµμu]s|ms|s|[KMGT]i?B/s)[ \t]±")


# More or less of a resource after a percentage (`~12% more memory`): a size's change, not a speed's.
_RESOURCE_AFTER = lazy(
    rf"(?:\*\*)?{_SP}+(?i:more|less|fewer|higher|lower){_SP}+(?:(?i:peak|resident|heap|gpu|cpu){_SP}+)?"
    rf"(?i:memory|ram|vram|disk|storage|space|power|energy|cost){_E}"  # `36% lower peak memory`
    rf"(?!{_SP}+(?i:bandwidth|throughput|speed|latency))"  # not `40% more memory bandwidth`
    # `5-11% avg. smaller files`: a size's change
    rf"|(?:\*\*)?{_SP}+(?:(?i:avg|average)\.?{_SP}+)?(?i:smaller|larger|bigger){_SP}+(?i:files?|size|binar(?:y|ies)|bundles?){_E}"
    # `a mere 2% of a page`, `20% of its time in the allocator`: a share of a thing (not `60 percent of their CI wall time`)
    rf"|(?:\*\*)?{_SP}+(?i:of){_SP}+(?i:a|an|the|its|their|each|every|all){_SP}+"
    rf"(?!(?:\w+{_SP}+){{0,2}}?(?i:wall|run|build|ci|response|load|query|time|times|runtime|latency|duration|bandwidth|"
    rf"ceiling|peak|throughput|speed|performance|theoretical|max(?:imum)?|baseline){_E})"
)
# Tokens or time and money saved named right before a percentage (`토큰 낭비는 75%나`, `추론 길이(토큰)를 약 35%`,
# `시간 절감 효과: 77-88%`): a count's or people's change, not a speed's.
_RESOURCE_BEFORE = lazy(
    r"(?:토큰\)?\s?(?:낭비|사용량|사용|소비|수)?|(?:시간|비용)\s?절감(?:\s?효과)?)(?:은|는|을|를|이|가)?\s?(?::\s?)?(?:약\s?)?$"
)
# The time people spend on a task, before a percent change of it (`프로젝트 생성/세팅 시간이 … 80% 이상 감소`).
_PEOPLE_TIME = lazy(
    rf"{_B}(?i:review|set-?up|onboarding|meeting|hiring|triage)(?:{_SP}+\w+)?{_SP}+time{_E}|리뷰|세팅|셋업|온보딩|회의|채용|"
    r"(?:신입|신규\s?입사자|직원|사원)\s?교육|수동\s?(?:분석|작업|검토)"  # `신입 교육 시간 50% 단축`, `수동 분석 대비`
)
_SCORE = lazy(rf"{_B}(?i:scores?|lighthouse){_E}|점수")
_FASTER = lazy(rf"{_B}(?i:faster|slower|quicker){_E}|빠르|빠름|느리|느림")
# a percentage with no sign (`85.0%`, `~88-92%`): a level, not a change; with or without one (`+17-24%`)
_PERCENTAGE = r"\d[\d,.]*(?:[-–~]\d[\d,.]*)?[ \t]?%[ \t*_]*"
_LEVEL_CELL = lazy(rf"[ \t*_~≈]*{_PERCENTAGE}")
_PCT_CELL = lazy(rf"[ \t*_~≈]*[+−-]?{_PERCENTAGE}")
# a count (`3개 (크기만 다름)`; not a rate, `3.2개/분`), or a span of people's time (`3.5 months`) in a cell
_COUNT_OR_CALENDAR = lazy(
    rf"\d[\d,]*{_SP}?(?:개(?!선)|건|명|종)(?![/당])|\d{_SP}*(?:(?i:months?|weeks?|years?){_E}|개월|주일|년)"
    rf"|\d{_SP}?(?:[KMGT]i?B|(?i:bytes){_E}|바이트)(?![/p])"  # `| 41.6MB | 8.5MB | -80% |`: a size's change
)
# a share of success after a percentage (`100% 성공 달성`, `95% pass rate`): a level reached, not a speed's change
_SUCCESS_AFTER = lazy(rf"(?:\*\*)?{_SP}*(?:성공|정확|통과|(?i:success|accuracy|pass(?:ed)?){_E})")


def _change_of_other(text: str, start: int, end: int) -> bool:
    """Whether a percent change in a table row changes something other than a time or a rate: a score (`| **성능**
    | 86 | 90 | 98 (14% ↑) | … 성능 점수 |`), or a percentage, all the row's other numbers being percentages with
    no sign and the others percent changes (`| AI 전용 | 85.0% | +1.5% |` under `| 접근법 | 신뢰도 | 개선율 |`, `| Level 4 |
    ~88-92% | +4% | +17-24% |`; not `| Mean TPOT | +7.6% | +13.2% |`), a count, a size or a span of people's time
    (`| 3개 | 5개 | +67% |`, `| 41.6MB | 8.5MB | -80% |`, `| 3.5 months | 32% less time |`), or a share of success
    (`100% 성공 달성`)."""
    lo, hi = _line_of(text, start, start)
    if _SCORE.search(text, lo, hi) or _SUCCESS_AFTER.match(text, end):
        return True
    _, _, _, others = _cell_context(text, start)
    numbers = [o for o in others[1:] if _DIGIT.search(o)]
    if numbers and all(_COUNT_OR_CALENDAR.search(o) for o in numbers):
        return True  # `| 3개 | 5개 | +67% |`, `| 3.5 months | 32% less time |`: a count's change, people's time
    return (
        bool(numbers)
        and all(_PCT_CELL.fullmatch(o) for o in numbers)
        and any(_LEVEL_CELL.fullmatch(o) for o in numbers)
        and not _FASTER.search(text, start, end + 12)
    )


# A business figure right beside a percent change (`conversions`, `revenue`, `growth`, `hourly rate`, `이탈`, `매출`):
# its change, not a system's, even when a word of performance stands further off in the sentence.
_BUSINESS = lazy(
    rf"{_B}(?i:conversions?|revenue|sales|growth|hourly{_SP}+rate|prices?|costs?|abandonment|bounce|churn|engagement|"
    rf"satisfaction|page{_SP}?views?|sign-?ups?|purchases?){_E}|이탈|페이지{_SP}?뷰|조회\s?수|발생률|실패율|성공률|통과율|오류율|에러율|만족도|매출|전환율|전환수|비용|가격|요금|"
    r"판매량|판매|가입|구매|방문자|유입"
)
_PERF_CLOSE = lazy(  # not `time on site`: a business figure
    rf"{_B}(?i:latency|time(?!{_SP}+on{_SP}+(?:site|page))|times|speed|faster|slower|throughput|duration){_E}|지연|시간|속도|처리량|빠르|느리"
)


def _business_change(text: str, start: int, end: int) -> bool:
    """Whether a percent change in prose is a business figure's: one of _BUSINESS starting within 25 characters of
    it on its line (`40% reduction in user abandonment`), and no word of performance within 10."""
    lo, line_hi = _line_of(text, start, end)
    lo, hi = max(lo, start - 25), min(line_hi, end + 25)
    word = _BUSINESS.search(text, lo, min(line_hi, end + 45))
    if word is None or word.start() > hi:
        return False
    return not _PERF_CLOSE.search(text, max(lo, start - 10), min(hi, end + 10))


def _performance_near(text: str, start: int, end: int, row: bool, words: re.Pattern[str], window: tuple[int, int]) -> bool:
    """Whether a word of `words` stands near a number: in prose within `window` characters before and after it
    (on its line), in a table row in its cell, its row's label or its column's header (for a ratio, a header of
    changes too)."""
    if row:
        cell, label, header, others = _cell_context(text, start)
        if any(words.search(part) for part in (cell, label, header)) or (words is _SPEED_NEAR and _CHANGE_HEADER.fullmatch(header)):
            return True  # a ratio under `| 차이 |`, `| Change |`: the change the row's figures make
        return _timed_cells(text, start) >= 2  # `| 1.4s | 28.3s | 20× |`, `| 0.059 | 0.260 | 4.4× |` under `(ms)` headers
    if value_row(text, *_line_of(text, start, end)):
        return True  # `NumPy 설치 5.1초 0.15초 34배`: the ratio of the row's two times
    lo = max(text.rfind("\n", 0, start) + 1, start - window[0])
    hi = text.find("\n", end)
    reach = window[1] + (15 if _COMPARATIVE_AFTER.match(text, end) else 0)  # `2.7x higher request throughput`
    hi = min(len(text) if hi < 0 else hi, end + reach)
    return words.search(text, lo, hi) is not None


_COMPARATIVE_AFTER = lazy(rf"(?:\*\*)?{_SP}+(?i:higher|lower|more|less|better|greater){_E}")


# A word of speed or of a speed figure near a ratio (`3.1× slower`, `4배 빠름`, `2x the throughput`, `TPS 2배`).
_SPEED_WORDS = (
    rf"{_B}(?i:faster|slower|quicker|speed\w*|slow-?downs?|geomean|throughput|tps|tok/s|t/s|latency|performance|uplift|accelerat\w*|"
    rf"real[- ]?time){_E}"
    r"|빠르|빠름|빨라|느리|느림|느려|속도|처리량|지연|응답|성능|가속|단축|개선"
)
_SPEED_NEAR = lazy(_SPEED_WORDS)


# A word of performance near a percent change: the words of speed, times and durations (`응답 시간 40% 감소`,
# `training time by 1%`, `2.41초 … 20.7% 빠름`), rates (`280 tok/s`), the work measured (`decode`, `prefill`,
# `추론`) and improvement (`개선`, `향상`).
_PERF_NEAR = lazy(
    rf"{_SPEED_WORDS}"
    rf"|{_B}(?i:time|timing|duration|runtime|ttft|tpot|itl|rtf|p50|p9\d|tok/s|t/s|tps|qps|rps|req/s|ops/s(?:ec)?|decod\w*|"
    rf"prefill|generation|inference|bandwidth|pp\d+|tg\d+|fps|frame{_SP}?times?|frametime|ttfb|lcp|fcp|inp|cold{_SP}+starts?|"
    rf"startup|start-up|(?:build|compil(?:e|ation)){_SP}+times?|compile-time|compilation|indexing){_E}"
    rf"|(?i:change):{_SP}*\["  # criterion's `change: [+4.4991% +7.4272% +10.486%]`
    r"|\d\s*(?:ms|s|sec|초|분|밀리초)(?![A-Za-z가-힣])|시간|소요|향상|효율|빠를|빠른|빨리|추론|생성"
)


# A count beside the measured times of a row (`쿼리 155`, `7,667건`, `21 queries`): its percent change may be the
# count's.
_COUNT_CELL = lazy(rf"\d{_SP}?건|쿼리{_SP}*(?:\*\*)?\d|(?i:\d{_SP}+(?:queries|rows|requests|calls|round[ -]?trips)){_E}")
