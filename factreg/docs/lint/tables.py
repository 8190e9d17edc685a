"""Tables: units in a header row, a row's label or a caption or note beside the table; what a column holds."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable

from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.relative import _Relative
from factreg.docs.lint.vocab import (
    _CHANGE_RX,
    _LEX,
    _LINE_FLAGS,
    _NUM,
    _PM,
    _SETTING_WORDS,
    _SIGN_BEFORE,
    _SP,
    _TARGET_WORDS,
    Candidate,
    _last,
    _line_end,
)

# Tables whose unit is in the header row: `| model | pp512 (t/s) |` over `| 7B Q4 | 1234.5 |`. The whole text is
# read (not only the prefilter's windows: a body row holding bare numbers has no unit of its own).
_TABLE_SEP = lazy(r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$")


_HEADER_UNIT = lazy(
    r"(?:^|(?<=[\s(\[/,]))(?P<u>(?i:ms/tok(?:en)?|s/tok(?:en)?|tok(?:en)?s?/s(?:ec)?|t/s|tg/s|pp/s|"
    r"tok(?:en)?s?[ _]per[ _]sec(?:ond)?|req(?:uest)?s?/s(?:ec)?|rps|qps|tps|fps|it/s|ms|msec|secs?|seconds|mins?|"
    r"minutes)|초|밀리초|토큰/초)(?=$|[\s)\],])"
    r"|\((?P<s>s)\)"
)


_HEADER_NORMAL = {"ms": "ms", "msec": "ms", "밀리초": "ms", "sec": "s", "secs": "s", "seconds": "s", "초": "s"}


_HEADER_NORMAL |= {"min": "min", "mins": "min", "minutes": "min", "ms/tok": "ms/tok", "ms/token": "ms/tok"}


_HEADER_NORMAL |= {"s/tok": "s/tok", "s/token": "s/tok", "fps": "fps", "rps": "req/s", "qps": "/s", "it/s": "/s"}


_BARE_CELL = lazy(
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
                        out.append((pos + m.start("n"), pos + m.end("n"), m.group("n"), u[0], u[1], "FR151"))
                pos += len(cell) + 1
    return out


# What a table's column holds, from its header cell: a target, limit or setting (`| Target |`, `| 목표 (1.4.3) |`,
# `| 알람 임계값 |`, `| TTL |`, `| 권장 타임아웃 |`, warning levels), or a figure that is not performance (memory,
# accuracy, size, a share of the total, cost: `| 메모리 사용량 |` over `50-75% 감소`, `| 비중 |` over `72%`).
_TARGET_COLUMN = lazy(
    r"(?i:\b(?:targets?|goals?|slos?|slas?|budgets?|thresholds?|limits?|caps?|alerts?|alarms?|warn(?:ing)?|critical|"
    r"allowed|required|requirements?|timeouts?|ttl|expiry|deadlines?)\b)"
    r"|목표|임계|한도|상한|제한|경고|위험|알람|허용|요구|권장|타임아웃|유효\s?기간|만료"
)


_REACHED_COLUMN = lazy(r"(?i:\b(?:achieved|reached|met|actual)\b)|달성|결과|실측")  # `| 목표 달성 |`: a result


_OTHER_COLUMN = lazy(
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
            out.append((c[0], c[1], c[2], c[3], new_kind, c[5]))
    return out


_TIME_UNITS = frozenset({"s", "ms", "min", "us", "h", "tok/s", "req/s", "/s", "ms/tok", "s/tok", "fps"})


class _Tables(_Relative):
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
                out.append((a, b, m.group("n"), "%", "claim", "FR152"))
        out.sort()
        return out


# A row holding a target: a bound alone in a cell (`| < 500ms |`), or words of a target reached (`✅ 목표 달성`).
_TARGET_ROW = lazy(r"\|\s*(?:\*\*)?\s*(?:[<≤]|(?i:under|below)\s)|목표|달성|(?i:target)")


# A percentage in a row of measured times: its own cell, or with a sign or a change word (`PG +8%`, `(20%)`).
_PCT_CELL = lazy(
    rf"(?:(?<=\|)|(?<=\()|(?<=[+−-])|(?<=\*\*))(?:\*\*|__|~|{_SP}|🚀|⚡|📈|📉|🔥|⬇️|⬆️|↓|↑)*(?P<n>{_NUM}(?:{_SP}?[~–-]{_SP}?{_NUM})?)%"
    rf"(?=(?:\*\*|__|{_SP}|⬇️|⬆️|↓|↑|⚡|빠름|개선|감소|향상|단축|\)|\([^)|]*\))*\|)"
)


def _has_table(text: str) -> bool:
    """Whether the text holds a table (its header's unit may make bare numbers below it claims)."""
    return "|" in text and "--" in text and _TABLE_SEP.search(text) is not None
