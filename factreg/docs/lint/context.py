"""The whole reading of a number: its unit's family decides which rules read it."""

from __future__ import annotations

import re

from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.tables import _Tables
from factreg.docs.lint.vocab import (
    _B,
    _E,
    _FRACTION,
    _LABEL_UNIT,
    _METRIC_UNIT,
    _PER_SECOND,
    _PREFIX_X,
    _RELATIVE,
    _RTF,
    _SETTING_WORDS,
    _SP,
    _TEST_THEN_NUMBER,
    _UNIT_BEFORE,
    Candidate,
)

_DURATIONS = frozenset({"s", "ms", "min", "us", "h", "d"})


_SPAN_KINDS = frozenset({"rate", "req", "persec", "mstok", "stok", "bw", "bits", "flops", "fps"})


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


class _Context(_Tables):
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

    def extra(self, m: re.Match[str], rx: re.Pattern[str]) -> Candidate | None:
        """The claim or target a match of an extra pattern `rx` (one of vocab._EXTRA) is, or None."""
        start = m.start("n1")
        if rx is _PER_SECOND:
            num_end = m.end("n3") if m.group("n3") is not None else m.end("n1")
            start = m.start()
            unit = "tok/s" if m.group("what") == "토큰" else "/s"  # 초당 40건: requests or items per second
            return (start, m.end(), self.text[m.start("n1") : num_end], unit, self.spread_kind(start, m.end()), "FR111" if unit == "tok/s" else "FR112")
        if rx is _PREFIX_X:
            start = m.start()
            if self._relative(m.start(), m.start(), m.start(), "x") is None and not self._bare_cell(start, m.end()):
                return None
            return (start, m.end(), m.group("n1"), "×", "claim", "FR121")
        if rx is _TEST_THEN_NUMBER:
            return (start, m.end(), m.group("n1"), "tok/s", self.spread_kind(start, m.end()), "FR141")
        if rx is _LABEL_UNIT:
            return (start, m.end(), m.group("n1"), "", self.spread_kind(start, m.end()), "FR142")
        if rx is _RTF:
            return (start, m.end(), m.group("n1"), "RTF", self.spread_kind(start, m.end()), "FR143")
        if rx is _UNIT_BEFORE:
            u = m.group("u")
            unit = "FLOPS" if u.endswith("FLOPS") else "/s"
            return (start, m.end(), m.group("n1"), unit, self.spread_kind(start, m.end()), "FR113" if unit == "FLOPS" else "FR112")
        if rx is _FRACTION:
            if self._hypothetical(start):
                return None
            end = m.end("n1")
            return (start, end, m.group("n1"), "×", self.spread_kind(start, end), "FR121")
        if rx is _METRIC_UNIT:
            name = self.text[max(self._line(start)[0], m.start() - 80) : m.start()]
            if _SETTING_WORDS.search(name.replace("_", " ")):
                return None  # `request_timeout_seconds 30`: a setting
            return (start, m.end(), m.group("n1"), "s" if m.group("unit") == "seconds" else "ms", "claim", "FR144")
        return (start, m.end(), m.group("n1"), "tok/s", self.spread_kind(start, m.end()), "FR141")
