"""Targets, limits, bounds and requirements: numbers that say what should be, not what was measured."""

from __future__ import annotations

import re

from factreg.docs.lint.base import _cell_context
from factreg.docs.lint.hypotheticals import _Hypotheticals
from factreg.docs.lint.patterns import lazy, screened
from factreg.docs.lint.vocab import _B, _CONJUNCTION, _E, _FEELS_LATER, _REACH, _RUBRIC, _SP, _TARGET_WORDS, _past

# An availability commitment: `99.9%`, `99.95%` with uptime words, or alone in a table cell beside the downtime it
# allows (`| Enhanced | 99.9% | ~43 minutes |`).
_NINES = lazy(r"(?<![\d.])99(?:\.\d+)?%")
# A threshold, a lock's lease or a per-client limit named right beside a figure (not anywhere in its sentence, where a
# measurement compared with it may sit: `p95가 4.66s로 … 임계값(200ms)을 넘는다`).
_TARGET_NEAR = lazy(r"(?:임계\s?(?:값|치)|임곗값|(?<![A-Za-z])(?i:lease(?:[ _-]?time)?|can\s+(?:make|send|issue)\s+up\s+to))[ \t*_:=(-]*$")
# A list item naming a duration as its key (`- **Spike Duration**: 30초`, `- Duration: 1분`): a test's configured length
# (not `total duration:       5.088275983s`, a tool's report, which is no list item).
_BULLET_DURATION = lazy(
    r"[ \t]*[-*•+][ \t]+(?:\*\*)?(?![A-Za-z ]{0,16}?(?i:average|avg|mean|total|elapsed|actual))[A-Za-z ]{0,16}(?i:duration)"
    r"(?:\*\*)?[ \t]*[:：](?:\*\*)?[ \t]*~?"
)
_PRECISE_READING = lazy(r"\d+\.\d{2,}")  # `209.44 seconds`: read off a run, not set
_TARGET_NEAR_AFTER = lazy(rf"{_SP}*(?:\*\*)?{_SP}*(?:임계|(?i:per{_SP}+(?:IP|user)){_E})")

_NINES_CELL = lazy(r"\|[ \t*]*99(?:\.\d+)?%[ \t*]*\|")
# A column of shares that are not an availability (`| Cache Hit Ratio |`, `| Success Rate |`, `| 정확도 |`, `| 개선율 |`).
_SHARE_COLUMN = lazy(r"(?i:hit|ratio|rate|recall|accuracy|success|pass|percentage|score|quality|cpu|mem)|율|률|정확|점수|성공|적중|단축")


def _nines_column(text: str, lo: int, line: str) -> bool:
    """Whether a table row holds a cell of only a `99.9%` whose column's header names no other share."""
    return any(
        not _SHARE_COLUMN.search(_cell_context(text, lo + m.start() + 1)[2]) for m in _NINES_CELL.finditer(line)
    )


_NINES_ARROW = lazy(r"(?<![\d.])99(?:\.\d+)?%[ \t]*(?:→|->)[ \t]*~?\d[\d.,]*[ \t]?(?i:min|minutes|hours?|hrs?|h|seconds|s|분|시간|초)\b")
_UPTIME_WORDS = lazy(r"(?i:downtime|availability|uptime|\bslas?\b|commitment|nines|allows?)|가용성|다운타임|가동률")
_DURATION = lazy(r"[^a-z]*(?i:ms|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|days?)\b|[^가-힣]*(?:초|분|시간|일)")
_AT_LEAST_BEFORE = lazy(rf"{_B}(?i:at{_SP}+least|no{_SP}+less{_SP}+than|a{_SP}+minimum{_SP}+of){_SP}*~?$")
_RATE_SPAN = lazy(r"/|(?i:per|ps|flops)\b")
# How long to wait, or how long a condition must last or a message wait before it shows: `wait 15+ minutes`, an
# alert's `sustained for 5 minutes`, `only shows after ~150ms`.
_WAIT_BEFORE = lazy(
    rf"{_B}(?i:wait(?:ing)?(?:{_SP}+for)?|(?:sustained|persist(?:s|ing)?|lasting){_SP}+for|"
    rf"(?:shows?|appears?|fires?|triggers?){_SP}+(?:only{_SP}+)?after){_SP}+~?$"
)

