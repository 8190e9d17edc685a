"""The whole reading of a number: its unit's family decides which rules read it."""

from __future__ import annotations

import re

from factreg.docs.lint.base import _cell_context, _header_row
from factreg.docs.lint.columns import _CHORE_COLUMN, _MEDIA_HEADER, _PLAN_ORDER, _PLAN_TASK, _TARGET_COLUMN
from factreg.docs.lint.durations import _MEASURED_KEY_BEFORE
from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.tables import _Tables
from factreg.docs.lint.targets import tool_time
from factreg.docs.lint.vocab import (
    _B,
    _BENCHSTAT_CELL,
    _E,
    _EXPLAIN_TIME,
    _FRACTION,
    _GOAL_LINE,
    _JMH_ROW,
    _LABEL_UNIT,
    _METRIC_KEY,
    _METRIC_LABEL,
    _METRIC_UNIT,
    _PER_SECOND,
    _PREFIX_X,
    _RELATIVE,
    _RTF,
    _SETTING_WORDS,
    _SP,
    _TARGET_WORDS,
    _TEST_THEN_NUMBER,
    _TOOL_INLINE,
    _TOOL_ROW,
    _TRANSFER,
    _UNIT_BEFORE,
    _WORD_RATIO,
    Candidate,
)

_DURATIONS = frozenset({"s", "ms", "min", "us", "ns", "h", "d", "hm", "mns"})

_SPAN_KINDS = frozenset({"rate", "req", "persec", "op", "mstok", "stok", "bw", "bits", "flops", "fps"})

_QUESTION_START = lazy(r"(?:^|[?!][ \t]+)$")

# A request rate listed with a test's length in minutes (`(50 rps, 5분간)`, `K6 50rps | 5분 부하`): the load a test was
# set to send, as `RPS 2, Duration 10s` is.
_LOAD_RATE_AFTER = lazy(rf"(?:\*\*)?{_SP}*[,|]{_SP}*\d+{_SP}?(?:분|(?i:min|minutes?|m){_E}|초{_SP}?(?:간|동안))")

# A rate of people, named before it: reading, typing or speaking speed (`the speed of my reading (8-9 tokens/s)`,
# `사람이 읽는 속도는 초당 5토큰`).
_HUMAN_RATE_BEFORE = lazy(
    rf"(?i:reading|typing|speaking|talking){_SP}+(?i:speed|rate|pace)|(?i:speed|rate|pace){_SP}+of{_SP}+(?:\w+{_SP}+)?"
    rf"(?i:reading|typing|speaking|speech)|{_B}(?i:humans?|people|we|I){_SP}+(?i:read|type|speak|talk)"
    r"|(?:읽는|읽기|타이핑|말하는|발화)\s?속도|사람이\s?(?:읽|말하|타이핑)"
)

# A system reaching a people's rate (`achieving speeds comparable to human reading (5-7 tokens per second)`).
_REACHES_BEFORE = lazy(rf"{_B}(?i:achiev\w*|reach\w*|comparable|on{_SP}par|rivals?)|달성|도달|수준")

# A cap named before a per-second label (`Rate limit (req/sec): 100`, `Max requests/sec: 100`): a setting.
_RATE_CAP = lazy(r"(?i:\b(?:limits?|max(?:imum)?|min(?:imum)?|default|caps?|quotas?|allowed|targets?|budgets?)\b)")


# Words of measured work or of a measured figure near a duration (`took 4.1 s`, `TTFT 0.3 s`, `p95 120 ms`, `12초 걸렸다`,
# `평균 응답 시간 300ms`): FR101 reports a duration beside one; a duration with none near it is FR103's (preview).
_MEASURED = lazy(
    rf"{_B}(?i:took|takes|taking|finished{_SP}+in|completed?{_SP}+in|done{_SP}+in|in{_SP}+just|eval{_SP}+time|"
    # what a tool prints when a step ends: `24 passed in 0.64 seconds`, `built in 1465ms`, `Executed in 38.07 secs`,
    # `runner started in 8.62 seconds` (not `Get started in 5 minutes`: people's time)
    rf"(?:passed|failed|built|compiled(?:{_SP}+successfully|{_SP}+with{_SP}+\d+{_SP}+(?:warnings?|errors?))?|executed|ran|loaded|installed|resolved|transpiled|bundled|(?<!be{_SP})ready|"
    rf"(?<!get{_SP})(?<!getting{_SP})started(?:{_SP}+(?-i:[A-Z][\w.$-]*))?){_SP}+in|finished{_SP}+'[^'\n]{{1,40}}'{_SP}+after|"
    rf"time:{_SP}*\[|"  # criterion's `time:   [336.55 ms 340.75 ms 345.51 ms]`
    # `Transferred 1073741824 bytes on 1 streams in 10.16s`, MySQL's `1 row in set (0.00 sec)`
    rf"(?:transferred|processed|indexed|imported|exported|uploaded|downloaded|parsed|migrated|inserted|scanned|copied)"
    rf"(?:{_SP}+[^\s]+){{0,6}}?{_SP}+in|rows?{_SP}+in{_SP}+set|"
    rf"total{_SP}+time|load{_SP}+time|elapsed|wall(?:[- ]clock)?|real|user|sys|ttft|ttfb|fcp|lcp|inp|fid|tbt|latency|time{_SP}+to{_SP}+first{_SP}+token|"
    rf"p50|p90|p95|p99|avg|average|mean|median|startup{_SP}+time|build{_SP}+time|generation{_SP}+time|"
    rf"inference{_SP}+time|response{_SP}+times?|time{_SP}+taken|runtime|duration|responses?|build|builds|loads?|loading|generat\w*|"
    rf"inference|startup|cold{_SP}+starts?|percentiles?|fastest|slowest|decode|prefill|faster|slower|speed|transcri\w*|render\w*|api){_E}"
    r"|걸렸|걸림|걸린|걸리|걸려|걸립|걸릴|소요|결과\s?[:：]|\d회차|만에|응답\s?시간|처리\s?시간|실행\s?시간|생성\s?시간|빌드\s?시간|추론\s?시간|지연\s?시간|"
    r"평균|레이턴시|TTFT|응답|처리|빌드|컴파일|로딩|기록|생성|추론|변환|조회|쿼리|단축|개선|감소|→|->|성능|빠름|빠르|느림|느려|최적화|속도|"
    rf"{_B}(?:GPU|CPU|(?i:compared)|take){_E}"
    # a timing label as tools print it: `Execution Time: 16.292 ms`, `Planning Time: 0.188 ms` (not a wait or a
    # person's time: `Wait time: 5s`, `Reading time: 6 min`)
    rf"|{_B}(?!(?i:wait|waiting|sleep|idle|read|reading|cool|lead|hold|grace|retention|expir\w*|down|up|cycle|session|screen|"
    rf"watch|study|travel|commute|prep|setup|set-up){_E})[A-Za-z]+{_SP}(?i:time){_SP}*:"
    # and in Korean: `compile 시간: 9ms`, `전체 시간: 3.6s` (not a wait, a break, a lifetime or people's time)
    r"|(?<![가-힣])(?!대기|휴식|쿨다운|보관|만료|유지|세션|체류|사용|작업|소요|예상|목표|회의|이동|준비|테스트|복구)[가-힣A-Za-z]{1,8}\s?시간"
    r"\s*(?:\*\*)?\s*[:：]"
)


