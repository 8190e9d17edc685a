"""Relative changes: ratios (`3.1× faster`, `2배`) and percentages of a performance figure."""

from __future__ import annotations

import re

from factreg.docs.lint.durations import _Durations
from factreg.docs.lint.patterns import lazy, screened
from factreg.docs.lint.vocab import (
    _ASIDE,
    _B,
    _CHANGE_RX,
    _CONJUNCTION,
    _E,
    _END,
    _LEX,
    _NONPERF,
    _NUM,
    _PERF,
    _SIGN_BEFORE,
    _SP,
    _TARGET_WORDS,
    _last,
)

_COMPARATIVE = lazy(rf"{_SP}?(?i:(faster|slower|quicker|speedup|speed-up|slowdown){_END})")
# `**77,67%** (Δ: 1233,828 ns) slower than v5.12.0`: the comparative after an aside on the same change
_COMPARATIVE_AFTER_ASIDE = lazy(rf"(?:\*\*|__)?{_SP}*\([^()\n]{{0,40}}\){_SP}*(?i:(faster|slower){_END})")


# After `N×` / `Nx`: a capitalised word, a number or a count noun makes it a hardware count or a product.
_NOT_RATIO_NEXT = lazy(
    rf"{_SP}*(?:(?!(?i:real[- ]?time|higher|lower|faster|slower|better|more|less|speed){_END})[A-Z]|\d|(?i:gpus?|cards?|nodes?|machines?|servers?|cores?|sockets?|dimms?|sticks?|boxes?|"
    rf"instances?|replicas?|workers?|threads?){_END})"
)


# `… by 98% on realism`: the metric a percentage is of, named right after it
_ON_METRIC_AFTER = lazy(
    rf"(?:\*\*|__|{_SP})*(?i:on|in){_SP}+(?:(?i:the|its|their|overall){_SP}+)?(?:(?P<nonperf>{_NONPERF})|(?P<perf>{_PERF}))"
)


# A comparative right after a ratio or percentage makes it a speed-up or slow-down on its own.
_COMP_AFTER = lazy(
    rf"(?:\*\*|__|\)|{_SP})*(?:나|가|이|는|의|로|만큼)?{_SP}?(?:(?:더|빠른|높은){_SP}?)?"
    rf"(?:(?i:faster|slower|quicker|speed-?ups?|slow-?downs?|accelerations?){_E}"
    r"|빠[르른름]|빨[라랐리]|느[리려렸림린]|늦|↑|⬆|가속|⚡)"
)


_RATIO_CHANGE_AFTER = lazy(
    rf"(?:\*\*|__|{_SP})*(?:의{_SP}?)?(?:향상|개선|단축|(?i:improvement|gain|boost|uplift|acceleration){_E})"
)


# A percentage of a time or of a speed limit: `takes 10.8% of SD v1.5's training time`, `50–80% of this ceiling`.
_SHARE_OF_TIME_AFTER = lazy(
    rf"{_SP}*(?i:of){_SP}+(?:[^\s,;()|]+{_SP}+){{0,4}}?(?i:training|inference|generation|compute|decod\w*|prefill|"
    rf"wall-?clock|run|processing|build|compile)[ -]?(?i:time|latency|runtime){_E}"
)


# A change between two timed values, then a parenthesis opening before a percentage: `316.34ms→230.79ms(약 27%`.
_CHANGE_THEN_PAREN = lazy(
    rf"\d{_SP}?(?:ms|s|sec|초|분|밀리초|tok/s|t/s|tokens/s){_SP}*(?:→|->|⇒){_SP}*{_NUM}{_SP}?(?:ms|s|sec|초|분|밀리초|tok/s|t/s|tokens/s)"
    rf"{_SP}*\({_SP}*(?:약|~|≈|(?i:about|approx\.?)){_SP}*[+−-]?$"
    rf"|\d{_SP}?(?:ms|s|sec|초|분|밀리초|tok/s|t/s|tokens/s){_SP}*(?:→|->|⇒){_SP}*{_NUM}{_SP}?(?:ms|s|sec|초|분|밀리초|tok/s|t/s|tokens/s)"
    rf"{_SP}*\({_SP}*[+−-]?$"
)


