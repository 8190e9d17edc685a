"""Durations: times of work a system did, told from settings, schedules, media lengths and time people spend."""

from __future__ import annotations

from factreg.docs.lint.patterns import lazy, screened
from factreg.docs.lint.targets import _Targets
from factreg.docs.lint.vocab import (
    _ASIDE,
    _B,
    _CONFIG_KEY,
    _E,
    _END,
    _HUMAN_TIME_BEFORE,
    _LOAD_COUNT,
    _SETTING_WORDS,
    _SP,
    _past,
)

# A duration that is a setting, not a measurement (its English words end there: not `Amazon Polly`).
_SETTING_BEFORE = lazy(
    rf"(?:(?i:time-?outs?|time out|sleeps?|intervals?|retry|retries|cool-?downs?|back-?offs?|ttl|deadlines?|keep-?alive|defaults?|"
    rf"freshness|warn_after|error_after|max_age|poll(?:ing)?|short-lived|life-?time|expir\w*)(?![a-z])|타임아웃|주기|간격|재시도|기본값|디폴트|제한\s?시간|캐시\s?(?:시간|유지\s?시간))"
    rf"[^.;,\d\n]{{0,20}}$|(?<!token{_SP})(?<!tokens{_SP})(?<!frame{_SP})(?i:every|each){_SP}+$"
)

# Substrings one of which every _SETTING_BEFORE match contains, lower-cased (a fast first test).
_SETTING_HINT = lazy(
    "time|sleep|interval|retr|cool|back|ttl|deadline|keep|default|fresh|warn_|error_|max_age|poll|every|each|lived|expir|"
    "타임아웃|주기|간격|재시도|기본값|디폴트|제한|캐시"
)

_SETTING_AFTER = lazy(
    rf"(?:\)|{_SP}*\([^()\n]{{0,20}}\))?{_SP}*(?:고정{_SP}?)?(?:(?i:per-[a-z]+){_SP}+)?(?:(?i:time-?outs?|intervals?|cool-?down|ttl|deadline|sleep|delay){_END}|마다|간격|주기|타임아웃|제한|쿨다운|고정|(?:짜리{_SP}?)?캐시|(?:자동{_SP}?)?갱신|디바운스|디바운싱|시뮬레이션)"
    # `5초 기본값`, `for 4 minutes, its default`: a default value
    rf"|{_SP}*(?:,{_SP}*(?i:its|the){_SP}+)?(?:기본값|디폴트|(?i:by{_SP}default|default){_END})"
    rf"|{_SP}*(?:간{_SP}?)?유효(?![가-힣])"  # `10분 유효`: how long something stays valid
    rf"|{_SP}*\(?{_SP}*(?:(?:조정|설정|변경){_SP}?가능|(?i:configurable|adjustable|tunable){_END})"  # `0.1초 (조정 가능)`
    # an idle time (a keep-alive): `5 minutes after use`, `10 minutes of inactivity`, `30분 이상 비활성`
    rf"|{_SP}*(?i:after{_SP}+(?:use|last{_SP}+use|the{_SP}+last{_SP}+request|inactivity)|of{_SP}+(?:inactivity|idle\w*)){_END}"
    rf"|{_SP}*(?:이상{_SP}?)?(?:비활성|유휴)"
)


_SECONDS_BEFORE_AFTER = lazy(rf"{_SP}*전(?:에)?(?![가-힣])")  # `변신 0.5초 전 시각적 예고`: a schedule


_MINUTE_SCHEDULE_AFTER = lazy(rf"{_SP}*(?:후|뒤|전|(?i:ago|later|from{_SP}now|before){_END})")


_CLOCK_HOUR_BEFORE = lazy(rf"\d{_SP}?시{_SP}?$")


_CLOCK_SECOND_BEFORE = lazy(rf"\d{_SP}?시{_SP}?\d{{1,2}}{_SP}?분{_SP}?$")