# A statistic naming the duration right after it (`max: 7.84ms`, `95th 14.2ms`, `p(90)=11s`, `median 2ms`): on a line
# of two or more (`min: 5.08ms, med: 6.21ms, max: 7.84ms`), the summary of a measured distribution, so `max` is its
# largest sample, not a bound.
_STAT_KEY = (
    r"(?i:min|max|med|median|mean|avg|average|std(?:dev)?|p\(?\d{2}(?:\.\d+)?\)?|\d{2}(?:\.\d+)?(?:th|%)|최소|최대|평균|중앙값"
    r"(?:[ \t]+percentile)?)(?:\*\*)?[ \t]*[:=]?[ \t]*~?"
)
_STAT_KEY_BEFORE = lazy(rf"(?<![A-Za-z0-9_.-]){_STAT_KEY}$")
_STAT_LABEL = lazy(r"(?<![A-Za-z0-9_.-])(?i:min|max|mean|avg|average|median|p\d{2}(?:\.\d+)?)[ \t]*:")


def stat_summary(text: str, lo: int, hi: int) -> bool:
    """Whether the line `lo..hi` labels two statistics or more (`Min: 180,316.37 rows/s, Max: 200,346.56 rows/s`): a
    tool's summary of its runs, whose `Max` is the largest run, not a limit."""
    return len(_STAT_LABEL.findall(text, lo, hi)) >= 2
# A change between two durations (`dropped from 18min to 1min`, `from 1–3s to 90–140ms`, `from 11 to 3.3 seconds`): a before and an after,
# each measured (a setting changed so, `timeout from 30s to 60s`, is FR201's before this is asked).
_DUR = r"\d[\d,]*(?:\.\d+)?(?:[ \t]?[–-][ \t]?\d[\d,]*(?:\.\d+)?)?[ \t]?(?:ms|µs|μs|us|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)(?![A-Za-z])"
_FROM_TO = lazy(
    rf"{_B}(?i:from){_SP}+(?:~|≈|(?i:about|around){_SP}+)?(?:{_DUR}|\d[\d,]*(?:\.\d+)?){_SP}+(?i:down{_SP}+)?(?i:to){_SP}+"
    rf"(?:(?i:under|below|about|around|just){_SP}+|~|≈|<)?{_DUR}"
)
# A Korean verb of measured work at the end of the clause, further than _MEASURED looks (`base 모델의 경우 약 10.5초,
# large 모델의 경우 약 78.8초가 걸립니다`), on a line with no assumption, arithmetic, test length, time saved or bound
# (`1건당 10ms 소요하는 것으로 가정`, `10초 동안 요청을 보낼 때`, `2시간 → 30분 단축` of people's time).
_KO_LATE_MEASURED = lazy(r"걸렸|걸림|걸린|걸리|소요|단축|줄었|줄어|줄일|개선|감소|빨라|느려|늘어|늘었|증가")
_KO_REACHED_AFTER = lazy(r"(?:\*\*)?[ \t]*(?:미만|이하|이내)[^.\n\d]{0,12}?(?:달성|유지되었|유지됐|기록했|기록하였)")
_KO_LATE_NOT = lazy(r"가정|이론|예를|만약|라면|\*|×|동안|절약|목표|이내|이하|미만|최대")
# A key naming a setting, in any case or joined form (`retry_delay_ms`, `maxWaitMs`, `budgetSeconds`).
_SETTING_KEY = lazy(
    r"(?i:delay|wait|limit|budget|target|threshold|deadline|interval|backoff|sleep|window|period|timeout|ttl|expir|lifetime|max_?age|stale|cache|"
    r"debounce|throttle|wake_?up|poll|retry|heartbeat|linger|between|grace|keep_?alive|cooldown|lease)"
)
_LIMIT_WORD = lazy(rf"{_B}(?i:limits?|caps?|quotas?|allowance|max(?:imum)?|min(?:imum)?|valid|allowed|ranges?|values?|integer){_E}")
_RANGE_BEFORE = lazy(rf"{_B}(?i:range){_SP}*\((?i:min)[^()\n]{{0,12}}\):[^\n]*$")  # hyperfine's `Range (min … max):`
_STAT_ITEM = lazy(
    rf"(?<![A-Za-z0-9_.-]){_STAT_KEY}\d[\d,]*(?:\.\d+)?[ \t]?(?:ms|µs|μs|us|ns|s|secs?|seconds?|milliseconds?|초|분)(?![A-Za-z])"
)