# A size, a score or a count, then a parenthesis opening before a ratio: the ratio is of that quantity.
_QUANTITY_THEN_PAREN = lazy(rf"\d{_SP}?(?:%|[KMGT]i?B|점|개|명)(?:\*\*)?{_SP}*\({_SP}*(?:[^()\d\n]{{0,12}})?$")


# A percentage, then the pair of bare numbers it was worked out from: `58% 감소 (24 → 10)`.
# `전체 측정값 중 50%가`, `요청 중 95%가`: a share of a set (what part of the requests), not a change.
_SHARE_OF_SET_BEFORE = lazy(r"[가-힣]\s?중\s*(?:약\s*)?$")


_SUBJECT_AFTER = lazy(r"[가이](?![가-힣])")


_SHARE_TOOK_AFTER = lazy(
    rf"{_SP}+(?:(?i:took|take|more{_SP}+than|less{_SP}+than|of{_SP}+(?:the{_SP}+)?(?:[a-z]+{_SP}+)?(?:requests|users|calls|jobs|"
    rf"runs|containers|viewers|visitors|sessions|queries|traffic|total)){_E}"
    # `90% of time is spent on imports`, `spends 20% of its time in the allocator`: a profile's share of the time
    rf"|(?i:of{_SP}+(?:(?:the|its|their|our|total){_SP}+)?(?:(?:cpu|wall|processing|response|execution|request|build){_SP}+)?time{_SP}+(?:is{_SP}+|was{_SP}+)?"
    rf"(?:spent|in|on|goes){_E}))"
    # `95%의 요청이 1초 이내`, `95% 요청 응답시간`, `95% 응답시간: 500ms`: the share of the requests a percentile covers
    rf"|(?:의)?{_SP}*요청|{_SP}*응답{_SP}?(?:시간|속도)(?:\*\*)?{_SP}*[:|]"
)


# `+15% 이상이 10분 지속`, `5% 이상일 때`: a threshold on a change, not a change that happened.
_THRESHOLD_AFTER = lazy(
    r"(?:\*\*)?\s?(?:이상|초과|이하|미만)(?:(?:이|일|인|이면|으로|시)(?![가-힣])|\s+[+-]?\d[\d.]*\s?%)"
)  # `5% 이상일 때`; `30% 이상 54.8% ✅`: a goal, then what was reached


_COUNT_PAIR_AFTER = lazy(
    rf"(?:\*\*)?{_SP}*(?:감소|증가|(?i:less|fewer|more))?(?:\*\*)?{_SP}*\({_SP}*{_NUM}(?:회|번|개|건)?{_SP}*(?:→|->){_SP}*{_NUM}"
    r"(?:회|번|개|건)?\s*\)"  # `렌더링 횟수 50% 감소(6회→3회)`: counted
)


# A before → after pair, then a parenthesis opening before a ratio or percentage: the change of that pair, whose unit
# (none, a count noun, a size) decides what it is of; `316ms→230ms(약 27%)` is a change of times.
_PAIR_THEN_PAREN = lazy(
    rf"{_NUM}(?:{_SP}?[A-Za-z가-힣/]+)?{_SP}*(?:→|->){_SP}*{_NUM}(?:{_SP}?(?P<unit>[A-Za-z가-힣/]+))?(?:\*\*)?{_SP}*"
    rf"\({_SP}*(?:약|~|≈)?{_SP}*[+−-]?$"
)


_TIME_OR_RATE_UNIT = lazy(
    r"ms|s|sec|secs|seconds?|초|분|밀리초|min|mins|minutes?|tok/s|t/s|tokens/s|req/s|rps|RPS|TPS|tps|qps|QPS|fps"
)


# `60% ~ 70% the performance of FT`: a share of a speed, as `1/3 the speed` and `2.4× the throughput` are multiples.
_SHARE_OF_PERF_AFTER = lazy(
    rf"(?:{_SP}*[~～〜–-]{_SP}*{_NUM}{_SP}?%)?{_SP}+(?:(?i:of){_SP}+)?(?i:the|its|their){_SP}+"
    rf"(?i:speed|performance|throughput){_E}"
)