# A duration proposed or changed as a setting (present, gerund or imperative, not a result that was seen:
# `raise start_period from 120s to 600s`, `I suggest we increase this to 10-15 minutes`, `Bumping to 300s`,
# `Let's add a 60-second …`).
_PROPOSE_BEFORE = lazy(
    rf"{_B}(?i:raise|raising|increase|increasing|bump|bumping|lower|lowering|extend|extending|shorten|shortening|"
    rf"change|changing){_E}(?:{_SP}+[\w.-]+){{0,3}}?{_SP}+(?i:from|to)(?:{_SP}+\S+{_SP}+(?i:to))?{_SP}*~?"
    rf"(?:(?i:e\.g\.),?{_SP}*)?(?:[\d.]+{_SP}*(?:[,/]|{_SP}or){_SP}*)*$"  # `to e.g. 60 or 120 seconds`, `to 360/480sec`
    rf"|{_B}(?i:try|trying|align(?:ing)?(?:{_SP}+\w+)?{_SP}+to){_SP}*$"
    rf"|{_B}(?i:let's|let{_SP}us|we{_SP}should|suggest|propose){_E}[^.;:!?\n]{{0,40}}$"
)


_AFTER_BEFORE = lazy(rf"{_B}(?i:after){_SP}+$")


_KO_AFTER_EVENT = lazy(rf"{_SP}*(?:후|뒤)(?:에)?{_SP}")  # `약 60초 후 자체적으로 keep-alive 연결을 닫는다`


_BEFORE_FAILING = lazy(
    rf"{_B}(?i:before){_SP}+(?i:fail\w*|timing{_SP}out|giving{_SP}up|being{_SP}(?:killed|terminated|unloaded)|erroring){_E}"
)


_STAT_BEFORE = lazy(rf"(?:평균|보통|중앙값|(?i:average|avg|mean|median|typically)){_SP}*[:=]?{_SP}*[~약]?{_SP}*$")


_WAIT_FOR_WORK = lazy(r"(?:완료|종료|초기화|준비|빌드|배포)\s?(?:될\s?때까지\s?)?대기")


_SETTING_NOUN_AFTER = lazy(
    rf"^(?:\*\*)?{_SP}*\S*{_SP}?(?:타임아웃|만료|간격|주기|대기|닫힘|오버랩|"
    rf"(?i:time-?out|interval|ttl|expiry|keep-?alive|overlap|hop|stride|warm-?up|ramp-?up|grace{_SP}period|"
    rf"start(?:ing)?[ _-]?period|plateau){_E}|플래토)"
    r"|\((?:[a-z]+[A-Z]\w*)?(?:Duration|Timeout|Interval|Delay|TTL)\)"
)


_PER_ITEM_AFTER = lazy(
    rf"{_SP}*(?i:between|per|each|/){_SP}*(?:(?i:each|two|consecutive|successive){_SP}+)?"
    rf"(?i:tokens?|chunks?|steps?|frames?|requests?|iterations?|batch(?:es)?|words?){_E}"
)


# `jitterBufferTarget: 150ms`, `keep_alive=5m`: an identifier (camelCase or snake_case) set to the number; a
# camelCase key starts with its lower-case word (`PyTorch: 5.2 ms` is a product and its time, not a key)
_KEY_BEFORE = lazy(
    r"(?:(?<![A-Za-z0-9_])[a-z]+[A-Z][A-Za-z]*|[a-z]+_[a-z_]+|(?<![A-Za-z])(?:period|timeout|delay|interval|ttl|deadline))"
    r"\s*[:=]\s*$"
)


_LOAD_RATE_BEFORE = lazy(rf"\d{_SP}?(?i:rps)(?:\*\*)?{_SP}*[,|]{_SP}*$")


# The last of a list of values (`30, 60, 120, or 300 seconds`, `60 or 120 seconds`, `360/480sec`).
_OPTIONS_BEFORE = lazy(rf"\d{_SP}*(?:,{_SP}*(?:(?i:or){_SP}+)?|{_SP}(?i:or){_SP}+|/)$")


_KO_OPTIONS = lazy(rf"\d[^\s\d]{{0,3}}{_SP}*또는{_SP}*\d")


_LOAD_DURATION_BEFORE = lazy(rf"(?:[,(]|(?i:duration|ramp-?up)(?:\([^)]*\))?[:=]?|유지){_SP}*$")


_LOAD_DURATION_AFTER = lazy(rf"{_SP}*(?:동안|기준|간(?![가-힣]))")


# A key naming what was measured rather than what is set: `TotalTime`, `processing_time`, `elapsed_ms`, `latency`.
_MEASURED_KEY = lazy(r"(?i:time|elapsed|latency|took|taken)(?!out)")


