"""Columns: what a table's column holds, read from its header cell — a target, a limit or a setting, a figure that
is not performance (memory, accuracy, a price), or, by default, what the table measured (factreg.docs.lint.tables
applies it)."""

from __future__ import annotations

from factreg.docs.lint.patterns import lazy

# A header cell's unit of time or rate (`| pp512 (t/s) |`, `| Latency (ms) |`, `| 처리 시간(초) |`).
_HEADER_UNIT = lazy(
    # `| latency_ms |`, `| gen_tps |`, `| redis-qps |`: a unit closing a snake- or kebab-case column name
    r"(?:^|(?<=[\s(\[/,*])|(?<=[A-Za-z0-9][_-])(?=(?i:ms|secs?|seconds|tps|qps|rps|fps)(?:$|[\s)\],*])))(?P<u>(?i:ms/tok(?:en)?|s/tok(?:en)?|tok(?:en)?s?/s(?:ec(?:ond)?)?(?:/(?:device|gpu|chip|user))?|t/s|tg/s|pp/s|"
    r"tok(?:en)?s?[ _]per[ _]sec(?:ond)?|req(?:uest)?s?[ ]?/[ ]?s(?:ec(?:ond)?)?|"
    r"(?:ops?|hits|misses|queries|items|records|files|msgs?|messages|events|rows|docs|tx|reads|writes|inserts|updates|"
    r"lookups|calls|jobs|tasks|txns?|transactions|keys|pages|images|samples)/s(?:ec)?|"
    r"rps|qps|tps|iops|fps|it/s|[nµμu]s/op|ms/op|[nµμu]s/(?:fn|iter|call|query|row)|ms/(?:fn|iter|call|query|row)|ns|Â?[µμ]s|ms|msec|milliseconds?|secs?|"
    r"seconds|mins?(?![ \t]+[A-Za-z])|minutes|hrs?|hours|frames/s(?:ec)?|[tpg]flop(?:s|/s(?:ec)?)(?:/(?:chip|gpu|device))?|tops|[gtm]b/s|[gtm]bps|"
    r"(?:frames|requests|queries|op(?:eration)?s|images|samples|items|records|files|words|characters)[ _]per[ _]sec(?:ond)?)"
    r"|초|밀리초|마이크로초|나노초|토큰/초)(?=$|[\s)\],*])"
    r"|[(\[](?P<s>s)[)\]]|(?<=[(\[])(?P<us>us|usec)(?=[)\]])"  # `| Triton (us) |`, `| mean[us] |`: microseconds
    # `| qps_before | qps_after |`: a unit opening a snake-case name whose rest says which run
    r"|(?:^|(?<=[\s(\[/,*]))(?P<o>(?i:qps|rps|tps|fps|ms))(?=[_-](?i:before|after|old|new|base(?:line)?|main|pr|patched|mean|avg|median|p\d{2})\b)"
    # `| Operators / second |`, `| Generated / s |`, `| Prompt Per Second |`: a count of anything per second
    r"|(?:^|(?<=[\s(\[*]))(?P<per>(?!(?i:limit|max|cap|quota|budget|target))[A-Za-z]{3,}(?:[ \t]?/[ \t]?(?i:s|sec|second)|[ _](?i:per)[ _](?i:sec(?:ond)?)))(?=$|[\s)\],*])"
)


# What a table's column holds, from its header cell: a target, limit or setting (`| Target |`, `| 목표 (1.4.3) |`,
# `| 알람 임계값 |`, `| TTL |`, `| 권장 타임아웃 |`, warning levels), or a figure that is not performance (memory,
# accuracy, size, a share of the total, cost: `| 메모리 사용량 |` over `50-75% 감소`, `| 비중 |` over `72%`).
_TARGET_COLUMN = lazy(
    r"(?i:\b(?:targets?|goals?|slos?|slas?|budgets?|thresholds?|limits?(?!\s?/\s?offset)|caps?|alerts?|alarms?|warn(?:ing)?|critical|"
    r"allowed|required|requirements?|timeouts?|ttl|expiry|deadlines?|intervals?|rto|rpo|retention|cooldown|backoff|"
    r"debounce|polling|headroom|recommended|good value|ideal|retry-after)\b)"
    r"|목표|임계|한도|상한|제한|경고|위험|알람|허용|요구|권장|타임아웃|유효\s?기간|만료|간격|주기|보관\s?기간|쿨다운|기대\s?값|기댓값|기대치"
    r"|정상\s?범위"
)


_REACHED_COLUMN = lazy(r"(?i:\b(?:achieved|reached|met|actual)\b)|달성|결과|실측")  # `| 목표 달성 |`: a result