_SHARE_OF_CEILING_AFTER = lazy(
    rf"{_SP}*(?i:of){_SP}+(?i:the|this|its|their|that){_SP}+(?:\w+{_SP}+)?(?i:ceiling|roofline){_E}"
)


_TIMED_CELL = lazy(r"\|[ \t*_~]*\d[\d,.\-~]*[ \t]?(?:ms|s|sec|초|분|밀리초)[ \t*_]*(?:\([^()|]*\)[ \t]*)?(?=\|)")


_QUALITY_AFTER = lazy(
    rf"{_B}(?i:mmlu|hellaswag|gsm8k|humaneval|truthfulqa|winogrande|perplexity|accuracy|accurate|efficient|efficiency){_E}"
)


# A model's quality named on the line of a percent change (`mAP`, `accuracy`, `downstream task`, `정확도`), and no word
# of speed or time near the percentage but `성능`: the model's quality, not its speed.
_MODEL_QUALITY = lazy(
    rf"(?<![A-Za-z])(?:m?AP|(?i:accuracy|downstream|augmentation|error{_SP}+rate|top-?[15]|glue|squad|bleu|f1|capability|"
    rf"dataset|lora|sft|dpo|fine-?tun\w*))(?![A-Za-z])|정확도|데이터셋|에러율|오류율|인식률|성능[은이]\s?(?:오직|단지|불과)|"
    rf"학습|프롬프트|파인\s?튜닝|모델\s?대비|%만\s?(?:감소|하락)"
)
_SPEED_OR_TIME = lazy(
    rf"속도|시간|빠르|빨라|느리|느려|지연|처리량|추론|{_B}(?i:faster|slower|speed|latency|throughput|time|lcp|fcp|ttfb|inp|tbt){_E}"
)


def _model_quality(text: str, line: tuple[int, int], start: int, end: int) -> bool:
    lo, hi = line
    if _MODEL_QUALITY.search(text, lo, hi) is None:
        return False
    a, b = max(lo, start - 30), min(hi, end + 30)
    return "성능" in text[a:b] and _SPEED_OR_TIME.search(text, a, b) is None


_KO_SHARE_AFTER = lazy(r"(?:\*\*)?[ \t]*(?:인[ \t]?것|[를을][ \t]?차지)")
_TAG = lazy(r"^\s*\[[A-Za-z ]{1,20}\]")  # `[Bug]`, `[Feature Request]`: an issue title's tag


# After a ratio: a word of size (`16배 큰`, `5배 더 큰 모델`, `3x larger`) makes it a size ratio.
_SIZE_AFTER = lazy(
    rf"(?:\*\*|__|{_SP})*(?:더{_SP}?)?(?:큰|크다|크고|작은|작다|작고|작아|넓은|넓|긴{_SP}?컨텍스트|가볍|가벼|무겁|무거)"
)


# What people do faster is not a system's speed: `10배 빠른 개발`, `3x faster development`.
_PEOPLE_WORK_AFTER = lazy(
    rf"(?:\*\*|__|{_SP})*(?:개발|온보딩|프로토타이핑|(?i:development|onboarding|prototyping|iteration)(?![A-Za-z]))"
    # people's work after the comparative: `28% faster to debug`, `32% less time for updates`
    rf"|{_SP}+(?i:to{_SP}+(?:debug|develop|write|learn|maintain|onboard|ship)|time{_SP}+(?:for|on){_SP}+"
    rf"(?:updates|maintenance|reviews?|debugging|onboarding)){_E}"
)


_ASSIGNMENT = lazy(r"[\w.-]+=[\w.-]+")
_BY_BEFORE = lazy(rf"{_B}(?i:by|from){_SP}*(?:(?i:up to|about|around|nearly|as much as|over)|~)?{_SP}*$")


_NUMBER_UNIT = lazy(r"(?<![A-Za-z])\d[\d.,]*\s?(?:%|[A-Za-z/µ]+|[초분배]|시간)?")  # not `M4`, `GPT-4`'s digit