# A bound written before the number: `< 200ms`, `≤ 800ms`, `under 50 ms`.
_BOUND_BEFORE = lazy(
    rf"(?:[<>≤≥]=?|(?i:under|below|within|at most|no more than|less than)|{_B}(?i:sub)[-‑]?){_SP}*[~≈]?$"
)


_BOUND_AFTER = lazy(rf"(?:\*\*|__)?{_SP}*(?:이하|미만|이내|안에|안쪽|내\b|이상)")


# A table row whose label names a target: `| 최종 목표 | 50 TPS |`, `| p95 target | 300 ms |`, `| SLO | 99.9% |` (not
# `| 목표 대비 | 120% |`, `| 목표 달성 | … |`: measured against the target).
_TARGET_LABEL = lazy(
    r"(?!.*(?:대비|달성))[^|]{0,16}목표[^|]{0,16}"
    rf"|(?:[A-Za-z0-9() /-]{{0,24}}{_SP})?(?i:targets?|goals?|slos?|budgets?)"
    r"|(?i:rto|rpo)(?:\**[ \t]*\([A-Za-z ]{0,40}\))?"  # `| **RTO** (Recovery Time Objective) | 30-60분 |`: an objective
)


_SETTING_LABEL = lazy(
    rf"{_B}(?i:time-?outs?|ttl|intervals?|cron|polling|keep-?alive|retention|expir\w*|cool-?down|debounce|backoff){_E}"
    r"|주기|간격|타임아웃|만료|보관\s?기간|쿨다운|디바운스|백오프|테스트\s?(?:시간|기간)(?:[ \t*_]*$)|(?:요청|호출)\s?빈도"
)


# A column of settings: its header names what is set (`| 항목 | 설정값 | 설정 이유 |`).
_SETTING_COLUMN = lazy(r"[ \t*_]*(?:설정\s?값?|(?i:settings?|configured|config(?:uration)?))[ \t*_]*")


# A word of what a run measured, anywhere in a row (`| RAG 처리 | 7-40초 | … | 실제 소요 시간 |`).
_RUN_WORD = lazy(rf"실제|측정|소요|걸린|지연|응답|{_B}(?i:took|measured|actual|latency|response){_E}")


_MEASURED_LABEL = lazy(rf"{_B}(?i:latency|took|duration|response|p\d\d){_E}|지연|응답|소요|걸린")


_FROM_ARROW_AFTER = lazy(rf"{_SP}*(?:→|->|⟶)")


# A sentence whose subject is its aim: `The goal is to run … at 60fps`, `Our target is …`, `My aim here was …`.
_GOAL_SUBJECT = lazy(
    rf"(?:^|[.:;!?]\s+)\W*(?i:the|our|my|their|his|her|one|main|primary|first|end)?{_SP}*"
    rf"(?:(?i:main|primary|end|ultimate){_SP}+)?"
    rf"(?i:goals?|aims?|targets?|objectives?){_SP}+(?:(?i:here|now|then){_SP}+)?(?i:is|are|was|were){_E}"
)


# A threshold in a condition or a filter, a value compared with: `requests where TTFB was greater than 2 seconds`,
# `if … does not respond within 100 s` (`if the reply takes longer than 2.5 s, …` says how long replies take).
_CONDITION_BEFORE = lazy(
    rf"{_B}(?i:if|where|whenever|unless){_E}[^.;:!?\n]{{0,70}}?{_B}(?i:(?:greater|higher|lower){_SP}+than|within|"
    rf"exceeds?|exceeding|above|below|beyond){_SP}*$"
)


# `if … takes longer than 30 seconds, … fails`: a condition whose outcome is a failure sets a limit.
_LONGER_BEFORE = lazy(rf"(?i:longer|more){_SP}+(?i:than){_SP}*$")


_CONDITION_BEFORE_WORD = lazy(rf"{_B}(?i:if|when|whenever|once|in{_SP}+case){_E}")