_OTHER_COLUMN = lazy(
    r"(?i:\b(?:memory|vram|ram|accuracy|mmlu|perplexity|ppl|size|compression|share|resources?|params?|parameters|"
    r"hit[ _-]?rate|cost|price|pricing|spread|quality|wer|cer|(?:ut)?mos|f1|setup time|set-up time|speaker sim\w*)\b)"
    r"|메모리|정확도|크기|압축|비중|점유율|리소스|자원|파라미터|매개변수|적중률|비용|가격|요금|품질|일치율"
)


# what a memory or accuracy column's ratios, percentages and bare spreads (`| Peak Memory (GB) |` over `4.78 ± 0.00`) are
_NOT_PERFORMANCE_UNITS = frozenset({"%", "×", ""})


# An alert rule's table: a header row naming thresholds or conditions (`| Severity | Threshold | Duration |`,
# `| 조건 | 지속 시간 | 알림 채널 |`), whose column of how long a condition must hold is a target column, and whose
# values with a comparison before them in their cell (`p99 Latency > 5초`, `p95 >800ms`) are thresholds.
_CONDITION_HEADER = lazy(r"(?i:\b(?:thresholds?|conditions?|triggers?)\b)|조건|임계")


_WINDOW_COLUMN = lazy(r"[ \t*_]*(?:(?i:duration|for|window|pending(?: period)?|sustained)|지속\s?시간|지속|기간)[ \t*_]*")


_COMPARISON_BEFORE = lazy(r"(?:[<>≤≥]=?|&[gl]t;=?|(?<![A-Za-z])(?i:over|above|below|under))[ \t]*~?$")


# A reference table of settings: its first column names them (`| Parameter | Type | Default |`, `| 설정 | 값 | 설명 |`),
# so its column of values or defaults holds settings, not measurements; a column of defaults always does.
_SETTING_NAME_HEADER = lazy(
    r"[ \t*_]*(?:(?i:settings?|options?|parameters?|params?|config(?:uration)?s?|propert(?:y|ies)|flags?|variables?|"
    r"env(?:ironment)?(?: variables?)?)|설정(?:\s?항목)?|옵션|파라미터|매개\s?변수|환경\s?변수)[ \t*_]*"
)


_VALUE_COLUMN = lazy(r"[ \t*_]*(?:(?i:values?)|값|설정\s?값)[ \t*_]*")


# A rubric: its first column names grades (`| 등급 | Cold Start | Warm Start |` over `| 보통 | 2-4초 | 1-2초 |`), so
# every figure in it is a threshold of a grade.
_GRADE_HEADER = lazy(
    r"[ \t*_]*(?:(?i:grades?|ratings?|verdicts?|tiers?|plans?|attempts?(?: number| #)?|retr(?:y|ies)(?: number| #)?)"
    r"|등급|평가|판정|요금제|플랜|재시도(?:\s?횟수)?)[ \t*_]*"
)


# A column named by a verdict of a rubric (`Good`, `Needs Improvement`, `Poor`, `양호`, `나쁨`).
_VERDICT_COLUMN = lazy(  # quoted too, and with `threshold` after it (`| "Good" Threshold | "Needs Improvement" |`)
    r"[ \t*_🟢🟡🔴✅⚠️❌\"“”']*(?:(?i:good|poor|fair|excellent|acceptable|needs?[ -](?:improvement|work)|bad|great|ok)|양호|보통|나쁨|"
    r"좋음|우수|개선\s?필요|불량|(?:안전|주의|위험|경고|정상)\s?구간)[ \t*_🟢🟡🔴✅⚠️❌\"“”']*(?:(?i:thresholds?|range)[ \t*_]*)?"
)


# A column of recordings' lengths: `오디오 길이`, `음성 길이`, `Audio duration`, `clip length`; the order and the task
# columns of a plan's table (factreg.docs.lint.context); a column of how often a task recurs, or its monthly sum.
_MEDIA_HEADER = lazy(
    r"(?i:(?:audio|video|clip|recording|speech|voice|media)[ _-]*(?:length|duration|len)(?![a-z]))"
    r"|(?:오디오|음성|영상|비디오|녹음|클립)\s?(?:길이|분량)"
)
_PLAN_ORDER = lazy(r"순서|단계|우선순위|(?i:\b(?:phase|step|order|priority)\b)|(?:^|\|)[ \t]*#[ \t]*(?:\||$)")
_PLAN_TASK = lazy(r"작업|내용|할\s?일|(?i:\btask)")
_CHORE_COLUMN = lazy(r"주기|빈도|월간|주간|(?i:\b(?:frequency|monthly|weekly|per (?:month|week))\b)")