def _after_last_number(before: str) -> str:
    """The words before a number back to the previous number (which has words of its own)."""
    last = _last(_NUMBER_UNIT, before)
    return before[last.end() :] if last is not None else before


_CELL_NUMBER = lazy(
    rf"^(?:\*\*|__|~|≈|약|{_SP})*[+−-]?(?:\*\*)?[x×]?{_NUM}(?:{_SP}?[~–-]{_SP}?{_NUM})?{_SP}?[%×xX배]?(?:\*\*|__|{_SP})*"
    rf"(?:\(.*\))?(?:{_SP}|⬇️|⬆️|↓|↑|⚡|✅)*$"
)


_GO_ON = -1  # _relative_form decided nothing (never a claim's end)

# `should` before a relative change, with no bound between them (`should be at least 2x faster` is a requirement).
_SHOULD_BEFORE = lazy(
    rf"{_B}(?i:should){_E}(?:(?!(?i:at{_SP}+least|at{_SP}+most|no{_SP}+more|not{_SP}+exceed|minimum|maximum))[^.;:!?\n]){{0,60}}$"
)
# `상위 20% PR`, `top 10%`: a share of the items before a percentage, not a change
_QUANTILE_BEFORE = lazy(rf"(?:상위|하위|전체의(?:{_SP}*약)?|{_B}(?i:top|bottom|slowest|fastest)){_SP}*$")


