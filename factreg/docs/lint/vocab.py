"""The lint's vocabulary: the numbers and spaces a claim is made of, the words that
say what a number is of, and the line flags — every alternation built once from its table, compiled on first use."""

from __future__ import annotations

import re

from factreg.docs.lint.patterns import lazy, screened

# One space (never a newline: a claim stays on one line). A thin space (U+2009) and a narrow no-break space (U+202F)
# are spaces too: the text the patterns read has them as no-break spaces (`MATCHABLE`, one character for one, so
# every offset stays that of the document). A class holding a character above U+00FF compiles to a 64 K-entry table,
# and this class has dozens of copies: written with the two, the patterns took twice as long to compile.
_SP = r"[ \t\u00a0]"

# The spaces the patterns never see, each read as a no-break space (engine._scan translates the text).
MATCHABLE = {0x2009: 0x00A0, 0x202F: 0x00A0}


# A number; the look-behind (after the first digit, so the search can skip to digits fast) keeps numbers that are
# part of a word, version, address or clock time out: `tg32`, `b6012`, `A3B`, `v1.2`, `02:30`, `:8080`.
_NUM_FIRST = r"\d(?<![A-Za-z0-9_.#@$\\]\d)(?<!(?<![A-Za-z]):\d)\d*(?:,\d{3})*(?:\.\d+)?"
_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
# A duration written as a clock: minutes and seconds, or hours, minutes and seconds (`3:39`, `00:00:41.91`).
_CLOCK_NUM = r"\d{1,3}:[0-5]\d(?::[0-5]\d)?(?:\.\d+)?"
_END = r"(?![A-Za-z0-9])"  # an ASCII unit ends at a word boundary (a Korean particle may follow: `28 tok/s로`)
_PM = rf"{_SP}?(?:±|\+/-|\+-){_SP}?"


# A magnitude suffix before a rate: `10K req/s`, `390M tokens/day`, `50K qps`.
_MAGNITUDE = (
    rf"(?:[KkM]|만|억)(?={_SP}?(?i:tok|req|msgs?{_SP}?/|ops?{_SP}?/|t{_SP}?/|[qrt]ps{_END}|/s(?:ec)?{_END}|"
    rf"(?:jobs?|spans?|keys|tiles?|tasks?|events?|rows?|records?|messages|writes|reads|inserts|queries|docs?|documents|files|objects)"
    rf"(?:{_SP}?/|{_SP}per{_SP})(?:s|sec|second){_END}))"
    rf"|만(?={_SP}?(?:IOPS|[QRT]PS){_END})"  # `19만 IOPS`: tens of thousands
    # `4 million ops/sec`, `110 thousand IOPS`, `3-4 million msgs/sec`
    rf"|(?:{_SP}|-)(?i:million|billion|thousand)(?={_SP}(?:(?i:(?:HTTP{_SP})?(?:tok|req(?:uest)?s?)|msgs?|ops?|operations|events?|messages|records|rows|"
    rf"queries|transactions|responses|writes|reads|inserts|frames)(?:{_SP}?/|{_SP}per{_SP})|IOPS{_END}|[QRT]PS{_END}))"
)


# Korean "per second, N tokens": 초당 28토큰, 초당 약 22 토큰, 초당 12개의 토큰.
_PER_SECOND = lazy(
    rf"초당{_SP}?(?:(?:토큰{_SP}?)?(?:생성{_SP}?|처리{_SP}?)?(?:속도|처리량)(?:가|는|이|은)?{_SP}?)?"
    rf"(?:(?:약|평균|최대|최소|대략){_SP}?)?(?P<n1>{_NUM})(?:{_SP}?[~～〜–-]{_SP}?(?P<n3>{_NUM}))?"
    rf"{_SP}?(?:개{_SP}?(?:(?:이상|이하|정도|가량|남짓|넘는){_SP}?)?의?{_SP}?)?(?P<what>토큰|건|요청|회|장|글자|문자|단어|쿼리|이미지|(?i:req(?:uest)?s?)(?![A-Za-z])|(?P<bytes>[KMGT]i?B(?![A-Za-z])|(?:킬로|메가|기가|테라)바이트)|(?P<bits>(?:킬로|메가|기가|테라)비트|[KMGT]b(?![A-Za-z])))"
)


_DIGIT = lazy(r"\d")


_KO_COMPARATIVE = lazy(
    rf"{_SP}?(?:더{_SP}?)?(?:빠르|빨라|빠른|빨리|느리|느려|느린|늦|향상|개선|단축|줄|감소|증가|저하)"
)


_PCT_OTHER = lazy(
    rf"{_SP}?(?i:lower|higher|less|more){_SP}(?i:latency|throughput|ttft|decode|decoding)|"
    rf"{_SP}?(?i:improvement|regression|speed-?up|slow-?down)"
)


def _line_end(text: str, pos: int) -> int:
    """Offset of the newline ending the line at `pos` (or the end of the text)."""
    nl = text.find("\n", pos)
    return len(text) if nl == -1 else nl


_RELATIVE = frozenset({"x", "xcap", "xsp", "times", "pct", "ratio"})  # what surrounds the number decides


# start, end, value, unit, kind ("claim" or "target"), rule (the id of the rule that reports it: rules/)
Candidate = tuple[int, int, str, str, str, str]

