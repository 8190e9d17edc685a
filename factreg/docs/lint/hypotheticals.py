"""Hypotheticals, illustrations, examples and conditions: numbers that are not reports (`would`, `예를 들어`, `~라면`)."""

from __future__ import annotations

from factreg.docs.lint.base import _Base
from factreg.docs.lint.patterns import lazy, screened
from factreg.docs.lint.vocab import _ASIDE, _B, _E, _HYPOTHETICAL, _SP, _past

# An English aside that opens with an example (`(e.g 10000ms)`, `(for instance 30 s)`): the values in it are examples.
_EXAMPLE_ASIDE = lazy(r"\((?i:e\.g\.?|for example|for instance)[^()]*$")
# A sentence marked as made up by an aside of its own: `… down to ~120 ms (illustrative).`, `6 seconds (hypothetical)`.
_MADE_UP_ASIDE = lazy(r"\([ \t]*(?i:illustrative|hypothetical|made[- ]up|fictional|imaginary)(?:[ \t]+(?i:numbers|figures|values|data|example))?[ \t]*\)")


# A modal and where its clause ends: `would`/`might` make hypothetical only the clause they are in.
_MODAL = lazy(rf"{_B}(?i:would|might){_E}")


_MODAL_CLAUSE_STOP = lazy(rf"[—;()]|{_SP}-{_SP}|{_SP}(?i:so|which){_SP}")


# An illustration or a definition rather than a report: `예를 들어`, `ex)`, `이론적으로`, `생각해 보세요`,
# `p99=500ms이면 … 처리된다는 의미`, `… 수 있다는 것이고` (what a figure means, worked out).
_ILLUSTRATION = lazy(
    r"(?<![가-힣])예\)|(?<![A-Za-z])(?i:ex|e\.g)[.)]|이론적으로|이론상|생각해\s?보|상상해|"
    r"의미(?:한다|합니다|함|이다|입니다)?\s*[.!]?\s*$|뜻(?:한다|합니다)|[다라]는\s?(?:의미|뜻)|수\s?있다는\s?것|수\s?있는\s?것(?:입니다|이다)"
    # a relation stated in general, in the present: `1ms의 지연이 … 손실로 이어지기도 합니다`
    r"|이어진다|이어지(?:기도|며|는|고)"
    # a line labelled as an example: `예시: (개선 전: 1,500 RPS → 개선 후: 4,000 RPS)`
    r"|(?:^|\()\s*(?:\*\*)?예시\s*(?:\*\*)?\s*:"
)


# A Korean condition: a verb or copula ending in `-면` (`줄이면`, `늘어나면`, `요청하면`, `이상이면`), not a noun
# ending in 면 (`측면`, `반면`, `화면`, `표면`, `전면`).
# Where a Korean clause ends: punctuation, the end of an aside, a conjunction (`…지만`, `…는데`, `…고 `).
_KO_CLAUSE_END = lazy(r",(?!\s*(?:[가-힣]{1,3}\s+)?\d)|[.;!?)]|지만|는데|으나|으며|하며|고\s")


_COPULA_IF = lazy(r"[\d.,~\s-]*\S{0,4}?이면")


_KO_CONDITIONAL = lazy(r"(?<![측반화표전후대단방국장정평려])(?<=[\uac00-\ud7a3])면(?=[\s,?!.]|$)")


_FOR_EXAMPLE_KO = lazy(r"예를\s?들(?:어|면)|예컨대|가령")


_KO_CASE = lazy(r"경우|수\s?있")  # `… 20분인 경우`, `… 걸릴 수 있다`: a case or a possibility, said of an example


# A time as the step of a rule of thumb: `1초 느려질 때마다 매출이 1% 감소`, `1초만 빨라져도 전환율이`, `1초 빨라지면,
# 매출이 … 증가한다고 발표했다` (a supposed change and what follows it, however long ago it was said).
_STEP_IF_AFTER = lazy(
    r"\S{1,8}?(?:만|이|가|씩)?\s?(?:더\s?)?(?:빨라|느려|늦어|지연|단축|줄어|늘어|길어)"
    r"(?:지면|져도|지더라도|질\s?때마다|될\s?때마다|되면|되어도|돼도|진다면|된다면)"
)


# A figure multiplied or divided into another (`110 TPS × 5분 × 평균 주문액 50,000원 = 1,650만원`, `1050 / 40 = 26.25`):
# arithmetic shown, not a run.
_MULTIPLIED_AFTER = lazy(r"[\d.,]+\s*[A-Za-z가-힣/]{0,8}\s+[×✕/]\s[^=|\n]{1,40}?=(?!=)")


# A result supposed to explain how to read one: `If a result says that CQEngine is 1600% faster than iteration, …`.
_SUPPOSED_RESULT = lazy(rf"{_B}(?i:if){_SP}+(?i:a|the){_SP}+(?i:result|benchmark|number|figure|score){_SP}+(?i:says|shows|reads)")


# `"응답 시간이 2초로 증가했다"처럼`: a quoted example of what one could say
_QUOTE_OPEN = lazy(r"[\"“][^\"”]*$")


_QUOTE_EXAMPLE = lazy(rf"^[^\"”]*[\"”]{_SP}?(?:처럼|같은|같이|과{_SP}같|와{_SP}같|면|(?i:like|such as){_E})")


class _Hypotheticals(_Base):
    def _hypothetical(self, start: int) -> bool:
        """Whether the sentence holding a number is hypothetical (`would`, `for instance`, `~라면`), an
        illustration (`예를 들어`, `이론적으로`, `…를 의미한다`) or, in Korean, a condition whose outcome is not
        reported as seen (`2분으로 줄이면?`, `5분까지 늘어나면`; `캐시를 쓰면 … 줄었다` is a fact)."""
        if _MULTIPLIED_AFTER.match(self.text, start, min(len(self.text), start + 80)) or _SUPPOSED_RESULT.search(
            self.text, self._line(start)[0], start
        ):
            return True
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
        if not hangul and _MADE_UP_ASIDE.search(before + after):
            return True
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
        if _ILLUSTRATION.search(before + after) is not None or _STEP_IF_AFTER.match(after):
            return True
        supposed = _KO_CONDITIONAL.search(sentence) or _KO_CASE.search(sentence)
        if _FOR_EXAMPLE_KO.search(before) and supposed and not _past(sentence):
            # `예를 들어 … 5분간 캐싱하면, 5분 동안 …`, `예를 들어, … 20분인 경우`, `예를들어 … 30초가 걸릴 수 있다`: an
            # example worked out on a condition or a possibility
            return True
        # the number inside the condition (before its `-면`, in the same clause), not in what follows from it
        clause = _KO_CLAUSE_END.split(after, maxsplit=1)[0]
        cond = _KO_CONDITIONAL.search(clause)
        if cond is None or _COPULA_IF.match(clause) is not None:
            return False  # `1~2분이면 충분하다`: how long it takes, said as enough
        return not _past(sentence)


_QUOTE_OPEN = screened(_QUOTE_OPEN)


_QUOTE_EXAMPLE = screened(_QUOTE_EXAMPLE)