# A table whose header row compares measured figures (`| 메트릭 | Before | After | 개선율 |`, `| Metric | Time |`):
# a duration in one of its rows reads as a measurement.
_MEASURED_HEADER = lazy(
    rf"{_MEASURED.pattern}|{_B}(?i:before|after|metrics?|current|time|times|speedup){_E}|메트릭|지표|개선율|차이|현재|시간|달성|지연"
)


# A bound, a goal or an estimate held against right beside a duration (`< 500ms`, `up to 5 minutes`, `최대 60초`, `(예상: 60초)`), or
# a line of goals, examples and assumptions: such durations are more often targets or illustrations (FR103); not the
# statistic of a run named by `최대`/`최소` (`최대 응답 시간: 33.71 ms`, `최소 지연`).
_BOUND_NEAR = lazy(
    rf"(?<![-=<])<(?![-!=>])|(?:(?<=[^\s>])|(?<=[^\s>][ \t])|(?<=[^\s>][ \t]{{2}}))(?<![-=<])>(?![-!=>])|≤|≥|<=|>=|{_B}(?i:under|within|up{_SP}+to|max(?:imum)?|at{_SP}+most|less{_SP}+than|more{_SP}+than|below|above|"
    rf"target|goal|slo|budget|ceiling){_E}|(?:최대|최소)(?!{_SP}?(?:응답|지연|처리|레이턴시))|이내|이하|미만|이상|초과|목표"
    rf"|\((?:예상|(?i:expected)){_SP}*:"  # `12.7초 (예상: 60초)`: the estimate a time is held against (an estimate alone is a claim)
)


# A measuring verb, then a bound: what it took, bounded (`taking more than 30 seconds`, `takes up to 200ms`).
_TOOK_BOUND_BEFORE = lazy(
    rf"{_B}(?i:took|takes|taking|take){_SP}+(?:(?i:more|less|longer|shorter){_SP}+than|(?i:up{_SP}+to|over|under|"
    rf"nearly|almost)){_SP}*~?$"
)


# Work a system does, then `in` and the time it did it in (`Vite starts in under 300ms`, `an 11-second clip
# transcribes in ~0.4 s`, `the suite now runs in 10-15 minutes`), bound or not.
_WORK_IN_BEFORE = lazy(
    rf"{_B}(?i:builds?|starts?(?:{_SP}+up)?|runs?|loads?|completes?|finishes|transcribes?|compiles?|renders?|boots?|"
    rf"responds?|returns?|answers?|processes|executes?|trains?|indexes|imports?|reads?|writes?|generates?|downloads?|"
    rf"uploads?|install(?:s|ed)|insert(?:s|ed)|pars(?:es|ed)|scann?(?:s|ed)|sync(?:s|ed)|migrat(?:es|ed)|deploy(?:s|ed)|"
    rf"resolv(?:es|ed)|fetch(?:es|ed)|sort(?:s|ed)|(?:en|de)cod(?:es|ed)|convert(?:s|ed)|built|ran|loaded|compiled|rendered|"
    rf"processed|executed|trained|indexed|imported|generated|finished|completed|returned|responded|downloaded|uploaded)"
    rf"(?:{_SP}+[^\s]+){{0,4}}?{_SP}+in{_SP}+(?i:~|about{_SP}+|around{_SP}+|roughly{_SP}+|under{_SP}+|"
    rf"less{_SP}+than{_SP}+|just{_SP}+|only{_SP}+)?$"
)


# Haskell criterion's report: `time                 892.0 μs   (885.7 μs .. 897.2 μs)`, `mean`, `std dev`.
_CRITERION_ROW = lazy(r"[ \t]*(?:time|mean|std dev)[ \t]{2,}\d[\d.]*[ \t]?(?:[nµμm]?s|us)[ \t]+\(")


# Work not done in the time given: `Unable to complete 100 samples in 5.0s` (the time allowed, not a measurement).
_UNABLE_BEFORE = lazy(rf"{_B}(?i:unable{_SP}+to|failed{_SP}+to|fails{_SP}+to|could{_SP}*n[o']t|can(?:no|')t){_E}")


# A duration in arithmetic (`60 seconds × 60 minutes`, `rows * 150ms`) or the length of what is generated (`generate
# 5 sec of video`): a worked example or a media length, not a measurement.
_WORKED_BEFORE = lazy(
    rf"(?:×|{_SP}\\?\*|{_B}(?i:generat\w*|produce\w*)(?:{_SP}+(?i:an?|~|about))?){_SP}*~?$"
)

_WORKED_AFTER = lazy(rf"{_SP}*×|{_SP}+\*{_SP}")


# An approximation right before a duration in English (`~2 minutes`, `about 4 minutes`, `roughly 30s`): on the
# labelled sentences such a time is nearly always one that was measured and rounded, rarely a setting (a Korean
# `약`, `~` is not: there, as often a plan's estimate).
_APPROX_BEFORE = lazy(rf"(?:~|≈|{_B}(?i:about|around|approximately|approx\.?|roughly){_SP}+~?)[ \t]*(?:\*\*)?$")