# A key of a log line or a record naming what was measured, right before its value: `total_time="1.49s"`,
# `time=12 ms` (ping), `inference_time="801.6ms"`, `elapsedMs: 120` (not a timeout, a wait, a limit or a period).
_MEASURED_KEY_BEFORE = lazy(
    r"(?<![A-Za-z0-9-])(?![A-Za-z_-]*(?i:timeout|sleep|wait|delay|interval|ttl|period|deadline|limit|max|budget|target|"
    r"expir|idle|retry|backoff))"
    r"(?:(?:[A-Za-z]+[_-])*(?i:time|elapsed|latency|took|ttft|tpot|[a-z]+_duration|duration_[a-z]+)(?:[_-][A-Za-z]+)*"
    r"[ \t]*=[ \t]*[\"']?"  # `time=12 ms`, `total_time="1.49s"`
    r"|(?:[A-Za-z]+[_-])+(?i:time|elapsed|latency|took|ttft|tpot|duration)(?:[_-][A-Za-z]+)*[ \t]*:[ \t]*[\"']?"
    r"|(?i:time|elapsed|latency|ttft|tpot|duration)(?:[_-][A-Za-z]+)+[ \t]*:[ \t]*[\"']?)$"  # `"load_duration": …`
)


# A duration restated in another unit right after it: `462초 (7.7분)`, `2.67s (2670ms)`.
_RESTATED_BEFORE = lazy(
    rf"\d(?:{_SP}?(?P<u>초|분|시간|(?i:ms|[µμ]s|us|ns|s|sec|secs|seconds?|mins?|minutes?|h|hours?)))(?:\*\*)?{_SP}*\({_SP}*~?$"
)


def _restated(text: str, start: int, u_start: int, end: int) -> bool:
    """Whether a duration in parentheses restates the one before it in another unit (`462초 (7.7분)`, `0.0291 μs
    (0.0000291ms)`; not criterion's `892.0 μs (885.7 μs .. 897.2 μs)`, an interval in the same unit)."""
    m = _RESTATED_BEFORE.search(text, max(0, start - 24), start)
    return m is not None and m.group("u").lower() != text[u_start:end].strip().lower()


_COMPOUND_BEFORE = lazy(rf"\d{_SP}?(?:(?i:minutes?|mins?|hours?|hrs?){_SP}+(?i:and{_SP}+)?|분{_SP}?)$")


_TEST_LENGTH_AFTER = lazy(
    rf"(?:\*\*)?{_SP}?(?:간{_SP}|테스트|벤치마크|시나리오|부하(?![가-힣])|(?i:tests?|benchmarks?|runs?|scenarios?|for{_SP}+each{_SP}+(?:run|test|iteration)){_E})"
)


_QUOTED = lazy(r"[\"'“‘]$")


# A test's configuration in parentheses, the duration last: `(Single Thread, 10s)`, `(4 cores, 60s)`.
_CONFIG_PAREN_BEFORE = lazy(
    rf"\([^()\n]{{0,40}}(?i:threads?|cores?|concurrency|connections|clients|users|workers){_E}[^()\n]{{0,20}},{_SP}*$"
)


_PAREN_CLOSE = lazy(rf"{_SP}*\)")


# Lengths of media: `a 5 second video`, `6 seconds of video`, `2~4초 분량의`, `13 minutes of audio`.
_MEDIA_AFTER = lazy(
    rf"(?:{_SP}*(?:and|or|to|-|–){_SP}*\d+(?:\.\d+)?{_SP}?(?i:s|secs?|seconds?|min|minutes?){_E})?"
    rf"(?:\*\*|__|\]\([^)]*\)|{_SP}|\([^)]{{0,20}}\))*(?:(?:of|in){_SP}+)?"
    rf"(?:(?:long|stereo|high-res\w*|HD|recorded|raw|input|test|sample|reference|clean){_SP}+)?"
    rf"(?i:videos?|audio|clips?|songs?|speech|recordings?|footage|music|movies?|length|long|podcasts?|episodes?|"
    rf"lectures?|voice|\.?wav|\.?mp3|\.?flac){_E}"
    r"|(?:\*\*)?\s?(?:까지\s?)?(?:분량|팟캐스트|오디오|음성|비디오|영상|동영상|녹음|데이터|의 데이터|의 저잡음|가량의|연속 음성|길이|짜리|영화)"
    # a sample rate after a duration: `6.0s @ 48kHz`
    rf"|{_SP}*(?:@|(?i:at)){_SP}*\d+(?:\.\d+)?{_SP}?(?i:k?hz){_E}"
)