_FAILS_AFTER = lazy(
    rf"{_B}(?i:fail\w*|terminat\w*|abort\w*|kill\w*|cancel\w*|times?{_SP}out|timed{_SP}out|errors?{_SP}out|gives?{_SP}up){_E}"
)


# A failure named before the condition: `Agent chat shows "network error" when the LLM takes longer than 60s`.
_FAILS_BEFORE = lazy(rf"{_B}(?i:errors?|fail\w*|time-?outs?|timed{_SP}out|abort\w*|kill\w*|terminat\w*|cancel\w*|interrupt\w*){_E}")
# A definition by a threshold: `slow queries were defined as any query taking longer than 2 seconds`.
_DEFINED_BEFORE = lazy(rf"{_B}(?i:defined{_SP}+as|considered|counts?{_SP}+as|classified{_SP}+as|flagged{_SP}+as){_E}")


# A limit said as what is done to the work that runs longer, or as what is ensured of it: `kill gevent threads taking
# more than 60 seconds`, `ensuring no query takes over 30 seconds` (not `can take up to 4 minutes`: how slow it is).
_LIMIT_PHRASE_BEFORE = lazy(
    rf"{_B}(?i:kill\w*|terminat\w*|cancel\w*|abort\w*)(?:{_SP}+[\w-]+){{0,4}}{_SP}+(?i:taking|running|that{_SP}+takes?)"
    rf"{_SP}+(?i:more|longer){_SP}+(?i:than){_SP}*$"
    rf"|{_B}(?i:ensur\w*|make{_SP}+sure|guarantee\w*)(?:{_SP}+that)?{_SP}+(?i:no){_SP}+[\w-]+(?:{_SP}+[\w-]+)?{_SP}+"
    rf"(?i:takes?|runs?){_SP}+(?i:over|longer{_SP}+than|more{_SP}+than){_SP}*$"
)


# The word right before a number that _CONDITION_BEFORE ends in (a cheap first test).
_COMPARED_BEFORE = lazy(rf"(?i:than|within|exceeds?|exceeding|above|below|beyond){_SP}*$")


# A sentence that ends by naming what it says as an aim or a criterion: `… 것이 목표입니다`, `… 기준으로 한다`.
_TARGET_END = lazy(
    r"(?:목표|기준|요구\s?사항|권장\s?사항)(?:이다|입니다|다|예요|이에요|로\s?한다|으로\s?한다|로\s?합니다|으로\s?합니다)"
    r"\s*[.!]?\s*$"
)


# A Korean sentence ending in an imperative gives an instruction, not a report: `… 피드백을 제공하세요.` (not a pointer
# to a text: `… 향상시킬 수 있는지 알아보세요`)
_IMPERATIVE_END = lazy(r"(?<!알아보)(?<!살펴보)(?<!확인하)(?<!참고하)(?:세요|십시오|하라)\s*[.!]?\s*$")


# An example opened before the number in the same aside: `(e.g., p99 TTFT < 1 s)`, `(예: < 200ms)`.
_EXAMPLE_OPEN = lazy(r"\((?:e\.g\.|for example|예:|예시:|ex\))[^()]*$", re.IGNORECASE)


_LABEL = lazy(r"^\s*(?:[-*+>]\s+)?([^:|\d]{1,24}):")


_UPPER_BEFORE = lazy(rf"(?:<|≤|<=){_SP}*$")


_UPPER_AFTER = lazy(rf"(?:\*\*|__)?{_SP}*(?:이하|미만|이내|안에|안쪽|내\b)")


def _declarative(after: str) -> bool:
    """Whether a Korean clause ends in the plain present declarative (`끝난다`, `돌아온다`, `걸린다`): a statement
    of fact about the system, not a limit it must keep (`이하다`, `이하로 유지해야 한다` are caught before)."""
    m = re.search(r"([\uac00-\ud7a3])다(?:[.!]|\s*$)", after)
    if m is None:
        return False
    syllable = ord(m.group(1)) - 0xAC00
    return syllable % 28 == 4 or m.group(1) == "는"  # a final ㄴ (`난`, `온`, `린`), or `-는다`


