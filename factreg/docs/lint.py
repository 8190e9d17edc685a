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
  `tokens per second`, `10 to 29 tokens max per second`, `토큰/초`, `초당 28토큰`, `초당 40건`, `it/s`, `files/sec`,
  `words per second`, `chars/초`, `req/s`, `RPS`, `fps` unless the line is about a video, `GB/s`, bit rates (`Gbit/s`,
  `Mbps`; not a codec's on an audio line), `TOPS`),
  `ms/token`, ratios (`28×`, `28x faster`, `3 times slower`, `3.1배`, `x2.88`) and percentages, `±` spreads,
  ranges (`30~60초`, `2 to 3 seconds`, `155 → 732 chars/초`), and units written elsewhere (`Benchmark duration
  (s): 19.08`, `pp512 560 -> 180`, `8000pp / 400tg t/s`, `| **195** t/s |`);
- ratios and percentages are claims when a comparative follows (`3.1× slower`, `20% 더 빠름`, `4.1x 향상`) or the
  nearest noun is a performance one (`TTFT 50% 감소`, `+50% TG uplift`, `improves performance by ~20%`,
  `20~40% 속도 향상`), not when it is memory, size, cost, quality or a count (`모델 크기를 4-8배 줄여`,
  `compresses 16x`, `메모리 사용량 50-75% 감소`, `16배 큰 컨텍스트`, `토큰 수 50% 감소`, downtime, session or
  development time and speed, scale factors `1.25x 만큼 확대된`, quality scores `by 98% on realism`); a
  percentage needs a change (`85% 성능 유지` is quality kept) unless it is a share of a time or of a speed ceiling
  (`takes 10.8% of SD's training time`, `throughput lands at 50–80% of this ceiling`); what people do faster is
  not speed (`10배 빠른 개발`); an aside in parentheses is skipped when looking for the noun (`30% (on 1536x1536)
  speed improvements`); a bare ratio in a table cell or after a performance noun is a speed-up; percentages in a
  table row of measured times are its changes, not when the row holds a target (`| < 500ms | 150ms | 333% |`:
  the share of the target reached); `−17% from d0 to d32K` is a change between two conditions;
- targets: an unchecked `[ ]` item, target words near the number (`target`, `goal`, `SLO`, `budget`,
  `threshold`, `목표`, `요구`, `권장`, `해야`, `유지`, `적절하다`) in the number's clause (not another clause's:
  `시간을 85% 줄이고 메모리 요구 사항을`), a rubric (`Good: < 600ms`), `keep … under N`, and in Korean an upper
  bound (`< 200ms`, `500ms 이하`, `이내`, `미만`) or a lower bound on a rate (`> 100 req/s`) unless the clause
  states a fact (`✅`, `[x]`, `달성`, `수 있다`, `보여주며`, a past tense or a present declarative: `5ms 이내로
  돌아온다`), gives a statistic (`< 50ms (평균)`), calls it fast (`**빠른 장애 조치**: 30초 이내`) or reports a
  test's result; in a target-vs-result table row, a bound alone in a cell before the result's cell; thresholds in
  conditions (`2초 넘으면`, `5초 이상 … 경우`, `exceeds 200 ms`, `requests where TTFB was greater than 2 s`, `if …
  does not respond within 100 s`), quotas (`15분에 5회`), delays before a retry (`500ms 후 한 번 더`), a person
  holding a button (`hold … for 10 seconds`) and *settings*: a duration after or before `timeout`, `interval`,
  `sleep`, `retry`, `every`, `keep-alive`, `keep loaded for`, `TTL`, `expiry`, `animation`, `debounce`,
  `overlap`, `타임아웃`, `주기`, `간격`, `대기`, `만료`, `디바운싱`… or a configuration key (`duration: 600초`,
  `jitterBufferTarget: 150ms`; a camelCase key starts with its lower-case word: `PyTorch: 5.2 ms` is a time), a
  default or adjustable value (`5초 기본값`, `0.1초 (조정 가능)`), a value asked
  for or set (`36fps를 요청`, `capped at 30 fps`), a table row of a parameter said to be a setting (`| Frame
  Duration | 20 ms | … 설정 |`), a test's configured length (`10초 벤치마크`, `1분간 … 테스트`, `Run the benchmark
  for 60 seconds`, `Tested with 50 users for 10 minutes`, `measure for 120 s`), a command-line option (`--duration
  30s`), a warm-up (`a 5 s warm-up`), a wait before a retry (`Wait 10 seconds before retrying`, `3초 후 자동으로`),
  a cache lifetime (`Cache responses for 60 seconds`), a literal (`"30s"`), unless work right before the number
  took it (`The cron job … takes 5 minutes`); a time between tokens is measured, not a setting (`Chunk interval: ~15ms between tokens`).

Not claims either: clock times (`02:30`, `새벽 2시 30분`, `2:30 PM`), dates, counts (`3번`, `3 runs`, `n=5`),
hardware counts and products (`2 × RTX 2080 Super`: a `×` or `x` followed by a capitalised word or a number),
sizes (`22 GB`), versions, ports and addresses, test names (`tg32`, `tg_3s`), HTTP status codes (`401s`), names
(`-5s-Diffusers`, `high-load-5min`), minutes used as a schedule (`30분마다`, `10분 후`, `5 minutes ago`, `Last 5
minutes`), quotas per period (`월 60분`), resolutions (`1초 단위`), reading times (`6 min read`), lengths of video
beside a frame rate or used as an adjective on a video line (`≈ 7.9 s at 24 FPS`, `5 second Text-to-Video model`),
other lengths of media (`10초 길이의 음성`, `2 minutes long`, `a 10-minute podcast`, `최대 30초까지 녹음`), lengths
and windows of inputs (`inputs shorter than 30 seconds`, `in 30-second windows`), uptime (`2시간째 실행 중`), time
people spend (`10분 더 쓰는`, `30+ minutes of dependency wrestling`, `It took me 2 hours`, `set up in 5 minutes`,
`5분 안에 설치`), context windows (`128K tokens of context, 4x more`), examples about an indefinite system (`For
example, a system can generate …`), assumptions (`3초 걸린다고 가정하면`), and quoted examples (`"…2초로
증가했다"처럼`).

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