# The rule that reports a number of each unit family (a target of any family is TARGET_RULE's): the table the
# rules in factreg.docs.lint.rules document.
FAMILY_RULE = {
    # hm, mns: hours and minutes (`2h 3m`, `2시간 37분`), minutes and seconds (`10분54초`), as precise as minutes
    **dict.fromkeys(("s", "ms", "us", "ns", "min", "hm", "mns"), "FR101"),
    **dict.fromkeys(("h", "d"), "FR102"),
    **dict.fromkeys(("rate", "mstok", "stok"), "FR111"),
    **dict.fromkeys(("req", "persec", "fps", "op"), "FR112"),
    **dict.fromkeys(("bw", "bits", "flops"), "FR113"),
    **dict.fromkeys(("x", "xcap", "xsp", "times", "ratio"), "FR121"),
    "pct": "FR122",
}
ITEM_RATE_RULE = "FR112"  # requests, items or frames per second, in prose (preview)
TABLE_ITEM_RATE_RULE = "FR114"  # the same in a table row (default)
BANDWIDTH_RULE = "FR113"  # bit rates, and bandwidth or compute rates given as a default (preview)
BYTE_BANDWIDTH_RULE = "FR116"  # bandwidth in bytes per second and compute rates (default)
TOOL_RATE_RULE = "FR115"  # an item rate or a time per operation in a unit benchmark tools print (default)
SEEN_LINK_RULE = "FR118"  # FR113's bit rate in prose, beside a word of what a run gave, in no line of goals (default)
SEEN_RATE_RULE = "FR117"  # FR112's rate in prose, beside a word of what was seen and in no line of goals (default)
# The units only benchmark tools print: `45487 ns/op`, `3.2 us/op`, `101966 ops/s`, `999.4 records/sec`, `148 Kelem/s`,
# `14.90 runs/s` (a browser benchmark's score), a progress bar's `2.38it/s`, `18.6 img/sec`, `0.166 samples/sec`,
# redis-benchmark's `250187.64 requests per second` and a serving benchmark's `6.05 requests/s`.
TOOL_UNIT = lazy(
    r"(?i:[nµμu]s|ms)\s?/\s?(?:op|iter)\b|micros\s?/\s?(?:op|read|write|iter)\b|(?i:ops?|records?|msgs?|runs|[KMG]?elem(?:ent)?s?)\s?(?:/|per\s)"
    r"|(?i:i|it|iterations?|img|images|samples?)\s?/\s?s(?:ec)?\b|(?i:requests)(?:/s\b|\sper\ssecond)|\[#/sec\]|(?i:cycles?)\s?(?:/|per\s)"
)
RATIO_RULE = "FR121"  # a speed-up or slow-down with a word of speed near it (default)
BARE_RATIO_RULE = "FR123"  # a ratio with no word of speed near it, or in its table cell's row or column (preview)
PERCENT_RULE = "FR122"  # a percent change with a word of performance near it, in prose (default: 0.954 on select)
BARE_PERCENT_RULE = "FR124"  # a percent change with none near it (preview): share prices, revenue, bounce rates
TABLE_PERCENT_RULE = "FR125"  # FR122's percent change in a table row holding measured times (default)
LONE_PERCENT_RULE = "FR126"  # FR122's percent change in a table row holding no measured time or rate (default)
BARE_DURATION_RULE = "FR103"  # a duration with no word of measured work near it (preview)
PRECISE_DURATION_RULE = "FR104"  # FR103's duration written to a decimal beside another or a past verb (default)
SPREAD_RULE = "FR131"  # a bare `±` spread
TARGET_RULE = "FR201"


_B = r"(?<![A-Za-z])"  # an English word starts here


_E = r"(?![A-Za-z])"  # and ends here


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
    rf"{_B}(?i:memory(?!{_SP}+bandwidth)|vram|ram|size|sizes|smaller|larger|bigger|fewer|compress\w*|batch|weights?|cost|costs|charges?|heap|allocs|allocations(?!{_SP}+time)|"
    rf"cheaper|price|pricier|expensive|pay|paying|paid|traffic|energy|power|accuracy|quality|params|parameters|resolution|disk|storage|co2|emissions|"
    rf"sparsity|data|share|utili[sz]ation|coverage|errors?|bugs?|lines|lexemes|heads|more tokens|calibration|"
    rf"activation|zoom|scale|dimensions?|success|hz|khz|downtime|outages?|upscal\w*|upsampl\w*|downsampl\w*|"
    rf"downscal\w*|magnif\w*|realism|satisfaction|human{_SP}evaluations?|preference|fidelity|scores?|"
    rf"session{_SP}(?:time|length)|time{_SP}on{_SP}(?:site|page)|watch{_SP}time|cycle{_SP}time|lead{_SP}time|"
    rf"development{_SP}(?:speed|velocity|time)|developer{_SP}productivity|velocity|revenue|sales|profits?|earnings|"
    rf"VUs?|virtual{_SP}users|availability|instances|growth|"
    # quality benchmarks and error rates: `MMLU (+23%)`
    rf"mmlu|gsm8k|c-?eval|bbh|humaneval|hellaswag|truthfulqa|winogrande|wer|cer|bleu|perplexity|ppl|(?<!long{_SP})(?<!short{_SP})context(?:{_SP}window)?){_E}"
    r"|메모리|크기|작게|작아|배터리|용량|공간|비용|가격|비싸|비싼|인하|빈도|영향력|오래\s?버티|버틸|트래픽|연산량|계산량|계산(?:을|를|이|은|의)?(?![가-힣])|저렴|싸|에너지|전력\s?효율|전성비|전력|인스턴스|차지|가독성|정확도|품질|만족도|에러|오류|버그|커버리지|번들|(?:요청|토큰|파일|호출|쿼리|단계|레이어|사용자|연결|커넥션)\s?수(?![가-힣])|"
    r"(?:Onboarding|온보딩|개발|설정|작업|작성|수동|검토|리뷰|회의|미팅|업무|세션|체류|시청|이용|장애|중단|다운|개입|(?:통합\s?)?사이클|리드)\s?시간|"
    r"다운타임|컨텍스트|(?:개발|작업|팀)(?:하는)?\s?(?:속도|생산성)|매출|영업\s?이익|순이익|시가\s?총액|가상\s?사용자|가용성|DB\s?쿼리(?!\s?(?:시간|속도|지연|응답|처리))|배율|업스케일|(?:확대|축소)(?:된|한|하여|해)?\s?(?:이미지|예측 맵|맵|해상도|사진)|시간 절약|비중|성능\s?유지|"
    r"코드|라인|줄(?![이어였었일인임여입])|보안|부하|사용량|절약|가능성|I/O|네트워크 요청|"
    r"이용률|사용률|점유율|가동률|할인|세금|이미지 크기|압축|tolerance|완화|정밀도|재현율|승률|정확|유지|"
    r"호출|필요|증가로|완료|진행률|생산성|사이즈|[가-힣]{1,3}(?<!비)[률율](?![가-힣])|토큰(?:을|를|이)?\s?(?:사용|소비)"
)