class _Relative(_Durations):
    def _expected(self, start: int) -> bool:
        """Whether a relative change is what a change is expected to bring (`builds should be about 4x faster`,
        `this should cut that time by about 90%`): a claim, as an estimate stated as a fact is; `should` is the
        only target word before it in its sentence and no bound comes before it (`should be at least 2x faster`)."""
        before = self._sentence(start)[0]
        m = _SHOULD_BEFORE.search(before)
        return m is not None and not _TARGET_WORDS.search(before[: m.start()] + before[m.end() :])

    def _relative(self, start: int, u_start: int, end: int, kind: str) -> int | None:
        """The end of a ratio or percentage that is a speed-up or slow-down, or None."""
        if kind == "pct" and _QUANTILE_BEFORE.search(self.text, max(0, start - 8), start):
            return None  # `상위 20% PR`, `하위 5% 요청`, `전체의 약 3%`: a share of the items, not a change
        found = self._relative_form(start, u_start, end, kind)
        found = self._relative_noun(start, end, kind) if found == _GO_ON else found
        if found is not None and self._other_row_label(start):
            return None  # `| 가용성 | 99% | 99.9% | 0.9%↑ |`: the row measures something else
        return found

    def _other_row_label(self, start: int) -> bool:
        """Whether a number stands in a table row (not in its first cell) whose label names a figure that is not
        performance (`| 가용성 |`, `| Memory |`) and no performance word."""
        label = self._row_label(start)
        if label is None:
            return False
        found = list(_LEX.finditer(self.text, *label))
        words = [m.lastgroup for m in found]
        if "nonperf" not in words or "perf" in words:
            return False
        if any(m.lastgroup == "nonperf" and m.group().rstrip().endswith(("시간", "time")) for m in found):
            return True  # `| 팀장님 개입 시간 | 14분 | 6분 |`: people's time, whatever its cells hold
        return not self._timed_row(start)  # `| MongoDB 쿼리 | 5,000ms | 50ms | 100배 향상 |`: the row measures times

    def _timed_row(self, start: int) -> bool:
        """Whether a number stands in a table row with two or more cells that hold a measured time."""
        lo, hi = self._line(start)
        cache: dict[int, bool] = self.__dict__.setdefault("_timed_rows", {})  # worked out once per row
        if lo not in cache:
            cache[lo] = self._in_row(lo, start) and len(_TIMED_CELL.findall(self.text, lo, hi)) >= 2
        return cache[lo]

    def _relative_form(self, start: int, u_start: int, end: int, kind: str) -> int | None:
        """What the words right at the number decide (a comparative, a baseline, a size, an aside on another
        quantity, a share), or _GO_ON when they decide nothing."""
        text = self.text
        comp = _COMPARATIVE.match(text, end)
        if comp is None and kind == "pct" and _COMPARATIVE_AFTER_ASIDE.match(text, end):
            return end  # the aside keeps its own figure (`Δ: 1233,828 ns`)
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
            if comp_ko.group().strip(" *_)") in ("↑", "⬆"):
                last = _last(_LEX, text[max(0, start - 12) : start])
                if last is not None and last.lastgroup == "nonperf":
                    return None  # `전력효율 40%↑`: up, but of a figure that is not speed
            return None if _PEOPLE_WORK_AFTER.match(text, comp_ko.end()) else end  # not `10배 빠른 개발`
        if text.find("(", max(0, start - 30), start) != -1 and _QUANTITY_THEN_PAREN.search(
            text, max(0, start - 30), start
        ):
            return None  # `35GB (4배 절감)`, `MMLU-Ko 72.3% (Vicuna 대비 2배)`: an aside on the quantity before it
        if kind == "pct" and _KO_SHARE_AFTER.match(text, end):
            return None  # `대기 시간이 40%인 것을 발견`: a share of the time, not its change
        if kind == "pct" and _COUNT_PAIR_AFTER.match(text, end):
            return None  # `58% 감소 (24 → 10)`: a change of a count
        if kind == "pct" and (
            _THRESHOLD_AFTER.match(text, end)
            or (_SUBJECT_AFTER.match(text, end) and _SHARE_OF_SET_BEFORE.search(text, max(0, start - 12), start))
            or _SHARE_TOOK_AFTER.match(text, end)
        ):
            # `+15% 이상이 10분 지속`: a threshold; `측정값 중 50%가`, `23.75% took more than one second`: a share of a set
            return None
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
        return _GO_ON

    def _relative_noun(self, start: int, end: int, kind: str) -> int | None:
        """What the nearest noun in the number's clause decides: a performance figure or another one."""
        text = self.text
        # an aside in parentheses speaks of something else: `30% (on 1536x1536 resolution) speed improvements`
        after = _CONJUNCTION.split(_ASIDE.sub(" ", self._after(end, 80))[:40], 1)[0]
        if "=" in after:
            after = _ASSIGNMENT.sub(" ", after)  # `3.5x from batch=1 to batch=64`: the conditions, not what changed
        before = _after_last_number(self._before(start, 60))
        if kind == "pct" and (_QUALITY_AFTER.search(after) or _model_quality(text, self._bounds(start), start, end)):
            return None  # `within 1-2% performance difference on MMLU, HellaSwag`: a quality score's difference
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
        return self._relative_wide(start, end, kind, after, before, signed, change is not None)

    def _relative_wide(
        self, start: int, end: int, kind: str, after: str, before: str, signed: bool, change: bool
    ) -> int | None:
        """No noun in the clause decided: a change between two conditions, a table cell, or the sentence's and
        the row label's words."""
        if kind == "pct" and signed and re.match(rf"{_SP}+(?i:from){_SP}.+{_SP}to{_SP}", after):
            return end  # `−17% from d0 to d32K`: a change between two conditions
        if kind == "pct" and (not signed or self._flag(start, "count_cell")) and self._bare_cell(start, end):
            return None  # percentages alone in table cells: decided with their row (see rows)
        # no noun in the clause: look wider (the sentence, the row's label) for what the number measures
        wide = self._wide_before(start)
        last = _last(_LEX, wide)
        if last is not None and last.lastgroup == "nonperf" and not self._timed_row(start):
            return None  # `compression ratio (e.g., 8x)`, `| 에너지 사용량 | … | 6.6-23배 감소 |`
        if kind == "xcap":
            return end if last is not None else None  # `by as much as 4X`, not `Ryzen 7 3700X and 3X`
        if kind == "pct":
            # the change may be named before an earlier number of the sentence (`reduces time of the 16MB run by
            # about 10%`; in English: Korean states its change beside the number)
            change = change or (
                last is not None and last.lastgroup == "perf" and not self._flag(start, "hangul")
                and _CHANGE_RX.search(wide) is not None
            )
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
        if self._in_row(lo, start):
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


_BY_BEFORE = screened(_BY_BEFORE)