Later classes (met in a batch of real sentences): an indefinite system or answer as the subject of a worked
example (`A model generating 100 tok/s …`, `If a model generates …`, `a 150-token answer appears in …`, `어떤 서버의
… 7초라고 하자`), `might`, a quoted example followed by `면`, an aside in parentheses that does not set the mood;
requirements and perception (`shall`, `tolerate`, `notice`, `feels`, `Feature Request`, `…여야 한다`, `용납`,
`느낌`), idle times (`after 5 minutes of inactivity`, `30분 이상 비활성`), a minimum or default value, a window named
by a duration (`a 900-second sending window`), `넘기면`, a value changed (`5초에서 12초로 변경`); `tps`, `TFlops`, a
magnitude before a rate (`10K req/s`, `390M tokens/day`), `3X the performance`; a signed percentage alone (`Vulkan
+5.3%`, `| **+21%** |` unless the row counts things) and a change said to be of speed (`regressed by 14%`, `5%
behind`); a unit in a row's label (`| Latency (ms) | 22.68 |`, `(prompt processing, seconds)`), `초당 토큰 생성
속도가 10토큰`; a statistic or a wait for work before a duration (`평균 5~10초 (SMTP 대기)`, `완료 대기 (2-3분)`),
`one token every 30 ms`; not speed: productivity, `사이즈`, rates such as `이탈률`, paying, tokens used; media
lengths (`영화`, `6.0s @ 48kHz`, `recording length: 5 s`); a step after a delay (`10초 후 →`); a metric whose name
holds its unit (`ttft_seconds_sum 0.11`, not `…_timeout_seconds 30`); `on long context` is a condition, not the
object of a change; a setting word in an aside before a number is not the number's (`불안정(타임아웃)으로 5초 지연`).

Sentence-level readings (a fourth batch; general mechanisms rather than phrases): a bound (`<`, `under`, `이하`) in
a sentence that speaks of targets anywhere, or inside an example (`(e.g., p99 TTFT < 1 s)`), is a target; so is a
number in a Korean sentence that ends by naming an aim or a criterion (`… 것이 목표입니다`, `… 기준으로 한다`), a
perception (`어색해질`, `느끼며`), a check of a capability (`… 수 있는지 확인`) and a verdict used as a label (`양호:
1~3초`). Korean illustrations and definitions (`ex)`, `이론적으로`, `생각해 보세요`, `…를 의미한다`, `…수 있다는 것`)
and a number inside a Korean condition (before its `-면` in the same clause: `2분으로 줄이면?`, not the outcome
`캐시를 쓰면 … 50ms`, nor `1~2분이면 충분`) are not reports, unless the sentence is in the past; `예를 들어` with a
condition makes the whole sentence an example. A duration proposed or changed as a setting (`raise start_period
from 120s to 600s`, `I suggest we increase this to …`, `set at 60 seconds`, `a 60-second starting period`, `15분
플래토`), a setting key after a comma (`vUser: 100, duration: 5분`), and a threshold whose outcome is a failure (`if …
takes longer than 30 seconds, … fails`, `up to 5 minutes per request before failing`) and a delay before an event
that is set (`after 5 minutes it is unloaded`) are targets; people's rates (`human reading speed is 4–7 tokens per
second`, unless a system achieves it) and people waiting (`빌드 기다리는 데`) are not claims; the head noun of a
compound decides (`73%의 추론 비용 절감` is a cost); traffic and computation (`트래픽`, `계산`) are not speed. A measured key is not a setting (`TotalTime: 36.4s`), a word
and a colon may precede a duration (`Processing:134.0s`); `RTF 0.25`, `1 페타플롭`, `200G/s`, `초당 30개 이상의
토큰`, and a percentage in parentheses after a change of times (`316ms→230ms(약 27%)`) are read. Tables: a header
cell that names a time or rate unit (`pp512 (t/s)`, `latency (ms)`, `초`) makes each bare number in its column a
claim (a target when the header names a target or a setting; none for media lengths); the header is the row above a
`|---|` separator, and the whole text is read for it, as a body row has no unit the prefilter could see. The
header also says what a column holds: in a column headed by a target, goal, threshold, limit, alert level, timeout
or lifetime (`| Target |`, `| 목표 (1.4.3) |`, `| 알람 임계값 |`, `| TTL |`, `| 권장 타임아웃 |`; not a goal reached:
`| 목표 달성 |`) every number is a target, and in a column of memory, accuracy, size, share, cost or quality (`| 메모리
사용량 |`, `| Memory use |`, `| 정확도 |`, `| 비중 |`) ratios and percentages are not claims.

Fifth batch (classes, not phrases): a Korean sentence ending in an instruction (`… 피드백을 제공하세요`, not a pointer:
`… 알아보세요`), a relation said in general (`… 손실로 이어지기도 합니다`), a prohibition (`75초를 초과할 수 없다`), an
obligation after any verb stem (`끝나야 한다`), `안쪽` as a bound, a list of values inside a condition (`10초, 1분, 심지어
5분까지 늘어나면`), an `예시:` label, and bounds on what is expected (`예상 결과: … 2배 이상 빠름`) or perceived in an aside
(`0-100ms (사용자가 지연을 느끼지 않음)`) are not reports; a Korean bound stated with a copula, a formal declarative or a
noun ending (`차이는 5% 미만입니다`, `… 나오는 경우가 많습니다`, `1분 이내로 완료됨`) or said fast (`10ms 이내로 매우
빠르지만`) is, unless it is an allowance (`달릴 수 있는 시간은 1초 이내입니다`). English: `sub-100ms` is a bound; `aims`,
`barrier`, `floor` are target words, `budget` too but not as a product tier (`the budget 5060 Ti`); a perception
later in the clause (`a 4x lift feels like …`), a latency tier (`Low latency (100-200ms): Suitable for …`), an
indefinite team or user (`A team reports …`), `If there is …`, `If you need …`, an example described (`This example
demonstrates …`), guesses asked (`2x? 5x?`) and people answering one another (`Human conversation response: ~200ms`,
`사람 간의 … 대화`) are not claims; abbreviations (`e.g.`) do not end a sentence. Settings: `디폴트`, `, its default`,
`10분 유효`, `고정 쿨다운`, `(3600초)짜리 캐시`, `N초에서 M초로 수정`, `period=30s`, a configuration key anywhere in the
sentence (`initialDelaySeconds`, `failureThreshold`, `IDLE_TIMEOUT_FLOOR_SECS`), the choices of a setting (`Request
timeout, with 30, 60, 120, or 300 seconds`, `to e.g. 60 or 120 seconds`, `500ms 또는 1초로`), a proposal to `try` or
`align to` a value, a load test's length beside its load (`vuser 500, duration 30s`, `150 VU, 2분 30초`, `360개 동시
연결, 60초 동안`, `c=1, 60s`), a delay before a set event (`60초 후 … 연결을 닫는다`) and seconds before one (`0.5초 전
… 예고`); not durations measured: `T+90s`, `5초 후:`, `첫 1초`, `30 second segments`, `50ms 의 블락`, `audio chunks of at
most 30 seconds`, `120 seconds of recorded speech`, people's intervention and set-up time (`개입 시간`, `환경 설정`). Not
speed: prices and frequencies (`가격 4×`, `150배나 비싼`, `사용 빈도`), endurance (`2-3배 더 오래 버틸`), influence, a ratio
in an aside on a size or a score (`35GB (4배 절감)`, `72.3% (Vicuna 대비 2배)`), a percentage of a count (`58% 감소 (24 →
10)`, `| 133 frames | … | -96% |`) and quality benchmarks (`MMLU (+23%)`). Read: `QPS` after a number, a rate's key
before it (`TPS 15.4`, `tps는 약 620`, `QPS 324,323.71`, `TFLOPS=6.1`; not `RPS 10`, the rate a load generator is set
to), a bare `/s` (`16.7/sec`), fractions of a speed or a time (`1/3 the speed`, `1/2 of the inference time`),
`tokens-per-second`, `secondes`, `60-70x REAL TIME`, RTF and memory bandwidth as speed (`30% improvement in RTF`, `50%
more memory bandwidth`), `줄입니다` as a change, `빠를`/`느릴` as speed, and a system that is `-aware` (`계층을 인식하는`)
is not a perception; a Korean threshold `넘는` in a sentence in the past (`24초가 넘는 … 이슈가 있었습니다`) is what
was. The checks of these classes run only on lines holding one of their words (one pre-test, the line
flag `later`), and the keys of a rate written before its number are found by the prefilter (`_PREFILTER_UNIT_KEYS`).

Sixth batch (classes with examples in two batches or more, each kept only when it lowered no batch by more than 0.005):
read are bit rates (`4.68 Gbits/sec`, `283.58 Mbps`, `290kbit/s`), a magnitude before any rate key (`50K qps`) and a
share of a speed (`60% ~ 70% the performance of FT`, as `1/3 the speed`). Not reports: a Korean supposition (`… 1분과
2분이라 하자`, `… 존재한다고 생각하자`, `일 8시간 개발이라고 하면`) or a concession on a number (`10ms여도`); a value in an
English aside opened by an example (`(e.g 10000ms)`); a post's reading time, a line that is only `[word] N 분 소요` or
minutes after a word count (`1353 words · 7 min`); a window's length, the window being the key or the subject of its
own verb (`window=7.9s`, `the window moves less than 30s`); `처음`/`마지막` N초 as a window; a ratio or percentage in an
aside after a before → after pair that is not of times or rates (`10 → 50 (+400%)`, `401 queries → 4 queries (100배
개선)`). Targets: a request rate listed with a test's length in minutes and that length (`(50 rps, 5분간)`, `K6 50rps |
5분 부하`); a sentence whose subject is its aim (`The goal is to run … at 60fps`). `would` and `might` make hypothetical
only their own clause, which ends at a parenthesis, a dash, `;`, `so` or `which` (`it ran at about 0.5x speed—so a
two-hour podcast would take four hours` reports the speed); a verb of keeping in the past reports what was kept
(`초당 100토큰 … 유지했음`), as its passive forms did.

Quality on real sentences by other authors: bench/lint_real.py, results in docs/performance.md.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from pathlib import Path

from factreg.docs import claimmodel, literals, markdown
from factreg.docs.findings import Finding

__all__ = ["Finding", "lint_documents", "lint_file", "lint_paths", "lint_text"]


# ---------------------------------------------------------------------------------------------------------------
# The claim pattern

_SP = r"[ \t\u00a0\u2009\u202f]"  # one space (never a newline: a claim stays on one line)
# A number; the look-behind (after the first digit, so the search can skip to digits fast) keeps numbers that are
# part of a word, version, address or clock time out: `tg32`, `b6012`, `A3B`, `v1.2`, `02:30`, `:8080`.
_NUM_FIRST = r"\d(?<![A-Za-z0-9_.#@$\\]\d)(?<!(?<![A-Za-z]):\d)\d*(?:,\d{3})*(?:\.\d+)?"
_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
_END = r"(?![A-Za-z0-9])"  # an ASCII unit ends at a word boundary (a Korean particle may follow: `28 tok/s로`)

_UNITS = [
    # rates
    ("rate", rf"(?i:tok(?:en)?s?|tks?|t){_SP}?/{_SP}?(?i:s|secs?|seconds?){_END}"),
    ("rate", rf"(?i:tok(?:en)?s?)(?:{_SP}|-)(?i:per|a)(?:{_SP}|-)(?i:second|sec){_END}"),  # tokens-per-second
    ("rate", rf"토큰{_SP}?/{_SP}?(?:초|s{_END}|sec{_END})"),
    ("rate", rf"(?i:tok(?:en)?s?|tg|pp){_SP}(?i:max|min|avg){_SP}(?i:per|a){_SP}(?i:second|sec){_END}"),
    ("rate", rf"(?i:tg|pp){_SP}?/{_SP}?(?i:s|secs?|seconds?){_END}"),
    ("rate", rf"(?i:tok(?:en)?s?){_SP}?/{_SP}?(?i:day|hour|hr|h|min){_END}"),  # 390M tokens/day
    ("req", rf"(?i:req(?:uest)?s?){_SP}?/{_SP}?(?i:s|sec){_END}|(?i:requests){_SP}per{_SP}second{_END}"),
    # other things per second: it/s, files/sec, chars/초, words per second, RPS, fps
    (
        "persec",
        rf"(?i:its?|iters?|iterations?|files?|chars?|characters?|words?|images?|imgs?|samples?|queries|"
        rf"steps?|sentences?|pages?|documents?|docs?|lines?|ops|rows?){_SP}?(?:/{_SP}?|{_SP}per{_SP})"
        rf"(?:(?i:s|secs?|seconds?){_END}|초)",
    ),
    ("persec", rf"(?:RPS|QPS|TPS|rps|qps|tps){_END}"),
    ("persec", rf"/(?:s|sec){_END}(?!/)"),  # a bare `/s`: `처리량도 16.7/sec`, `500/s에서 2000/s로`
    ("fps", rf"(?i:fps){_END}"),
    ("bw", rf"(?:[KMGT]i?B|[KMGT]b|[GT]){_SP}?/{_SP}?(?:s|sec){_END}"),
    # bit rates: `4.68 Gbits/sec`, `283.58 Mbps`, `290kbit/s`, `9.4Gbits / sec`
    ("bits", rf"[KMGTkmg](?:bps|(?i:bits?){_SP}?/{_SP}?(?:s|sec)|(?i:bits?){_SP}(?i:per){_SP}(?i:second)){_END}"),
    ("flops", rf"(?:[GTP]?FLOPS|[GTP]?(?i:flops)|TOPS){_END}"),
    ("flops", rf"(?:기가|테라|페타){_SP}?플롭스?"),  # `1 페타플롭`
    # time per token
    ("mstok", rf"ms{_SP}?/{_SP}?(?i:tok(?:en)?){_END}|ms{_SP}per{_SP}token{_END}"),
    ("stok", rf"s{_SP}?/{_SP}?(?i:tok(?:en)?){_END}"),
    # durations
    ("ms", rf"(?:ms|msecs?|(?i:milli-?seconds?|millisecs?)){_END}|밀리초"),
    ("us", rf"(?:[µμ]s|(?<=\d)us|(?i:micro-?seconds?)){_END}|마이크로초"),
    ("s", rf"(?:s|(?i:secs?|second(?:e?s)?)){_END}"),  # `5 secondes`
    ("s", rf"m[0-5]?\d(?:\.\d+)?s{_END}"),  # 6m58s
    ("s", r"초(?![과기반록등월석점콜소])"),
    ("min", rf"(?:min|mins|(?i:minutes?)){_END}"),
    ("min", r"분(?![기의류포산할배석리량야위자모해명노수출란담쟁열필실비단지들께])"),
    ("h", rf"(?i:hours?|hrs?){_END}|시간(?![당대표제외차])"),
    ("d", rf"(?i:days?){_END}"),
    # ratios and relative changes (checked further in Python: what follows decides)
    ("ratio", r"[×✕✖]"),
    (
        "x",
        rf"(?<=\d)x{_END}|(?<=\d)X(?={_SP}?(?i:faster|slower|quicker|speedup|speed-up|slowdown|the{_SP}(?:performance|speed|throughput)){_END})",
    ),
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
    "bits": "bit/s",
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
# tried): not a digit, not punctuation that ends it, not a capital that cannot start a unit (`27B`, `8 GB`; `Q` starts `QPS`), not a slash but that of `/s`.
_NEXT = r"(?=[ \t\u00a0\u2009\u202f]{0,2}[^ \t\n\u00a0\u2009\u202f0-9A-EH-JLN-PU-WYZ.,:;)\]|/(\"']|/s)"

# A magnitude suffix before a rate: `10K req/s`, `390M tokens/day`, `50K qps`.
_MAGNITUDE = rf"[KkM](?={_SP}?(?i:tok|req|t{_SP}?/|[qrt]ps{_END}))"
_CLAIM = re.compile(
    rf"(?P<n1>{_NUM_FIRST}){_NEXT}"
    rf"(?:"
    rf"(?P<pm>{_PM})(?P<n2>{_NUM})(?:{_SP}?(?:{_UNIT_ALT.replace('(?P<u', '(?P<p')}))?"
    rf"|"
    rf"(?:{_RANGE}(?P<n3>{_NUM}))?(?:{_MAGNITUDE})?(?P<sp>\+?(?:\*\*|__)?{_SP}{{0,2}}|-(?=(?i:second|minute|millisecond|hour)))"
    rf"(?:{_UNIT_ALT})"
    rf")"
)
# Korean "per second, N tokens": 초당 28토큰, 초당 약 22 토큰, 초당 12개의 토큰.
_PER_SECOND = re.compile(
    rf"초당{_SP}?(?:(?:토큰{_SP}?)?(?:생성{_SP}?|처리{_SP}?)?(?:속도|처리량)(?:가|는|이|은)?{_SP}?)?"
    rf"(?:(?:약|평균|최대|최소|대략){_SP}?)?(?P<n1>{_NUM})(?:{_SP}?[~～〜–-]{_SP}?(?P<n3>{_NUM}))?"
    rf"{_SP}?(?:개{_SP}?(?:(?:이상|이하|정도|가량|남짓|넘는){_SP}?)?의?{_SP}?)?(?P<what>토큰|건|요청|회|장|글자|문자|단어|쿼리|이미지)"
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
    rf"{_SP}*(?:(?!(?i:real[- ]?time))[A-Z]|\d|(?i:gpus?|cards?|nodes?|machines?|servers?|cores?|sockets?|dimms?|sticks?|boxes?|"
    rf"instances?|replicas?|workers?|threads?){_END})"
)
# `the 401s`, `404s`, `5xx`: HTTP status codes in the plural, not seconds (`120s` stays a duration)
_HTTP_CODES = frozenset({200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 408, 409, 429, 500, 502, 503, 504})
# A duration that is a setting, not a measurement.
_SETTING_BEFORE = re.compile(
    rf"(?:(?i:time-?outs?|time out|sleeps?|intervals?|retry|retries|cool-?down|back-?off|ttl|deadline|keep-?alive|defaults?|"
    rf"freshness|warn_after|error_after|max_age|poll(?:ing)?)|타임아웃|주기|간격|재시도|기본값|디폴트|제한\s?시간)"
    rf"[^.;,\d\n]{{0,20}}$|(?<!token{_SP})(?<!tokens{_SP})(?<!frame{_SP})(?i:every|each){_SP}+$"
)
# Substrings one of which every _SETTING_BEFORE match contains, lower-cased (a fast first test).
_SETTING_HINT = re.compile(
    "time|sleep|interval|retr|cool|back|ttl|deadline|keep|default|fresh|warn_|error_|max_age|poll|every|each|"
    "타임아웃|주기|간격|재시도|기본값|디폴트|제한"
)
_SETTING_AFTER = re.compile(
    rf"(?:\)|{_SP}*\([^()\n]{{0,20}}\))?{_SP}*(?:고정{_SP}?)?(?:(?i:time-?outs?|intervals?|cool-?down|ttl|deadline){_END}|마다|간격|주기|타임아웃|제한|쿨다운|(?:짜리{_SP}?)?캐시)"
    # `5초 기본값`, `for 4 minutes, its default`: a default value
    rf"|{_SP}*(?:,{_SP}*(?i:its|the){_SP}+)?(?:기본값|디폴트|(?i:by{_SP}default|default){_END})"
    rf"|{_SP}*(?:간{_SP}?)?유효(?![가-힣])"  # `10분 유효`: how long something stays valid
    rf"|{_SP}*\(?{_SP}*(?:(?:조정|설정|변경){_SP}?가능|(?i:configurable|adjustable|tunable){_END})"  # `0.1초 (조정 가능)`
    # an idle time (a keep-alive): `5 minutes after use`, `10 minutes of inactivity`, `30분 이상 비활성`
    rf"|{_SP}*(?i:after{_SP}+(?:use|last{_SP}+use|the{_SP}+last{_SP}+request|inactivity)|of{_SP}+(?:inactivity|idle\w*)){_END}"
    rf"|{_SP}*(?:이상{_SP}?)?(?:비활성|유휴)"
)
_SECONDS_BEFORE_AFTER = re.compile(rf"{_SP}*전(?:에)?(?![가-힣])")  # `변신 0.5초 전 시각적 예고`: a schedule
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
_SPAN_KINDS = frozenset({"rate", "req", "persec", "mstok", "stok", "bw", "bits", "flops", "fps"})

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
    rf"|t[kgpibf]|top|to(?:k(?:en)?s?)?(?:{_SP}?/|{_SP}[pam]|-[pa]))"
    rf"|(?i:[tg]){_SP}?/|(?i:[sx])(?![A-Za-z0-9])|[µμ%×✕✖토마밀초분시배기테페]"
)
_PREFILTER = re.compile(
    # Every match starts with a digit, and the pattern with `\d` (not with an alternation), so that `re` skips to
    # the next digit in C instead of trying the pattern at every character (twice as fast); `초당` is found with
    # str.find (_PREFILTER_LITERALS).
    rf"\d(?:"
    # the run of the number; (?![\d,.]) makes a shorter run fail at once instead of trying every unit again
    rf"(?<![A-Za-z0-9_.#@$\\]\d)(?<!(?<![A-Za-z]):\d)[\d,.]*(?<=\d)(?![\d,.])(?:{_MAGNITUDE})?"
    rf"(?:\+?(?:\*\*|__)?{_SP}{{0,2}}(?=(?i:[cdfghiklmopqrstuwx])|[µμ%×✕✖토마밀초분시배기테페])(?:{_UNIT_START})"
    rf"|{_SP}?(?:±|\+/-|\+-)|-(?i:[smh])|/[s\d])"  # `/[s\d]`: `16.7/sec`, `1/3 the speed`
    r"|pp|tg)"
)
_PREFILTER_BEFORE_DIGIT = ("pp", "tg", "x", "×")
_PREFILTER_UNIT_KEYS = ("PS", "ps")  # the ends of _UNIT_BEFORE's keys: `TPS`, `qps`, `TFLOPS`
_PREFILTER_LITERALS = (
    "초당",
    "_seconds",
    "_milliseconds",
    "RTF",
    "factor",
)  # `_seconds`: a metric's name holding its unit


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
    for lit in _PREFILTER_UNIT_KEYS:  # a unit before its number: `TPS 15.4`, `tps는 약 620`, `TFLOPS=6.1`
        i = find(lit)
        while i != -1:
            key = text[max(0, i - 3) : i]
            if not (key[-1:] in ("T", "Q", "t", "q") or key == "FLO"):
                i = find(lit, i + len(lit))  # not one of _UNIT_BEFORE's keys (`https`, `steps`)
                continue
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
_EXTRA_HINTS: dict[re.Pattern[str], tuple[str, ...]] = {}


def _extra_hints() -> dict[re.Pattern[str], tuple[str, ...]]:
    """Each extra pattern once, with its hints; their pre-tests in _EXTRA_SCREENS (worked out on first use)."""
    if _EXTRA_HINTS:
        return _EXTRA_HINTS
    hints: dict[re.Pattern[str], tuple[str, ...]] = {}
    for rx, hint in _EXTRA:
        hints[rx] = (*hints.get(rx, ()), hint)
    if not _EXTRA_SCREENS:
        _EXTRA_SCREENS.update({rx: literals.screen(rx) for rx in hints})
    _EXTRA_HINTS.update(hints)
    return hints


# Tables whose unit is in the header row: `| model | pp512 (t/s) |` over `| 7B Q4 | 1234.5 |`. The whole text is
# read (not only the prefilter's windows: a body row holding bare numbers has no unit of its own).
_TABLE_SEP = re.compile(r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$")
_HEADER_UNIT = re.compile(
    r"(?:^|(?<=[\s(\[/,]))(?P<u>(?i:ms/tok(?:en)?|s/tok(?:en)?|tok(?:en)?s?/s(?:ec)?|t/s|tg/s|pp/s|"
    r"tok(?:en)?s?[ _]per[ _]sec(?:ond)?|req(?:uest)?s?/s(?:ec)?|rps|qps|tps|fps|it/s|ms|msec|secs?|seconds|mins?|"
    r"minutes)|초|밀리초|토큰/초)(?=$|[\s)\],])"
    r"|\((?P<s>s)\)"
)
_HEADER_NORMAL = {"ms": "ms", "msec": "ms", "밀리초": "ms", "sec": "s", "secs": "s", "seconds": "s", "초": "s"}
_HEADER_NORMAL |= {"min": "min", "mins": "min", "minutes": "min", "ms/tok": "ms/tok", "ms/token": "ms/tok"}
_HEADER_NORMAL |= {"s/tok": "s/tok", "s/token": "s/tok", "fps": "fps", "rps": "req/s", "qps": "/s", "it/s": "/s"}
_BARE_CELL = re.compile(
    rf"[ \t*_~≈]*(?P<n>\d[\d,]*(?:\.\d+)?(?:{_SP}?[-–~]{_SP}?\d[\d,]*(?:\.\d+)?|{_PM}\d[\d,]*(?:\.\d+)?)?)[ \t*_]*$"
)


def _header_units(header: str) -> list[tuple[str, str] | None]:
    """For each cell of a table's header row, (unit, kind) when the cell names a time or rate unit, else None; the
    kind is `target` when the cell names a target, a limit or a setting."""
    out: list[tuple[str, str] | None] = []
    for cell in header.strip().strip("|").split("|"):
        m = _HEADER_UNIT.search(cell)
        if m is None or _LINE_FLAGS["media"].search(cell):
            out.append(None)
            continue
        word = (m.group("u") or "s").lower()
        unit = _HEADER_NORMAL.get(word, "req/s" if word.startswith("req") else "/s" if word == "tps" else "tok/s")
        setting = _TARGET_WORDS.search(cell) or _SETTING_WORDS.search(cell)
        out.append((unit, "target" if setting else "claim"))
    return out


def _tables(text: str) -> Iterable[tuple[str, list[tuple[int, int, bool]]]]:
    """Each table of `text`: its header row (the row above a `|---|` separator) and its body rows as (start, end,
    whether the row starts with a pipe, so that its first cell follows it), up to the first line without a pipe."""
    for sep in _TABLE_SEP.finditer(text):
        if sep.start() == 0:
            continue
        h_lo = text.rfind("\n", 0, sep.start() - 1) + 1
        rows: list[tuple[int, int, bool]] = []
        lo = sep.end() + 1
        while lo < len(text):
            hi = _line_end(text, lo)
            first = text.find("|", lo, hi)
            if first < 0:
                break
            rows.append((lo, hi, text[lo:first].strip() == ""))
            lo = hi + 1
        yield text[h_lo : sep.start() - 1], rows


def _header_cells(text: str, skipped: Callable[[int, int], bool]) -> list[Candidate]:
    """Bare numbers in the body cells of tables whose header cell names the unit."""
    out: list[Candidate] = []
    for header, rows in _tables(text):
        units = _header_units(header)
        if not any(units):
            continue
        for lo, hi, lead in rows:
            row = text[lo:hi]
            first = row.find("|")
            pos = lo + (first + 1 if lead else 0)
            for col, cell in enumerate((row[first + 1 :] if lead else row).split("|")):
                if col < len(units) and (u := units[col]) is not None:
                    m = _BARE_CELL.match(cell)
                    if m is not None and not skipped(pos + m.start("n"), pos + m.end("n")):
                        out.append((pos + m.start("n"), pos + m.end("n"), m.group("n"), u[0], u[1]))
                pos += len(cell) + 1
    return out


# What a table's column holds, from its header cell: a target, limit or setting (`| Target |`, `| 목표 (1.4.3) |`,
# `| 알람 임계값 |`, `| TTL |`, `| 권장 타임아웃 |`, warning levels), or a figure that is not performance (memory,
# accuracy, size, a share of the total, cost: `| 메모리 사용량 |` over `50-75% 감소`, `| 비중 |` over `72%`).
_TARGET_COLUMN = re.compile(
    r"(?i:\b(?:targets?|goals?|slos?|slas?|budgets?|thresholds?|limits?|caps?|alerts?|alarms?|warn(?:ing)?|critical|"
    r"allowed|required|requirements?|timeouts?|ttl|expiry|deadlines?)\b)"
    r"|목표|임계|한도|상한|제한|경고|위험|알람|허용|요구|권장|타임아웃|유효\s?기간|만료"
)
_REACHED_COLUMN = re.compile(r"(?i:\b(?:achieved|reached|met|actual)\b)|달성|결과|실측")  # `| 목표 달성 |`: a result
_OTHER_COLUMN = re.compile(
    r"(?i:\b(?:memory|vram|ram|accuracy|mmlu|perplexity|ppl|size|compression|share|resources?|params?|parameters|"
    r"hit[ _-]?rate|cost|price|pricing|spread|quality|wer|f1)\b)"
    r"|메모리|정확도|크기|압축|비중|점유율|리소스|자원|파라미터|매개변수|적중률|비용|가격|요금|품질"
)
_NOT_PERFORMANCE_UNITS = frozenset({"%", "×"})  # what a memory or accuracy column's ratios and percentages are


def _column_kinds(header: str) -> list[str | None]:
    """For each cell of a table's header row: `target` for a target, limit or setting column, `other` for a column
    of figures that are not performance, else None."""
    out: list[str | None] = []
    for cell in header.strip().strip("|").split("|"):
        if _TARGET_COLUMN.search(cell) and not _REACHED_COLUMN.search(cell):
            out.append("target")
        elif _OTHER_COLUMN.search(cell) and not _HEADER_UNIT.search(cell):
            out.append("other")
        else:
            out.append(None)
    return out


def _by_column(text: str, found: list[Candidate]) -> list[Candidate]:
    """`found` with the claims in target columns made targets, and ratios and percentages in columns of other
    figures dropped (see _column_kinds); the header is the row above a table's separator row."""
    changes: dict[int, str | None] = {}  # index in found -> new kind, or None to drop
    for header, rows in _tables(text):
        kinds = _column_kinds(header)
        if not any(kinds) or not rows:
            continue
        i = bisect_left(found, (rows[0][0],))
        for lo, hi, lead in rows:
            while i < len(found) and found[i][0] < hi:
                start, unit, kind = found[i][0], found[i][3], found[i][4]
                col = text.count("|", lo, start) - (1 if lead else 0)
                what = kinds[col] if 0 <= col < len(kinds) else None
                if what == "target" and kind == "claim":
                    changes[i] = "target"
                elif what == "other" and unit in _NOT_PERFORMANCE_UNITS:
                    changes[i] = None
                i += 1
    if not changes:
        return found
    out: list[Candidate] = []
    for i, c in enumerate(found):
        if i not in changes:
            out.append(c)
        elif (new_kind := changes[i]) is not None:
            out.append((c[0], c[1], c[2], c[3], new_kind))
    return out


def _candidates(
    text: str,
    skipped: Callable[[int, int], bool] = lambda a, b: False,
    windows: list[tuple[int, int]] | None = None,
    dismissed: list[Candidate] | None = None,
) -> list[Candidate]:
    """(start, end, value, unit, kind) of every claim and target in `text` outside the `skipped` regions; with
    `windows` (from _windows), the patterns are only run there. With a `dismissed` list, the numbers with a unit
    that the rules found to be neither (a name, a clock time, a size, a hypothetical, …) are appended to it, of
    kind "dismissed" (what factreg.docs.claimmodel reads)."""
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
                dismissed.append((start, m.end(), m.group("n1"), _NORMAL.get(_KIND.get(group, ""), ""), "dismissed"))
            continue
        _claim_match(m, text, ctx, append)
    for rx, rx_windows in _extra_runs(text, windows):
        for m in _finditer(rx, text, rx_windows):
            if skipped(m.start(), m.end()):
                continue
            found = ctx.extra(m)
            if found is not None:
                out.append(found)
            elif dismissed is not None:
                dismissed.append((m.start(), m.end(), m.group("n1"), "", "dismissed"))
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
    kept = ctx.rows(kept)
    return _by_column(text, kept) if kept and "|" in text and "--" in text else kept


def _claim_match(m: re.Match[str], text: str, ctx: _Context, append: Callable[[Candidate], None]) -> None:
    """The claim or target a match of _CLAIM is, appended; nothing when it is neither."""
    start = m.start()
    group = m.lastgroup or ""
    kind = _KIND.get(group)
    if group[0] == "p" or group == "n2":  # a ± spread, with or without a unit
        n2_end = m.end("n2")
        value = text[start:n2_end]
        if kind is None or kind in _RELATIVE:
            append((start, n2_end, value, "", ctx.spread_kind(start, n2_end)))
            return
        end = m.end()
        append((start, end, value, _NORMAL[kind], ctx.spread_kind(start, end)))
        return
    if kind is None:  # pragma: no cover - the pattern always ends with a unit here
        return
    u_start = m.start(group)
    end = m.end()
    n3_end = m.end("n3")
    num_end = n3_end if n3_end >= 0 else m.end("n1")
    if num_end == u_start and n3_end < 0 and kind in ("s", "x", "xcap", "h"):
        digits = m.group("n1")
        if digits.isdigit() and (len(digits) >= 4 or (kind == "s" and int(digits) in _HTTP_CODES)):
            return  # `RTX 2080s`, `3700x`, `the 401s`
        if kind == "s" and digits.isdigit() and _PRODUCT_BEFORE.search(text, max(0, start - 20), start):
            return  # `Vega 10s`, `Radeon 7s`: a product's name in the plural
    if _NAME_AFTER.match(text, end):
        return  # `-5s-Diffusers`: part of a name
    verdict = ctx.classify(start, u_start, end, kind)
    if verdict is None:
        return
    end, what = verdict
    append((start, end, text[start:num_end], _NORMAL[kind], what))


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
    rf"time|times|it/s|t/s|tok/s|tokens/s|tps|rps|outperform\w*|surpass\w*|rtf|real-?time{_SP}factor|bandwidth){_E}"
    r"|속도|성능|처리량|처리 속도|대역폭|응답|지연|레이턴시|추론|빌드|컴파일|로딩|로드|실행|변환|번역|처리|가속|"
    r"시간|빠르|빨라|빠름|빠른|빨리|빠를|느리|느려|느림|느린|느릴|늦|프리필|디코딩|디코드|첫 토큰|토큰 생성|첫 음성|"
    r"TTFT|TPS|RPS|FPS|fps|CPS"
)
# Nouns that make a ratio or percentage something other than speed: memory, size, cost, quality, counts.
_NONPERF = (
    rf"{_B}(?i:memory(?!{_SP}+bandwidth)|vram|ram|size|sizes|smaller|larger|bigger|fewer|compress\w*|batch|weights?|cost|costs|"
    rf"cheaper|price|pricier|expensive|pay|paying|paid|traffic|energy|power|accuracy|quality|params|parameters|resolution|disk|storage|co2|emissions|"
    rf"sparsity|data|share|utili[sz]ation|coverage|errors?|bugs?|lines|lexemes|heads|more tokens|calibration|"
    rf"activation|zoom|scale|dimensions?|success|hz|khz|downtime|outages?|upscal\w*|upsampl\w*|downsampl\w*|"
    rf"downscal\w*|magnif\w*|realism|satisfaction|human{_SP}evaluations?|preference|fidelity|scores?|"
    rf"session{_SP}(?:time|length)|time{_SP}on{_SP}(?:site|page)|watch{_SP}time|cycle{_SP}time|lead{_SP}time|"
    rf"development{_SP}(?:speed|velocity|time)|developer{_SP}productivity|velocity|"
    # quality benchmarks and error rates: `MMLU (+23%)`
    rf"mmlu|gsm8k|c-?eval|bbh|humaneval|hellaswag|truthfulqa|winogrande|wer|cer|bleu|perplexity|ppl|(?<!long{_SP})(?<!short{_SP})context(?:{_SP}window)?){_E}"
    r"|메모리|크기|용량|공간|비용|가격|비싸|비싼|인하|빈도|영향력|오래\s?버티|버틸|트래픽|연산량|계산량|계산(?:을|를|이|은|의)?(?![가-힣])|저렴|싸|에너지|전력|정확도|품질|만족도|에러|오류|버그|커버리지|번들|(?:요청|토큰|파일|호출|쿼리|단계|레이어|사용자)\s?수(?![가-힣])|"
    r"(?:Onboarding|온보딩|개발|설정|작업|수동|검토|리뷰|회의|미팅|업무|세션|체류|시청|이용|장애|중단|다운|개입|(?:통합\s?)?사이클|리드)\s?시간|"
    r"다운타임|컨텍스트|(?:개발|작업|팀)\s?(?:속도|생산성)|배율|업스케일|(?:확대|축소)(?:된|한|하여|해)?\s?(?:이미지|예측 맵|맵|해상도|사진)|시간 절약|비중|성능\s?유지|"
    r"코드|라인|줄(?![이어였었일인임여입])|보안|부하|사용량|절약|가능성|I/O|네트워크 요청|"
    r"이용률|사용률|점유율|가동률|할인|세금|이미지 크기|압축|tolerance|완화|정밀도|재현율|승률|정확|유지|"
    r"호출|필요|증가로|완료|진행률|생산성|사이즈|[가-힣]{1,3}(?<!비)[률율](?![가-힣])|토큰(?:을|를|이)?\s?(?:사용|소비)"
)
_CHANGE = (
    rf"{_B}(?i:faster|slower|quicker|speed-?ups?|slow-?downs?|uplift|gain|gains|boost|improv\w*|increase[sd]?|"
    rf"decrease[sd]?|reduc\w*|drop\w*|regress\w*|behind|loses?|cut|cuts|higher|lower|better|worse|savings?|difference|"
    rf"accelerat\w*|outperform\w*|less|more|speeds? up|sped up|on{_SP}the{_SP}table){_E}"
    r"|향상|개선|단축|축소|감소|증가|저하|하락|절감|빨라|빠르|빠름|빠른|느려|느리|느림|느린|가속|줄|↑|↓|⬆|⬇|영향|차이"
)
_LEX = re.compile(rf"(?P<nonperf>{_NONPERF})|(?P<perf>{_PERF})")
# `… by 98% on realism`: the metric a percentage is of, named right after it
_ON_METRIC_AFTER = re.compile(
    rf"(?:\*\*|__|{_SP})*(?i:on|in){_SP}+(?:(?i:the|its|their|overall){_SP}+)?(?:(?P<nonperf>{_NONPERF})|(?P<perf>{_PERF}))"
)
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
# A percentage of a time or of a speed limit: `takes 10.8% of SD v1.5's training time`, `50–80% of this ceiling`.
_SHARE_OF_TIME_AFTER = re.compile(
    rf"{_SP}*(?i:of){_SP}+(?:[^\s,;()|]+{_SP}+){{0,4}}?(?i:training|inference|generation|compute|decod\w*|prefill|"
    rf"wall-?clock|run|processing|build|compile)[ -]?(?i:time|latency|runtime){_E}"
)
# A change between two timed values, then a parenthesis opening before a percentage: `316.34ms→230.79ms(약 27%`.
_CHANGE_THEN_PAREN = re.compile(
    rf"\d{_SP}?(?:ms|s|sec|초|분|밀리초|tok/s|t/s|tokens/s){_SP}*(?:→|->|⇒){_SP}*{_NUM}{_SP}?(?:ms|s|sec|초|분|밀리초|tok/s|t/s|tokens/s)"
    rf"{_SP}*\({_SP}*(?:약|~|≈|(?i:about|approx\.?)){_SP}*[+−-]?$"
    rf"|\d{_SP}?(?:ms|s|sec|초|분|밀리초|tok/s|t/s|tokens/s){_SP}*(?:→|->|⇒){_SP}*{_NUM}{_SP}?(?:ms|s|sec|초|분|밀리초|tok/s|t/s|tokens/s)"
    rf"{_SP}*\({_SP}*[+−-]?$"
)
# A size, a score or a count, then a parenthesis opening before a ratio: the ratio is of that quantity.
_QUANTITY_THEN_PAREN = re.compile(rf"\d{_SP}?(?:%|[KMGT]i?B|점|개|명)(?:\*\*)?{_SP}*\({_SP}*(?:[^()\d\n]{{0,12}})?$")
# A percentage, then the pair of bare numbers it was worked out from: `58% 감소 (24 → 10)`.
_COUNT_PAIR_AFTER = re.compile(
    rf"(?:\*\*)?{_SP}*(?:감소|증가|(?i:less|fewer|more))?(?:\*\*)?{_SP}*\({_SP}*{_NUM}{_SP}*(?:→|->){_SP}*{_NUM}{_SP}*\)"
)
# A before → after pair, then a parenthesis opening before a ratio or percentage: the change of that pair, whose unit
# (none, a count noun, a size) decides what it is of; `316ms→230ms(약 27%)` is a change of times.
_PAIR_THEN_PAREN = re.compile(
    rf"{_NUM}(?:{_SP}?[A-Za-z가-힣/]+)?{_SP}*(?:→|->){_SP}*{_NUM}(?:{_SP}?(?P<unit>[A-Za-z가-힣/]+))?(?:\*\*)?{_SP}*"
    rf"\({_SP}*(?:약|~|≈)?{_SP}*[+−-]?$"
)
_TIME_OR_RATE_UNIT = re.compile(
    r"ms|s|sec|secs|seconds?|초|분|밀리초|min|mins|minutes?|tok/s|t/s|tokens/s|req/s|rps|RPS|TPS|tps|qps|QPS|fps"
)
# `60% ~ 70% the performance of FT`: a share of a speed, as `1/3 the speed` and `2.4× the throughput` are multiples.
_SHARE_OF_PERF_AFTER = re.compile(
    rf"(?:{_SP}*[~～〜–-]{_SP}*{_NUM}{_SP}?%)?{_SP}+(?:(?i:of){_SP}+)?(?i:the|its|their){_SP}+"
    rf"(?i:speed|performance|throughput){_E}"
)
_SHARE_OF_CEILING_AFTER = re.compile(
    rf"{_SP}*(?i:of){_SP}+(?i:the|this|its|their|that){_SP}+(?:\w+{_SP}+)?(?i:ceiling|roofline){_E}"
)
_TAG = re.compile(r"^\s*\[[A-Za-z ]{1,20}\]")  # `[Bug]`, `[Feature Request]`: an issue title's tag
_ASIDE = re.compile(r"\([^()\n]{0,60}\)")
# After a ratio: a word of size (`16배 큰`, `5배 더 큰 모델`, `3x larger`) makes it a size ratio.
_SIZE_AFTER = re.compile(
    rf"(?:\*\*|__|{_SP})*(?:더{_SP}?)?(?:큰|크다|크고|작은|작다|작고|작아|넓은|넓|긴{_SP}?컨텍스트)"
)
# What people do faster is not a system's speed: `10배 빠른 개발`, `3x faster development`.
_PEOPLE_WORK_AFTER = re.compile(
    rf"(?:\*\*|__|{_SP})*(?:개발|온보딩|프로토타이핑|(?i:development|onboarding|prototyping|iteration)(?![A-Za-z]))"
)
_CONJUNCTION = re.compile(
    rf"{_SP}(?i:and|but|while|whereas|with){_SP}|하고{_SP}|하며{_SP}|고{_SP}|며{_SP}|시켜{_SP}|하여{_SP}|해서{_SP}"
)
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
_BOUND_BEFORE = re.compile(
    rf"(?:[<>≤≥]=?|(?i:under|below|within|at most|no more than|less than)|{_B}(?i:sub)[-‑]?){_SP}*$"
)
_BOUND_AFTER = re.compile(rf"(?:\*\*|__)?{_SP}*(?:이하|미만|이내|안에|안쪽|내\b|이상)")
# Targets, limits and requirements: a number in such a clause is not a measurement.
_TARGET_WORDS = re.compile(
    rf"{_B}(?i:targets?|goals?|slos?|slas?|requirements?|required|thresholds?|criteria|barriers?|floor|"
    rf"suggested|recommended|aim(?:s|ed|ing)?|exceed(?:s|ed|ing)?|should|must|shall|tolerat\w*|notice|perceiv\w*|"
    rf"perception|considered|feature{_SP}requests?){_E}"
    # a budget, not the budget tier of a product (`the budget 5060 Ti`, `budget-tier APIs`, `budget GPUs`)
    rf"|{_B}(?i:budgets?)(?![A-Za-z]|[ -]+(?:[A-Z]|\d+[ ]?[A-Z]|(?i:gpus?|cards?|tiers?|hardware|options?|builds?|friendly|"
    rf"pcs?|laptops?|phones?|setups?|models?|devices?|machines?|boards?)(?![A-Za-z])))"
    r"|목표|요구|기준치|한도|권장|해야|(?<=[가-힣])야\s?(?:한|합|함)|초과\s?할\s?수\s?없|넘(?:을|길)\s?수\s?없|넘지\s?않도록|용납|느낌|느끼|느껴|어색|인식하는(?=\s?(?:시간|속도|지연|데|순간))|하도록|유지(?![되됐된됨했]|하였)|"
    r"기준으로\s?(?:한|삼|잡)|수\s?있는지\s?(?:확인|검증|테스트|점검|체크)|적절하|적절한|적당하|적당한|바람직|SLO|SLA"
)
# A sentence whose subject is its aim: `The goal is to run … at 60fps`, `Our target is …`, `My aim here was …`.
_GOAL_SUBJECT = re.compile(
    rf"(?:^|[.:;!?]\s+)\W*(?i:the|our|my|their|his|her|one|main|primary|first|end)?{_SP}*"
    rf"(?:(?i:main|primary|end|ultimate){_SP}+)?"
    rf"(?i:goals?|aims?|targets?|objectives?){_SP}+(?:(?i:here|now|then){_SP}+)?(?i:is|are|was|were){_E}"
)
# A threshold in a condition or a filter, a value compared with: `requests where TTFB was greater than 2 seconds`,
# `if … does not respond within 100 s` (`if the reply takes longer than 2.5 s, …` says how long replies take).
_CONDITION_BEFORE = re.compile(
    rf"{_B}(?i:if|where|whenever|unless){_E}[^.;:!?\n]{{0,70}}?{_B}(?i:(?:greater|higher|lower){_SP}+than|within|"
    rf"exceeds?|exceeding|above|below|beyond){_SP}*$"
)
# `if … takes longer than 30 seconds, … fails`: a condition whose outcome is a failure sets a limit.
_LONGER_BEFORE = re.compile(rf"(?i:longer|more){_SP}+(?i:than){_SP}*$")
_CONDITION_BEFORE_WORD = re.compile(rf"{_B}(?i:if|when|whenever|once){_E}")
_FAILS_AFTER = re.compile(
    rf"{_B}(?i:fail\w*|terminat\w*|abort\w*|kill\w*|cancel\w*|times?{_SP}out|timed{_SP}out|errors?{_SP}out|gives?{_SP}up){_E}"
)
# The word right before a number that _CONDITION_BEFORE ends in (a cheap first test).
_COMPARED_BEFORE = re.compile(rf"(?i:than|within|exceeds?|exceeding|above|below|beyond){_SP}*$")
# A sentence that ends by naming what it says as an aim or a criterion: `… 것이 목표입니다`, `… 기준으로 한다`.
_TARGET_END = re.compile(
    r"(?:목표|기준|요구\s?사항|권장\s?사항)(?:이다|입니다|다|예요|이에요|로\s?한다|으로\s?한다|로\s?합니다|으로\s?합니다)"
    r"\s*[.!]?\s*$"
)
# A Korean sentence ending in an imperative gives an instruction, not a report: `… 피드백을 제공하세요.` (not a pointer
# to a text: `… 향상시킬 수 있는지 알아보세요`)
_IMPERATIVE_END = re.compile(r"(?<!알아보)(?<!살펴보)(?<!확인하)(?<!참고하)(?:세요|십시오|하라)\s*[.!]?\s*$")
# An example opened before the number in the same aside: `(e.g., p99 TTFT < 1 s)`, `(예: < 200ms)`.
_EXAMPLE_OPEN = re.compile(r"\((?:e\.g\.|for example|예:|예시:|ex\))[^()]*$", re.IGNORECASE)
# An English aside that opens with an example (`(e.g 10000ms)`, `(for instance 30 s)`): the values in it are examples.
_EXAMPLE_ASIDE = re.compile(r"\((?i:e\.g\.?|for example|for instance)[^()]*$")
_ACHIEVED = re.compile(r"✅|☑|✔|\[[xX]\]|달성|(?i:achieved|measured|breaks|broke|broken|crossed|surpassed)")
_LABEL = re.compile(r"^\s*(?:[-*+>]\s+)?([^:|\d]{1,24}):")
_UPPER_BEFORE = re.compile(rf"(?:<|≤|<=){_SP}*$")
_UPPER_AFTER = re.compile(rf"(?:\*\*|__)?{_SP}*(?:이하|미만|이내|안에|안쪽|내\b)")