_CHANGE = (
    rf"{_B}(?i:faster|slower|quicker|speed-?ups?|slow-?downs?|uplift|gain|gains|boost|improv\w*|increase[sd]?|"
    rf"decrease[sd]?|reduc\w*|drop\w*|regress\w*|behind|loses?|cut|cuts|cutting|jump(?:ed|s)?|higher|lower|better|worse|savings?|difference|"
    rf"accelerat\w*|outperform\w*|less|more|speeds? up|sped up|on{_SP}the{_SP}table){_E}"
    r"|향상|개선|단축|축소|감소|증가|저하|하락|절감|빨라|빠르|빠름|빠른|느려|느리|느림|느린|가속|줄|↑|↓|⬆|⬇|영향|차이"
)


_LEX = lazy(rf"(?P<nonperf>{_NONPERF})|(?P<perf>{_PERF})")


_CHANGE_RX = lazy(_CHANGE)


_ASIDE = lazy(r"\([^()\n]{0,60}\)")


_CONJUNCTION = lazy(
    rf"{_SP}(?i:and|but|while|whereas|with){_SP}|하고{_SP}|하며{_SP}|고{_SP}|며{_SP}|시켜{_SP}|하여{_SP}|해서{_SP}"
)


def _last(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of `rx` in `text`, or None."""
    found = None
    for found in rx.finditer(text):  # noqa: B007 - the loop keeps the last one
        pass
    return found


# A measured time or rate somewhere on the line (a percentage change with no noun then speaks of it).
_TIMED = lazy(r"\d\s?(?:ms|s|sec|seconds|초|분|tok/s|t/s|tokens/s)(?![A-Za-z])")


_SIGN_BEFORE = lazy(r"[+−-]\s?$")


# Targets, limits and requirements: a number in such a clause is not a measurement.
_TARGET_WORDS = lazy(
    rf"{_B}(?i:(?<![/-])targets?(?!/)|goals?|slos?|slas?|requirements?|required|thresholds?|criteria|barriers?|floor|"
    rf"suggested|recommended|(?:is|are){_SP}+ideal|only{_SP}+allows?|allows?{_SP}+up{_SP}+to|(?<!this{_SP})(?<!that{_SP})(?<!which{_SP})allow{_SP}+(?=\d|an?{_SP}|up{_SP})|aim(?:s|ed|ing)?|exceed(?:s|ed|ing)?|should|must|shall|tolerat\w*|perceiv\w*|"
    # what people would notice (`users notice delays above 100 ms`), not `Notice the difference: 5s vs 300ms`
    rf"(?:can(?:'t|not)?|won't|will|would|to|don't|do{_SP}not|barely|users|people|humans){_SP}+notice|"
    rf"perception|considered|classified{_SP}+as|deadlines?|feature{_SP}requests?|objectives?|rto|rpo){_E}"
    # a budget, not the budget tier of a product (`the budget 5060 Ti`, `budget-tier APIs`, `budget GPUs`)
    rf"|{_B}(?i:budgets?)(?![A-Za-z]|[ -]+(?:[A-Z]|\d+[ ]?[A-Z]|(?i:gpus?|cards?|tiers?|hardware|options?|builds?|friendly|"
    rf"pcs?|laptops?|phones?|setups?|models?|devices?|machines?|boards?)(?![A-Za-z])))"
    r"|목표|요구|필요(?:하다|합니다|하다고)|기준치|한도|권장|허용(?=[ \t]*(?:$|[,.)|\n])|치|한도)|해야|(?<=[가-힣])야\s?(?:한|합|함)|초과\s?할\s?수\s?없|넘(?:을|길)\s?수\s?없|넘지\s?않도록|(?:걸리지|넘지|초과하지)\s?않을\s?것|용납|느낌|느끼|느껴|어색|인식하는(?=\s?(?:시간|속도|지연|데|순간))|하도록|유지(?![되됐된됨했]|하였)|"
    r"기준으로\s?(?:한|삼|잡)|(?:최소|충족|인증|요구)\s?기준|벽\s?(?:을|를)?\s?(?:깨|넘|돌파)|기한|마감|데드라인|수\s?있는지\s?(?:확인|검증|테스트|점검|체크)|적절하|적절한|적당하|적당한|바람직|SLO|SLA"
)


_ACHIEVED = lazy(r"✅|☑|✔|\[[xX]\]|달성(?!할|하려|하기|하는지|을 목표|이 목표)|(?i:achieved|measured|breaks|broke|broken|crossed|surpassed)")


def _past(after: str) -> bool:
    """Whether a Korean clause holds a syllable ending in ㅆ (`빨라졌다`, `줄었음`): a past tense, a fact (not `있어야`,
    `하겠다`)."""
    return any(0xAC00 <= ord(c) <= 0xD7A3 and (ord(c) - 0xAC00) % 28 == 20 and c not in "있겠" for c in after)


_HANGUL = lazy(r"[\uac00-\ud7a3]")


_UNCHECKED = lazy(r"(?m)^\s*(?:[-*+]\s+|\d+[.)]\s+)?\[ \]")


_FEELS_LATER = lazy(rf"{_B}(?i:feels?){_SP}+(?i:like|as|fast|slow|instant\w*|snappy|sluggish|seamless){_E}")


_RUBRIC = lazy(
    rf"{_B}(?i:good|poor|excellent|acceptable|painful|great|fair|bad|okay|needs improvement|usable|unusable|"
    rf"suitable|appropriate|essential|ideal){_E}"
    r"|양호|우수|보통|좋음|나쁨|미흡|불량|개선\s?필요|허용\s?가능|위험|경고"
)


# A duration that is a setting rather than a measurement (besides the existing _SETTING_BEFORE/_SETTING_AFTER).
_SETTING_WORDS = lazy(
    rf"{_B}(?i:time-?outs?|timeoutseconds|sleeps?|intervals?|keep[-_ ]?alive|ttl|expir\w*|evict\w*|unload\w*|hard-?coded|"
    rf"heartbeat|ramp-?up|debounce|throttle|animation|transition|easing|polling|poll|backoff|back-off|cron|schedule\w*|"
    rf"retention|grace{_SP}period|increments?{_SP}+of|idle|inactiv\w*|fixed-?(?:delay|rate)|(?:minimum|maximum|min|max|default){_SP}+value|"
    rf"(?:released|freed|unloaded|evicted){_SP}+after|(?:cache[sd]?|caching)(?:{_SP}+\w+)?{_SP}+for"
    # `Keep loaded for 5 minutes`: how long something is kept
    rf"|(?:keeps?|stays?|remains?)(?:{_SP}+\w+)?{_SP}+(?:loaded|alive|cached|resident|warm|in{_SP}memory){_SP}+for){_E}"
    r"|타임아웃|주기|간격|재시도|만료|보관|애니메이션|자동 닫힘|지속\s?시간|대기|하트비트|스크래핑|백오프|"
    r"재연결|지연 삭제|인위적(?:인)?\s?지연|지연을\s?(?:넣|주|추가)|스케줄|동안 보관|설정:|\*\*설정\*\*|디바운스|디바운싱|스로틀|쓰로틀|오버랩|슬립|쿨다운|"
    r"유효\s?기간|만료\s?시간|변수"
)


_SETTING_LABEL = lazy(  # `duration: 600초`, a configuration key naming a duration
    r"(?m)(?:^\s*(?:[-*+]\s+|#+\s+)?|[,;]\s*)[a-z_]*(?:duration|timeout|interval|ttl|delay|wait|period|expir\w*)[a-z_]*\s*[:=]\s"
    # `make RATE=10000 DURATION=10s`: a variable set on a command line
    r"|(?<![\w-])[A-Z_]*(?:DURATION|TIMEOUT|INTERVAL|TTL|DELAY|WAIT|PERIOD|SLEEP)[A-Z_]*=(?=\d)"
)


# A table row of a parameter and its value, said to be a setting: `| Frame Duration | 20 ms | 일반적인 WebRTC 설정 |`,
# `| Duration | 테스트 시간 | 300초 = 5분 |`.
_SETTING_ROW = lazy(
    r"(?m)^\s*\|\s*(?:\*\*)?[A-Za-z _-]*(?i:duration|timeout|interval|delay|ttl|period)(?:\*\*)?\s*\|"
    r"(?:[^|\n]*\|)*?[^|\n]*(?:테스트 시간|설정|기본값|(?i:setting|settings|default|config\w*))(?:\*\*)?\s*\|"
)


# A configuration key naming a time that is set, anywhere in the sentence: `Adjust initialDelaySeconds …: 120s for 7B
# models`, `failureThreshold: 50 # … 30s …`, `Raised 30s -> 120s …; see IDLE_TIMEOUT_FLOOR_SECS`.
_CONFIG_KEY = lazy(
    r"(?<![A-Za-z0-9_])(?:[a-z]+(?:[A-Z][a-z]+)*(?:Timeout|Period|Interval|Threshold|Ttl|TTL|KeepAlive)[A-Za-z]*"
    r"|(?:initial|start|retry|backoff|reconnect)Delay[A-Za-z]*|(?:[A-Z][a-z]+)*(?:Timeout|Period|Interval)[A-Za-z]*"
    r"|[A-Za-z]+(?:_[A-Za-z]+)*_(?:TIMEOUT|DELAY|PERIOD|INTERVAL|timeout|delay|period|interval)"
    r"(?:_[A-Za-z]+)*)(?![A-Za-z0-9_])"
)


# A duration in a load test's configuration, beside its load (`vuser 500, duration 30s`, `150 VU, 2분 30초`,
# `360개 동시 연결, 60초 동안`, `c=1, 60s`): how long the test ran, as set.
_LOAD_COUNT = lazy(
    r"(?i:\bvusers?|\bvus?\b|\bc=|concurrency)\s*[=:]?\s*\d|\d\s*(?i:vus?\b|vusers?|concurrent\b)|\d\s?개(?:의)?\s?(?:동시\s?연결|connection)"
)


# How long people take to answer one another: `Human conversation response: ~200ms`, `사람 간의 자연스러운 대화에서
# 응답까지 걸리는 시간은 평균 200ms`.
_HUMAN_TIME_BEFORE = lazy(
    rf"{_B}(?i:human|people's|person's){_SP}+(?:(?i:conversation(?:al)?|reaction|turn-taking){_E})|사람\s?간|사람(?:들)?의\s?(?:반응|대화)"
)


# Time spent by people, not by a system: workshops, study plans, set-up steps (minutes and hours only).
_HUMAN = lazy(
    # English words as prose, not inside a path (`samples/session03/`)
    r"(?<![A-Za-z/])(?i:workshops?|sessions?|lessons?|courses?|tutorials?|exercises?|hands-on|break|level|"
    r"difficulty|study|agenda|read|humans|reaction\stime|commute|mttr|mttd|mtta|ttr|investigat\w*|post-?mortems?|"
    r"critical\sissues|support\stickets?|"
    r"mean\stime\sto\s(?:recover\w*|repair|resolve|resolution|detect\w*|"
    r"acknowledge\w*))(?![A-Za-z0-9_/])"
    r"|세션|실습|휴식|워크숍|강의|과정|학습 경로|난이도|소요 시간|예상 시간|과제|프로젝트|모듈|설정 완료|시작하기|"
    r"개입|환경\s?설정|(?:하루|일일|월간|주간|평균)\s?(?:평균\s?)?사용\s?시간|체류\s?시간|"
    r"하세요|해 보세요|하십시오|작업 시간|마이그레이션 작업|수동|Q&A|읽기|회의|일정|수업|교육|커피|끝장|⏱️|"
    r"완료 처리|접속|시간 배분|강의 일정|총 예상|추천|권장하는|에피소드|성공한 사람|트레이닝 세트|데이터로|튜토리얼|"
    r"기다리는\s?데|기다리느라|멍하니|(?i:waiting for (?:the|a|my|our) |staring at)"
)


_SYSTEM_WORK = lazy(
    r"빌드|컴파일|테스트 실행|추론|학습|훈련|변환|번역|다운로드|로딩|완료\s?대기|(?i:build|compile|inference|training)"
)


_ELAPSED_LINE = lazy(  # an elapsed time, an uptime (`top - 04:38:26 up 47 min`), an incident's length (`장애 시간: 65분`)
    r"진행:|남은 시간|(?<![A-Za-z])(?i:uptime)|\bUp \d|\d{1,2}:\d{2}\s*→|\d:\d\d up \d|장애\s?(?:지속\s?)?시간\**\s*[:：]"
    r"|(?i:degraded\s+performance\s+for|for\s+a\s+(?:collective\s+)?duration\s+of)"
)


_HYPOTHETICAL = lazy(
    rf"{_B}(?i:would|suppose|imagine|hypothetical\w*|illustrative(?=\))|if the system|let's{_SP}say|consider{_SP}+this{_SP}+scenario"
    # an example about an indefinite system: `For example, a system can generate 100 tokens per second`
    rf"|(?:for{_SP}(?:example|instance)|e\.g\.),?{_SP}+(?:an?{_SP}+(?:[\w-]+{_SP}+(?:can|could|might|may)|system|drive|disk|server|service|model|machine|function|user|team|job)|consider|say|if|let's|let{_SP}us)|might"
    # an indefinite system as the sentence's subject: `A model generating 100 tok/s …`, `If a model generates …`
    rf"|(?:^\s*|{_B}if{_SP}+)an?{_SP}+(?:[A-Za-z][\w-]*{_SP}+)?(?:model|system|game|server|llm|gpu|team|user|company|developer|service|app|query|request|page|site|website|function|job|"
    rf"application|customer){_E}(?!{_SP}+(?i:like|such))|^\s*if{_SP}[^,;.]{{0,60}}?at{_SP}+(?:least|most)"
    # `If there is a PR that improves performance by 2% …`, `This example demonstrates … 10 requests per second`
    rf"|{_B}if{_SP}+there{_SP}+(?:is|are|were){_E}|{_B}if{_SP}+(?:you{_SP}+(?:need|want|have|plan)|we{_SP}+(?:get|find|land)){_E}|{_B}(?:this|the){_SP}+example{_SP}+(?:demonstrates|shows|illustrates|uses)"
    rf"|{_B}an?{_SP}+[\d,]+-(?:token|word){_SP}+(?:answer|response|reply|paragraph|completion)){_E}"
    r"|라도|라면|다면|쏟아진다면|가정하면|가정하고|가정할|가정해|가정한|가령|어떤\s?(?:서버|시스템|모델|API)"
    # a supposition, said with the hortative or the conditional of saying (`… 1분과 2분이라 하자`, `… 작업이 존재한다고
    # 생각하자`, `일 8시간 개발이라고 하면`), and a concession on a number (`평균 응답시간이 10ms여도`)
    r"|(?:[라다]고|(?<=[가-힣A-Za-z0-9*])라)\s?(?:생각|가정)?(?:하자|치자|하면|치면)|(?<=[0-9A-Za-z초분])(?:이어도|여도)(?![가-힣])"
)


# Numbers whose unit is written elsewhere:
# `8000pp / 400tg t/s`: llama-bench test names glued to their numbers, the rate after the last.
_PPTG = lazy(rf"(?<![\w.])(?P<n1>{_NUM})(?:pp|tg)(?:{_SP}?/{_SP}?{_NUM}(?:pp|tg))*{_SP}?(?i:t/s|tok/s|tokens/s)")


# `pp512 560 -> 180`: a test name, then its rate(s) without a unit.
_TEST_THEN_NUMBER = lazy(rf"(?<![\w])(?:pp|tg)\d+{_SP}+(?P<n1>{_NUM})(?:{_SP}*(?:->|→){_SP}*{_NUM})?(?![\w.%/])")


# `Benchmark duration (s): 19.08`, `Request throughput (req/s): 46.13`: the unit in a label before a colon.
_LABEL_UNIT = lazy(
    r"\((?:[^()\n|│]{1,40}?,[ \t]*)?(?:s|ms|sec|secs|seconds|ms/tok|tok/s|tokens/s|t/s|req/s|requests/s)\)"
    r"(?:\*\*)?\s*[:|│]?\s*(?:\*\*)?(?P<n1>\d+(?:,\d{3})*(?:\.\d+)?)"
    r"(?![\w.])"
)


# `Avg Latency:  81.99`, `TPS        : 104713`, `Total Time:  56.60`: a label naming a time or a rate, a colon, and a
# number with no unit (the unit is the tool's, or the label's). The pattern finds the colon and the number (a literal
# first, so the search is quick); _METRIC_KEY, read before the colon, decides.
_METRIC_LABEL = lazy(
    r":[ \t]*\"?(?P<n1>\d[\d,.]*\d|\d)(?![\d.:]|,(?![ \t]*(?:\r?\n|$))|[ \t]*(?:[A-Za-z%µμ\"+~→–-]|[가-힣]))"  # not a unit, not a range
)
_METRIC_KEY = lazy(
    r"(?<![A-Za-z0-9-])(?<!(?i:max|min)_)(?:(?i:avg|average|mean|median|min|max|p\d\d(?:\.\d)?|total|real|elapsed)(?: *|_(?<!(?i:max|min)_)))?"
    r"(?i:latency|response[ _]time|duration|elapsed|throughput|rps|qps|tps|run[ _]?time|"
    r"exec(?:ution)?[ _]time|wall[ _]?time|total[ _]time|tick[ _]time|"
    # `Prompt tokens per second: 22.61`, `Mean response/sec: 112.65` (`Requests/sec:` is _UNIT_BEFORE's)
    r"(?:tok(?:en)?s|responses?)[ _]?(?:per[ _]sec(?:ond)?|/[ _]?sec(?:ond)?)|(?P<per_sec>(?<=[A-Za-z] )[A-Za-z]{2,}/sec(?:ond)?|\([A-Za-z#]{1,12}/s(?:ec)?\)))"
    r"[\"']?[ \t]*$"
)


# JMH's result rows: `JsonBench.read  thrpt  25  12345.678 ± 12.345  ops/s`, `… avgt  5  3.214  0.101  us/op`: the
# score (and its error) before the unit column.
_JMH_ROW = lazy(
    rf"(?<![\w.])(?:thrpt|avgt)[ \t]+(?:\d+[ \t]+){{0,3}}(?P<n1>{_NUM})[ \t]+(?:±[ \t]*{_NUM}[ \t]+|{_NUM}[ \t]+)?"
    rf"(?P<u>ops/(?:s|ms|us|ns)|(?:s|ms|us|ns)/op)(?![\w/])"
)


# benchstat's cells: `1254.1µ ± 1%`, `207.0n ± 2%`, `1.254m ± 0%` (a time per operation under `sec/op`, its SI
# prefix alone, then its spread).
_BENCHSTAT_CELL = lazy(rf"(?<![\w.])(?P<n1>{_NUM})(?P<u>[nµμm])[ \t]±[ \t]*\d+%")


# A rate's unit written before its number, as a key or a label: `TPS 15.4`, `tps는 약 620`, `QPS 324,323.71`,
# wrk's `Requests/sec:   1170.78`, a tool's `Messages/sec: 19776911.69`, `MB/sec: 603.54` and `MiB/s: 2233.52`,
# `TFLOPS=6.10924` (not a count: `TPS 2개`; not `RPS 10`, the rate a load generator is set to send).
_UNIT_BEFORE = lazy(
    rf"(?<![A-Za-z0-9/])(?P<u>TPS|QPS|FPS|tps|qps|TFLOPS|GFLOPS|"
    rf"(?:Requests|Messages|Operations|Ops|Transactions|Queries|Statements|Events|Records|tok)/s(?:ec)?(?=:)|[KMG]i?B/s(?:ec)?(?=:))"
    rf"(?:\*\*)?{_SP}*(?:[:=]|는|은|가|이|도)?{_SP}*(?:(?:약|평균|대략|~|≈){_SP}*)?(?:\*\*)?(?P<n1>{_NUM_FIRST}(?:[KkM](?![A-Za-z]))?)"
    rf"(?![A-Za-z0-9%]|[.,]\d|{_SP}?(?:개|명|대|번|회|배|초|분|시간))"
)


# wrk's `Transfer/sec:    169.25MB`: the bytes a run moved per second, the unit's `/sec` written before the number.
_TRANSFER = lazy(rf"(?<![A-Za-z])Transfer/sec:{_SP}*(?P<n1>{_NUM})(?P<u>[KMGT]i?B)(?![A-Za-z0-9])")



# Rows benchmark tools print in a fixed format, their units in their column names (FR146): wrk's thread statistics
# (`Req/Sec    12.99k     1.64k   20.75k    81.07%`: average, spread and maximum, then the share within one spread),
# ApacheBench's connection times (`Processing:     3    6  22.2      3     173`: min, mean, sd, median, max in ms) and
# the times within which a share of its requests were served (`  95%     98`, `100%    127 (longest request)`), and
# memtier_benchmark's rows (`Totals  4000.67  0.00  3635.77  0.77258  0.62300 …`: operations a second, then
# latencies printed to five decimals).
_TOOL_ROW = lazy(
    r"(?m)^[ \t]*(?:"
    r"Req/Sec[ \t]+(?P<n1>\d+(?:\.\d+)?[kKmM]?)[ \t]+\d+(?:\.\d+)?[kKmM]?[ \t]+(?P<n3>\d+(?:\.\d+)?[kKmM]?)"
    r"(?=[ \t]+\d+(?:\.\d+)?%[ \t]*$)"
    r"|(?:Connect|Processing|Waiting|Total):[ \t]+(?P<a1>\d+)[ \t]+\d+[ \t]+\d+\.\d[ \t]+\d+[ \t]+(?P<a3>\d+)[ \t]*$"
    r"|(?:50|66|75|80|90|95|98|99|100)%[ \t]+(?P<p1>\d+)(?=(?:[ \t]+\(longest request\))?[ \t]*$)"
    r"|(?:Sets|Gets|Waits|Totals)[ \t]+(?P<m1>\d+\.\d\d)(?=(?:[ \t]+(?:\d+\.\d+|---)){2,8}[ \t]*$)"
    r"(?=.*[ \t]\d+\.\d{5}(?:[ \t]|$))(?:[ \t]+(?:\d+\.\d+|---))+(?<=\d)"
    # BSD time's `138.87 real      1696.52 user        46.86 sys`; rustc -Z time-passes' `time:   0.026; rss:  184MB -> …`
    r"|time:[ \t]+(?P<t1>\d+\.\d+);[ \t]+rss:"
    # Ruby's Benchmark rows: user, system, total and (real) seconds, `seq  64.560736   0.001101  64.561837 ( 64.562194)`
    r"|[\w.:/-]+(?:[ \t][\w.:/-]+){0,3}[ \t]+(?P<r1>\d+\.\d{6})(?:[ \t]+\d+\.\d{6}){2}[ \t]+\([ \t]*(?P<r3>\d+\.\d{6})\)[ \t]*$"
    r"|(?P<b1>\d+\.\d+)[ \t]+real[ \t]+\d+\.\d+[ \t]+user[ \t]+(?P<b3>\d+\.\d+)[ \t]+sys\b"
    # `openssl speed`'s rows, in thousands of bytes a second: `aes-128-gcm  310758.55k  785113.43k  1156720.81k …`
    r"|[\w-]+(?:[ \t][\w-]+)?[ \t]+(?P<o1>\d+\.\d\dk)(?:[ \t]+\d+\.\d\dk){3,}"
    r")"
)


# The same tools' rows that need not start their line (FR146), found from a literal each starts with: zsh's time
# (`0.52s user 0.76s system 26% cpu 4.735 total`), ffmpeg's progress (`frame= 5896 fps=305 q=30.0`) and
# Benchmark.js's spread (`h3IsValid x 3,955,609 ops/sec ±1.72% (60 runs sampled)`).
_TOOL_INLINE = lazy(
    r"%[ \t]+cpu[ \t]+(?P<z1>\d+(?::\d\d)*(?:\.\d+)?)[ \t]+total\b"
    r"|frame=[ \t]*\d+[ \t]+fps=[ \t]*(?P<f1>\d+(?:\.\d+)?)(?![\d.])"
    r"|ops/sec[ \t](?P<j1>±\d+(?:\.\d+)?%)(?=[ \t]+\(\d+ runs? sampled\))"
)

# A fraction of a speed or a time: `1/3 the speed`, `about 1/2 of the inference time`.
_FRACTION = lazy(
    rf"(?P<n1>{_NUM_FIRST}/\d{{1,2}})(?:{_SP}+(?i:of))?(?:{_SP}+(?i:the|its|their))?(?:{_SP}+[\w-]+)?{_SP}+"
    rf"(?i:speed|time|throughput|latency|performance){_E}"
)


# `x2.88`: a ratio written with the sign first.
_PREFIX_X = lazy(r"(?<![\w.])[x×](?P<n1>\d+\.\d+)(?![\w.])")


# A ratio of speed in words (`twice as fast`, `five times faster`, `two to three times better throughput`): no digit
# marks its line, so it is searched over the whole text.
_WORD_RATIO = lazy(
    r"(?i:(?=[tfsena])(?<![\w-])(?P<n1>twice|thrice|(?:two|three|four|five|six|seven|eight|nine|ten|a[ \t]+hundred)"
    r"(?:[ \t]+(?:to|or)[ \t]+(?:three|four|five|six|seven|eight|nine|ten))?[ \t]+times)[ \t]+"
    r"(?:as[ \t]+(?:fast|slow|quick(?:ly)?)|faster|slower|quicker|longer|the[ \t]+(?:speed|throughput|performance|bandwidth)|"
    r"(?:better|higher|more)[ \t]+(?:throughput|performance|speed|bandwidth))(?![\w-]))"
)


# `ttft_latency_seconds_sum 0.113`, `…_seconds{op="match"} 3.4e-06`: a metric whose name holds its unit.
_METRIC_UNIT = lazy(
    rf"(?<=[A-Za-z0-9])(?:_(?P<unit>seconds|milliseconds|ms|secs?)|(?<=[a-z])(?:In)?(?P<camel>Ms|Seconds))"
    rf"(?:_(?:sum|max|avg|mean))?(?:\{{[^{{}}\n]{{0,200}}\}})?(?:[\"']?[ \t]*[:=][ \t]*|[ \t]+)"
    rf"(?P<n1>{_NUM}(?:[eE][+-]?\d+)?)(?![\w.])"
)


# `RTF 0.25`, `(RTF = 0.082)`, `real-time factor: 0.3`: a real-time factor, the unit's name before the number.
_RTF = lazy(
    rf"(?<![\w])(?:RTF|(?i:real-?time{_SP}factor)){_SP}*(?:[:=~≈]{_SP}*)?~?(?P<n1>\d+(?:\.\d+)?)(?![\w.%])"
)


# PostgreSQL's EXPLAIN ANALYZE: `(actual time=0.014..0.015 rows=0 loops=1)`, milliseconds to the first and last row.
_EXPLAIN_TIME = lazy(rf"actual{_SP}time=(?P<n1>\d+(?:\.\d+)?)\.\.(?P<n3>\d+(?:\.\d+)?)")


_EXTRA = (
    (_EXPLAIN_TIME, "actual time="),
    (_RTF, "RTF"),
    (_RTF, "factor"),
    (_PER_SECOND, "초당"),
    (_METRIC_UNIT, "_seconds"),
    (_METRIC_UNIT, "_milliseconds"),
    (_METRIC_UNIT, "_ms"),
    (_METRIC_UNIT, "_sec"),
    (_METRIC_UNIT, 'Ms"'),
    (_METRIC_UNIT, "Ms:"),
    (_METRIC_UNIT, "Ms="),
    (_METRIC_UNIT, 'Seconds"'),
    (_METRIC_UNIT, "Seconds:"),
    (_METRIC_UNIT, "Seconds="),
    (_PPTG, "/s"),
    (_TEST_THEN_NUMBER, "p"),
    (_TEST_THEN_NUMBER, "tg"),
    (_LABEL_UNIT, ")"),
    (_METRIC_LABEL, ":"),
    *((_WORD_RATIO, hint) for hint in ("wice", "hrice", " times as ", " times the ", " times faster", " times slower")),
    *((_WORD_RATIO, hint) for hint in (" times quicker", " times longer", " times better", " times higher", " times more")),
    (_PREFIX_X, "x"),
    (_PREFIX_X, "×"),
    (_TRANSFER, "Transfer/sec:"),
    (_UNIT_BEFORE, ""),  # no hint: its lines are the prefilter's (_PREFILTER_UNIT_KEYS), its windows pre-tested
    (_FRACTION, "/"),
    (_JMH_ROW, "thrpt"),
    (_JMH_ROW, "avgt"),
    (_BENCHSTAT_CELL, "±"),
    (_TOOL_ROW, "Req/Sec"),
    (_TOOL_ROW, "%"),
    (_TOOL_ROW, ":"),
    (_TOOL_ROW, "Totals"),
    (_TOOL_ROW, "Gets"),
    (_TOOL_ROW, "Sets"),
    (_TOOL_ROW, "Waits"),
    (_TOOL_ROW, "real"),
    (_TOOL_ROW, "rss:"),
    (_TOOL_ROW, ")"),
    (_TOOL_ROW, "k "),
    (_TOOL_INLINE, "% cpu"),
    (_TOOL_INLINE, "fps="),
    (_TOOL_INLINE, "sampled"),
)


# Words that make a change a change of speed, whatever noun is near: `regressed by 14%`, `sits 5% behind`.
_SPEED_CHANGE = lazy(
    rf"{_B}(?i:regress\w*|behind|ahead{_SP}of|loses?{_SP}to|lost{_SP}to|beats?|faster|slower|speed-?ups?|slow-?downs?|"
    rf"uplift|outperform\w*){_E}|빨라|느려|빠르|느리|빠를|느릴"
)


# A line of goals, examples, assumptions, limits or retries: a duration on it is more often a target or an
# illustration than a measurement (FR103, not FR101; factreg.docs.lint.context). A check mark (✅) is not one of
# them: it reports what was achieved.
_GOAL_LINE = lazy(
    rf"{_B}(?i:target|goal|slo|e\.g\.|for{_SP}+example|assum\w*|if|limits?|back-?off|retry|retries|"
    rf"recommend\w*){_E}|"
    # a window of time, not the system (`on windows with zluda`, `for Windows 11`)
    rf"(?<![Oo]n )(?<![Ff]or )(?<![Ii]n )(?<![Uu]nder )(?<![Ww]ith )(?<![Tt]o ){_B}(?i:windows?){_E}(?!{_SP}*(?:1[01]|[Ss]erver|PC|machine))|목표|예:|가정|하면|간격|백오프|재시도|제한|윈도우|절약|준비|\d회\s?실패|//|(?i:assert)\w*\("
)


_LINE_FLAGS = {
    "speed_change": _SPEED_CHANGE,
    "goal_line": _GOAL_LINE,
    # a cell of counted things (`| 4개 |`): a signed percentage in the row is a change of a count
    "count_cell": lazy(
        r"\|[ \t*]*\d[\d,]*[ \t]?(?:개|건|명|곳|종|(?i:items|files|models|platforms|frames))[ \t*]*\|"
    ),
    "unchecked": _UNCHECKED,
    "achieved": _ACHIEVED,
    "rubric": _RUBRIC,
    "hangul": _HANGUL,
    "video": lazy(r"(?i:video|t2v|i2v|frames|export|frame_rate|hz|비디오|영상)"),
    "elapsed": _ELAPSED_LINE,
    "human": _HUMAN,
    "system_work": _SYSTEM_WORK,
    "setting_label": _SETTING_LABEL,
    "config_key": _CONFIG_KEY,
    "human_time": _HUMAN_TIME_BEFORE,
    "feels": _FEELS_LATER,
    "imperative": lazy(r"세요|십시오|하라"),
    # any of the five above: one pre-test per line for the later classes' checks (see _Context._later)
    "later": lazy(
        rf"{_CONFIG_KEY.pattern}|{_LOAD_COUNT.pattern}|{_HUMAN_TIME_BEFORE.pattern}|{_FEELS_LATER.pattern}"
        r"|세요|십시오|하라"
    ),
    "load": _LOAD_COUNT,
    "setting_row": _SETTING_ROW,
    "timed": _TIMED,
    "target_words": _TARGET_WORDS,
    "hypothetical": lazy(
        rf"{_HYPOTHETICAL.pattern}|[\"“]|(?i:an?){_SP}+(?i:model|system|server|llm|gpu){_E}"
        rf"|\((?i:e\.g|for{_SP}example|for{_SP}instance)"
    ),
    "media": lazy(
        r"(?i:video|audio|clip|song|speech|recording|footage|music|movie|length|silence|podcast|episode|lecture|khz|voice|wav|mp3|flac)"
        r"|분량|오디오|음성|비디오|영상|녹음|데이터|팟캐스트|영화"
    ),
    "setting_words": lazy(
        rf"{_SETTING_WORDS.pattern}|\(|(?i:time-?out|interval|ttl|expiry|keep-?alive|overlap|hop|stride|warm-?up|ramp-?up|"
        rf"grace{_SP}period|period|plateau)|플래토"
    ),
}


_REACH = 300  # how far around a number its line is read


_TARGET_WORDS = screened(_TARGET_WORDS)


_SETTING_WORDS = screened(_SETTING_WORDS)


_HYPOTHETICAL = screened(_HYPOTHETICAL)


_CHANGE_RX = screened(_CHANGE_RX)


# Table cells and headers (factreg.docs.lint.tables): a header cell naming a duration by its value (`every 60
# seconds`), a column of speed-ups (`| Speed-up |`; not `속도 향상`: a ratio or a percent), and a row label naming a
# size or a compression, whose percentiles are sizes (`| Uncompressed | 3,412 | 8,691 |` under `| p50 | p75 |`).
_VALUE_BEFORE = lazy(r"(?i:\b(?:every|each|after|within|over)[ \t]+)\d[\d,.]*[ \t]?$")
_SPEEDUP_COLUMN = lazy(r"[ \t*_]*(?i:(?:speed-?ups?|speed up)(?:[ \t]+(?:rate|factor|with\b[^|]*))?|times faster)[ \t*_]*")
# A column of changes (`| Change |`, `| Diff % |`, `| 개선율 |`), and a cell holding a measured time or rate: two
# such cells in a row make its ratios and percentages changes of them.
_CHANGE_HEADER = lazy(
    r"[ \t*_]*(?i:change|diff(?:erence)?|delta|Δ|improvement|gain|speed-?up|regression|(?:%[ \t]*)?(?:change|diff|delta)"
    r"(?:[ \t]*%|[ \t]*\(%\))?)[ \t*_]*|[ \t*_]*(?:개선율|개선|변화율|변화|차이|감소율|향상률)[ \t*_]*"
)
_MEASURED_CELL = lazy(r"\d\s*(?:ms|s|sec|min|[µμ]s|us|ns|초|분|tok/s|t/s|MB/s|GB/s|req/s|it/s|fps|ops/sec)(?![A-Za-z가-힣])")
_SIZE_ROW = lazy(r"(?i:\b(?:un)?compressed\b|\bzstd|\bgzip|\blz4|\bbrotli|\bsizes?\b|\bbytes\b|\bmemory\b)|크기|용량")