# What makes a rounded time something else: a bound after it (`~5min or even less`), a point in a run (`30 minutes
# into training`), downtime, a setting (`setting linger.ms to approximately 10 ms`).
_APPROX_NOT = lazy(rf"^[ \t]*(?i:or{_SP}+(?:even{_SP}+)?(?:less|more|so)|into|(?:of{_SP}+)?downtime|per{_SP}+config){_E}")


_SET_TO_BEFORE = lazy(rf"{_B}(?i:set(?:ting)?|configured?){_E}[^.;\n]{{0,30}}{_B}to{_SP}+$")


_HANGUL = lazy(r"[가-힣]")


# A line that is a label and its value: `Typechecking: 1m 11s`, `- **npm install**: ~6 minutes`.
_LINE_LABEL = lazy(
    r"[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?(?P<label>[^\s:|][^:|\n]{0,38}?)(?:\*\*)?[ \t]*:[ \t]*(?:\*\*)?[ \t]*"
    r"(?:~|(?i:about|around)[ \t]+)?$"
)


_CAMEL = lazy(r"[a-z][A-Z]")


_PLAN_LABEL = lazy(r"(?i:free|paid|hobby|enterprise|premium|starter|business|pro|teams?|basic|standard|plus)(?: (?i:plan|tier))?")


_VERSUS_AFTER = lazy(rf"(?:\*\*)?{_SP}*(?:\([^()\n]{{0,30}}\){_SP}*)?(?i:vs\.?|versus){_E}")
_VERSUS_BEFORE = lazy(rf"{_B}(?i:vs\.?|versus){_SP}*~?(?:\*\*)?{_SP}*$")


_SEPARATOR_ROW = lazy(r"[ \t]*\|?[ \t]*:?-{2,}")


# A table cell holding nothing but a duration (`| 1.3s |`, `| **~17.5 min** |`, `| `17s` 👍 |`, `| 142ms (약 28배) |`):
# a row of two or more, with no bound in it, is a row of measured times (a results table), whatever its header says.
_DURATION_CELL = lazy(
    r"[ \t*_~≈`]*(?:약[ \t]?)?\d[\d,]*(?:\.\d+)?(?:[ \t]?[-~–][ \t]?\d[\d,]*(?:\.\d+)?)?[ \t]?"
    r"(?:ms|µs|μs|us|ns|s|secs?|seconds?|mins?|minutes?|m\d+(?:\.\d+)?s|"
    r"h|hrs?|hours?|분[ \t]?[0-5]?\d(?:\.\d+)?[ \t]?초|시간[ \t]?[0-5]?\d[ \t]?분|초|분|밀리초|시간)[ \t*_`]*(?:[👍👎✅❌⚡🚀🏆🥇🥈🥉◆][ \t]*)*(?:\((?:약[ \t]?)?[\d.,]+[ \t]?(?:x|×|배|%)\)[ \t*_]*)?"
)


_ROW_BOUND = lazy(rf"[<>≤≥]|{_B}(?i:under|within|up{_SP}+to|max(?:imum)?|at{_SP}+most|less{_SP}+than|more{_SP}+than){_E}|이내|이하|미만|최대")


# What a table of one duration a row holds as often as measured times: waits, delays, windows, durations of a run
# or of media, lengths, downtime, prices and billing, defaults (with _SETTING_WORDS, _TARGET_WORDS, _LIMIT_WORD, _GOAL_LINE).
_LONE_NOT = lazy(
    rf"{_B}(?i:delays?|wait\w*|pause\w*|windows?|durations?|length|period|warm-?up|ramp\w*|cool-?down|downtime|"
    rf"price\w*|pricing|billing|billed|cost|default|every|after|per|e\.g\.|example|lifetime|age|ago|uptime){_E}"
    r"|길이|분량|기간|대기|설정|예상|지연\s?삭제|가격|요금|과금|기본|마다|후\b|전\b|예:|보존|유지|지속"
)


_SHARE_FIRST_CELL = lazy(r"[ \t]*\|?[ \t*_]*\d+(?:\.\d+)?[ \t]?%")  # `| 99.9% | 43.2 minutes |`: an availability's downtime


# A plan's table: a column of the time each step is expected to take, beside columns of its order and its task.
_PLAN_COLUMN = lazy(r"[ \t*_]*(?:예상\s?(?:소요(?:\s?시간)?|시간)|소요|(?i:estimated?(?:[ \t]+time)?|eta|effort))[ \t*_]*")