def _declarative(after: str) -> bool:
    """Whether a Korean clause ends in the plain present declarative (`끝난다`, `돌아온다`, `걸린다`): a statement
    of fact about the system, not a limit it must keep (`이하다`, `이하로 유지해야 한다` are caught before)."""
    m = re.search(r"([\uac00-\ud7a3])다(?:[.!]|\s*$)", after)
    if m is None:
        return False
    syllable = ord(m.group(1)) - 0xAC00
    return syllable % 28 == 4 or m.group(1) == "는"  # a final ㄴ (`난`, `온`, `린`), or `-는다`


def _past(after: str) -> bool:
    """Whether a Korean clause holds a syllable ending in ㅆ (`빨라졌다`, `줄었음`): a past tense, a fact (not `있어야`,
    `하겠다`)."""
    return any(0xAC00 <= ord(c) <= 0xD7A3 and (ord(c) - 0xAC00) % 28 == 20 and c not in "있겠" for c in after)


_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Where a sentence ends, and the abbreviations whose dot does not end one (`that e.g. improves …`).
_SENTENCE_END = re.compile(r"(?<![A-Za-z]\.[a-z])(?<!\betc)(?<!\bvs)[.?!](?:\s|$)")
_ABBREVIATION_END = re.compile(r"(?:\b[A-Za-z]\.[a-z]|\betc|\bvs)\.$")
# A bound stated as what is, with a copula or a noun ending: `차이는 5% 미만입니다`, `1분 이내로 완료됨`, `… 쿼리이긴 하니깐`.
_COPULA_FACT = re.compile(r"(?:입니다|습니다|이다|이었|였다|됨|이긴)(?![가-힣])")
_ALLOWANCE_BEFORE = re.compile(r"수\s?있는\s?(?:시간|최대|한도)")
_CAPABLE = re.compile(r"수 있|했|됐|였|왔|보여|보인|보입|(?i:took|was|were|ran|got){_E}".replace("{_E}", _E))
# A value that is asked for or set: `36fps를 직접 요청`, `30초로 설정`, `set it to 30 s`, `capped at 30 fps`.
_SET_VERB_AFTER = re.compile(
    rf"(?:\*\*)?{_SP}?(?:(?:정도|쯤){_SP}?)?(?:을|를|로|으로){_SP}?(?:직접{_SP}?)?(?:요청|설정|지정|고정|제한|변경|조정|수정|추출)"
    # the old value of a change: `5초에서 12초로 변경`, `30s -> 120s`
    rf"|{_SP}?(?:에서|->|→){_SP}?\d[\d.,]*{_SP}?[^\s\d]{{0,3}}{_SP}?(?:(?:정도|쯤){_SP}?)?(?:로|으로){_SP}?(?:변경|조정|수정)"
)
_SET_VERB_BEFORE = re.compile(
    rf"{_B}(?i:set(?:s|ting)?(?:{_SP}+(?:it|this|them|the{_SP}+\w+))?{_SP}+(?:to|at)|capped{_SP}+at|limit(?:ed)?{_SP}+to)"
    rf"{_SP}*(?:~|(?i:about|around){_SP}+)?$"
)
# A lower bound on a rate, where more is better: `> 100 req/s` (`10배 이상 증가` is a change that was seen).
_LOWER_BEFORE = re.compile(rf"(?:>|≥|>=){_SP}*$")
_LOWER_AFTER = re.compile(rf"(?:\*\*|__)?{_SP}*(?:이상|초과)")
_MORE_IS_BETTER = re.compile(r"/|(?i:fps|tps|rps|qps|flops|tops)")
# What makes a Korean bound a measured result: a statistic of runs (`< 50ms (평균)`), a speed said to be fast
# (`**빠른 장애 조치**: 30초 이내`), the result of a test or benchmark (`테스트 결과, … 1초 미만의`).
_STAT_AFTER = re.compile(
    rf"(?:\*\*|__)?{_SP}*(?:이하|미만|이내)?{_SP}*\({_SP}*(?:평균|중앙값|(?i:avg|average|mean|median)){_SP}*\)"
)
_FAST_OR_MEASURED = re.compile(
    r"빠른|빠르|빠름|빨라|신속|⚡|(?:테스트|측정|실험|벤치마크)\s?결과|벤치마크|실측|(?i:fast|quick|benchmark|measured)"
)
# `keep ITL under 50 ms`, `to keep it below 2 s`: an instruction or an aim (`latency stays under 1 s` is a fact)
_KEEP = re.compile(rf"(?:^|[:*-]|{_B}(?i:to|must|should|please|and|we|you)){_SP}*(?i:keep){_E}")
_UNCHECKED = re.compile(r"(?m)^\s*(?:[-*+]\s+|\d+[.)]\s+)?\[ \]")
_FEELS = re.compile(rf"(?i:feels?){_E}")
_EXPECTED_LABEL = re.compile(r"\s*(?:[-*+>]\s+|\d+\.\s+)?(?:\*\*)?(?:예상|기대|(?i:expected))[^:：\n]{0,12}[:：]")
_PERCEPTION_ASIDE = re.compile(
    rf"(?:\*\*)?{_SP}*\([^()\n]{{0,30}}(?:느끼|느껴|느낌|체감|(?i:feels?|perceiv\w*|notice)){_E}"
)
_QUESTION_START = re.compile(r"(?:^|[?!][ \t]+)$")
_FEELS_LATER = re.compile(rf"{_B}(?i:feels?){_SP}+(?i:like|as|fast|slow|instant\w*|snappy|sluggish|seamless){_E}")
_RUBRIC = re.compile(
    rf"{_B}(?i:good|poor|excellent|acceptable|painful|great|fair|bad|okay|needs improvement|usable|unusable|"
    rf"suitable|appropriate|essential|ideal){_E}"
    r"|양호|우수|보통|좋음|나쁨|미흡|불량|개선\s?필요|허용\s?가능|위험|경고"
)
# A verdict alone as a line's label: `양호: 1~3초`, `개선 필요: 5초 ~` (a rubric's row, not a measurement).
_RUBRIC_LABEL = re.compile(r"^\s*(?:[-*+>]\s+)?(?:\*\*)?([A-Za-z가-힣 ]{1,20}?)(?:\*\*)?\s*[:：]\s*(?:\*\*)?[~약]?\s*$")
# A duration that is a setting rather than a measurement (besides the existing _SETTING_BEFORE/_SETTING_AFTER).
_SETTING_WORDS = re.compile(
    rf"{_B}(?i:time-?outs?|timeoutseconds|sleeps?|intervals?|keep[-_ ]?alive|ttl|expir\w*|evict\w*|unload\w*|"
    rf"heartbeat|debounce|throttle|animation|transition|easing|polling|poll|backoff|back-off|cron|schedule\w*|"
    rf"retention|grace{_SP}period|idle|inactiv\w*|(?:minimum|maximum|min|max|default){_SP}+value|"
    rf"(?:released|freed|unloaded|evicted){_SP}+after|(?:cache[sd]?|caching)(?:{_SP}+\w+)?{_SP}+for"
    # `Keep loaded for 5 minutes`: how long something is kept
    rf"|(?:keeps?|stays?|remains?)(?:{_SP}+\w+)?{_SP}+(?:loaded|alive|cached|resident|warm|in{_SP}memory){_SP}+for){_E}"
    r"|타임아웃|주기|간격|재시도|만료|보관|애니메이션|자동 닫힘|지속 시간|대기|하트비트|스크래핑|백오프|"
    r"재연결|지연 삭제|스케줄|동안 보관|설정:|\*\*설정\*\*|디바운스|디바운싱|스로틀|쓰로틀|오버랩|슬립|쿨다운|"
    r"유효\s?기간|만료\s?시간"
)
# A duration proposed or changed as a setting (present, gerund or imperative, not a result that was seen:
# `raise start_period from 120s to 600s`, `I suggest we increase this to 10-15 minutes`, `Bumping to 300s`,
# `Let's add a 60-second …`).
_PROPOSE_BEFORE = re.compile(
    rf"{_B}(?i:raise|raising|increase|increasing|bump|bumping|lower|lowering|extend|extending|shorten|shortening|"
    rf"change|changing){_E}(?:{_SP}+[\w.-]+){{0,3}}?{_SP}+(?i:from|to)(?:{_SP}+\S+{_SP}+(?i:to))?{_SP}*~?"
    rf"(?:(?i:e\.g\.),?{_SP}*)?(?:[\d.]+{_SP}*(?:[,/]|{_SP}or){_SP}*)*$"  # `to e.g. 60 or 120 seconds`, `to 360/480sec`
    rf"|{_B}(?i:try|trying|align(?:ing)?(?:{_SP}+\w+)?{_SP}+to){_SP}*$"
    rf"|{_B}(?i:let's|let{_SP}us|we{_SP}should|suggest|propose){_E}[^.;:!?\n]{{0,40}}$"
)
_AFTER_BEFORE = re.compile(rf"{_B}(?i:after){_SP}+$")
_KO_AFTER_EVENT = re.compile(rf"{_SP}*(?:후|뒤)(?:에)?{_SP}")  # `약 60초 후 자체적으로 keep-alive 연결을 닫는다`
_BEFORE_FAILING = re.compile(
    rf"{_B}(?i:before){_SP}+(?i:fail\w*|timing{_SP}out|giving{_SP}up|being{_SP}(?:killed|terminated|unloaded)|erroring){_E}"
)
_STAT_BEFORE = re.compile(rf"(?:평균|보통|중앙값|(?i:average|avg|mean|median|typically)){_SP}*[:=]?{_SP}*[~약]?{_SP}*$")
_WAIT_FOR_WORK = re.compile(r"(?:완료|종료|초기화|준비|빌드|배포)\s?(?:될\s?때까지\s?)?대기")
_SETTING_NOUN_AFTER = re.compile(
    rf"^(?:\*\*)?{_SP}*\S*{_SP}?(?:타임아웃|만료|간격|주기|대기|닫힘|오버랩|"
    rf"(?i:time-?out|interval|ttl|expiry|keep-?alive|overlap|hop|stride|warm-?up|ramp-?up|grace{_SP}period|"
    rf"start(?:ing)?[ _-]?period|plateau){_E}|플래토)"
    r"|\((?:[a-z]+[A-Z]\w*)?(?:Duration|Timeout|Interval|Delay|TTL)\)"
)
_PER_ITEM_AFTER = re.compile(
    rf"{_SP}*(?i:between|per|each|/){_SP}*(?:(?i:each|two|consecutive|successive){_SP}+)?"
    rf"(?i:tokens?|chunks?|steps?|frames?|requests?|iterations?|batch(?:es)?|words?){_E}"
)
_SETTING_LABEL = re.compile(  # `duration: 600초`, a configuration key naming a duration
    r"(?m)(?:^\s*(?:[-*+]\s+|#+\s+)?|[,;]\s*)[a-z_]*(?:duration|timeout|interval|ttl|delay|wait|period|expir\w*)[a-z_]*\s*[:=]\s"
)
# A table row of a parameter and its value, said to be a setting: `| Frame Duration | 20 ms | 일반적인 WebRTC 설정 |`,
# `| Duration | 테스트 시간 | 300초 = 5분 |`.
_SETTING_ROW = re.compile(
    r"(?m)^\s*\|\s*(?:\*\*)?[A-Za-z _-]*(?i:duration|timeout|interval|delay|ttl|period)(?:\*\*)?\s*\|"
    r"(?:[^|\n]*\|)*?[^|\n]*(?:테스트 시간|설정|기본값|(?i:setting|settings|default|config\w*))(?:\*\*)?\s*\|"
)
# `jitterBufferTarget: 150ms`, `keep_alive=5m`: an identifier (camelCase or snake_case) set to the number; a
# camelCase key starts with its lower-case word (`PyTorch: 5.2 ms` is a product and its time, not a key)
_KEY_BEFORE = re.compile(
    r"(?:(?<![A-Za-z0-9_])[a-z]+[A-Z][A-Za-z]*|[a-z]+_[a-z_]+|(?<![A-Za-z])(?:period|timeout|delay|interval|ttl|deadline))"
    r"\s*[:=]\s*$"
)
# A configuration key naming a time that is set, anywhere in the sentence: `Adjust initialDelaySeconds …: 120s for 7B
# models`, `failureThreshold: 50 # … 30s …`, `Raised 30s -> 120s …; see IDLE_TIMEOUT_FLOOR_SECS`.
_CONFIG_KEY = re.compile(
    r"(?<![A-Za-z0-9_])(?:[a-z]+(?:[A-Z][a-z]+)*(?:Timeout|Period|Interval|Threshold|Ttl|TTL|KeepAlive)[A-Za-z]*"
    r"|(?:initial|start|retry|backoff|reconnect)Delay[A-Za-z]*|(?:[A-Z][a-z]+)*(?:Timeout|Period|Interval)[A-Za-z]*"
    r"|[A-Za-z]+(?:_[A-Za-z]+)*_(?:TIMEOUT|DELAY|PERIOD|INTERVAL|timeout|delay|period|interval)"
    r"(?:_[A-Za-z]+)*)(?![A-Za-z0-9_])"
)
# A duration in a load test's configuration, beside its load (`vuser 500, duration 30s`, `150 VU, 2분 30초`,
# `360개 동시 연결, 60초 동안`, `c=1, 60s`): how long the test ran, as set.
_LOAD_COUNT = re.compile(
    r"(?i:\bvusers?|\bvus?\b|\bc=|concurrency)\s*[=:]?\s*\d|\d\s*(?i:vus?\b|vusers?|concurrent\b)|\d\s?개(?:의)?\s?(?:동시\s?연결|connection)"
)
# A request rate listed with a test's length in minutes (`(50 rps, 5분간)`, `K6 50rps | 5분 부하`): the load a test was
# set to send, as `RPS 2, Duration 10s` is.
_LOAD_RATE_AFTER = re.compile(rf"(?:\*\*)?{_SP}*[,|]{_SP}*\d+{_SP}?(?:분|(?i:min|minutes?|m){_E}|초{_SP}?(?:간|동안))")
_LOAD_RATE_BEFORE = re.compile(rf"\d{_SP}?(?i:rps)(?:\*\*)?{_SP}*[,|]{_SP}*$")
# The last of a list of values (`30, 60, 120, or 300 seconds`, `60 or 120 seconds`, `360/480sec`).
_OPTIONS_BEFORE = re.compile(rf"\d{_SP}*(?:,{_SP}*(?:(?i:or){_SP}+)?|{_SP}(?i:or){_SP}+|/)$")
_KO_OPTIONS = re.compile(rf"\d[^\s\d]{{0,3}}{_SP}*또는{_SP}*\d")
_LOAD_DURATION_BEFORE = re.compile(rf"(?:[,(]|(?i:duration|ramp-?up)(?:\([^)]*\))?[:=]?|유지){_SP}*$")
_LOAD_DURATION_AFTER = re.compile(rf"{_SP}*(?:동안|기준|간(?![가-힣]))")
# A key naming what was measured rather than what is set: `TotalTime`, `processing_time`, `elapsed_ms`, `latency`.
_MEASURED_KEY = re.compile(r"(?i:time|elapsed|latency|took|taken)(?!out)")
_TEST_LENGTH_AFTER = re.compile(
    rf"(?:\*\*)?{_SP}?(?:간{_SP}|테스트|벤치마크|부하(?![가-힣])|(?i:tests?|benchmarks?|runs?){_E})"
)
_QUOTED = re.compile(r"[\"'“‘]$")
# Lengths of media: `a 5 second video`, `6 seconds of video`, `2~4초 분량의`, `13 minutes of audio`.
_MEDIA_AFTER = re.compile(
    rf"(?:\*\*|__|\]\([^)]*\)|{_SP}|\([^)]{{0,20}}\))*(?:(?:of|in){_SP}+)?(?:(?:long|stereo|high-res\w*|HD|recorded|raw|input|test|sample){_SP}+)?"
    rf"(?i:videos?|audio|clips?|songs?|speech|recordings?|footage|music|movies?|length|long|podcasts?|episodes?|"
    rf"lectures?){_E}"
    r"|(?:\*\*)?\s?(?:까지\s?)?(?:분량|팟캐스트|오디오|음성|비디오|영상|동영상|녹음|데이터|의 데이터|의 저잡음|가량의|연속 음성|길이|짜리|영화)"
    # a sample rate after a duration: `6.0s @ 48kHz`
    rf"|{_SP}*(?:@|(?i:at)){_SP}*\d+(?:\.\d+)?{_SP}?(?i:k?hz){_E}"
)
_MEDIA_BEFORE = re.compile(
    rf"(?i:audio|video|videos|clip|speech|silence|recording|오디오|음성|비디오|영상)[^.;|]{{0,30}}"
    rf"(?:\([^)]{{0,30}}|(?i:longer than|shorter than|up to|at most){_SP}*|최대{_SP}?)$"
    rf"|(?i:variable-length){_SP}?\((?i:up to){_SP}*$"
    rf"|(?i:audio|video|clip|recording|input){_SP}*(?i:length|duration){_SP}*[:=]{_SP}*$"  # `recording length: 5.0 s`
)
# A rate of people, named before it: reading, typing or speaking speed (`the speed of my reading (8-9 tokens/s)`,
# `사람이 읽는 속도는 초당 5토큰`).
_HUMAN_RATE_BEFORE = re.compile(
    rf"(?i:reading|typing|speaking|talking){_SP}+(?i:speed|rate|pace)|(?i:speed|rate|pace){_SP}+of{_SP}+(?:\w+{_SP}+)?"
    rf"(?i:reading|typing|speaking|speech)|{_B}(?i:humans?|people|we|I){_SP}+(?i:read|type|speak|talk)"
    r"|(?:읽는|읽기|타이핑|말하는|발화)\s?속도|사람이\s?(?:읽|말하|타이핑)"
)
# How long people take to answer one another: `Human conversation response: ~200ms`, `사람 간의 자연스러운 대화에서
# 응답까지 걸리는 시간은 평균 200ms`.
_HUMAN_TIME_BEFORE = re.compile(
    rf"{_B}(?i:human|people's|person's){_SP}+(?:(?i:conversation(?:al)?|reaction|turn-taking){_E})|사람\s?간|사람(?:들)?의\s?(?:반응|대화)"
)
# A system reaching a people's rate (`achieving speeds comparable to human reading (5-7 tokens per second)`).
_REACHES_BEFORE = re.compile(rf"{_B}(?i:achiev\w*|reach\w*|comparable|on{_SP}par|rivals?)|달성|도달|수준")
_READ_AFTER = re.compile(rf"{_SP}*(?i:read|reading){_E}")
# `1353 words · 7 min`: a post's length in words, then its reading time.
_WORD_COUNT_BEFORE = re.compile(rf"\d[\d,]*{_SP}+(?i:words){_SP}*[·•|]{_SP}*$")
# A line that is only a duration and `소요`, with at most a word before it and no work named: a post's reading time.
_BADGE_LINE = re.compile(rf"{_SP}*(?:[^\s\d|:*#>-]+{_SP}+)?\d+{_SP}?분{_SP}?소요{_SP}*")
# Time spent by people, not by a system: workshops, study plans, set-up steps (minutes and hours only).
_HUMAN = re.compile(
    # English words as prose, not inside a path (`samples/session03/`)
    r"(?<![A-Za-z/])(?i:workshops?|sessions?|lessons?|courses?|tutorials?|exercises?|hands-on|break|level|"
    r"difficulty|study|agenda|read)(?![A-Za-z0-9_/])"
    r"|세션|실습|휴식|워크숍|강의|과정|학습 경로|난이도|소요 시간|예상 시간|과제|프로젝트|모듈|설정 완료|시작하기|"
    r"개입|환경\s?설정|"
    r"하세요|해 보세요|하십시오|작업 시간|마이그레이션 작업|수동|Q&A|읽기|회의|일정|수업|교육|커피|끝장|⏱️|"
    r"완료 처리|접속|시간 배분|강의 일정|총 예상|추천|권장하는|에피소드|성공한 사람|트레이닝 세트|데이터로|튜토리얼|"
    r"기다리는\s?데|기다리느라|멍하니|(?i:waiting for (?:the|a|my|our) |staring at)"
)
# Work done by a system, which makes hours a measurement: `training takes 2 hours`, `2시간이 소요`.
_WORK = re.compile(
    rf"{_B}(?i:takes?|took|taking|lasts?|lasted|runs?|ran|trained|training|trainable|execution|export|build|inference|"
    rf"finish(?:es|ed)?|completes?|completed|needs?|requires?|processing|waiting|waited){_E}"
    r"|소요|걸리|걸린|걸려|걸렸|걸림|걸릴|끝났|끝나|마쳤|만에|학습|훈련|빌드|추론|실행|생성|변환|처리"
)
_DELAY_AFTER = re.compile(
    rf"{_SP}*(?:후|뒤)에?{_SP}*(?:한{_SP}?번{_SP}?더|다시|재시도|재실행|재전송|자동|→|->|:)|{_SP}*(?i:later|after that){_E}"
    rf"|{_SP}*(?i:before{_SP}+(?:retry\w*|trying{_SP}+again|reconnect\w*|polling|the{_SP}+next{_SP}+(?:try|attempt|poll))){_E}"
)
_NOT_MEASURED_AFTER = re.compile(
    rf"(?:\*\*)?{_SP}*(?:단위|(?:의{_SP}?)?(?:블록|블락|청크)|(?i:resolution|granularity|windows?|chunks?|segments?|blocks?){_E})"
    rf"|(?:{_SP}+[\w-]+){{1,2}}?{_SP}+(?i:windows?){_E}"  # `a 900-second request-sending window`
)
# `T+90s: weights are in HBM`: an offset on a timeline, not a duration measured
_TIMELINE_BEFORE = re.compile(rf"(?<![A-Za-z0-9])T{_SP}?[+-]{_SP}?$")
_WINDOW_BEFORE = re.compile(
    rf"(?:{_B}(?i:last|past|previous|next|over the|first)|최근|지난|(?<![가-힣])(?:첫|처음|마지막)){_SP}+$"
)
_IDENT_BEFORE = re.compile(r"[a-z]+-[a-z]+-$")
# A window (of time, of input) named in the clause before a duration, as its key or its subject (not `Windows`).
_WINDOW_SUBJECT = re.compile(
    rf"{_B}windows?(?:{_SP}*[=:]{_SP}*|{_SP}+(?i:is|was|moves?|moved|shifts?|slides?|advances?|spans?|lasts?|covers?)"
    rf"(?:{_SP}+[\w-]+){{0,3}}{_SP}+)$"
)
_CONDITION_AFTER = re.compile(
    rf"(?:\*\*)?{_SP}?(?:을|를|이|가)?{_SP}?(?:이상|초과|이하|미만)?{_SP}?"
    rf"(?:넘으면|넘는|넘어가는|넘어가면|넘기면|넘을|이상이면|초과 시|초과하면|걸리면|걸리는{_SP}\S+(?:은|는)|[^|.,]{{0,12}}(?:경우|없어도|없으면|않으면))"
)
_QUOTA_AFTER = re.compile(rf"에{_SP}?\d+{_SP}?(?:회|번|건)")
_PAREN_ESTIMATE = re.compile(r"\)\s*$|\)\s*[|*]")
# A task a person does (a to-do item with its estimate: `최적화 기술 적용 (1시간)`), even about a system's speed.
_TASK = re.compile(r"적용|구현|작성|도입|문서화|리팩터링|정리|(?i:implement|refactor|document|write|apply)")
# A duration given per month or day: a quota or a plan (`월 60분`, `60 minutes per month`).
_PER_PERIOD_BEFORE = re.compile(rf"(?:^|[\s|(*])(?:월|매월|매달|월간|하루|일일){_SP}*(?:최대{_SP}*)?$")
_PER_PERIOD_AFTER = re.compile(
    rf"{_SP}*(?:/{_SP}?(?:월|일|(?i:mo|month|day){_E})|(?i:per|a|an){_SP}+(?i:month|day|week){_E}|(?i:monthly|daily){_E})"
)
# Time people spend: `10분 더 쓰는`, `spend 20 minutes`, `30+ minutes of dependency wrestling`.
_SPEND_AFTER = re.compile(rf"{_SP}*(?:(?:더|정도|씩|만){_SP}?)?(?:쓰는|쓰면|써서|썼|투자|들이|할애)")
_SPEND_BEFORE = re.compile(
    rf"{_B}(?i:spend|spends|spending|spent|invest|invested){_SP}+(?:(?i:about|around|an?{_SP}+extra|extra|another)\s+|~)?$"
)
_PEOPLE_OF_AFTER = re.compile(
    rf"{_SP}*(?i:of){_SP}+(?:[\w-]+{_SP}+)?(?i:wrestling|fiddling|tinkering|debugging|troubleshooting|setup|set-up|"
    rf"configuration|reading|googling|work|effort|manual{_SP}+\w+){_E}"
)
# A person's time: `It took me 2 hours`, `set up in 5 minutes`, `5분 만에 설치`.
_PERSON_TOOK_BEFORE = re.compile(
    rf"{_B}(?i:takes?|took|taking){_SP}+(?i:me|us|him|her|them|you|people|users|developers)"
    rf"(?:{_SP}+(?i:about|around|roughly|only|just))?{_SP}*~?$"
    rf"|{_B}(?i:set{_SP}?up|installed|install|get{_SP}started|up{_SP}and{_SP}running|onboarded)"
    rf"{_SP}+(?i:in|within|under){_SP}+(?:(?i:about|around|under|less{_SP}than){_SP}+)?$"
)
_SETUP_AFTER = re.compile(rf"{_SP}*(?:안에|만에|이내에?|내에){_SP}*(?:설치|셋업|세팅|환경{_SP}?설정)")
# A test's configured length: `Run the benchmark for 60 seconds`, `벤치마크를 60초 동안 실행`.
_TEST_FOR_BEFORE = re.compile(
    rf"{_B}(?i:benchmarks?|tests?|load{_SP}tests?|stress{_SP}tests?|experiments?|runs?|measure){_SP}+(?i:for){_SP}*$"
    # `Tested with 50 concurrent users for 10 minutes`
    rf"|{_B}(?i:tested|benchmarked|load-tested){_E}[^.;:\n]{{0,40}}{_B}(?i:for){_SP}*$"
)
_TEST_RUN_AFTER = re.compile(rf"{_SP}*(?:동안|간){_SP}*(?:실행|수행|돌리|돌려|측정)")
_TEST_BEFORE_KO = re.compile(rf"(?:벤치마크|테스트|부하{_SP}?테스트)(?:를|을|는)?{_SP}*$")
# `--duration 30s`, `-t 10s`: the value of a command-line option
_OPTION_BEFORE = re.compile(rf"(?<![\w-])--?[A-Za-z][\w-]*(?:={_SP}*|{_SP}+)$")
# Work the system does right before the number makes it a measurement, whatever setting words the line holds
# (`The cron job runs at 02:00 and takes 5 minutes`).
_TOOK_BEFORE = re.compile(
    rf"{_B}(?i:takes?|took|taking|lasts?|lasted|finishe[sd]{_SP}+in|completes{_SP}+in|completed{_SP}+in)"
    rf"(?:{_SP}+(?i:about|around|roughly|only|just|under|over|nearly|almost))?{_SP}*~?$"
)
# Cheap first tests for _PRESS_BEFORE and _INPUT_LENGTH_BEFORE: the word right before the number.
_FOR_BEFORE = re.compile(rf"(?i:for){_SP}*$")
_THAN_BEFORE = re.compile(rf"(?i:than){_SP}*$")
# A person holding a button: `Hold down the power button for 10 seconds`, `5초간 길게 누르`.
_PRESS_BEFORE = re.compile(rf"{_B}(?i:hold|holding|press|pressing)(?:{_SP}+down)?{_E}[^.;:\n]{{0,40}}{_B}for{_SP}*$")
_PRESS_AFTER = re.compile(rf"{_SP}*(?:간|동안|정도)?{_SP}?(?:길게{_SP}?)?(?:누르|눌러)")
# The length of an input, not a time: `inputs shorter than 30 seconds`.
_INPUT_LENGTH_BEFORE = re.compile(
    rf"{_B}(?i:inputs?|files?|segments?|utterances?|samples?|clips?){_SP}+(?i:shorter|longer){_SP}+than{_SP}*$"
)
# Frames: a duration beside a frame rate is a video's length (`≈ 7.9 s at 24 FPS`, `24 fps, 5 to 15 seconds`).
_AT_FPS_AFTER = re.compile(rf"(?:{_SP}+(?i:per){_SP}+\w+)?{_SP}*(?i:at|@){_SP}*\d+(?:\.\d+)?{_SP}?(?i:fps){_E}")
_FPS_BEFORE = re.compile(rf"\d{_SP}?(?i:fps)(?:\*\*)?{_SP}*[,/]{_SP}*$")
# `a 5 second Text-to-Video model`, `a 5-second 720p video`: a length used as an adjective on a video line
_ADJECTIVE_LENGTH = re.compile(
    rf"(?:-|{_SP})(?i:second|minute){_SP}+(?:[A-Z0-9]|(?i:videos?|clips?|audio|songs?|segments?|movies?|animations?){_E})"
)
_SYSTEM_WORK = re.compile(
    r"빌드|컴파일|테스트 실행|추론|학습|훈련|변환|번역|다운로드|로딩|완료\s?대기|(?i:build|compile|inference|training)"
)
_ELAPSED_AFTER = re.compile(
    rf"(?:\*\*)?{_SP}*(?:경과|실행 중|남음|째|동안 Critical|(?i:elapsed|ago|left|remaining|uptime){_E})"
)
_ELAPSED_LINE = re.compile(r"진행:|남은 시간|(?i:uptime)|\bUp \d|\d{1,2}:\d{2}\s*→")
_HYPOTHETICAL = re.compile(
    rf"{_B}(?i:would|suppose|imagine|hypothetical\w*|for instance|if the system|let's{_SP}say"
    # an example about an indefinite system: `For example, a system can generate 100 tokens per second`
    rf"|(?:for{_SP}example|e\.g\.),?{_SP}+(?:an?{_SP}+[\w-]+{_SP}+(?:can|could|might|may)|say|if|let's|let{_SP}us)|might"
    # an indefinite system as the sentence's subject: `A model generating 100 tok/s …`, `If a model generates …`
    rf"|(?:^\s*|{_B}if{_SP}+)an?{_SP}+(?:model|system|server|llm|gpu|team|user|company|developer|service|app|"
    rf"application|customer){_E}(?!{_SP}+(?i:like|such))"
    # `If there is a PR that improves performance by 2% …`, `This example demonstrates … 10 requests per second`
    rf"|{_B}if{_SP}+there{_SP}+(?:is|are|were){_E}|{_B}if{_SP}+you{_SP}+(?:need|want|have|plan){_E}|{_B}(?:this|the){_SP}+example{_SP}+(?:demonstrates|shows|illustrates|uses)"
    rf"|{_B}an?{_SP}+[\d,]+-(?:token|word){_SP}+(?:answer|response|reply|paragraph|completion)){_E}"
    r"|라도|라면|다면|쏟아진다면|가정하면|가정하고|가정할|가정해|가정한|가령|어떤\s?(?:서버|시스템|모델|API)"
    # a supposition, said with the hortative or the conditional of saying (`… 1분과 2분이라 하자`, `… 작업이 존재한다고
    # 생각하자`, `일 8시간 개발이라고 하면`), and a concession on a number (`평균 응답시간이 10ms여도`)
    r"|(?:[라다]고|(?<=[가-힣A-Za-z0-9*])라)\s?(?:생각|가정)?(?:하자|치자|하면|치면)|(?<=[0-9A-Za-z초분])(?:이어도|여도)(?![가-힣])"
)
# A modal and where its clause ends: `would`/`might` make hypothetical only the clause they are in.
_MODAL = re.compile(rf"{_B}(?i:would|might){_E}")
_MODAL_CLAUSE_STOP = re.compile(rf"[—;()]|{_SP}-{_SP}|{_SP}(?i:so|which){_SP}")
# An illustration or a definition rather than a report: `예를 들어`, `ex)`, `이론적으로`, `생각해 보세요`,
# `p99=500ms이면 … 처리된다는 의미`, `… 수 있다는 것이고` (what a figure means, worked out).
_ILLUSTRATION = re.compile(
    r"(?<![가-힣])예\)|(?<![A-Za-z])(?i:ex|e\.g)[.)]|이론적으로|이론상|생각해\s?보|상상해|"
    r"의미(?:한다|합니다|함|이다|입니다)?\s*[.!]?\s*$|뜻(?:한다|합니다)|[다라]는\s?(?:의미|뜻)|수\s?있다는\s?것"
    # a relation stated in general, in the present: `1ms의 지연이 … 손실로 이어지기도 합니다`
    r"|이어진다|이어지(?:기도|며|는|고)"
    # a line labelled as an example: `예시: (개선 전: 1,500 RPS → 개선 후: 4,000 RPS)`
    r"|(?:^|\()\s*(?:\*\*)?예시\s*(?:\*\*)?\s*:"
)
# A Korean condition: a verb or copula ending in `-면` (`줄이면`, `늘어나면`, `요청하면`, `이상이면`), not a noun
# ending in 면 (`측면`, `반면`, `화면`, `표면`, `전면`).
# Where a Korean clause ends: punctuation, the end of an aside, a conjunction (`…지만`, `…는데`, `…고 `).
_KO_CLAUSE_END = re.compile(r",(?!\s*(?:[가-힣]{1,3}\s+)?\d)|[.;!?)]|지만|는데|으나|으며|하며|고\s")
_COPULA_IF = re.compile(r"[\d.,~\s-]*\S{0,4}?이면")
_KO_CONDITIONAL = re.compile(r"(?<![측반화표전후대단방국장정평려])(?<=[\uac00-\ud7a3])면(?=[\s,?!.]|$)")
_FOR_EXAMPLE_KO = re.compile(r"예를\s?들(?:어|면)|예컨대|가령")
# `"응답 시간이 2초로 증가했다"처럼`: a quoted example of what one could say
_QUOTE_OPEN = re.compile(r"[\"“][^\"”]*$")
_QUOTE_EXAMPLE = re.compile(rf"^[^\"”]*[\"”]{_SP}?(?:처럼|같은|같이|과{_SP}같|와{_SP}같|면|(?i:like|such as){_E})")
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
    r"\((?:[^()\n|│]{1,40}?,[ \t]*)?(?:s|ms|sec|secs|seconds|ms/tok|tok/s|tokens/s|t/s|req/s|requests/s)\)"
    r"(?:\*\*)?\s*[:|│]?\s*(?:\*\*)?(?P<n1>\d+(?:,\d{3})*(?:\.\d+)?)"
    r"(?![\w.])"
)
# A rate's unit written before its number, as a key or a label: `TPS 15.4`, `tps는 약 620`, `QPS 324,323.71`,
# `TFLOPS=6.10924` (not a count: `TPS 2개`; not `RPS 10`, the rate a load generator is set to send).
_UNIT_BEFORE = re.compile(
    rf"(?<![A-Za-z0-9/])(?P<u>TPS|QPS|tps|qps|TFLOPS|GFLOPS)"
    rf"(?:\*\*)?{_SP}?(?:[:=]|는|은|가|이|도)?{_SP}*(?:(?:약|평균|대략|~|≈){_SP}*)?(?:\*\*)?(?P<n1>{_NUM_FIRST})"
    rf"(?![A-Za-z0-9%]|[.,]\d|{_SP}?(?:개|명|대|번|회|배|초|분|시간))"
)
# A fraction of a speed or a time: `1/3 the speed`, `about 1/2 of the inference time`.
_FRACTION = re.compile(
    rf"(?P<n1>{_NUM_FIRST}/\d{{1,2}})(?:{_SP}+(?i:of))?(?:{_SP}+(?i:the|its|their))?(?:{_SP}+[\w-]+)?{_SP}+"
    rf"(?i:speed|time|throughput|latency|performance){_E}"
)
# `x2.88`: a ratio written with the sign first.
_PREFIX_X = re.compile(r"(?<![\w.])[x×](?P<n1>\d+\.\d+)(?![\w.])")
# `ttft_latency_seconds_sum 0.113`, `…_seconds{op="match"} 3.4e-06`: a metric whose name holds its unit.
_METRIC_UNIT = re.compile(
    rf"(?<=[A-Za-z0-9])_(?P<unit>seconds|milliseconds)(?:_(?:sum|max|avg|mean))?(?:\{{[^{{}}\n]{{0,200}}\}})?[ \t]+"
    rf"(?P<n1>{_NUM}(?:[eE][+-]?\d+)?)(?![\w.])"
)
# `RTF 0.25`, `(RTF = 0.082)`, `real-time factor: 0.3`: a real-time factor, the unit's name before the number.
_RTF = re.compile(
    rf"(?<![\w])(?:RTF|(?i:real-?time{_SP}factor)){_SP}*(?:[:=~≈]{_SP}*)?~?(?P<n1>\d+(?:\.\d+)?)(?![\w.%])"
)
_EXTRA = (
    (_RTF, "RTF"),
    (_RTF, "factor"),
    (_PER_SECOND, "초당"),
    (_METRIC_UNIT, "_seconds"),
    (_METRIC_UNIT, "_milliseconds"),
    (_PPTG, "/s"),
    (_TEST_THEN_NUMBER, "p"),
    (_TEST_THEN_NUMBER, "tg"),
    (_LABEL_UNIT, ")"),
    (_PREFIX_X, "x"),
    (_PREFIX_X, "×"),
    (_UNIT_BEFORE, ""),  # no hint: its lines are the prefilter's (_PREFILTER_UNIT_KEYS), its windows pre-tested
    (_FRACTION, "/"),
)
_CELL_NUMBER = re.compile(
    rf"^(?:\*\*|__|~|≈|약|{_SP})*[+−-]?(?:\*\*)?[x×]?{_NUM}(?:{_SP}?[~–-]{_SP}?{_NUM})?{_SP}?[%×xX배]?(?:\*\*|__|{_SP})*"
    rf"(?:\(.*\))?(?:{_SP}|⬇️|⬆️|↓|↑|⚡|✅)*$"
)
_TIME_UNITS = frozenset({"s", "ms", "min", "us", "h", "tok/s", "req/s", "/s", "ms/tok", "s/tok", "fps"})