# A bound stated as what is, with a copula or a noun ending: `차이는 5% 미만입니다`, `1분 이내로 완료됨`, `… 쿼리이긴 하니깐`.
_COPULA_FACT = lazy(r"(?:입니다|습니다|이다|이었|였다|됨|이긴)(?![가-힣])")


_ALLOWANCE_BEFORE = lazy(r"수\s?있는\s?(?:시간|최대|한도)")


_CAPABLE = lazy(r"수 있|했|됐|였|왔|보여|보인|보입|(?i:took|was|were|ran|got){_E}".replace("{_E}", _E))


# A value that is asked for or set: `36fps를 직접 요청`, `30초로 설정`, `set it to 30 s`, `capped at 30 fps`.
_SET_VERB_AFTER = lazy(
    rf"(?:\*\*)?{_SP}?(?:(?:정도|쯤){_SP}?)?(?:을|를|로|으로){_SP}?(?:직접{_SP}?)?(?:요청|설정|지정|고정|제한|변경|조정|수정|추출|정하|정해|정한|선택|채택)"
    rf"|{_SP}?에{_SP}?한{_SP}?번"  # `5분에 한 번씩`: how often, not how long
    # a load test's stage: `10초에 걸쳐 점차 300명으로 증가`, `30초 동안 300명에서 10,000명으로`
    rf"|{_SP}?(?:에{_SP}?걸쳐|동안)[^.\n\d]{{0,12}}\d[\d,]*{_SP}?명"
    # the old value of a change: `5초에서 12초로 변경`, `30s -> 120s`
    rf"|{_SP}?(?:에서|->|→){_SP}?\d[\d.,]*{_SP}?[^\s\d]{{0,3}}{_SP}?(?:(?:정도|쯤){_SP}?)?(?:로|으로){_SP}?(?:변경|조정|수정)"
)


_SET_VERB_BEFORE = lazy(
    rf"{_B}(?i:set(?:s|ting)?(?:{_SP}+(?:it|this|them|the{_SP}+\w+))?(?:{_SP}+in{_SP}+(?:this|the|a){_SP}+\w+)?{_SP}+(?:to|at)|"
    rf"capped(?:{_SP}+(?:it|this|them|the{_SP}+\w+))?{_SP}+at|limit(?:ed)?{_SP}+to|"
    # `Calibrate only this metric to 1 ms p50`, `tune the budget to 200 ms`
    rf"(?:calibrat\w*|tun(?:e|es|ed|ing)|configur\w*)(?:{_SP}+\w+){{0,3}}{_SP}+to|"
    rf"timed?{_SP}?-?out{_SP}+(?:after|at)|"
    # `is set at 5 items and 6 seconds`, `segment duration of 2 seconds`, `a lame duck duration of 1 second`
    rf"set{_SP}+at{_SP}+\d+{_SP}+\w+{_SP}+and|"
    rf"(?:segment|chunk|fragment|slice|buffer|lame{_SP}+duck)(?:{_SP}+(?:duration|length|time))?{_SP}+of)"
    rf"{_SP}*(?:~|(?i:about|around){_SP}+)?$"
)


# A lower bound on a rate, where more is better: `> 100 req/s` (`10배 이상 증가` is a change that was seen).
_LOWER_BEFORE = lazy(rf"(?:>|≥|>=){_SP}*$")


_LOWER_AFTER = lazy(rf"(?:\*\*|__)?{_SP}*(?:이상|초과)")


_MORE_IS_BETTER = lazy(r"/|(?i:fps|tps|rps|qps|flops|tops)")


# What makes a Korean bound a measured result: a statistic of runs (`< 50ms (평균)`), a speed said to be fast
# (`**빠른 장애 조치**: 30초 이내`), the result of a test or benchmark (`테스트 결과, … 1초 미만의`).
_STAT_AFTER = lazy(
    rf"(?:\*\*|__)?{_SP}*(?:이하|미만|이내)?{_SP}*\({_SP}*(?:평균|중앙값|(?i:avg|average|mean|median)){_SP}*\)"
)


_FAST_OR_MEASURED = lazy(
    r"빠른|빠르|빠름|빨라|신속|⚡|(?:테스트|측정|실험|벤치마크)\s?결과|벤치마크|실측|(?i:fast|quick|benchmark|measured)"
)