# What a tool prints before a time on its line: `go test`'s `ok      github.com/x/y   83.856s`, a latency
# distribution's `99%      2.6 ms` (ab, hey, wrk), vegeta's `Latencies     [min, mean, 50, 95, 99, max]  90.4ms, …`.
_TOOL_ROW_BEFORE = lazy(
    r"[ \t]*(?:(?:ok|FAIL)[ \t]+[\w./-]+|\d{2}(?:\.\d+)?%|Latencies[ \t]*\[min,[^\]\n]{0,30}\](?:[ \t]+\d[\d.]*[µa-z]{1,2},)*)[ \t]+"
)
_GBENCH_ROW = lazy(r"[ \t]*\S+[ \t]+\d[\d.]*[ \t]?(?:ns|us|µs|ms)[ \t]+\d[\d.]*[ \t]?(?:ns|us|µs|ms)[ \t]+\d+\b")  # Google Benchmark
# A web framework's request log (`Completed 200 OK in 3080ms (Views: 192.8ms …)`, `Sent 200 in 216µs`), and pytest's
# `--durations` report (`93.09s call     tests/test_x.py::test_y`).
# pytest's `4011 tests collected in 6.61s` too (cargo's `Finished … target(s) in 0.01s`: targets._TOOL_TIME_BEFORE).
_LOG_TIME_BEFORE = lazy(
    r"(?:\bCompleted[ \t]+\d{3}[ \t]+[A-Za-z][A-Za-z ]{0,30}?[ \t]+in|\bSent[ \t]+\d{3}[ \t]+in|\b(?:Views|ActiveRecord|Allocations)[ \t]*:"
    r"|\b(?:collected|passed|failed)[ \t]+in)[ \t]*$"
)
# pytest's `--durations` lines; a load tool's statistics named after the figure (`410.00 ms max latency, 10 ms 50th`)
_PYTEST_DURATION_AFTER = lazy(r"[ \t]+(?:(?:call|setup|teardown)[ \t]+\S+::|(?:avg|max|min|mean)[ \t]+latency\b|\d{2}(?:\.\d+)?th\b)")


# A row of values outside a table: a label, then a duration and another duration or a rate, and nothing but values
# (sizes too) (`> xterm 25 ms 28 ms`,
# `Django 설치 8.2초 0.08초 102배`, `time for request:  474us  16.03ms  758us`): a benchmark's row as printed.
_VALUE = (
    r"\d[\d,]*(?:\.\d+)?[ \t]?(?:ms|s|sec|µs|μs|us|ns|min|초|분|밀리초|배|x|×|%|[KMGT]i?B(?:/s(?:ec)?)?|"
    r"(?:req|tok|ops)/s(?:ec)?)(?![A-Za-z가-힣])"
)
# the label: no digit, or digits ended two spaces before the values (`blake3 (64MiB)   1.00 GiB   0.060s   17909.1 MB/s`)
_VALUE_ROW = lazy(
    rf"[ \t]*(?:>[ \t]*)?(?P<label>[^\d\s|`<>#*-](?:[^\d|`<>=]{{0,40}}?|[^|`<>=]{{0,40}}?[ \t](?=[ \t])))[ \t]+{_VALUE}"
    rf"(?:[ \t]+{_VALUE})+[ \t]*"
)
_ROW_DURATION = lazy(r"\d[ \t]?(?:ms|s|sec|µs|μs|us|ns|min|초|분|밀리초)(?![A-Za-z가-힣])")
_ROW_RATE = lazy(r"\d[ \t]?(?:[KMGT]i?B/s(?:ec)?|(?:req|tok|ops)/s(?:ec)?)(?![A-Za-z가-힣])")


def value_row(text: str, lo: int, hi: int) -> bool:
    """Whether the line `lo..hi` is a row of values (_VALUE_ROW) holding a duration and another duration or a rate,
    its label naming no setting or target: its durations are measured, and its ratios compare them."""
    m = _VALUE_ROW.fullmatch(text, lo, hi)
    if m is None:
        return False
    durations = len(_ROW_DURATION.findall(text, lo, hi))
    if durations == 0 or durations + len(_ROW_RATE.findall(text, lo, hi)) < 2:
        return False
    label = m.group("label")
    return not any(words.search(label) for words in (_SETTING_WORDS, _TARGET_WORDS, _LIMIT_WORD, _TARGET_COLUMN))


def _after_number(text: str, lo: int, hi: int) -> int:
    """Where a window `text[lo:hi]` before a number starts once any number in it is left out."""
    for i in range(hi - 1, lo - 1, -1):
        if text[i].isdigit():
            return i + 1
    return lo


def _before_number(text: str, lo: int, hi: int) -> int:
    """Where a window `text[lo:hi]` after a number ends once any number in it is left out."""
    for i in range(lo, hi):
        if text[i].isdigit():
            return i
    return hi