_MEDIA_BEFORE = lazy(
    rf"(?i:audio|video|videos|clip|speech|silence|recording|오디오|음성|비디오|영상)[^.;|]{{0,30}}"
    rf"(?:\([^)]{{0,30}}|(?i:longer than|shorter than|up to|at most){_SP}*|최대{_SP}?)$"
    rf"|(?i:variable-length){_SP}?\((?i:up to){_SP}*$"
    rf"|(?i:audio|video|clip|recording|input){_SP}*(?i:length|duration){_SP}*[:=]{_SP}*$"  # `recording length: 5.0 s`
    # `my episodes average at ~70 mins`, `the median episode length … the mean: 36 minutes`: an episode's length
    rf"|(?i:episodes?|podcasts?)(?:(?!(?i:took|takes|taking|transcri|process|generat|render|encod))[^.;|]){{0,50}}$"
)


# `10s to 100s of runs`, `100s of requests`: tens and hundreds of something, not seconds.
_ROUND_TENS = lazy(r"[1-9]0+s")
_TENS_OF_AFTER = lazy(rf"{_SP}+(?:of{_E}|(?:to|or|and){_SP}+[1-9]0+s{_SP}+of{_E})")


# `processing 'a.wav' (38688821 samples, 2418.1 sec)`: a recording's sample count, then its length.
_SAMPLES_BEFORE = lazy(rf"\(\d+{_SP}+samples,{_SP}*$")


_READ_AFTER = lazy(rf"{_SP}*(?i:read|reading){_E}")


# `1353 words · 7 min`: a post's length in words, then its reading time.
_WORD_COUNT_BEFORE = lazy(rf"\d[\d,]*{_SP}+(?i:words){_SP}*[·•|]{_SP}*$")


# A line that is only a duration and `소요`, with at most a word before it and no work named: a post's reading time.
_BADGE_LINE = lazy(rf"{_SP}*(?:[^\s\d|:*#>-]+{_SP}+)?\d+{_SP}?분{_SP}?소요{_SP}*")


# Work done by a system, which makes hours a measurement: `training takes 2 hours`, `2시간이 소요`.
_WORK = lazy(
    rf"{_B}(?i:takes?|took|taking|lasts?|lasted|runs?|ran|trained|training|trainable|execution|export|build|inference|"
    rf"finish(?:es|ed)?|completes?|completed|needs?|requires?|processing|waiting|waited|epochs?|eta|generation|"
    rf"generating|rendering|compil\w*|indexing|transcod\w*|encoding){_E}"
    r"|소요|걸리|걸린|걸려|걸렸|걸림|걸릴|끝났|끝나|마쳤|만에|학습|훈련|빌드|추론|실행|생성|변환|처리|인코딩|렌더링|컴파일|인덱싱|색인"
)


_DELAY_AFTER = lazy(
    rf"{_SP}*(?:후|뒤)에?{_SP}*(?:한{_SP}?번{_SP}?더|다시|재시도|재실행|재전송|자동|→|->|:)|{_SP}*(?i:later|after that){_E}"
    rf"|{_SP}*(?i:before{_SP}+(?:retry\w*|trying{_SP}+again|reconnect\w*|polling|the{_SP}+next{_SP}+(?:try|attempt|poll))){_E}"
)


_NOT_MEASURED_AFTER = lazy(
    rf"(?:\*\*)?{_SP}*(?:단위|당(?![가-힣])|(?:의{_SP}?)?(?:블록|블락|청크)|평균{_SP}?[:：]|(?i:outages?){_E}|(?i:resolution|granularity|windows?|chunks?|segments?|blocks?){_E})"
    # `a 900-second request-sending window` (not `took 515 seconds on windows`: the system it ran on)
    rf"|(?:{_SP}+(?!(?i:on|for|with|under|in|to){_E})[\w-]+){{1,2}}?{_SP}+(?i:windows?){_E}"
)


# `T+90s: weights are in HBM`: an offset on a timeline, not a duration measured
_TIMELINE_BEFORE = lazy(rf"(?<![A-Za-z0-9_-])[Tt]{_SP}?[+=-]{_SP}?$")  # `T+5s`, `[T=500ms]`, `at t=30s`: a point on a timeline


