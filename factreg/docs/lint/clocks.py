"""Durations written as a clock (`3:39 min`, `Time Elapsed 00:00:41.91`, GNU time's `0:02.51elapsed`, psql's
`Time: 2126515.516 ms (35:26.516)`): found only where their words say they are durations, never a time of day."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.vocab import _B, _CLOCK_NUM, _E, _SP, BARE_DURATION_RULE, Candidate

if TYPE_CHECKING:
    from factreg.docs.lint.context import _Context

DURATION_RULE = "FR101"

# `3:39`, `00:00:41.91`, `35:26.516`: minutes and seconds, or hours, minutes and seconds (not part of a longer run
# of numbers: a version, a ratio, a date, an IPv6 address).
_CLOCK = lazy(rf"(?<![\w:.,/-])(?P<n1>{_CLOCK_NUM})(?!(?!elapsed)[\w:]|\.\d)")

# What says that a clock is a duration, read after it: a unit of minutes (`takes 3:39 min`), GNU time's `elapsed`.
_MINUTES_AFTER = lazy(rf"{_SP}?(?:(?i:mins?|minutes){_E}|분(?![기의류포산할배석리량야위자모해명노수출란]))")
_ELAPSED_AFTER = lazy(r"elapsed")

# …or read before it, on its line: the name of a time taken (`Time Elapsed 00:00:41.91`, `Total send duration:
# 0:00:15.95`, `walltime=00:08:01`, `Compile time with this change: 2:22`, `Time taken for Onnx model 0:00:00.17`),
# with no other number between them; not a bare `Duration: 02:33`, as often a recording's length.
_KEY_BEFORE = lazy(
    rf"{_B}(?i:(?:time{_SP}?)?elapsed|elapsed{_SP}time|(?:total|send|run|job|build|test|execution|query|request|benchmark)"
    rf"{_SP}duration|wall(?:[- ]?clock)?[ _]?time|walltime|time{_SP}taken|"
    rf"(?:compile|compilation|build|run|total|execution|exec|query|training|test|suite|job)[ _]?times?|runtime|took|takes|"
    rf"taking|finished{_SP}in|completed{_SP}in|done{_SP}in){_E}[^\d\n]{{0,30}}$"
)

# …or a duration in seconds right before it, the clock its reading (`259.20s (~4:19)`, `in 1227.11s (0:20:27)`).
_SECONDS_BEFORE = lazy(rf"\d{_SP}?(?:ms|s|secs?|seconds)[ \t]*\([ \t]*[~≈]?[ \t]*$")

# …or a change from one clock to another on a line that names work timed or its change (`time reduction of 36% (from
# 10:38 to 6:46)`, `Local full suite 5:00 → 1:15`), not a span of the day (`open from 9:00 to 17:00`): a change
# written `from … to` is one that fell, as the hours of a day only rise.
_TO_CLOCK = lazy(rf"{_SP}*(?P<to>→|->|(?i:to)){_SP}*(?P<n1>{_CLOCK_NUM})(?![\w:]|\.\d)")
_TIME_WORD = lazy(
    rf"{_B}(?i:duration|elapsed|took|takes|suites?|builds?|runtime|reduc\w*|faster|slower|speed-?up|improv\w*){_E}|소요|단축"
)

# What makes such a clock a time of day or a setting: a date or `at` right before it, a schedule.
_NOT_BEFORE = lazy(rf"(?:\d{{4}}[-/.]\d\d?[-/.]\d\d?[ T]?|{_B}(?i:at|since|until|by){_SP}|@{_SP}?)$")


def clock_durations(text: str, ctx: _Context, skipped: Callable[[int, int], bool]) -> list[Candidate]:
    """The durations written as a clock in `text`, as claims or targets of FR101 (FR103 for minutes with no word
    of measured work near them)."""
    out: list[Candidate] = []
    taken = -1
    for m in _CLOCK.finditer(text):
        start, end = m.start(), m.end()
        if start < taken or skipped(start, end):
            continue
        lo = text.rfind("\n", 0, start) + 1
        if _NOT_BEFORE.search(text, max(lo, start - 12), start):
            continue
        rule = DURATION_RULE
        if (unit := _MINUTES_AFTER.match(text, end)) is not None:
            end = unit.end()
            rule = DURATION_RULE if ctx.measured(start, end) else BARE_DURATION_RULE
        elif not (
            _ELAPSED_AFTER.match(text, end)
            or _KEY_BEFORE.search(text, max(lo, start - 60), start)
            or _SECONDS_BEFORE.search(text, max(lo, start - 30), start)
        ):
            pair = _TO_CLOCK.match(text, end)
            hi = text.find("\n", end)
            if (
                pair is None
                or pair.group("to").lower() == "to"
                and seconds(pair.group("n1")) >= seconds(m.group("n1"))
                or not _TIME_WORD.search(text, lo, len(text) if hi < 0 else hi)
                or ctx._hypothetical(start)
            ):
                continue
            kind = ctx.spread_kind(start, pair.end())  # the two ends of a change: one claim or one target
            out.append((start, end, m.group("n1"), "s", kind, rule))
            out.append((pair.start("n1"), pair.end("n1"), pair.group("n1"), "s", kind, rule))
            taken = pair.end()
            continue
        if ctx._hypothetical(start):
            continue
        out.append((start, end, m.group("n1"), "min" if end > m.end("n1") else "s", ctx.spread_kind(start, end), rule))
        taken = end
    return out


def seconds(clock: str) -> float:
    """The seconds a clock-written duration stands for (`3:39` is 219)."""
    return float(sum(float(x) * 60**i for i, x in enumerate(reversed(clock.split(":")))))


def may_hold(text: str) -> bool:
    """Whether `text` may hold a duration written as a clock (a cheap test before the whole text is read)."""
    return ":" in text and _CLOCK.search(text) is not None