_NEWLINE = re.compile("\n")
# Words that make a change a change of speed, whatever noun is near: `regressed by 14%`, `sits 5% behind`.
_SPEED_CHANGE = re.compile(
    rf"{_B}(?i:regress\w*|behind|ahead{_SP}of|loses?{_SP}to|lost{_SP}to|beats?|faster|slower|speed-?ups?|slow-?downs?|"
    rf"uplift){_E}|빨라|느려|빠르|느리|빠를|느릴"
)
_LINE_FLAGS = {
    "speed_change": _SPEED_CHANGE,
    # a cell of counted things (`| 4개 |`): a signed percentage in the row is a change of a count
    "count_cell": re.compile(
        r"\|[ \t*]*\d[\d,]*[ \t]?(?:개|건|명|곳|종|(?i:items|files|models|platforms|frames))[ \t*]*\|"
    ),
    "unchecked": _UNCHECKED,
    "achieved": _ACHIEVED,
    "rubric": _RUBRIC,
    "hangul": _HANGUL,
    "video": re.compile(r"(?i:video|t2v|i2v|frames|export|frame_rate|hz|비디오|영상)"),
    "elapsed": _ELAPSED_LINE,
    "human": _HUMAN,
    "system_work": _SYSTEM_WORK,
    "setting_label": _SETTING_LABEL,
    "config_key": _CONFIG_KEY,
    "human_time": _HUMAN_TIME_BEFORE,
    "feels": _FEELS_LATER,
    "imperative": re.compile(r"세요|십시오|하라"),
    # any of the five above: one pre-test per line for the later classes' checks (see _Context._later)
    "later": re.compile(
        rf"{_CONFIG_KEY.pattern}|{_LOAD_COUNT.pattern}|{_HUMAN_TIME_BEFORE.pattern}|{_FEELS_LATER.pattern}"
        r"|세요|십시오|하라"
    ),
    "load": _LOAD_COUNT,
    "setting_row": _SETTING_ROW,
    "timed": _TIMED,
    "target_words": _TARGET_WORDS,
    "hypothetical": re.compile(
        rf"{_HYPOTHETICAL.pattern}|[\"“]|(?i:an?){_SP}+(?i:model|system|server|llm|gpu){_E}"
        rf"|\((?i:e\.g|for{_SP}example|for{_SP}instance)"
    ),
    "media": re.compile(
        r"(?i:video|audio|clip|song|speech|recording|footage|music|movie|length|silence|podcast|episode|lecture|khz)"
        r"|분량|오디오|음성|비디오|영상|녹음|데이터|팟캐스트|영화"
    ),
    "setting_words": re.compile(
        rf"{_SETTING_WORDS.pattern}|\(|(?i:time-?out|interval|ttl|expiry|keep-?alive|overlap|hop|stride|warm-?up|ramp-?up|"
        rf"grace{_SP}period|period|plateau)|플래토"
    ),
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
        if self._lo <= pos <= self._hi and self._fast:  # the line last asked about (most questions): no call
            value = self._flags.get(name)
            if value is not None:
                return value
        lo, hi = self._bounds(pos)
        value = self._flags.get(name)
        if value is None:
            flags = self._flags
            if self._screens is not None and not self._may_match(lo, hi, name):
                value = flags[name] = False  # the line holds none of the literals every match holds
            else:
                value = flags[name] = _LINE_FLAGS[name].search(self.text, lo, hi) is not None
        return value

    def _later(self, pos: int, name: str) -> bool:
        """A line flag of the later classes, asked only when the line holds a literal of one of them."""
        if self._lo <= pos <= self._hi and self._flags.get("later") is False and self._fast:
            return False
        return self._flag(pos, "later") and self._flag(pos, name)

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
        after = _CONJUNCTION.split(after, 1)[0]  # `시간을 85% 줄이고 메모리 요구 사항을`: another clause's words
        if _SET_VERB_AFTER.match(self.text, end) or _SET_VERB_BEFORE.search(before):
            return True  # a value asked for or set
        if _OPTION_BEFORE.search(self.text, max(0, start - 30), start):
            return True  # `--duration 30s`: a command-line option
        if _COMPARED_BEFORE.search(self.text, max(0, start - 16), start) and _CONDITION_BEFORE.search(
            self._before(start, 90)
        ):
            return True  # a threshold in a condition
        if (
            _LONGER_BEFORE.search(self.text, max(0, start - 16), start)
            and _CONDITION_BEFORE_WORD.search(self._before(start, 90))
            and _FAILS_AFTER.search(self._sentence(start)[1])
        ):
            return True  # `if the process takes longer than 30 seconds, the coroutine fails`: a limit
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
            bound or re.search(r"^\s*[A-Za-z ]+:\s*$", before) or _RUBRIC.match(after.strip(" )*_:+"))
        ):
            return True  # `Good: < 600ms`, `>50 tok/s Excellent`, `Needs improvement: 600-1000ms`
        label = _RUBRIC_LABEL.match(before)
        if label and self._flag(start, "rubric") and _RUBRIC.fullmatch(label.group(1).strip()):
            return True  # `양호: 1~3초`, `개선 필요: 5초 ~`: a verdict as the label
        later = self._flag(start, "later")  # one pre-test of the later classes' words for the line
        if _FEELS.match(after.strip(" )*_")) or (
            later and self._flag(start, "feels") and _FEELS_LATER.search(_CONJUNCTION.split(self._after(end, 50), 1)[0])
        ):
            return True  # `(100+ tokens/sec) feels fast`, `a 4x lift feels like …`: a perception
        if bound and _KEEP.search(before):
            return True  # `keep ITL under 50 ms`
        if bound and _EXPECTED_LABEL.match(self.text, self._bounds(start)[0]):
            return True  # `예상 결과: 배치 모드가 2배 이상 빠름`: a bound on what is expected
        if self.text.find("(", end, end + 6) != -1 and _PERCEPTION_ASIDE.match(self.text, end):
            return True  # `**즉시 반응**: 0-100ms (사용자가 지연을 느끼지 않음)`: how people perceive it
        if words and not achieved and _GOAL_SUBJECT.search(self._sentence(start)[0]):
            return True  # `The goal is to be able to run … at 60fps`: the sentence names its aim first
        if bound and not achieved:
            s_before, s_after = self._sentence(start)
            if (words and _TARGET_WORDS.search(s_before + s_after)) or _EXAMPLE_OPEN.search(s_before):
                # a bound in a sentence about targets, or in an example: `targets … (e.g., p99 TTFT < 1 s)`
                return True
        if later and self._flag(start, "imperative") and _IMPERATIVE_END.search(self._sentence(start)[1]):
            return True  # `완료하는데 500ms 이상 걸리는 동작들에 대해서는 … 제공하세요.`: an instruction
        if words and not achieved and _TARGET_END.search(self._sentence(start)[1]):
            return True  # `LCP는 2초, FCP는 1초에 근접하도록 … 개선하는 것이 목표입니다`: the sentence states an aim
        if bound and not achieved:
            return self._bound_is_target(start, end)
        if bound and achieved and _BOUND_CELL.search(self.text, max(0, start - 12), start):
            # `| < 50ms | 38ms | 132% | ✅ 초과 달성 |`: the bound is the target the next cell's result met
            unit_end = self.text.find("|", end, self._line(end)[1])
            return unit_end >= 0 and _LATER_RESULT.match(self.text, unit_end) is not None
        return False

    def _copula_fact(self, start: int, after: str) -> bool:
        """A bound said to be what is (`… 5% 미만입니다`, `1분 이내로 완료됨`), not an allowance (`달릴 수 있는 시간은 1초
        이내입니다`)."""
        return _COPULA_FACT.search(after) is not None and _ALLOWANCE_BEFORE.search(self._before(start, 40)) is None

    def _bound_is_target(self, start: int, end: int) -> bool:
        """A bound (`< 200ms`, `500ms 이하`) with nothing saying it was reached: in Korean notes, a limit."""
        if not self._flag(start, "hangul"):
            return False
        text = self.text
        upper = _UPPER_BEFORE.search(text, max(0, start - 4), start) or _UPPER_AFTER.match(text, end)
        if upper is None and _MORE_IS_BETTER.search(text, start, end):
            upper = _LOWER_BEFORE.search(text, max(0, start - 4), start) or _LOWER_AFTER.match(text, end)
        if upper is None:
            return False
        after = self._after(end, 40)
        if _CAPABLE.search(after) is not None or _declarative(after) or _past(after) or self._copula_fact(start, after):
            return False
        before = self._before(start, 40)
        if "(" in before and (_CAPABLE.search(before) is not None or _past(before)):
            return False  # `초당 1200건을 처리했다 (> 1000 req/s)`: an aside to a fact
        if _STAT_AFTER.match(text, end):
            return False  # `< 50ms (평균)`: the average of what was measured
        lo = text.rfind("\n", max(0, start - _REACH), start) + 1
        return _FAST_OR_MEASURED.search(text, lo, start) is None and _FAST_OR_MEASURED.search(after) is None

    # --- kinds of numbers ------------------------------------------------------------------------------------

    def spread_kind(self, start: int, end: int) -> str:
        return "target" if self._target(start, end) else "claim"

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
            return new_end, ("target" if self._target(start, new_end) else "claim")
        if kind in _DURATIONS:
            return self._duration(start, u_start, end, kind)
        if (
            kind in _SPAN_KINDS
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

    def _sentence(self, start: int) -> tuple[str, str]:
        """The sentence holding a number (at most 200 characters before it and 120 after), as (the part before
        the number, the part from it)."""
        lo, hi = self._line(start)
        seg = self.text[max(lo, start - 200) : start]
        stop = max(seg.rfind(". "), seg.rfind("? "), seg.rfind("! "))
        if stop > 0 and seg[stop] == "." and _ABBREVIATION_END.search(seg, 0, stop + 1):
            stop = max((m.start() for m in _SENTENCE_END.finditer(seg, 0, stop)), default=-1)  # `e.g. ` ends none
        tail = self.text[start : min(hi, start + 120)]
        m = _SENTENCE_END.search(tail)
        return seg[stop + 1 :], tail[: m.start() if m else len(tail)]

    def _hypothetical(self, start: int) -> bool:
        """Whether the sentence holding a number is hypothetical (`would`, `for instance`, `~라면`), an
        illustration (`예를 들어`, `이론적으로`, `…를 의미한다`) or, in Korean, a condition whose outcome is not
        reported as seen (`2분으로 줄이면?`, `5분까지 늘어나면`; `캐시를 쓰면 … 줄었다` is a fact)."""
        hangul = self._flag(start, "hangul")
        if not hangul and not self._flag(start, "hypothetical"):
            return False
        lo, hi = self._line(start)
        seg = self.text[max(lo, start - 200) : start]
        tail = self.text[start : min(hi, start + 120)]
        if _QUOTE_OPEN.search(seg) and _QUOTE_EXAMPLE.search(tail):
            return True
        if "(" in seg and _EXAMPLE_ASIDE.search(seg):
            return True  # `(e.g 10000ms)`: a value given as an example
        before, after = self._sentence(start)
        sentence = _ASIDE.sub(" ", before + after)
        for m in _HYPOTHETICAL.finditer(sentence):  # `(I would argue …)`: an aside, not the sentence
            if m.group().lower() not in ("would", "might"):
                return True
            # a modal says so of its own clause: `it ran at 0.5x speed—so a podcast would take …` reports the speed
            raw = before + after
            lo = max((c.end() for c in _MODAL_CLAUSE_STOP.finditer(raw, 0, len(before))), default=0)
            stop = _MODAL_CLAUSE_STOP.search(raw, len(before))
            if _MODAL.search(raw, lo, stop.start() if stop else len(raw)):
                return True
        if not hangul:
            return False
        if _ILLUSTRATION.search(before + after) is not None:
            return True
        if _FOR_EXAMPLE_KO.search(before) and _KO_CONDITIONAL.search(sentence) and not _past(sentence):
            return True  # `예를 들어 … 5분간 캐싱하면, 5분 동안 …`: an example worked out on a condition
        # the number inside the condition (before its `-면`, in the same clause), not in what follows from it
        clause = _KO_CLAUSE_END.split(after, maxsplit=1)[0]
        cond = _KO_CONDITIONAL.search(clause)
        if cond is None or _COPULA_IF.match(clause) is not None:
            return False  # `1~2분이면 충분하다`: how long it takes, said as enough
        return not _past(sentence)

    def _duration(self, start: int, u_start: int, end: int, kind: str) -> tuple[int, str] | None:
        text = self.text
        ch = text[u_start]
        before = text[max(0, start - 16) : start]
        if ch == "분" and _CLOCK_HOUR_BEFORE.search(before):
            return None  # 새벽 2시 30분: a clock time
        if ch == "초" and _CLOCK_SECOND_BEFORE.search(text, max(0, start - 16), start):
            return None  # 오전 2시 30분 10초: a clock time
        if (kind in ("min", "h", "d") and _MINUTE_SCHEDULE_AFTER.match(text, end)) or (
            kind == "s" and text.find("전", end, end + 3) != -1 and _SECONDS_BEFORE_AFTER.match(text, end)
        ):
            return None  # 10분 후, 5 minutes ago: a schedule, not a duration that was measured
        if _DELAY_AFTER.match(text, end):
            return end, "target"  # `500ms 후 한 번 더`: a delay before doing something again
        if _NOT_MEASURED_AFTER.match(text, end) or _WINDOW_BEFORE.search(text, max(0, start - 12), start):
            return None  # `1초 단위로`: a resolution; `Last 5 minutes`: a window of time
        if _IDENT_BEFORE.search(text, max(0, start - 30), start):
            return None  # `high-load-5min`: part of a name
        if "window" in (clause := self._before(start, 40)) and _WINDOW_SUBJECT.search(clause):
            return None  # `window=7.9s`, `the window moves less than 30s`: the length of a window, not of work
        if text.find("T", max(0, start - 4), start) != -1 and _TIMELINE_BEFORE.search(text, max(0, start - 4), start):
            return None  # `T+90s:`: an offset on a timeline
        cond = _CONDITION_AFTER.match(text, end)
        if (cond and not (cond.group().endswith("넘는") and _past(self._sentence(start)[1]))) or _QUOTA_AFTER.match(
            text, end
        ):
            # `2초 넘으면`, `5초 이상 … 경우`, `15분에 5회`: a threshold or a quota (not `24초가 넘는 … 이슈가 있었습니다`: what was)
            return end, "target"
        if _ELAPSED_AFTER.match(text, end) or self._flag(start, "elapsed"):
            return None  # uptime, progress, elapsed time in a timeline
        if self._flag(start, "media") and (
            _MEDIA_AFTER.match(text, end) or _MEDIA_BEFORE.search(self._before(start, 60))
        ):
            return None  # the length of a video or a recording
        if (
            (_AT_FPS_AFTER.match(text, end) and not _WORK.search(self._before(start, 20)))
            or _FPS_BEFORE.search(text, max(0, start - 16), start)
            or (_ADJECTIVE_LENGTH.match(text, u_start - 1) and text[start:u_start].strip("-") != "1")
        ) and self._flag(start, "video"):
            return None  # the length of a video: beside its frame rate, or an adjective (`a 5-second clip`)
        if _THAN_BEFORE.search(text, max(0, start - 8), start) and _INPUT_LENGTH_BEFORE.search(self._before(start, 40)):
            return None  # the length of an input
        if kind == "min" and (
            _READ_AFTER.match(text, end)
            or _WORD_COUNT_BEFORE.search(text, max(0, start - 24), start)
            or (
                text.startswith("소요", end + (text[end : end + 1] == " "))
                and _BADGE_LINE.fullmatch(line := self._line_text(start))
                and not _WORK.search(line, 0, line.find("소요"))
            )
        ):
            return None  # `6 min read`, `1353 words · 7 min`, `6 분 소요` alone on its line: a post's reading time
        if kind in ("min", "h", "d") and (
            self._flag(start, "human")
            or _SPEND_AFTER.match(text, end)
            or _SPEND_BEFORE.search(text, max(0, start - 30), start)
            or _PEOPLE_OF_AFTER.match(text, end)
            or _PERSON_TOOK_BEFORE.search(text, max(0, start - 40), start)
            or _SETUP_AFTER.match(text, end)
        ):
            return None  # time spent by people
        if kind in ("min", "h", "d") and (
            _PER_PERIOD_BEFORE.search(text, max(0, start - 12), start) or _PER_PERIOD_AFTER.match(text, end)
        ):
            return None  # a quota or plan per month or day
        if (
            _FOR_BEFORE.search(text, max(0, start - 8), start) and _PRESS_BEFORE.search(self._before(start, 60))
        ) or _PRESS_AFTER.match(text, end):
            return end, "target"  # how long a person holds a button
        if (
            kind in ("min", "h")
            and _PAREN_ESTIMATE.match(text, end)
            and "(" in text[max(0, start - 6) : start]
            and (not self._flag(start, "system_work") or _TASK.search(self._line_text(start)))
        ):
            return None  # `확인으로 시작 (5분)`: how long a step takes a person
        if self._later(start, "human_time") and _HUMAN_TIME_BEFORE.search(self._sentence(start)[0]):
            return None  # how long people take to answer one another
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
        if _BEFORE_FAILING.search(self._after(end, 60)):
            return True  # `up to 5 minutes per request before failing`: a limit
        if _PER_ITEM_AFTER.match(text, end):
            return False  # `Chunk interval: ~15ms between tokens`: a time measured per token, not a setting
        if _SETTING_AFTER.match(text, end) or _TEST_LENGTH_AFTER.match(text, end):
            return True
        if _TOOK_BEFORE.search(text, max(0, start - 30), start):
            return False  # `… and takes 5 minutes`: the work took it, whatever else the line sets
        if _TEST_FOR_BEFORE.search(text, max(0, start - 60), start) or (
            _TEST_RUN_AFTER.match(text, end) and _TEST_BEFORE_KO.search(text, max(0, start - 12), start)
        ):
            return True  # `Run the benchmark for 60 seconds`: a test's configured length
        if _QUOTED.search(text, max(0, start - 1), start):
            return True  # `"30s"`: a value written as a literal
        before = self._before(start, 40)
        if _STAT_BEFORE.search(text, max(0, start - 12), start) or _WAIT_FOR_WORK.search(before):
            return False  # `평균 5~10초 (SMTP 대기)`, `초기화 완료 대기 (30~40초)`: how long work takes
        if self._flag(start, "setting_words") and (
            _SETTING_WORDS.search(_ASIDE.sub(" ", before)) or _SETTING_NOUN_AFTER.search(self._after(end, 16))
        ):
            return True
        if text.find("또는", max(0, start - 8), end + 8) != -1 and _KO_OPTIONS.search(
            text, max(0, start - 8), min(len(text), end + 8)
        ):
            return True  # `2초 → 500ms 또는 1초로 단축`: choices proposed, not a result
        if _OPTIONS_BEFORE.search(text, max(0, start - 6), start) and self._flag(start, "setting_words"):
            sentence = "".join(self._sentence(start))
            if _SETTING_WORDS.search(sentence):
                return True  # `Request timeout, with 30, 60, 120, or 300 seconds`: the choices of a setting
        if (
            text[start:end].endswith(("분", "min", "mins", "minutes")) or _LOAD_DURATION_AFTER.match(text, end)
        ) and _LOAD_RATE_BEFORE.search(text, max(0, start - 16), start):
            return True  # `(50 rps, 5분간)`: the length of a test whose rate was set
        later = self._flag(start, "later")
        if later and self._flag(start, "config_key") and _CONFIG_KEY.search("".join(self._sentence(start))):
            return True  # a sentence about a configuration key that sets a time
        if (
            later
            and self._flag(start, "load")
            and (_LOAD_DURATION_BEFORE.search(text, max(0, start - 24), start) or _LOAD_DURATION_AFTER.match(text, end))
        ):
            lo, hi = self._line(start)
            if _LOAD_COUNT.search(text, max(lo, start - 80), min(hi, end + 30)):
                return True  # `vuser 500, duration 30s`: a load test's configured length
        key = _KEY_BEFORE.search(text, max(0, start - 40), start)
        if key and not _MEASURED_KEY.search(key.group()):
            return True  # `jitterBufferTarget: 150ms` (not `TotalTime: 36.4s`, `processing_time: 9.8s`)
        if (
            _AFTER_BEFORE.search(text, max(0, start - 12), start) or _KO_AFTER_EVENT.match(text, end)
        ) and _SETTING_WORDS.search(self._after(end, 40)):
            return True  # `after 5 minutes it is unloaded`: a delay before an event that is set
        proposed = _PROPOSE_BEFORE.search(self._before(start, 60))
        if proposed is None and "e.g." in text[max(0, start - 30) : start]:
            proposed = _PROPOSE_BEFORE.search(text[max(self._line(start)[0], start - 60) : start])  # `to e.g. 60 or …`
        if proposed and not _past(proposed.group()):
            return True
        if self._flag(start, "setting_label") or self._flag(start, "setting_row"):
            return True
        lo = max(0, start - 40)
        nl = text.rfind("\n", lo, start)
        raw = _ASIDE.sub(" ", text[nl + 1 if nl >= 0 else lo : start])
        return _SETTING_HINT.search(raw.lower()) is not None and _SETTING_BEFORE.search(raw) is not None

    def _relative(self, start: int, u_start: int, end: int, kind: str) -> int | None:
        """The end of a ratio or percentage that is a speed-up or slow-down, or None."""
        text = self.text
        comp = _COMPARATIVE.match(text, end)
        if comp and kind != "pct":
            return None if _PEOPLE_WORK_AFTER.match(text, comp.end()) else comp.end()
        if kind == "xsp" or (kind == "times" and text[end : end + 1] not in ".;)"):
            return end  # the pattern already required a comparative
        if kind != "pct" and _NOT_RATIO_NEXT.match(text, end):
            return None  # `2 × RTX 2080 Super`, `2x 8 GB`, `4× A100`
        value = text[start:u_start].strip("* _")
        if kind != "pct" and re.fullmatch(r"1(?:\.0+)?", value):
            return None  # `1x`, `1배`: the baseline
        if _SIZE_AFTER.match(text, end):
            return None  # `16배 큰 컨텍스트`, `5배 더 큰 모델`: a size
        if comp:
            return None if _PEOPLE_WORK_AFTER.match(text, comp.end()) else comp.end()
        comp_ko = _COMP_AFTER.match(text, end)
        if comp_ko:
            return None if _PEOPLE_WORK_AFTER.match(text, comp_ko.end()) else end  # not `10배 빠른 개발`
        if text.find("(", max(0, start - 30), start) != -1 and _QUANTITY_THEN_PAREN.search(
            text, max(0, start - 30), start
        ):
            return None  # `35GB (4배 절감)`, `MMLU-Ko 72.3% (Vicuna 대비 2배)`: an aside on the quantity before it
        if kind == "pct" and _COUNT_PAIR_AFTER.match(text, end):
            return None  # `58% 감소 (24 → 10)`: a change of a count
        if (
            text.find("(", max(0, start - 8), start) != -1
            and (pair := _PAIR_THEN_PAREN.search(text, max(0, start - 50), start)) is not None
            and (pair.group("unit") is None or not _TIME_OR_RATE_UNIT.fullmatch(pair.group("unit")))
        ):
            return None  # `10 → 50 (+400%)`, `401 queries → 4 queries (100배 개선)`: the change of a count or a size
        if kind != "pct" and _RATIO_CHANGE_AFTER.match(text, end):
            return end  # `4.1x 향상`, `3x improvement`
        if kind == "pct" and _CHANGE_THEN_PAREN.search(text, max(0, start - 60), start):
            return end  # `316ms→230ms(약 27%)`: the size of the change just written
        if kind == "pct" and (_SHARE_OF_TIME_AFTER.match(text, end) or _SHARE_OF_PERF_AFTER.match(text, end)):
            return end  # `takes 10.8% of SD's training time`, `60% ~ 70% the performance of FT`: a share
        # an aside in parentheses speaks of something else: `30% (on 1536x1536 resolution) speed improvements`
        after = _CONJUNCTION.split(_ASIDE.sub(" ", self._after(end, 80))[:40], 1)[0]
        before = _after_last_number(self._before(start, 60))
        metric = _ON_METRIC_AFTER.match(after)
        if metric and metric.group("nonperf") is not None:
            return None  # `by up to 98% on realism`, `by 77% in human evaluations`: the metric is named after
        if metric and _BY_BEFORE.search(before):
            return end  # `beats the baseline by 14% on decode throughput`
        signed = _SIGN_BEFORE.search(text, max(0, start - 2), start) is not None
        first_after = _LEX.search(after)
        if first_after is not None and first_after.lastgroup == "perf":
            rest = after[first_after.end() :]
            head = _LEX.match(after, first_after.end() + len(rest) - len(rest.lstrip(" ")))
            if head is not None and head.lastgroup == "nonperf":
                first_after = head  # `73%의 추론 비용 절감`, `40% lower inference cost`: the last noun is the head
        change_after = _CHANGE_RX.search(after)
        last_before = _last(_LEX, before)
        change = change_after or _CHANGE_RX.search(before)
        if (
            kind == "pct"
            and last_before is not None
            and last_before.lastgroup == "perf"
            and _SHARE_OF_CEILING_AFTER.match(after)
        ):
            return end  # `throughput lands at 50–80% of this ceiling`
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
            if kind != "pct" or change or signed or self._flag(start, "speed_change"):
                return end
            return None
        if kind == "pct" and signed and re.match(rf"{_SP}+(?i:from){_SP}.+{_SP}to{_SP}", after):
            return end  # `−17% from d0 to d32K`: a change between two conditions
        if kind == "pct" and (not signed or self._flag(start, "count_cell")) and self._bare_cell(start, end):
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
            if signed or (change and self._flag(start, "speed_change")):
                return end  # `Vulkan +5.3%`, `has regressed by 14%`: a signed change, or a change of speed
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
        seg = _TAG.sub("", seg[cut + 1 :])
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
            unit = "tok/s" if m.group("what") == "토큰" else "/s"  # 초당 40건: requests or items per second
            return (start, m.end(), self.text[m.start("n1") : num_end], unit, self.spread_kind(start, m.end()))
        if rx is _PREFIX_X:
            start = m.start()
            if self._relative(m.start(), m.start(), m.start(), "x") is None and not self._bare_cell(start, m.end()):
                return None
            return (start, m.end(), m.group("n1"), "×", "claim")
        if rx is _TEST_THEN_NUMBER:
            return (start, m.end(), m.group("n1"), "tok/s", self.spread_kind(start, m.end()))
        if rx is _LABEL_UNIT:
            return (start, m.end(), m.group("n1"), "", self.spread_kind(start, m.end()))
        if rx is _RTF:
            return (start, m.end(), m.group("n1"), "RTF", self.spread_kind(start, m.end()))
        if rx is _UNIT_BEFORE:
            u = m.group("u")
            unit = "FLOPS" if u.endswith("FLOPS") else "/s"
            return (start, m.end(), m.group("n1"), unit, self.spread_kind(start, m.end()))
        if rx is _FRACTION:
            if self._hypothetical(start):
                return None
            end = m.end("n1")
            return (start, end, m.group("n1"), "×", self.spread_kind(start, end))
        if rx is _METRIC_UNIT:
            name = self.text[max(self._line(start)[0], m.start() - 80) : m.start()]
            if _SETTING_WORDS.search(name.replace("_", " ")):
                return None  # `request_timeout_seconds 30`: a setting
            return (start, m.end(), m.group("n1"), "s" if m.group("unit") == "seconds" else "ms", "claim")
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
                if (
                    _TARGET_ROW.search(text, max(lo, a - 120), min(hi, b + 40))  # the row around the cell
                    and not _SIGN_BEFORE.search(text, max(lo, a - 3), a)
                    and not _CHANGE_RX.search(text, b, text.find("|", b, hi) if "|" in text[b:hi] else hi)
                ):
                    continue  # `| < 500ms | **150ms** | **333%** |`: how much of a target was reached, not a change
                out.append((a, b, m.group("n"), "%", "claim"))
        out.sort()
        return out


# A row holding a target: a bound alone in a cell (`| < 500ms |`), or words of a target reached (`✅ 목표 달성`).
_TARGET_ROW = re.compile(r"\|\s*(?:\*\*)?\s*(?:[<≤]|(?i:under|below)\s)|목표|달성|(?i:target)")
# A bound alone in its cell, with a measured number in a later cell: the target column of a target-vs-result table.
_BOUND_CELL = re.compile(rf"\|(?:\*\*|{_SP})*(?:[<≤]=?){_SP}*$")
_LATER_RESULT = re.compile(rf"(?:\*\*|{_SP})*\|[^|\n]*\d")
# A percentage in a row of measured times: its own cell, or with a sign or a change word (`PG +8%`, `(20%)`).
_PCT_CELL = re.compile(
    rf"(?:(?<=\|)|(?<=\()|(?<=[+−-])|(?<=\*\*))(?:\*\*|__|~|{_SP}|🚀|⚡|📈|📉|🔥|⬇️|⬆️|↓|↑)*(?P<n>{_NUM}(?:{_SP}?[~–-]{_SP}?{_NUM})?)%"
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


def lint_text(
    text: str,
    path: str = "<text>",
    include_code: bool = False,
    targets: bool = False,
    model: claimmodel.Model | None = None,
) -> list[Finding]:
    """Every unsourced claim in a document's text, in order; with `targets`, also the targets, limits and
    settings (findings of kind "target"). With a `model` (factreg.docs.claimmodel: an experiment, not used by the
    CLI), it may veto the rules' claims in a sentence (kind "vetoed", listed with `targets`) or add one; such
    findings have `by == "model"`."""
    return _lint(text, path, include_code, targets, prefilter=True, model=model)


def _has_table(text: str) -> bool:
    """Whether the text holds a table (its header's unit may make bare numbers below it claims)."""
    return "|" in text and "--" in text and _TABLE_SEP.search(text) is not None


def _scan(text: str, include_code: bool, prefilter: bool, dismissed: list[Candidate] | None) -> list[Candidate]:
    """The claims and targets the rules find in a document's text (and, with a `dismissed` list, the numbers
    with a unit they found to be neither)."""
    if not _DIGIT.search(text):
        return []
    windows: list[tuple[int, int]] | None = None
    if prefilter:
        windows = _windows(text)
        if not windows and (")" not in text or _LABEL_UNIT.search(text) is None) and not _has_table(text):
            return []  # no line can hold a claim
    elif _CLAIM.search(text) is None and not any(hint in text for _, hint in _EXTRA) and not _has_table(text):
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

    return _candidates(text, skipped, windows, dismissed)


def _lint(
    text: str, path: str, include_code: bool, targets: bool, prefilter: bool, model: claimmodel.Model | None = None
) -> list[Finding]:
    """lint_text; `prefilter=False` runs every pattern over the whole text (the reference the prefilter is tested
    against)."""
    dismissed: list[Candidate] | None = None if model is None else []
    found = _scan(text, include_code, prefilter, dismissed)
    decided: list[tuple[int, int, str, str, str, str]]
    if model is not None and (found or dismissed):
        decided = claimmodel.decide(text, found, dismissed or [], model)
    else:
        decided = [(*c, "rules") for c in found]
    if not targets:
        decided = [c for c in decided if c[4] == "claim"]
    out: list[Finding] = []
    line = 1
    line_start = 0
    last = 0
    for start, end, value, unit, kind, by in decided:
        newlines = text.count("\n", last, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", last, start) + 1
        last = start
        out.append(Finding(path, line, start - line_start + 1, text[start:end], value, unit, kind, by))
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