_WINDOW_BEFORE = lazy(
    rf"(?:{_B}(?i:last|past|previous|next|over the|first)|최근|지난|(?<![가-힣])(?:첫|처음|마지막)){_SP}+$"
)


_IDENT_BEFORE = lazy(r"[a-z]+-[a-z]+-$")


# A window (of time, of input) named in the clause before a duration, as its key or its subject (not `Windows`).
_WINDOW_SUBJECT = lazy(
    rf"{_B}windows?(?:{_SP}*[=:]{_SP}*|{_SP}+(?i:is|was|moves?|moved|shifts?|slides?|advances?|spans?|lasts?|covers?)"
    rf"(?:{_SP}+[\w-]+){{0,3}}{_SP}+)$"
)


_CONDITION_AFTER = lazy(
    rf"(?:\*\*)?{_SP}?(?:을|를|이|가)?{_SP}?(?:이상|초과|이하|미만)?{_SP}?"
    rf"(?:넘으면|넘는|넘어가는|넘어가면|넘기면|넘을|이상이면|초과 시|초과하면|걸리면|걸린다면|소요되면|소요된다면|되면|될{_SP}?때|되자|넘자|걸리는{_SP}\S+(?:은|는)|소요{_SP}?(?:쿼리|요청|작업)|[^|.,]{{0,12}}(?:경우|없어도|없으면|않으면))"
    # a rubric's verdict on a range (`100ms에서 300ms 사이는 개선이 필요`, `2.5-4 seconds as needs improvement`)
    rf"|[^|.,\n]{{0,16}}?(?:은|는){_SP}?개선이{_SP}?필요|{_SP}+as{_SP}+(?i:good|poor|needs{_SP}+improvement){_E}"
)


_QUOTA_AFTER = lazy(rf"에{_SP}?\d+{_SP}?(?:회|번|건)")


_PAREN_ESTIMATE = lazy(r"\)\s*$|\)\s*[|*]")


# A task a person does (a to-do item with its estimate: `최적화 기술 적용 (1시간)`), even about a system's speed.
_TASK = lazy(r"적용|구현|작성|도입|문서화|리팩터링|정리|(?i:implement|refactor|document|write|apply)")


# A duration given per month or day: a quota or a plan (`월 60분`, `60 minutes per month`).
_PER_PERIOD_BEFORE = lazy(rf"(?:^|[\s|(*])(?:월|매월|매달|월간|하루|일일){_SP}*(?:최대{_SP}*)?$")


_PER_PERIOD_AFTER = lazy(
    rf"{_SP}*(?:/{_SP}?(?:월|일|(?i:mo|month|day){_E})|(?i:per|a|an){_SP}+(?i:month|day|week){_E}|(?i:monthly|daily){_E})"
)


# Time people spend: `10분 더 쓰는`, `spend 20 minutes`, `30+ minutes of dependency wrestling`.
# time people spend: `2시간을 쓰는`, `30분 투자`, `(10분 작업, 1.2초 개선)` (a task's effort)
_SPEND_AFTER = lazy(rf"{_SP}*(?:(?:더|정도|씩|만){_SP}?)?(?:쓰는|쓰면|써서|썼|투자|들이|할애|작업(?![가-힣]))")


_SPEND_BEFORE = lazy(
    rf"{_B}(?i:spend|spends|spending|spent|invest|invested){_SP}+(?:(?i:about|around|an?{_SP}+extra|extra|another)\s+|~)?$"
)


_PEOPLE_OF_AFTER = lazy(
    rf"{_SP}*(?i:of){_SP}+(?:[\w-]+{_SP}+)?(?i:wrestling|fiddling|tinkering|debugging|troubleshooting|setup|set-up|"
    rf"configuration|reading|googling|work|effort|manual{_SP}+\w+){_E}"
)


# A person's time: `It took me 2 hours`, `set up in 5 minutes`, `5분 만에 설치`.
_PERSON_TOOK_BEFORE = lazy(
    rf"{_B}(?i:takes?|took|taking){_SP}+(?i:me|us|him|her|them|you|people|users|developers)"
    rf"(?:{_SP}+(?i:about|around|roughly|only|just))?{_SP}*~?$"
    rf"|{_B}(?i:set{_SP}?up|installed|install|get{_SP}started|up{_SP}and{_SP}running|onboarded)"
    rf"{_SP}+(?i:in|within|under){_SP}+(?:(?i:about|around|under|less{_SP}than){_SP}+)?$"
)