# `keep ITL under 50 ms`, `to keep it below 2 s`: an instruction or an aim (`latency stays under 1 s` is a fact)
_KEEP = lazy(rf"(?:^|[:*-]|{_B}(?i:to|must|should|please|and|we|you)){_SP}*(?i:keep){_E}")


_FEELS = lazy(rf"(?i:feels?){_E}")


_EXPECTED_LABEL = lazy(r"\s*(?:[-*+>]\s+|\d+\.\s+)?(?:\*\*)?(?:예상|기대|(?i:expected))[^:：\n]{0,12}[:：]")


_PERCEPTION_ASIDE = lazy(
    rf"(?:\*\*)?{_SP}*\([^()\n]{{0,30}}(?:느끼|느껴|느낌|체감|(?i:feels?|perceiv\w*|notice)){_E}"
)


# A verdict alone as a line's label: `양호: 1~3초`, `개선 필요: 5초 ~` (a rubric's row, not a measurement).
_RUBRIC_LABEL = lazy(
    r"^\s*(?:[-*+>]\s+)?(?:[✅❌⚠🟢🟡🟠🔴🟩🟨🟥]\ufe0f?\s*)?(?:\*\*)?([A-Za-z가-힣 ]{1,20}?)(?:\*\*)?\s*[:：]\s*(?:\*\*)?[~약]?\s*$"
)
# A speed's verdict as a list item's whole label (`- ✅ 빠름: 50-200ms`, `- ❌ 느림: 500ms+`, `- Fast: < 1 s`)
_SPEED_VERDICT = lazy(r"(?i:(?:very |too )?(?:fast|slow))|(?:매우\s?|아주\s?)?(?:빠름|느림)")


# `--duration 30s`, `-t 10s`: the value of a command-line option
_OPTION_BEFORE = lazy(rf"(?<![\w-])--?[A-Za-z][\w-]*(?:={_SP}*|{_SP}+)$")


# A tool's own report of how long a run took: the shell's `time` (`--version  0.34s user 0.05s system 102% cpu`)
# and cargo's `Finished release [optimized] target(s) in 0.01s`.
_TOOL_TIME_AFTER = lazy(r"[ \t]+user[ \t]+\d[\d.]*s[ \t]+system\b")
_TOOL_TIME_BEFORE = lazy(r"\bFinished\b[^\n]{0,60}\btarget\(s\)[ \t]+in[ \t]+$")


def tool_time(text: str, start: int, end: int) -> bool:
    """Whether the duration `text[start:end]` is a tool's report of how long a run took (`time`, cargo)."""
    return bool(_TOOL_TIME_AFTER.match(text, end) or _TOOL_TIME_BEFORE.search(text, max(0, start - 90), start))



def _target_near(text: str, line_lo: int, start: int, before: str, end: int) -> bool:
    """Whether a command-line option, a threshold, a lease or a per-client limit is named right beside the number."""
    return (
        _OPTION_BEFORE.search(text, max(0, start - 30), start) is not None
        or _TARGET_NEAR.search(before[-16:]) is not None
        or _TARGET_NEAR_AFTER.match(text, end) is not None
        or (
            _BULLET_DURATION.fullmatch(text, line_lo, start) is not None
            and _PRECISE_READING.match(text, start) is None
        )
    )

