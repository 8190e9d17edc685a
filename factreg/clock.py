"""The one clock: every "now" factreg reads comes from here.

`now()` is the registry's present: when a fact was recorded or verified, how old it is, which day a note is
dated. It honours an override, so a run can be told what day it is:

- `FACTREG_NOW=2027-06-01T09:00:00Z` in the environment (the demo tells its story at its own fixed time this way,
  and the tests pin it, so neither depends on the day they run);
- `--as-of DATE` on `status`, `docs check` and `report`, through `as_of()`.

An override freezes the clock at that instant. `elapsed()` and `wall()` are different things: seconds on the real
clocks, for measuring how long something real took (a request, a server's uptime from its process start time).
They never decide a date, so no override applies to them.

A test (`tests/test_clock.py`) forbids reading the wall clock anywhere else in the package.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import time
from collections.abc import Iterator
from datetime import datetime, timezone

from factreg.errors import UsageError

ENV = "FACTREG_NOW"
UTC = timezone.utc
# Times a registry holds: no measurement predates 1970, and four-digit years keep stored times sortable as text.
FIRST_YEAR, LAST_YEAR = 1970, 9998

_pinned: list[datetime] = []  # innermost `as_of()` last


def parse(text: str, what: str = "time") -> datetime:
    """An ISO-8601 date or time with a four-digit year; a time without zone is taken as UTC."""
    value = (text or "").strip()
    try:
        if len(value) < 10 or not value[:4].isdigit() or value[4] != "-":
            raise ValueError(value)
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, TypeError):
        raise UsageError(f"invalid {what} {text!r}: use ISO-8601, e.g. 2026-10-26 or 2026-10-26T02:30:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise UsageError(f"invalid {what} {text!r}: the year must be between {FIRST_YEAR} and {LAST_YEAR}")
    return moment.astimezone(timezone.utc)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdwy])\s*$")


@functools.lru_cache(maxsize=256)
def parse_duration(text: str) -> float:
    """`30d` → seconds. Units: s, m, h, d, w, y (the one syntax of durations: freshness, budgets, `--since 7d`)."""
    match = _DURATION.match(text or "")
    if not match:
        raise UsageError(f"invalid duration {text!r}: use a number and a unit, e.g. 30m, 12h, 30d, 2w")
    return float(match.group(1)) * _UNITS[match.group(2)]


def since(text: str, what: str = "--since") -> datetime:
    """The start of a `--since`: an ISO-8601 date or time, a duration back from now (`7d`, `2w`, `12h`), `today`
    or `yesterday` (from midnight UTC)."""
    from datetime import timedelta

    value = (text or "").strip().lower()
    if value in ("today", "yesterday"):
        midnight = now().replace(hour=0, minute=0, second=0, microsecond=0)
        return midnight - timedelta(days=1 if value == "yesterday" else 0)
    if _DURATION.match(value):
        return now() - timedelta(seconds=parse_duration(value))
    try:
        return parse(text, what)
    except UsageError:
        raise UsageError(f"invalid {what} {text!r}: give a date or time (2026-10-26, 2026-10-26T02:30:00Z), a "
                         "duration back from now (7d, 2w, 12h), today or yesterday") from None


def check_date(text: object, what: str = "date") -> str:
    """`text` when it is exactly a calendar date `YYYY-MM-DD` that `parse` accepts (no time, no trailing
    newline, no other line), else a UsageError."""
    if not isinstance(text, str) or len(text) != 10 or not text.isascii() or text[4::3] != "--" or not (
        text[:4] + text[5:7] + text[8:]
    ).isdigit():
        raise UsageError(f"{what} must be YYYY-MM-DD, got {text!r}")
    try:
        parse(text, what)
    except UsageError:
        raise UsageError(f"{what} must be YYYY-MM-DD, a day of the calendar, got {text!r}") from None
    return text


def now() -> datetime:
    """The present, in UTC: the innermost `as_of()`, else `FACTREG_NOW`, else the wall clock."""
    if _pinned:
        return _pinned[-1]
    override = os.environ.get(ENV)
    if override:
        return parse(override, ENV)
    return datetime.now(timezone.utc)


def iso(moment: datetime | None = None) -> str:
    """`moment` (default: now) as the registry stores times: `2026-10-26T02:30:00Z`."""
    moment = now() if moment is None else moment
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    moment = moment.astimezone(timezone.utc)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def today() -> str:
    """Today's date (`2026-10-26`) by `now()`."""
    return now().strftime("%Y-%m-%d")


@contextlib.contextmanager
def as_of(moment: datetime | str | None) -> Iterator[None]:
    """Within the block, `now()` is `moment` (nothing changes when it is None)."""
    if moment is None:
        yield
        return
    _pinned.append(parse(moment, "--as-of date") if isinstance(moment, str) else moment)
    try:
        yield
    finally:
        _pinned.pop()


def wall() -> float:
    """Seconds since the epoch on the real clock: only for the age of something real, e.g. a process."""
    return time.time()


def elapsed() -> float:
    """A monotonic reading in seconds, for durations."""
    return time.perf_counter()


def realtime_offset_ns(pairs: int = 5) -> int | None:
    """CLOCK_REALTIME minus the monotonic clock of `elapsed()`, in nanoseconds: converts a kernel time stamp (a
    packet's SO_TIMESTAMPNS is CLOCK_REALTIME) to the clock the probe's traces use. None where there is no
    CLOCK_REALTIME (Windows).

    Each of `pairs` reads brackets a realtime read between two monotonic reads; the narrowest bracket wins (the
    others may have been interrupted), and the error is at most half its width (~0.1 µs). NTP slewing does not move
    the offset: the kernel derives both clocks from one time base, and a frequency or offset adjustment (adjtimex)
    changes the rate of CLOCK_MONOTONIC and CLOCK_REALTIME alike; only a step of the wall clock (settimeofday, an
    NTP step, a leap second) moves it, and then by the size of the step.
    """
    realtime = _realtime_beside_monotonic()
    if realtime is None:
        return None
    best: tuple[int, int] | None = None
    for _ in range(max(1, pairs)):
        a = time.perf_counter_ns()
        r = time.clock_gettime_ns(realtime)
        b = time.perf_counter_ns()
        if best is None or b - a < best[0]:
            best = (b - a, r - (a + b) // 2)
    assert best is not None
    return best[1]


@functools.lru_cache(maxsize=1)
def _realtime_beside_monotonic() -> int | None:
    """The CLOCK_REALTIME id when `perf_counter` is CLOCK_MONOTONIC (Linux), else None: the offset means nothing."""
    realtime = getattr(time, "CLOCK_REALTIME", None)
    if realtime is None or time.get_clock_info("perf_counter").implementation != "clock_gettime(CLOCK_MONOTONIC)":
        return None
    return int(realtime)