_SETUP_AFTER = lazy(rf"{_SP}*(?:안에|만에|이내에?|내에){_SP}*(?:설치|셋업|세팅|환경{_SP}?설정)")


# A test's configured length: `Run the benchmark for 60 seconds`, `벤치마크를 60초 동안 실행`.
_TEST_FOR_BEFORE = lazy(
    rf"{_B}(?i:benchmarks?|tests?|load{_SP}tests?|stress{_SP}tests?|experiments?|runs?|measure){_SP}+(?i:for){_SP}*$"
    # `Tested with 50 concurrent users for 10 minutes`
    rf"|{_B}(?i:tested|benchmarked|load-tested){_E}[^.;:\n]{{0,40}}{_B}(?i:for){_SP}*$"
    # `125 concurrent connections for 10 seconds`, `a test duration of 10 minutes`: a load test's configured length
    rf"|{_B}(?i:connections?|clients?|users?|threads?|vus?|workers?){_SP}+(?i:for){_SP}*$"
    rf"|{_B}(?i:test|benchmark|run){_SP}+(?i:duration|length){_SP}*(?:(?i:of|is)|[:=])?{_SP}*(?:\[/?b\])?$"
    rf"|(?:^|{_SP})(?:기본(?:값)?|(?i:default))[ \t:]*~?$"
)


_TEST_RUN_AFTER = lazy(rf"{_SP}*(?:동안|간){_SP}*(?:실행|수행|돌리|돌려|측정)")


_TEST_BEFORE_KO = lazy(rf"(?:벤치마크|테스트|부하{_SP}?테스트)(?:를|을|는)?{_SP}*$")


# Work the system does right before the number makes it a measurement, whatever setting words the line holds
# (`The cron job runs at 02:00 and takes 5 minutes`).
_TOOK_BEFORE = lazy(
    rf"{_B}(?i:takes?|took|taking|lasts?|lasted|finishe[sd]{_SP}+in|completes{_SP}+in|completed{_SP}+in)"
    rf"(?:{_SP}+(?i:about|around|roughly|only|just|under|over|nearly|almost))?{_SP}*~?$"
)


# Cheap first tests for _PRESS_BEFORE and _INPUT_LENGTH_BEFORE: the word right before the number.
_FOR_BEFORE = lazy(rf"(?i:for){_SP}*$")


_THAN_BEFORE = lazy(rf"(?i:than){_SP}*$")


# A person holding a button: `Hold down the power button for 10 seconds`, `5초간 길게 누르`.
_PRESS_BEFORE = lazy(rf"{_B}(?i:hold|holding|press|pressing)(?:{_SP}+down)?{_E}[^.;:\n]{{0,40}}{_B}for{_SP}*$")


_PRESS_AFTER = lazy(rf"{_SP}*(?:간|동안|정도)?{_SP}?(?:길게{_SP}?)?(?:누르|눌러)")


# The length of an input, not a time: `inputs shorter than 30 seconds`.
_INPUT_LENGTH_BEFORE = lazy(
    rf"{_B}(?i:inputs?|files?|segments?|utterances?|samples?|clips?){_SP}+(?i:shorter|longer){_SP}+than{_SP}*$"
)


# Frames: a duration beside a frame rate is a video's length (`≈ 7.9 s at 24 FPS`, `24 fps, 5 to 15 seconds`).
_AT_FPS_AFTER = lazy(rf"(?:{_SP}+(?i:per){_SP}+\w+)?{_SP}*(?i:at|@){_SP}*\d+(?:\.\d+)?{_SP}?(?i:fps){_E}")


_FPS_BEFORE = lazy(rf"\d{_SP}?(?i:fps)(?:\*\*)?{_SP}*[,/]{_SP}*$")


# `a 5 second Text-to-Video model`, `a 5-second 720p video`: a length used as an adjective on a video line
# A test named by its length (`5-second speed test`, `10-minute load test`, `60-second benchmark`).
_TEST_ADJECTIVE_AFTER = lazy(
    rf"{_SP}+(?:(?i:speed|load|stress|soak|smoke|burst|sustained|quick|short|long){_SP}+)?"
    rf"(?i:tests?|runs?|benchmarks?|windows?|trials?){_E}"
)


_ADJECTIVE_LENGTH = lazy(
    rf"(?:-|{_SP})(?i:second|minute){_SP}+(?:[A-Z0-9]|(?i:videos?|clips?|audio|songs?|segments?|movies?|animations?){_E})"
)