class _Targets(_Hypotheticals):
    def _row_label(self, start: int) -> tuple[int, int] | None:
        """The span of the label (the first cell) of the table row a number stands in, when the number is not in
        it; else None (its offsets, which base._cell_context, giving the cells' texts, does not)."""
        text = self.text
        lo = text.rfind("\n", 0, start) + 1
        first = text.find("|", lo, start)
        if first < 0 or not self._in_row(lo, start):
            return None
        if text[lo:first].strip():  # a row without its leading pipe: its label starts the line
            return lo, first
        second = text.find("|", first + 1, start)
        return (first + 1, second) if second >= 0 else None

    def _target_row(self, start: int) -> bool:
        """Whether a number is in a table row (not in its first cell) whose label names a target."""
        label = self._row_label(start)
        return label is not None and _TARGET_LABEL.fullmatch(self.text[label[0] : label[1]].strip(" *_\t")) is not None

    def _setting_row(self, start: int) -> bool:
        """Whether a number is in a table row whose label names a setting and no measured figure (`| **Cron 주기
        조정** | 5분 → 10분 |`, `| Session TTL | 30 min |`; not `| Polling latency | 30 ms |`)."""
        label = self._row_label(start)
        if label is None:
            return False
        text = self.text[label[0] : label[1]]
        _, label_text, header, others = _cell_context(self.text, start)
        if _SETTING_COLUMN.fullmatch(header) and not _RUN_WORD.search(" ".join([label_text, *others])):
            return True  # `| 항목 | 설정값 |` over `| Duration | 10초 |`: the column holds settings
        return _SETTING_LABEL.search(text) is not None and _MEASURED_LABEL.search(text) is None

    def _wait_or_downtime(self, start: int, end: int) -> bool:
        """Whether a number is how long to wait (`wait 15+ minutes between invocations`) or the downtime an
        availability commitment allows (`| Enhanced | 99.9% | ~43 minutes |`, `a 99.99% commitment allows about 4
        minutes`)."""
        if _WAIT_BEFORE.search(self.text, max(0, start - 32), start) or (
            _AT_LEAST_BEFORE.search(self.text, max(0, start - 16), start) and _RATE_SPAN.search(self.text, start, end)
        ):
            return True  # `at least 100 MB/s`: a floor asked for (not `at least 3x faster`, `took at least 10 s`)
        return _DURATION.match(self.text, start, end) is not None and self._availability(start)

    def _availability(self, start: int) -> bool:
        """Whether a number's line speaks of an availability commitment: a `99.9%` with words of uptime or
        downtime, or a table row with a cell that holds only such a percentage (worked out once per line)."""
        lo = self.text.rfind("\n", 0, start) + 1
        cache: dict[int, bool] = self.__dict__.setdefault("_availability_lines", {})
        if lo not in cache:
            hi = self.text.find("\n", start)
            line = self.text[lo : len(self.text) if hi < 0 else hi]
            cache[lo] = _NINES.search(line) is not None and (
                _UPTIME_WORDS.search(line) is not None
                or _nines_column(self.text, lo, line)
                or _NINES_ARROW.search(line) is not None  # `# 99.9%  → 43.2 minutes`: the downtime a level allows
            )
        return cache[lo]

    def _target(self, start: int, end: int) -> bool:
        """Whether a number is a target, limit, threshold or requirement rather than a measurement."""
        if self._flag(start, "unchecked") or self._wait_or_downtime(start, end):
            return True
        before = self._before(start, 40)
        after = self._after(end, 30).split("(", 1)[0]  # a parenthesis after the number speaks of another
        after = _CONJUNCTION.split(after, 1)[0]  # `시간을 85% 줄이고 메모리 요구 사항을`: another clause's words
        if _SET_VERB_AFTER.match(self.text, end) or _SET_VERB_BEFORE.search(before):
            return True  # a value asked for or set
        if _target_near(self.text, self._bounds(start)[0], start, before, end):
            return True  # `--duration 30s`, `임계값(200ms)`, `5초 임계값 초과`, `lease_time: 2초`, `… per second per IP`
        if self._target_row(start) and not _FROM_ARROW_AFTER.match(self.text, end):
            return True  # `| 최종 목표 | 50 TPS |`: a row of targets (not `2.17s → 0.3s`'s 2.17s: where it starts)
        if self._setting_row(start):
            return True  # `| **Cron 주기 조정** | 5분 → 10분 |`: a row of settings, before and after
        if _COMPARED_BEFORE.search(self.text, max(0, start - 16), start) and _CONDITION_BEFORE.search(
            self._before(start, 90)
        ):
            return True  # a threshold in a condition
        if _LIMIT_PHRASE_BEFORE.search(self._before(start, 90)) or (
            _LONGER_BEFORE.search(self.text, max(0, start - 16), start)
            and (
                _CONDITION_BEFORE_WORD.search(self._before(start, 90))
                and (_FAILS_AFTER.search(self._sentence(start)[1]) or _FAILS_BEFORE.search(self._sentence(start)[0]))
                or _DEFINED_BEFORE.search(self._before(start, 90))
            )
        ):
            # `if the process takes longer than 30 seconds, the coroutine fails`, `shows "network error" when the
            # LLM takes longer than 60s`, `defined as any query taking longer than 2 seconds`, `kill threads taking more
            # than 60 seconds`, `ensuring no query takes over 30 seconds`: a limit
            return True
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
        if label and ((self._flag(start, "rubric") and _RUBRIC.fullmatch(label.group(1).strip()))
                      or _SPEED_VERDICT.fullmatch(label.group(1).strip())):
            return True  # `양호: 1~3초`, `개선 필요: 5초 ~`, `✅ 빠름: 50-200ms`: a verdict as the label
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
        if bound and (self._bound_cell_target(start, end, achieved) or self._heading_bound(start)):
            return True
        if bound and not achieved:
            return self._bound_is_target(start, end)
        return False

    def _bound_cell_target(self, start: int, end: int, achieved: bool) -> bool:
        """A bound alone in its table cell that the row's later result is held against, a word of it reached or a
        check mark saying so: `| < 50ms | 38ms | 132% | ✅ 초과 달성 |`, `| ≥ 100 RPS | 196 RPS ✅ |`."""
        if not _BOUND_CELL.search(self.text, max(0, start - 12), start):
            return False
        line_end = self._line(end)[1]
        unit_end = self.text.find("|", end, line_end)
        if unit_end < 0 or _LATER_RESULT.match(self.text, unit_end) is None:
            return False
        return achieved or _CHECK_MARK.search(self.text, unit_end, line_end) is not None

    def _heading_bound(self, start: int) -> bool:
        """A bound in parentheses in a heading (`### Slow inference (< 100 tok/s)`): the class the heading names."""
        lo = self.text.rfind("\n", 0, start) + 1
        return _HEADING_BOUND.fullmatch(self.text, lo, start) is not None

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
        if _ARROW_THEN_BOUND.search(text, max(0, start - 12), start):
            return False  # `30초~1분 → <500ms`: where a change ended, bounded
        lo = text.rfind("\n", max(0, start - _REACH), start) + 1
        hi = self._line(end)[1]
        if self._in_row(lo, start) and _ROW_SPEED_CHANGE.search(text, end, hi):
            return False  # `| 로딩 시간 | 2-3초 | <0.5초 | **6배 빠름** |`: the row reports the change it is part of
        return _FAST_OR_MEASURED.search(text, lo, start) is None and _FAST_OR_MEASURED.search(after) is None