class _Context(_Tables):
    def measured(self, start: int, end: int) -> bool:
        """Whether a duration reads as a measurement: a word of measured work within 40 characters before it or 25
        after it on its line (or in its table's header row), and no bound, goal, example or assumption near it (in
        a table row: in its own cell)."""
        text = self.text
        lo, hi = self._bounds(start)
        row = self._in_row(lo, start)
        near_lo, near_hi = lo, hi
        if row:  # a table row: the number's own cell
            near_lo = max(lo, text.rfind("|", lo, start) + 1)
            near_hi = text.find("|", end, hi)
            near_hi = hi if near_hi < 0 else near_hi
        if (
            _MEASURED_KEY_BEFORE.search(text, max(near_lo, start - 40), start)
            or _TOOL_ROW_BEFORE.fullmatch(text, lo, start)
            or _GBENCH_ROW.match(text, lo)
            or _CRITERION_ROW.match(text, lo, hi)
            or value_row(text, lo, hi)
            or _LOG_TIME_BEFORE.search(text, max(near_lo, start - 40), start)
            or _PYTEST_DURATION_AFTER.match(text, end)
            or tool_time(text, start, end)
        ):
            return True  # `total_time="1.49s"`: a measured value in a log line; `ok  pkg  83.856s`, `99%  2.6 ms`
        if _TOOK_BOUND_BEFORE.search(text, max(near_lo, start - 30), start) or (
            _WORK_IN_BEFORE.search(text, max(near_lo, start - 60), start)
            and not _UNABLE_BEFORE.search(text, max(near_lo, start - 60), start)
        ):
            return True  # `it is taking more than 30 seconds`, `Vite starts in under 300ms`: what was measured
        if (
            _HANGUL.search(text, start, min(hi, end + 80))
            and _KO_LATE_MEASURED.search(text, end, min(hi, end + 80))
            and not _KO_LATE_NOT.search(text, lo, hi)
        ):
            return True  # `… 약 78.8초가 걸립니다`: the clause ends in a verb of measured work
        if _STAT_KEY_BEFORE.search(text, max(near_lo, start - 24), start) and self._stat_line(start):
            return True  # `min: 5.08ms, med: 6.21ms, max: 7.84ms`: a distribution's summary
        if text.find("from", max(near_lo, start - 40), start) != -1 or text.find("to", max(near_lo, start - 40), start) != -1:
            for m in _FROM_TO.finditer(text, max(near_lo, start - 60), min(near_hi, end + 60)):
                if m.start() <= start and end <= m.end():
                    before = text[max(lo, m.start() - 40) : m.start()]
                    if not (_SETTING_WORDS.search(before) or _TARGET_WORDS.search(before) or _LIMIT_WORD.search(before)):
                        return True  # `from 4.3s to 2.3s`: a change between two measured times
                    break
        if _RANGE_BEFORE.search(text, max(near_lo, start - 40), start):
            return True  # `Range (min … max):   414.4 ms … 422.7 ms`: the fastest and slowest runs
        if _KO_REACHED_AFTER.match(text, end):
            return True  # `P90 응답 시간 1ms 미만 달성`: a bound reached, a measurement
        if _BOUND_NEAR.search(text, _after_number(text, max(near_lo, start - 20), start), start) or _BOUND_NEAR.search(
            text, end, _before_number(text, end, min(near_hi, end + 10))
        ):
            return False  # a bound beside it (not one that binds the number before or after it: `under 1 ms, with 3 ms`)
        if (_GOAL_LINE.search(text, near_lo, near_hi) if row else self._flag(start, "goal_line")):
            return False
        if _WORKED_BEFORE.search(text, max(lo, start - 16), start) or _WORKED_AFTER.match(text, end):
            return False
        label_end = max(lo, text.find("|", text.find("|", lo) + 1, start)) if row else lo
        if _MEASURED.search(text, max(lo, start - 40), min(hi, end + 25)) or (
            _MEASURED.search(text, lo, label_end)
            and not _LIMIT_WORD.search(text, lo, label_end)
            and not _BOUND_NEAR.search(text, lo, label_end)  # `| 최대 실행 시간 |`: a limit
            and not _SETTING_WORDS.search(text, lo, label_end)  # `| animation-delay | 시작 지연시간 |`: a setting
        ):
            return True  # a measured word near it, or in its row's label (`| 응답 시간 | A: 33ms, B: 81ms, C: 96ms |`)
        if _VERSUS_AFTER.match(text, end) or _VERSUS_BEFORE.search(text, max(lo, start - 12), start):
            return True  # `~5s vs ~300ms`, `1m41s vs 32s vs 25s`: times compared
        if not row and self._labelled_line(lo, start):
            return True  # `Typechecking: 1m 11s`, `- npm install: 6 minutes`: a step's time, as a list reports it
        approx = _APPROX_BEFORE.search(text, max(lo, start - 16), start)
        if approx and not _HANGUL.search(text, max(lo, start - 40), min(hi, end + 25)) and not (
            _APPROX_NOT.search(text[end : min(hi, end + 24)])
            or _SET_TO_BEFORE.search(text, max(lo, start - 60), approx.start())
            or self._flag(start, "media")  # `single-clip length … about 15 to 60 seconds`: a clip's length
        ):
            return True  # `~18 seconds`, `in about 4 minutes`: a time someone read off a run, rounded
        if row and _DURATION_CELL.fullmatch(text, near_lo, near_hi) and self._duration_row(lo, hi):
            return True
        header = self._header_row(lo) if row else ""
        return _MEASURED_HEADER.search(header) is not None

    def _stat_line(self, start: int) -> bool:
        """Whether the line holding `start` names two or more durations by their statistic (`min: 5.08ms, …, max:
        7.84ms`) and no goal (worked out once per line)."""
        lo, hi = self._line(start)
        cache: dict[int, bool] = self.__dict__.setdefault("_stat_lines", {})
        if lo not in cache:
            items = [m.group() for m in _STAT_ITEM.finditer(self.text, lo, hi)]  # not `최소 50ms, 최대 10000ms로 설정`
            bounds_only = all(item.startswith(("최소", "최대")) for item in items) and "평균" not in self.text[lo:hi]
            cache[lo] = len(items) >= 2 and not bounds_only and not _GOAL_LINE.search(self.text, lo, hi)
        return cache[lo]

    def _labelled_line(self, lo: int, start: int) -> bool:
        """Whether an English line is a label and its duration (`Lint: 4m 37s`, `- unit: around 4 sec`): the
        label before the number is all the line has before it, and names no setting (`MaxPause:`, `timeout:`)."""
        m = _LINE_LABEL.match(self.text, lo, start)
        if m is None or _CAMEL.search(m.group("label")) or _HANGUL.search(self.text, lo, self._bounds(start)[1]):
            return False
        if _PLAN_LABEL.fullmatch(m.group("label").strip(" *_")):
            return False  # `Pro: 180 seconds`, `Starter: 10 seconds`: a plan's limit
        label = m.group("label")
        return not (_SETTING_WORDS.search(label) or _TARGET_WORDS.search(label) or _BOUND_NEAR.search(label))

    def _duration_row(self, lo: int, hi: int) -> bool:
        """Whether the table row at `lo` is a row of measured times: two or more of its cells hold nothing but a
        duration, no cell holds a bound, and its first cell is not an availability's percentage (worked out once
        per row)."""
        cache: dict[int, bool] = self.__dict__.setdefault("_duration_rows", {})
        if lo not in cache:
            row = self.text[lo:hi]
            cells = row.strip().strip("|").split("|")
            times = sum(_DURATION_CELL.fullmatch(c) is not None for c in cells)
            cache[lo] = not (_ROW_BOUND.search(row) or _SHARE_FIRST_CELL.match(row)) and (
                times >= 2 or times == 1 and self._plain_row(row, self._header_row(lo))
            )
        return cache[lo]

    @staticmethod
    def _plain_row(row: str, header: str) -> bool:
        """Whether a table row with one cell of nothing but a duration reads as a measured time: neither it nor its
        header names a setting, a limit, a goal, a length of media or a price (`| Retry attempt | Delay |` over
        `| 2 | 10 seconds |`, `| 길이 | 5-30초 |`)."""
        both = f"{row}\n{header}"
        return header != "" and not (
            _SETTING_WORDS.search(both) or _TARGET_WORDS.search(both) or _LIMIT_WORD.search(both)
            or _GOAL_LINE.search(both) or _LONE_NOT.search(both)
        )

    def _header_row(self, lo: int) -> str:
        """The header row of the table whose body row starts at `lo` (the row above its `|---|` separator), or ""
        (worked out once per row)."""
        cache: dict[int, str] = self.__dict__.setdefault("_header_rows", {})
        if lo not in cache:
            cache[lo] = self._find_header_row(lo)
        return cache[lo]

    def _find_header_row(self, lo: int) -> str:
        text = self.text
        hi = lo - 1
        for _ in range(200):
            if hi <= 0:
                return ""
            start = text.rfind("\n", 0, hi) + 1
            row = text[start:hi]
            if "|" not in row:
                return ""
            if _SEPARATOR_ROW.match(row) and "|" in row and set(row.strip()) <= set("|-: \t"):
                return text[text.rfind("\n", 0, max(0, start - 1)) + 1 : max(0, start - 1)]
            hi = start - 1
        return ""


    def spread_kind(self, start: int, end: int) -> str:
        return "target" if self._target(start, end) else "claim"

    def _media_column(self, start: int) -> bool:
        """Whether a number is in a table column whose header names the length of a recording, or the time a plan's
        step is expected to take (`| 순서 | 작업 | 예상 시간 |`: people's work, planned)."""
        lo = self.text.rfind("\n", 0, start) + 1
        if not self._in_row(lo, start):
            return False
        header = _cell_context(self.text, start)[2]
        if _MEDIA_HEADER.search(header) is not None:
            return True
        heads = "|".join(_header_row(self.text, lo))
        if _PLAN_TASK.search(heads) and _CHORE_COLUMN.search(heads):
            return True  # `| 작업 | 소요 시간 | 주기 | 월간 시간 |`: people's recurring work and its monthly sum
        if _PLAN_COLUMN.fullmatch(header) is None:
            return False
        return _PLAN_ORDER.search(heads) is not None and _PLAN_TASK.search(heads) is not None

    def classify(self, start: int, u_start: int, end: int, kind: str) -> tuple[int, str] | None:
        """(end, "claim" or "target") for a number with a unit, or None when it is neither."""
        if kind in _RELATIVE:
            if self._hypothetical(start):
                return None
            if self.text.startswith("?", end) and _QUESTION_START.search(self.text, max(0, start - 3), start):
                return None  # `How much faster would it run? 2x? 5x?`: guesses asked, not reported
            new_end = self._relative(start, u_start, end, kind)
            if new_end is None:
                return None
            return new_end, ("target" if self._target(start, new_end) and not self._expected(start) else "claim")
        if kind in _DURATIONS:
            if self._media_column(start):
                return None  # `| 오디오 길이 | 처리 시간 |` over `| 10초 | 1.2초 |`: the 10초 is the recording's length
            if tool_time(self.text, start, end):
                return end, "claim"  # a tool's report of a run's time, whatever option or `target(s)` comes before
            return self._duration(start, u_start, end, kind)
        if (
            kind in _SPAN_KINDS
            and kind not in ("bw", "bits", "flops")  # `순차 읽기 속도 7,000MB/s`: a drive's read speed
            and (human := _HUMAN_RATE_BEFORE.search(self._before(start, 60))) is not None
            and not (_REACHES_BEFORE.search(self._before(start, 60), 0, human.start()))
        ):
            return None  # `human reading speed is roughly 4–7 tokens per second`: how fast people read, not a system
        if kind == "fps" and self._flag(start, "video"):
            return None  # the frame rate of a video, not the speed of a system
        if kind == "persec" and self.text[u_start:end].lower() == "rps" and _LOAD_RATE_AFTER.match(self.text, end):
            return end, "target"  # `(50 rps, 5분간)`: the rate a load test was set to send
        if kind == "bits" and self._flag(start, "media") and "bps" in self.text[u_start:end]:
            return None  # `a bandwidth of 1.1 kbps` on an audio line: the bit rate of a codec, not of a system
        if self._hypothetical(start):
            return None
        return end, ("target" if self._target(start, end) else "claim")

    def extra(self, m: re.Match[str], rx: re.Pattern[str]) -> Candidate | None:
        """The claim or target a match of an extra pattern `rx` (one of vocab._EXTRA) is, or None."""
        if rx is _TOOL_ROW or rx is _TOOL_INLINE:  # a row a benchmark tool prints: its measured numbers
            first = next(k for k, v in m.groupdict().items() if v is not None)  # the first group of the row's form
            last = {"n1": "n3", "a1": "a3", "b1": "b3", "p1": "p1", "z1": "z1", "f1": "f1", "j1": "j1", "t1": "t1", "r1": "r3"}.get(first)
            end = m.end(last) if last else m.end()
            start = m.start(first)
            return (start, end, self.text[start:end], "", "claim", "FR146")
        start = m.start("n1")
        if rx is _PER_SECOND:
            num_end = m.end("n3") if m.group("n3") is not None else m.end("n1")
            start = m.start()
            if self._hypothetical(m.start("n1")):
                return None  # `예를 들어, … 초당 10개의 토큰`: an illustration
            unit = "tok/s" if m.group("what") == "토큰" else "B/s" if m.group("bytes") else "/s"  # 초당 40건: items per second
            unit = "bit/s" if m.group("bits") else unit  # 초당 3.6기가비트: a link's or a bus's bit rate
            rule = {"tok/s": "FR111", "B/s": "FR116", "bit/s": "FR113"}.get(unit, "FR112")  # 초당 500MB: a bandwidth
            return (start, m.end(), self.text[m.start("n1") : num_end], unit, self.spread_kind(start, m.end()), rule)
        if rx is _WORD_RATIO:  # `twice as fast`: a speed-up, unless hoped for or supposed
            start = m.start()
            kind = "target" if self._target(start, m.end()) else "claim"
            return None if self._hypothetical(start) else (start, m.end(), m.group("n1"), "×", kind, "FR121")
        if rx is _PREFIX_X:
            start = m.start()
            if self._relative(m.start(), m.start(), m.start(), "x") is None and not self._bare_cell(start, m.end()):
                return None
            return (start, m.end(), m.group("n1"), "×", "claim", "FR121")
        if rx is _BENCHSTAT_CELL:  # benchstat's output: two such cells on a line, or one beside its `(p=…)`
            lo, hi = self._line(start)
            line = self.text[lo:hi]
            if "(p=" not in line and len(_BENCHSTAT_CELL.findall(line)) < 2:
                return None  # one `5m ± 2%` alone is not a benchstat row
            return (start, m.end(), m.group("n1"), "/op", self.spread_kind(start, m.end()), "FR115")
        if rx is _EXPLAIN_TIME:  # EXPLAIN ANALYZE's times to the first and the last row, in milliseconds
            return (start, m.end(), self.text[start : m.end()], "ms", "claim", "FR115")
        if rx is _JMH_ROW:  # JMH's output: the unit column after the score
            unit = "/op" if m.group("u").endswith("/op") else "/s"
            return (start, m.end(), m.group("n1"), unit, self.spread_kind(start, m.end()), "FR115")
        if rx is _TEST_THEN_NUMBER:
            return (start, m.end(), m.group("n1"), "tok/s", self.spread_kind(start, m.end()), "FR141")
        if rx is _LABEL_UNIT:
            return (start, m.end(), m.group("n1"), "", self.spread_kind(start, m.end()), "FR142")
        if rx is _METRIC_LABEL:
            lo = self._line(start)[0]
            key = _METRIC_KEY.search(self.text, max(lo, m.start() - 40), m.start())
            if (
                key is None
                or key.group("per_sec") and _RATE_CAP.search(self.text, lo, m.start())  # `Rate limit (req/sec): 100`
                or self._hypothetical(start)
                or _SETTING_WORDS.search(self.text, lo, start)
                or self.text.startswith(";", m.end("n1"))  # `(QPS: 4000; key: 16 bytes)`: a condition of a run
            ):
                return None  # no metric named before the colon; `timeout duration: 30`: a setting
            return (start, m.end("n1"), m.group("n1"), "", self.spread_kind(start, m.end("n1")), "FR145")
        if rx is _RTF:
            return (start, m.end(), m.group("n1"), "RTF", self.spread_kind(start, m.end()), "FR143")
        if rx is _TRANSFER:  # wrk's `Transfer/sec:    169.25MB`
            return (start, m.end(), m.group("n1"), "B/s", "claim", "FR115")
        if rx is _UNIT_BEFORE:
            if self._hypothetical(start):
                return None  # `실 TPS : 1050 / 40 = 26.25`: arithmetic shown
            u = m.group("u")
            unit = "FLOPS" if u.endswith("FLOPS") else "B/s" if u.endswith(("B/sec", "B/s")) else "/s"
            rule = "FR116" if unit != "/s" else "FR115" if u.endswith(("/sec", "/s")) else "FR112"  # FR115: a tool's output
            return (start, m.end(), m.group("n1"), unit, self.spread_kind(start, m.end()), rule)
        if rx is _FRACTION:
            if self._hypothetical(start):
                return None
            end = m.end("n1")
            return (start, end, m.group("n1"), "×", self.spread_kind(start, end), "FR121")
        if rx is _METRIC_UNIT:
            name = self.text[max(self._line(start)[0], m.start() - 80) : m.start()]
            if _SETTING_WORDS.search(name.replace("_", " ")) or _SETTING_KEY.search(name):
                return None  # `request_timeout_seconds 30`, `"retry_delay_ms": 500`: a setting
            if "uptime" in name.lower():
                return None  # Redis's `uptime_in_seconds:73`: how long a process has run, no work timed
            unit = (m.group("unit") or m.group("camel")).lower()
            return (start, m.end(), m.group("n1"), "s" if unit.startswith("sec") else "ms", "claim", "FR144")
        return (start, m.end(), m.group("n1"), "tok/s", self.spread_kind(start, m.end()), "FR141")