_BILLED_BEFORE = lazy(rf"{_B}(?i:billed|reading){_SP}+(?i:duration|time){_SP}*[:=]?{_SP}*$")  # `reading time: 6 minutes` too


_TEST_DURATION_BEFORE = lazy(
    rf"(?:{_B}(?i:test|load[- ]test|soak[- ]test){_SP}+(?i:duration)|(?:부하\s?)?(?:테스트|시나리오)\s?(?:실행\s?)?(?:시간|기간))(?:\*\*)?{_SP}*[:=](?:\*\*)?{_SP}*$"
)


_ELAPSED_AFTER = lazy(
    rf"(?:\*\*)?{_SP}*(?:경과|실행 중|남음|째|동안 Critical|(?i:elapsed|ago|left|remaining|uptime){_E})"
    # a point or a stretch of a timeline: `8초부터 떨어지는데` (not `3초부터 10초까지`, a range), `10초 중 7초에서`
    rf"|부터(?!{_SP}*[~-]?{_SP}*\d)(?!{_SP}*(?:최대|약))|{_SP}중(?:{_SP}|에)"
)


class _Durations(_Targets):
    def _named_before(self, start: int) -> str | None:
        """What the words right before a duration name it as: "none" (part of a name, a billed duration, a window's
        length, an offset on a timeline), "target" (a test's configured duration), or None (they decide nothing)."""
        text = self.text
        if _IDENT_BEFORE.search(text, max(0, start - 30), start):
            return "none"  # `high-load-5min`: part of a name
        if _BILLED_BEFORE.search(text, max(0, start - 20), start):
            return "none"  # `Billed Duration: 100 ms`, `reading time: 6 minutes`: charged for, or a reader's time
        if _TEST_DURATION_BEFORE.search(text, max(0, start - 24), start):
            return "target"  # `Test Duration: 30 seconds`: how long a test was set to run
        if "window" in (clause := self._before(start, 40)) and _WINDOW_SUBJECT.search(clause):
            return "none"  # `window=7.9s`, `the window moves less than 30s`: the length of a window, not of work
        if text.find("T", max(0, start - 4), start) != -1 and _TIMELINE_BEFORE.search(text, max(0, start - 4), start):
            return "none"  # `T+90s:`: an offset on a timeline
        return None

    def _duration(self, start: int, u_start: int, end: int, kind: str) -> tuple[int, str] | None:
        text = self.text
        ch = text[u_start]
        if ch == "s" and _TENS_OF_AFTER.match(text, end) and _ROUND_TENS.fullmatch(text, start, end):
            return None  # `10s to 100s of runs`: tens and hundreds, not seconds
        before = text[max(0, start - 16) : start]
        if ch == "분" and _CLOCK_HOUR_BEFORE.search(before):
            return None  # 새벽 2시 30분: a clock time
        if ch == "초" and _CLOCK_SECOND_BEFORE.search(text, max(0, start - 16), start):
            return None  # 오전 2시 30분 10초: a clock time
        if (kind in ("min", "h", "d", "hm", "mns") and _MINUTE_SCHEDULE_AFTER.match(text, end)) or (
            kind == "s" and text.find("전", end, end + 3) != -1 and _SECONDS_BEFORE_AFTER.match(text, end)
        ):
            return None  # 10분 후, 5 minutes ago: a schedule, not a duration that was measured
        if kind == "s" and _COMPOUND_BEFORE.search(text, max(0, start - 16), start):
            return None  # `36 minutes and 34 seconds`, `2시간 17분`'s seconds: part of the duration before it
        if _restated(text, start, u_start, end):
            return None  # `462초 (7.7분)`, `22분 54초 (1,374초)`: the duration before it, in another unit
        if _DELAY_AFTER.match(text, end):
            return end, "target"  # `500ms 후 한 번 더`: a delay before doing something again
        if _NOT_MEASURED_AFTER.match(text, end) or _WINDOW_BEFORE.search(text, max(0, start - 12), start):
            return None  # `1초 단위로`: a resolution; `Last 5 minutes`: a window of time
        named = self._named_before(start)
        if named is not None:
            return (end, "target") if named == "target" else None
        cond = _CONDITION_AFTER.match(text, end)
        if (cond and not (cond.group().endswith("넘는") and _past(self._sentence(start)[1]))) or _QUOTA_AFTER.match(
            text, end
        ):
            # `2초 넘으면`, `5초 이상 … 경우`, `15분에 5회`: a threshold or a quota (not `24초가 넘는 … 이슈가 있었습니다`: what was)
            return end, "target"
        if _ELAPSED_AFTER.match(text, end) or self._flag(start, "elapsed"):
            return None  # uptime, progress, elapsed time in a timeline
        if self._flag(start, "media") and (
            _MEDIA_AFTER.match(text, end)
            or _MEDIA_BEFORE.search(self._before(start, 60))
            or _SAMPLES_BEFORE.search(text, max(0, start - 40), start)
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
        if kind in ("min", "h", "d", "hm", "mns") and (
            self._flag(start, "human")
            or _SPEND_AFTER.match(text, end)
            or _SPEND_BEFORE.search(text, max(0, start - 30), start)
            or _PEOPLE_OF_AFTER.match(text, end)
            or _PERSON_TOOK_BEFORE.search(text, max(0, start - 40), start)
            or _SETUP_AFTER.match(text, end)
        ):
            return None  # time spent by people
        if kind in ("min", "h", "d", "hm", "mns") and (
            _PER_PERIOD_BEFORE.search(text, max(0, start - 12), start) or _PER_PERIOD_AFTER.match(text, end)
        ):
            return None  # a quota or plan per month or day
        if (
            _FOR_BEFORE.search(text, max(0, start - 8), start) and _PRESS_BEFORE.search(self._before(start, 60))
        ) or _PRESS_AFTER.match(text, end):
            return end, "target"  # how long a person holds a button
        if (
            kind in ("min", "h", "hm", "mns")
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
        if "-" in text[start:end] and _TEST_ADJECTIVE_AFTER.match(text, end):
            return True  # `A 5-second speed test`, `a 10-minute load test`: how long a test was set to run
        if _TOOK_BEFORE.search(text, max(0, start - 30), start):
            return False  # `… and takes 5 minutes`: the work took it, whatever else the line sets
        if text.find("=", max(0, start - 3), start) != -1 and _MEASURED_KEY_BEFORE.search(text, max(0, start - 40), start):
            return False  # `ttl=242 time=31.2 ms` (ping): the measured key names it, not the setting before it
        if _TEST_FOR_BEFORE.search(text, max(0, start - 60), start) or (
            _TEST_RUN_AFTER.match(text, end) and _TEST_BEFORE_KO.search(text, max(0, start - 12), start)
        ):
            return True  # `Run the benchmark for 60 seconds`: a test's configured length
        if _CONFIG_PAREN_BEFORE.search(text, max(0, start - 50), start) and _PAREN_CLOSE.match(text, end):
            return True  # `Sysbench CPU (Multi-Thread, 4 cores, 60s)`: a test's configured length in its name
        if _QUOTED.search(text, max(0, start - 1), start) and not _MEASURED_KEY_BEFORE.search(
            text, max(0, start - 40), start
        ):
            return True  # `"30s"`: a value written as a literal (not `total_time="1.49s"`: a value measured)
        before = self._before(start, 40)
        if _STAT_BEFORE.search(text, max(0, start - 12), start) or _WAIT_FOR_WORK.search(before):
            return False  # `평균 5~10초 (SMTP 대기)`, `초기화 완료 대기 (30~40초)`: how long work takes
        if self._flag(start, "setting_words") and (
            _SETTING_WORDS.search(_ASIDE.sub(" ", before)) or _SETTING_NOUN_AFTER.search(self._after(end, 24))
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


# The patterns searched over a window before or after each number, pre-tested for their literals (the same matches;
# factreg.docs.literals): most windows hold none, and a failed search costs one `str.find` per literal.
_KEY_BEFORE = screened(_KEY_BEFORE)


_WINDOW_BEFORE = screened(_WINDOW_BEFORE)


_IDENT_BEFORE = screened(_IDENT_BEFORE)


_SETTING_NOUN_AFTER = screened(_SETTING_NOUN_AFTER)


_MEDIA_BEFORE = screened(_MEDIA_BEFORE)


_WORK = screened(_WORK)


_CLOCK_HOUR_BEFORE = screened(_CLOCK_HOUR_BEFORE)


_CLOCK_SECOND_BEFORE = screened(_CLOCK_SECOND_BEFORE)