# A column named by a pricing plan or tier (`Free`, `Paid`, `Hobby`, `Enterprise`, `무료`, `유료`): whole words at the
# cell's end, so not `Lock-free`; not `Pro`, which also names chips (`| M1 Pro | M1 Max |`).
_PLAN_COLUMN = lazy(
    r"(?:^|[ \t*_])(?i:free|paid|hobby|enterprise|premium|starter|business)(?:[ \t](?i:plan|tier))?[ \t*_]*$"
    r"|무료|유료|요금제"
)
# A table of plans, named by its first header cell (`| Usage plan | Basic | Pro | Ultra |`): each column is a plan's.
_PLANS_HEADER = lazy(r"[ \t*_]*(?i:(?:usage |pricing )?plans?|tiers?|pricing)[ \t*_]*|[ \t*_]*(?:요금제|플랜)[ \t*_]*")


_DEFAULT_COLUMN = lazy(r"(?i:\bdefaults?(?: values?)?\b)|기본\s?값")


# A load test's schedule: its first column names stages (`| 구간 | 목표 RPS | 시간 |`, `| Stage | VUs | Duration |`)
# and another the load it is set to, so its column of plain durations holds how long each stage was set to last.
_STAGE_HEADER = lazy(r"[ \t*_]*(?:(?i:stages?|phases?|steps?|ramps?|scenarios?)|단계|구간|페이즈|시나리오)[ \t*_]*")
_LOAD_COLUMN = lazy(
    r"(?i:\b(?:vus?|vusers?|virtual users|users|concurrency|arrival rate|target rps|rps|qps|tps)\b)"
    r"|VU|가상\s?(?:사용자|유저)|동시\s?(?:사용자|유저)|사용자\s?수|유저\s?수|목표\s?RPS|부하"
)
_STAGE_LENGTH_COLUMN = lazy(
    r"[ \t*_]*(?:(?i:duration|time|hold(?: time)?|length|test duration)|시간|유지\s?시간|지속\s?시간|테스트\s?시간|기간)[ \t*_]*"
)


# A motion spec (`| 토큰 | Duration | Easing |`, `| 동작 | Duration | Curve |`): its durations are animation settings.
_MOTION_COLUMN = lazy(r"[ \t*_]*(?:(?i:easing|curve|timing[ -]function|animation|transition)|이징|커브|애니메이션)[ \t*_]*")
# An HTTP client's timeouts (`| 호출 | connect | read |`): `connect` beside `read`, `write` or `pool`.
_TIMEOUT_FIELD = lazy(r"[ \t*_`]*(?i:connect|read|write|pool)(?:[ _-]?(?i:timeout))?[ \t*_`]*")


def _column_kinds(header: str) -> list[str | None]:
    """For each cell of a table's header row: `target` for a target, limit or setting column (and, in an alert
    rule's table, the column of how long a condition must hold), `other` for a column of figures that are not
    performance, else None."""
    cells = header.strip().strip("|").split("|")
    if _GRADE_HEADER.fullmatch(cells[0]):
        return ["target"] * len(cells)  # a rubric: every figure is a grade's threshold
    if _PLANS_HEADER.fullmatch(cells[0]):
        return [None] + ["target"] * (len(cells) - 1)  # each plan's limits
    # `| Metric | Good | Needs Improvement | Poor |`, `| Feature | Workers Free | Workers Paid |`: each verdict's
    # column holds its threshold, each plan's its limits
    for names in (_VERDICT_COLUMN.fullmatch, _PLAN_COLUMN.search, _TIMEOUT_FIELD.fullmatch):
        named = [names(cell) is not None for cell in cells]
        if sum(named) >= 2 and (names != _TIMEOUT_FIELD.fullmatch or "connect" in header.lower()):
            return ["target" if n else None for n in named]
    out: list[str | None] = []
    rules = _CONDITION_HEADER.search(header) is not None
    settings = _SETTING_NAME_HEADER.fullmatch(cells[0]) is not None
    schedule = _STAGE_HEADER.fullmatch(cells[0]) is not None and any(_LOAD_COLUMN.search(c) for c in cells[1:])
    schedule = schedule or any(_MOTION_COLUMN.fullmatch(c) for c in cells)  # a motion spec's durations are set
    for cell in cells:
        window = rules and _WINDOW_COLUMN.fullmatch(cell) is not None  # how long an alert's condition must hold
        window = window or (schedule and _STAGE_LENGTH_COLUMN.fullmatch(cell) is not None)  # a stage's set length
        setting = _DEFAULT_COLUMN.search(cell) is not None or (settings and _VALUE_COLUMN.fullmatch(cell) is not None)
        if window or setting or (_TARGET_COLUMN.search(cell) and not _REACHED_COLUMN.search(cell)):
            out.append("target")
        elif _OTHER_COLUMN.search(cell) and not _HEADER_UNIT.search(cell):
            out.append("other")
        else:
            out.append(None)
    return out