# A bound in parentheses in a heading (`### Slow inference (< 100 tok/s)`), up to the number.
_HEADING_BOUND = lazy(r"[ \t]*#{1,6}[ \t][^\n(]*\([ \t]*(?:<|>|≤|≥|&lt;|&gt;|(?i:under|below|over|above)[ \t])=?[ \t]*~?")
_ARROW_THEN_BOUND = lazy(rf"(?:→|->)(?:\*\*|{_SP})*(?:<|≤|<=){_SP}*$")


# A later cell of the row that reports a speed-up or an improvement: `| **6배 빠름** |`, `| **94%+ 향상** |`.
_ROW_SPEED_CHANGE = lazy(
    rf"\|[^|\n]*\d(?:\.\d+)?{_SP}?(?:배|%|x|×)\+?(?:\*\*|{_SP})*(?:빠름|빨라|빠르게|향상|개선|단축|(?i:faster|speed-?up)){_E}"
)


# A bound alone in its cell, with a measured number in a later cell: the target column of a target-vs-result table.
_BOUND_CELL = lazy(rf"\|(?:\*\*|{_SP})*(?:[<≤>≥]=?|&[lg]t;=?){_SP}*$")


_CHECK_MARK = lazy(r"[✅✔❌✗⚠]")
_LATER_RESULT = lazy(rf"(?:\*\*|{_SP})*\|[^|\n]*\d")


_BOUND_BEFORE = screened(_BOUND_BEFORE)


_CAPABLE = screened(_CAPABLE)


_KEEP = screened(_KEEP)
