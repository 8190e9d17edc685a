"""Tables: units in a header row, a row's label or a caption or note beside the table; what a column holds."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable

from factreg.docs.lint.base import _TABLE_SEP, _cell_context, _header_row, in_row
from factreg.docs.lint.columns import (
    _COMPARISON_BEFORE,
    _CONDITION_HEADER,
    _HEADER_UNIT,
    _NOT_PERFORMANCE_UNITS,
    _OTHER_COLUMN,
    _REACHED_COLUMN,
    _TARGET_COLUMN,
    _column_kinds,
)
from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.relative import _Relative
from factreg.docs.lint.vocab import (
    _CHANGE_HEADER,
    _CHANGE_RX,
    _CLOCK_NUM,
    _LEX,
    _LINE_FLAGS,
    _MEASURED_CELL,
    _NUM,
    _PM,
    _SETTING_WORDS,
    _SIGN_BEFORE,
    _SIZE_ROW,
    _SP,
    _SPEEDUP_COLUMN,
    _TARGET_WORDS,
    _VALUE_BEFORE,
    Candidate,
    _last,
    _line_end,
)

# Tables whose unit is in the header row: `| model | pp512 (t/s) |` over `| 7B Q4 | 1234.5 |`. The whole text is
# read (not only the prefilter's windows: a body row holding bare numbers has no unit of its own); a table is found
# by its separator row (base._TABLE_SEP).
_HEADER_NORMAL = {"ms": "ms", "msec": "ms", "millisecond": "ms", "milliseconds": "ms", "밀리초": "ms", "sec": "s",
                  "secs": "s", "seconds": "s", "초": "s"}


_HEADER_NORMAL |= {"min": "min", "mins": "min", "minutes": "min", "ms/tok": "ms/tok", "ms/token": "ms/tok"}
_HEADER_NORMAL |= {"hr": "h", "hrs": "h", "hours": "h", "frames/s": "fps", "frames/sec": "fps"}


_HEADER_NORMAL |= {"s/tok": "s/tok", "s/token": "s/tok", "fps": "fps", "rps": "req/s", "qps": "/s", "iops": "/s", "it/s": "/s"}


_HEADER_NORMAL |= {"ns": "ns", "µs": "µs", "μs": "µs", "âµs": "µs"} | dict.fromkeys(("ns/op", "µs/op", "μs/op", "us/op", "ms/op"), "/op")


_HEADER_NORMAL |= {f"{t}/{per}": "/op" for t in ("ns", "µs", "μs", "us", "ms") for per in ("fn", "iter", "call", "query", "row")}


# A header cell naming the column that holds each row's unit (`| Metric | Task | Value | Unit |`, a benchmark
# report's layout): the row's numbers are in the unit its cell there names.
_UNIT_COLUMN = lazy(r"[ \t*_]*(?:(?i:units?)|단위)[ \t*_]*")


_BARE_CELL = lazy(
    # a number (`1,234.5`, `2,75`, a European `128.654,31`, `138_773`, `74'040`), a range or spread, or a list of runs (`13.7, 12.6`)
    rf"[ \t*_~≈🟩🟨🟥✅⚡🚀]*(?P<n>(?:\d{{1,3}}(?:\.\d{{3}})+,\d+|\d{{1,3}}(?:[_']\d{{3}})+(?:\.\d+)?|\d[\d,]*(?:\.\d+)?)"
    r"(?:[kKM](?=[-–~→]))?"  # `95K–98K`: thousands of a rate, written at each end
    rf"(?:{_SP}?(?:[-–~→…]|->|\.\.\.?|(?i:to)){_SP}?\d[\d,]*(?:\.\d+)?|{_PM}\d[\d,]*(?:\.\d+)?|(?:,{_SP}\d+(?:\.\d+)?)+)?)"
    r"(?:[kKM](?![A-Za-z]))?[ \t*_]*"  # `131K`: thousands of a rate
    # a mark, a note, a change or a ratio after it (pytest-benchmark's `1.6946 (1.23)`: its ratio to the fastest)
    r"(?:(?:✓|✅|❌|⚠️|🟩|🟨|🟥|←[^|]*|\([+−-]?\d[\d.,]*(?:%|[x×])?\))[ \t*_]*)*$"
)


def _header_units(header: str) -> list[tuple[str, str] | None]:
    """For each cell of a table's header row, (unit, kind) when the cell names a time or rate unit, else None; the
    kind is `target` when the cell names a target, a limit or a setting."""
    out: list[tuple[str, str] | None] = []
    cells = header.strip().strip("|").split("|")
    for cell in cells:
        m = _HEADER_UNIT.search(cell)
        if (
            m is None
            or _LINE_FLAGS["media"].search(cell)
            or _STATISTIC_COLUMN.fullmatch(cell)  # `Min`: no minutes
            or _VALUE_BEFORE.search(cell, 0, m.start())  # `every 60 seconds`: a duration the cell names, not a unit
        ):
            out.append(None)
            continue
        word = (m.group("u") or m.group("o") or ("µs" if m.group("us") else "ops/s" if m.group("per") else "s")).lower()
        if "per" in word and not word.startswith("tok"):  # `Frames per Second`, `Requests per second`
            word = "fps" if word.startswith("frames") else "req/s" if word.startswith("req") else "ops/s"
        unit = _HEADER_NORMAL.get(word, "req/s" if word.startswith("req") else "/s" if word == "tps" else "tok/s")
        if (flops := "flop" in word or word.endswith("tops")) or word[-2:] in ("/s", "ps") and word[:2] in ("gb", "tb", "mb"):
            unit = "FLOPS" if flops else "B/s"  # a device's compute (`TFLOP/sec/chip`) or bandwidth
        words = cell.replace("_", " ")  # `timeout_ms`: the words of a snake-case name
        setting = _TARGET_WORDS.search(words) or _SETTING_WORDS.search(words)
        out.append((unit, "target" if setting else "claim"))
    _statistics_after(cells, out)
    _spanned(cells, out)
    return out


def _spanned(cells: list[str], out: list[tuple[str, str] | None]) -> None:
    """Give each empty header cell the unit of the cell before it (`| eval time |     |     | prompt eval time |`:
    one heading over the runs below it, a merged cell written as empty ones), in `out`."""
    for i in range(1, len(cells)):
        if out[i] is None and out[i - 1] is not None and not cells[i].strip(" \t*_"):
            out[i] = out[i - 1]


# A header cell that names only a statistic (`| Mean [s] | Min | Max |`, `| Avg Build Time (ms) | Min | Max |`):
# the statistic of the measured column before it, in its unit.
_STATISTIC_COLUMN = lazy(
    r"[ \t*_]*(?i:min(?:imum)?|max(?:imum)?|mean|median|avg|average|std\.?(?:dev)?|stdev|σ|p\d{2}(?:\.\d)?|"
    r"\d{2}(?:th|%)(?: percentile)?)[ \t*_]*|[ \t*_]*(?:최소|최대|평균|중앙값|표준\s?편차)[ \t*_]*"
)


def _statistics_after(cells: list[str], out: list[tuple[str, str] | None]) -> None:
    """Give each statistic-only header cell with no unit of its own the unit of the measured column right before it
    (over other statistic cells), in `out`."""
    for i, cell in enumerate(cells):
        if out[i] is not None or _STATISTIC_COLUMN.fullmatch(cell) is None:
            continue
        j = i - 1
        while j >= 0 and out[j] is None and _STATISTIC_COLUMN.fullmatch(cells[j]) is not None:
            j -= 1
        before = out[j] if j >= 0 else None
        if before is not None and before[1] == "claim":
            out[i] = before


# A header cell naming a measured rate or latency without its unit (FR155): llama-bench's tests (`pp512`, `tg128`,
# `pp512 new`), `T_PP s` of a batched bench, a latency or percentile (`p99`, `Latency percentile_90 READ`), a speed
# or a throughput (`Prompt Processing Speed`); not a relative speed, a speed-up or a count.
_HEADER_METRIC = lazy(
    r"(?i:^\s*(?:\*\*)?(?:pp|tg)\d+\b|\b(?:cpu|gpu|metal|cuda|vulkan|npu)[ _-]?(?:pp|tg)\d*\b|\bt_(?:pp|tg)\s+s\s*$|\bpercentile(?=_|\b)|\b(?:p(?:10|25|50|75|90|95|99|99\.9)|latency|ttft|tpot|"
    r"itl|throughput|speed|ttf[abt]|lcp|fcp|contentful\s+paint|blocking\s+time|rtf|rtt|real[ -]time\s+factor)\b|(?:time|sec)/op\b)|지연\s?시간|응답\s?시간|처리량|속도"
    # the time a kind of work took (`| eval time |`, `| Indexing time |`, `| save_time |`, `| 빌드 시간 |`)
    r"|(?i:(?<![A-Za-z])(?:eval|prompt[ _]eval|build|load(?:ing)?|run|wall|exec(?:ution)?|processing|inference|"
    r"generation|compile|compilation|render(?:ing)?|save|startup|start-?up|query|indexing|training|import|export|frame|"
    r"response|total|avg|average|mean|median|max|min)"
    r"[ _-]?time(?:s)?(?![A-Za-z])|\btime[ _]taken\b|^\s*(?:startup|start-up|cold[ _-]?start|elapsed?|wall|time\s+(?:with|without|diff)\b.*)\s*$)|(?:빌드|실행|처리|추론|생성|로딩|로드|컴파일|변환|쿼리|조회|학습|인덱싱)\s?시간"
)
_NOT_METRIC = lazy(
    r"(?i:\b(?:relative|speed-?ups?|gain|improvement|ratio|vs\.?|change|diff|delta|count|tokens|n_kv|size|memory|"
    r"score|%)\b|%[ \t]*of\b|Δ|×|배|개선|향상|비율|차이|변화)"
)


_RATIO_COLUMN = lazy(r"[ \t*_]*(?i:(?:time|speed|runtime|latency)[ _-]?ratio|ratio|relative(?:[ \t]*\([^)|]*\))?)[ \t*_]*")
_BASELINE = lazy(r"1(?:\.0+)?")  # a ratio column's baseline, 1 by definition (hyperfine's `Relative`)
_ZERO_BAND = lazy(r"0(?:\.0+)?[ \t]?[-–~][ \t]?\d")  # a range from zero: a rating's band (`| 녹색 (빠름) | 0-2.5 |`)
_RATIO_NOT_TIME = lazy(r"(?i:compress|size|memory|accuracy|recall|score)")


# A column of one numbered run of a repeated measurement (`1회`, `Run 2`, `Trial 3`, `#4`).
_RUN_COLUMN = lazy(r"[ \t*_]*(?:\d{1,2}[ \t]?회(?:차)?|(?i:run|trial|try|attempt|iter(?:ation)?)[ \t]?#?\d{1,2}|#\d{1,2})[ \t*_]*")


def _header_metrics(header: str) -> list[tuple[str, str] | None]:
    """For each cell of a table's header row, (unit, kind) when the cell names a measured rate or latency with no
    unit (_HEADER_METRIC), else None; `target` for a goal, limit or setting column."""
    out: list[tuple[str, str] | None] = []
    cells = header.strip().strip("|").split("|")
    # `| Ratio |` beside columns of times and no column of sizes: the ratio of those times (not a compression ratio)
    timed = not _RATIO_NOT_TIME.search(header) and any(_HEADER_UNIT.search(c) or _HEADER_METRIC.search(c) for c in cells)
    runs = sum(_RUN_COLUMN.fullmatch(c) is not None for c in cells) >= 2  # `| 1회 | 2회 | 3회 |`, `| Run 1 | Run 2 |`
    for cell in cells:
        if runs and _RUN_COLUMN.fullmatch(cell):
            out.append(("", "claim"))  # a numbered run's column: what each run measured, its unit unsaid
            continue
        if _SPEEDUP_COLUMN.fullmatch(cell) or (timed and _RATIO_COLUMN.fullmatch(cell)):
            out.append(("×", "claim"))  # `| Speed-up |` over `| 2.7 |`: a ratio of speed (FR121)
            continue
        m = _HEADER_METRIC.search(cell)
        if m is None or _NOT_METRIC.search(cell) or _OTHER_COLUMN.search(cell) or _LINE_FLAGS["media"].search(cell):
            out.append(None)
            continue
        word = m.group(0).lower()
        rate = word.lstrip("* ").startswith(("pp", "tg")) and " s" not in word or word in ("throughput", "speed")
        target = _TARGET_COLUMN.search(cell) and not _REACHED_COLUMN.search(cell)
        out.append(("tok/s" if rate or word in ("처리량", "속도") else "s", "target" if target else "claim"))
    _statistics_after(cells, out)  # `| 99% percentile | AVG |`: the average of the same latency
    _spanned(cells, out)
    return out


def _tables(text: str) -> Iterable[tuple[str, list[tuple[int, int, bool]]]]:
    """Each table of `text`: its header row (the row above a `|---|` separator) and its body rows as (start, end,
    whether the row starts with a pipe, so that its first cell follows it), up to the first line without a pipe."""
    for header, rows, _ in _tables_at(text):
        yield header, rows


def _tables_from(text: str, sep: re.Match[str]) -> Iterable[tuple[str, list[tuple[int, int, bool]]]]:
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


# A cell of several values of one unit: `12.1/5120.4` (prompt and generation rates under `pp/tg (t/s)`).
_MULTI_CELL = lazy(rf"[ \t*_~≈]*(?P<n>\d[\d,]*(?:\.\d+)?(?:{_SP}?/{_SP}?\d[\d,]*(?:\.\d+)?)+)[ \t*_]*$")

# A heading, caption or note beside a table that names its unit: `(unit: Tokens / second)`, `단위: ms`, `Latency
# (ms)` as a heading, `all times in seconds`.
_CAPTION_UNIT = lazy(
    r"(?i:\bunits?(?:\*\*|__)?[ \t]*[:=][ \t]*(?:\*\*|__)?|단위[ \t]*[:：][ \t]*|"
    r"\b(?:(?:times?|latenc(?:y|ies)|durations?|speeds?|throughput|rates?)[^|\n]{0,30}?\b)?in[ \t]+|^#+[^|\n]*\()"
    r"(?P<u>(?i:ms|msec|milliseconds?|s|secs?|seconds|tok(?:en)?s?[ \t]?/[ \t]?s(?:ec(?:ond)?)?|t/s|tokens?[ \t]per[ \t]second|"
    r"req(?:uest)?s?[ \t]?/[ \t]?s(?:ec)?|requests[ \t]per[ \t]second|[KMGT]i?[Bb](?:its?)?[ \t]?/[ \t]?s(?:ec)?|"
    r"(?:ops|operations|msgs?|messages|queries|it|iterations)[ \t]?(?:/|[ \t]per[ \t])[ \t]?s(?:ec(?:ond)?)?)|초|밀리초|토큰/초)"
    r"(?![A-Za-z])"
)
_CAPTION_NORMAL = {"milliseconds": "ms", "millisecond": "ms", "second": "s", "sec": "s"}


# A column a caption's unit is not the unit of: counts of the run (`| Files |`, `| Threads |`, JMH's `| Samples |`),
# and the columns of other figures, targets and settings (columns.py's _OTHER_COLUMN and _TARGET_COLUMN).
_COUNT_COLUMN = lazy(
    r"(?i:\b(?:files?|threads?|rows?|runs?|rounds?|iterations?|workers?|connections?|concurrency|batch(?:[ _-]?size)?|cnt|forks?|lengths?|"
    r"users?|vus|n|count|samples?|queries|tokens|layers|gpus?|cores?|cpus?|nodes?|version|date)\b)|#|개수|스레드|횟수"
)


def _uncaptioned(cell: str) -> bool:
    """Whether a header cell or a row's label names a count, another figure or a target, whose numbers are not in the
    unit a caption or a unit column names."""
    return any(rx.search(cell) for rx in (_COUNT_COLUMN, _OTHER_COLUMN, _TARGET_COLUMN))


# A duration written as a clock in a column of times (`| Wall Time |` over `2:40.83`, `0:05:23`): minutes and
# seconds, or hours, minutes and seconds.
_CLOCK_CELL = lazy(rf"[ \t*_~≈]*(?P<n>{_CLOCK_NUM})(?:[ \t]*(?i:min|s|h))?[ \t*_]*$")


def _cell_number(cell: str, unit: str = "") -> re.Match[str] | None:
    """The number a bare cell holds: one value, a range or spread, or several values (`12.1/5120.4`); in a column
    of seconds or minutes, also a clock-written duration."""
    return _BARE_CELL.match(cell) or _MULTI_CELL.match(cell) or (_CLOCK_CELL.match(cell) if unit in ("s", "min") else None)


def _caption_unit(text: str, header_lo: int, rows: list[tuple[int, int, bool]]) -> tuple[str, str] | None:
    """(unit, kind) named by a heading, caption or note right before a table's header (the two lines above it,
    over blank lines) or right after its last row; None when none names a time or rate unit."""
    for line in _near_lines(text, header_lo, rows):
        m = _CAPTION_UNIT.search(line)
        if m is not None and not _LINE_FLAGS["media"].search(line):
            word = " ".join(m.group("u").lower().split())
            units = _header_units(f"| {word} |")
            unit = units[0][0] if units and units[0] else "tok/s" if "tok" in word else _CAPTION_NORMAL.get(word, "s")
            return unit, "target" if _TARGET_WORDS.search(line) or _SETTING_WORDS.search(line) else "claim"
    return None


def _near_lines(text: str, header_lo: int, rows: list[tuple[int, int, bool]]) -> list[str]:
    """The heading, caption or note lines right before a table's header (the two lines above it, over blank lines)
    and the line right after its last row, each at most 160 characters and not a table row."""
    near: list[str] = []
    hi = header_lo - 1
    while hi > 0 and len(near) < 2:
        lo = text.rfind("\n", 0, hi) + 1
        line = text[lo:hi].strip()
        if line:
            near.append(line)
        elif near:
            break
        hi = lo - 1
    if rows:
        end = rows[-1][1] + 1
        after = text[end : _line_end(text, end)].strip() if end < len(text) else ""
        near.append(after)
    return [line for line in near if len(line) <= 160 and not line.startswith("|")]


def _header_cells(text: str, skipped: Callable[[int, int], bool]) -> list[Candidate]:
    """Bare numbers in the body cells of tables whose header cell names the unit (FR151), whose row's label does
    (FR153: `| p50 latency (ms) | 412.5 | 398.0 |`) or whose heading, caption or note does (FR154)."""
    out: list[Candidate] = []
    for header, rows, header_lo in _tables_at(text):
        units = _header_units(header)
        metrics = _header_metrics(header)
        caption = None if any(units) else _caption_unit(text, header_lo, rows)
        if any(metrics) and caption is None and any(_OTHER_COLUMN.search(x) for x in _near_lines(text, header_lo, rows)):
            metrics = []  # `### Memory (MB)` over `| model | p50 | p99 |`: percentiles of something else
        head_cells = header.strip().strip("|").split("|")
        unit_col = next((i for i, c in enumerate(head_cells) if _UNIT_COLUMN.fullmatch(c)), None)
        ratio_cols = {i for i, c in enumerate(head_cells) if _RATIO_COLUMN.fullmatch(c)}
        for lo, hi, lead in rows:
            row = text[lo:hi]
            first = row.find("|")
            cells = (row[first + 1 :] if lead else row).split("|")
            label = _header_units(f"|{cells[0]}|")[0] if len(cells) > 1 else None
            near: range | None = None  # a unit column's unit: the three cells before it but counts (JMH's `Samples`)
            if label is None and unit_col is not None and 0 < unit_col < len(cells):
                named = cells[unit_col].strip(" \t*_`").lower()  # `min` there is minutes, not a statistic
                label = ("min", "claim") if named in ("min", "mins") else _header_units(f"|{cells[unit_col]}|")[0]
                near = range(unit_col - 3, unit_col)
            pos = lo + (first + 1 if lead else 0)
            row_metrics = [] if _SIZE_ROW.search(cells[0]) else metrics  # `| Uncompressed | 3,412 |` under `| p50 |`
            label_metric = _row_metric(cells) if label is None else None
            row_caption = None if _uncaptioned(cells[0]) else caption  # `|query length|110|195|`
            for col, cell in enumerate(cells):
                own = label if near is None or col in near and not _uncaptioned(head_cells[col]) else None
                found = _cell_unit(col, units, own, row_caption, row_metrics, label_metric, head_cells)
                if found is not None and (m := _cell_number(cell, found[0])) is not None:
                    a, b = pos + m.start("n"), pos + m.end("n")
                    if not skipped(a, b) and not (col in ratio_cols and _BASELINE.fullmatch(m.group("n"))):
                        kind = "target" if _ZERO_BAND.match(m.group("n")) else found[1]  # `| Good | 0-2.5 |`: a band
                        out.append((a, b, m.group("n"), found[0], kind, found[2]))
                pos += len(cell) + 1
    return out


# A figure with its own unit of time or size in a cell.
_OWN_UNIT = lazy(r"\d[ \t]?(?:ms|s|secs?|µs|μs|us|ns|mins?|[KMGT]i?B|초|분|밀리초)(?![A-Za-z])|\d[ \t]B(?![A-Za-z])")


def _row_metric(cells: list[str]) -> tuple[str, str] | None:
    """(unit, kind) when a row's label names a measured rate or latency with no unit (`| ttft | 0.2233 | 0.4244 |`,
    `| Largest Contentful Paint (LCP) | 2813.26 |`) and no other cell is a sentence (a description of a setting)."""
    if len(cells) < 2 or any(len(c.strip()) > 30 or _OWN_UNIT.search(c) for c in cells[1:]):
        return None  # a sentence; a cell with its own unit (`| TBT | 310 ms | … | 2 |`, `| Gateway Runtime | 2 | 2 GB |`)
    return _header_metrics(f"|{cells[0]}|")[0]


def _cell_unit(
    col: int,
    units: list[tuple[str, str] | None],
    label: tuple[str, str] | None,
    caption: tuple[str, str] | None,
    metrics: list[tuple[str, str] | None],
    label_metric: tuple[str, str] | None,
    head_cells: list[str],
) -> tuple[str, str, str] | None:
    """(unit, kind, rule) of a body cell: from its column's header, else its row's label, else the caption, else
    the metric its column's header names, else the metric its row's label names (a target under a column of goals)."""
    if col < len(units) and (u := units[col]) is not None:
        return (*u, "FR151")
    if col > 0 and label is not None:
        return (*label, "FR153")
    if col > 0 and caption is not None and not (col < len(head_cells) and _uncaptioned(head_cells[col])):
        return (*caption, "FR154")
    if col > 0 and col < len(metrics) and (m := metrics[col]) is not None:
        return (*m, "FR121" if m[0] == "×" else "FR155")
    if col > 0 and label_metric is not None:
        target = col < len(head_cells) and _TARGET_COLUMN.search(head_cells[col])
        return (label_metric[0], "target" if target else label_metric[1], "FR121" if label_metric[0] == "×" else "FR155")
    return None


def _tables_at(text: str) -> Iterable[tuple[str, list[tuple[int, int, bool]], int]]:
    """_tables with the offset of each header row. A separator row among a table's body rows is one of its rows, as
    GFM reads it, not a new table (each row is read once: a file of a thousand one-row tables costs linear time)."""
    walked = 0
    for sep in _TABLE_SEP.finditer(text):
        if sep.start() == 0 or sep.start() < walked:
            continue
        h_lo = text.rfind("\n", 0, sep.start() - 1) + 1
        for header, rows in _tables_from(text, sep):
            walked = rows[-1][1] if rows else sep.end()
            yield header, rows, h_lo


# A cell that is a comparison alone (`| >= |`, `| &lt;= |`): the row is a rule or an alert (`| CPU | >= | 80% | 5분 |`),
# so its durations are how long a condition must hold, targets.
_OPERATOR_CELL = lazy(r"\|[ \t]*(?:>=?|<=?|≥|≤|&gt;=?|&lt;=?|==?)[ \t]*(?=\|)")


# A value cell held to a bound (`| 150ms 이하 |`, `| < 200 ms |`), and any cell holding a figure after the row's label.
_BOUND_VALUE_CELL = lazy(r"\|[ \t*_]*(?:(?:<=?|≤|&lt;=?)[ \t]*\d[^|\n]*|\d[^|\n]*?(?:이하|미만|이내))[ \t*_]*(?=\||$)", re.M)
_FIGURE_CELL = lazy(r"\|[^|\n\d]*\d[^|\n]*(?=\||$)", re.M)
_BARE_NUMBER = lazy(r"\|[ \t*_]*\d[\d,.]*[ \t*_]*")


def _threshold_rows(text: str, found: list[Candidate]) -> list[Candidate]:
    """`found` with the claims of table rows that hold a comparison cell made targets, and those of a row whose
    other figures are all held to bounds (`| /order | 120 | 500ms 이하 | 800ms 이하 |`: the load a goal is set at)."""
    out: list[Candidate] = []
    for c in found:
        if c[4] == "claim":
            lo = text.rfind("\n", 0, c[0]) + 1
            hi = _line_end(text, c[0])
            if in_row(text, lo, c[0]) and (_OPERATOR_CELL.search(text, lo, hi) or _bounds_row(text, lo, hi)):
                c = (c[0], c[1], c[2], c[3], "target", c[5])
        out.append(c)
    return out


def _bounds_row(text: str, lo: int, hi: int) -> bool:
    """Whether every figure of a table row after its label is held to a bound, two of them at least, but one bare
    number (not `| < 2s | < 3s | 33% 개선 |`: the last is a change measured)."""
    start = text.find("|", text.find("|", lo) + 1, hi)  # the label's cell ends here
    if start < 0:
        return False
    bounds = _BOUND_VALUE_CELL.findall(text, start, hi)
    others = [c for c in _FIGURE_CELL.findall(text, start, hi) if c not in bounds]
    return len(bounds) >= 2 and len(others) == 1 and _BARE_NUMBER.fullmatch(others[0]) is not None


def _by_column(text: str, found: list[Candidate]) -> list[Candidate]:
    """`found` with the claims in target columns made targets, and ratios and percentages in columns of other
    figures dropped (see _column_kinds); the header is the row above a table's separator row."""
    changes: dict[int, str | None] = {}  # index in found -> new kind, or None to drop
    for header, rows in _tables(text):
        kinds = _column_kinds(header)
        rules = _CONDITION_HEADER.search(header) is not None
        if not (any(kinds) or rules) or not rows:
            continue
        i = bisect_left(found, (rows[0][0],))
        for lo, hi, lead in rows:
            while i < len(found) and found[i][0] < hi:
                start, unit, kind = found[i][0], found[i][3], found[i][4]
                col = text.count("|", lo, start) - (1 if lead else 0)
                what = kinds[col] if 0 <= col < len(kinds) else None
                if rules and kind == "claim" and _COMPARISON_BEFORE.search(text, text.rfind("|", lo, start) + 1, start):
                    changes[i] = "target"  # `| p99 Latency > 5초 |` under `| 조건 | …`: the alert's threshold
                elif what == "target" and kind == "claim":
                    changes[i] = "target"
                elif what == "other" and unit in _NOT_PERFORMANCE_UNITS:
                    changes[i] = None
                i += 1
    if _OPERATOR_CELL.search(text) or _BOUND_VALUE_CELL.search(text):
        found = _threshold_rows(text, found)
    if not changes:
        return found
    out: list[Candidate] = []
    for i, c in enumerate(found):
        if i not in changes:
            out.append(c)
        elif (new_kind := changes[i]) is not None:
            out.append((c[0], c[1], c[2], c[3], new_kind, c[5]))
    return out


_TIME_UNITS = frozenset({"s", "ms", "min", "us", "µs", "ns", "h", "tok/s", "req/s", "/s", "ms/tok", "s/tok", "fps", "/op"})


class _Tables(_Relative):
    def rows(self, found: list[Candidate]) -> list[Candidate]:
        """Percentages alone in a table cell are claims when their row holds a measured time or rate."""
        if "|" not in self.text or "%" not in self.text:
            return found
        text = self.text
        out = list(found)
        lines_with_times: set[int] = set()
        times: list[int] = []  # where the measured times and rates start
        for c in found:
            if c[4] == "claim" and (c[3] in _TIME_UNITS or c[3] == "×"):
                lines_with_times.add(text.rfind("\n", 0, c[0]) + 1)
                times.extend((c[0],) if c[3] != "×" else ())  # a change's cells hold times or rates, not ratios
        if not lines_with_times:
            return found
        taken = sorted((c[0], c[1]) for c in found)
        starts = [x for x, _ in taken]
        out = _change_cells(text, out, lines_with_times, times)
        for lo in lines_with_times:
            hi = _line_end(text, lo)
            for m in _PCT_CELL.finditer(text, lo, hi):
                a, b = m.start("n"), m.end("n") + 1
                if _overlaps_any(taken, starts, lo, a, b):
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
                named = not _ZERO.match(text, a) and _CHANGE_HEADER.fullmatch(_cell_context(text, a)[2]) is not None
                rule = "FR157" if named or _change_column(text, lo, hi, a, times) else "FR152"  # `| 개선율 |`: the change
                out.append((a, b, m.group("n"), "%", "claim", rule))
        out.sort()
        return out


def _overlaps_any(taken: list[tuple[int, int]], starts: list[int], lo: int, a: int, b: int) -> bool:
    """Whether a finding on the line starting at `lo` (`taken` sorted, `starts` their starts) overlaps a..b."""
    j = bisect_left(starts, b) - 1
    while j >= 0 and taken[j][0] >= lo:
        if a < taken[j][1]:
            return True
        j -= 1
    return False


def _change_cells(text: str, found: list[Candidate], lines: set[int], times: list[int]) -> list[Candidate]:
    """`found` with a percentage another rule took in a before/after row's change column made FR157's (`| 23,420 |
    25,774 | +10.1% |` under `| QPS (main) | QPS (PR) | Change |`), unless its row's cells carry their own units
    (FR125's then: the times it is worked from)."""
    out = list(found)
    for i, c in enumerate(found):
        lo = text.rfind("\n", 0, c[0]) + 1
        if c[3] != "%" or c[4] != "claim" or lo not in lines or not in_row(text, lo, c[0]):
            continue
        hi = _line_end(text, lo)
        if len(_MEASURED_CELL.findall(text, lo, hi)) < 2 and _change_column(text, lo, hi, c[0], times):
            out[i] = (*c[:5], "FR157")
    return out


def _change_column(text: str, lo: int, hi: int, pos: int, times: list[int]) -> bool:
    """Whether the percentage at `pos` is a before/after row's change: in the row's last cell or a column of changes
    (`| Diff % |`), right after two cells that each hold a measured time or rate (`| 서버 응답 시간 | 120ms | 25ms | 79% |`)."""
    bars = [i for i in range(lo, hi) if text[i] == "|"]
    if text[bars[-1] + 1 : hi].strip():
        bars.append(hi)  # a row without its closing pipe
    col = sum(1 for b in bars if b < pos) - 1
    header = _cell_context(text, pos)[2]
    last = col == len(bars) - 2 or _CHANGE_HEADER.fullmatch(header) is not None
    if col < 2 or not last or _ZERO.match(text, pos) or _TARGET_ROW.search(header):
        return False  # no change (`0%`), or the share of a target reached (`| 실제 | 목표 | 달성률 |`)
    if _RATE_OF_OTHER.search(header):
        return False  # `| Success Rate |`: the share of requests that succeeded, not a change
    return all(any(bars[k] < t < bars[k + 1] for t in times) for k in (col - 2, col - 1))


_ZERO = lazy(r"0+(?:\.0+)?%")


_RATE_OF_OTHER = lazy(
    r"(?i:success|error|fail\w*|hit|pass\w*|accuracy|utili[sz]ation|usage|share|cpu|gpu|memory|ram|weight|similarity)"
    r"|성공률|에러율|오류율|실패율|사용률|점유율|적중률|정확도|가중치|유사도"
)


# A row holding a target: a bound alone in a cell (`| < 500ms |`), or words of a target reached (`✅ 목표 달성`).
_TARGET_ROW = lazy(r"\|\s*(?:\*\*)?\s*(?:[<≤]|(?i:under|below)\s)|목표|달성|(?i:target|achiev\w*)")


# A percentage in a row of measured times: its own cell, or with a sign or a change word (`PG +8%`, `(20%)`).
_PCT_CELL = lazy(
    rf"(?:(?<=\|)|(?<=\()|(?<=[+−-])|(?<=\*\*))(?:\*\*|__|~|{_SP}|🚀|⚡|📈|📉|🔥|⬇️|⬆️|↓|↑)*(?P<n>{_NUM}(?:{_SP}?[~–-]{_SP}?{_NUM})?)%"
    rf"(?=(?:\*\*|__|{_SP}|⬇️|⬆️|↓|↑|⚡|빠름|개선|감소|향상|단축|\)|\([^)|]*\))*\|)"
)


def _has_table(text: str) -> bool:
    """Whether the text holds a table (its header's unit may make bare numbers below it claims)."""
    return "|" in text and "--" in text and _TABLE_SEP.search(text) is not None


def _timed_cells(text: str, pos: int) -> int:
    """How many cells of the table row holding `pos`, other than its own, hold a measured time or rate: its unit in
    the cell (`| 1.4s |`) or a bare number under a header naming one (`| 0.059 |` under `| data (ms) |`); none for
    a number in the row's label."""
    lo = text.rfind("\n", 0, pos) + 1
    hi = _line_end(text, pos)
    line = text[lo:hi]
    cells = line.strip().strip("|").split("|")
    col = text.count("|", lo, pos) - (1 if line.lstrip().startswith("|") else 0)
    if col <= 0:
        return 0  # a number in the row's label names the row (`| 8x v5e-256 |`)
    heads = _header_row(text, lo)
    units = _header_units("|".join(heads)) if heads else []
    timed = 0
    for i, cell in enumerate(cells):
        if i == col:
            continue
        unit = units[i] if i < len(units) else None
        if _MEASURED_CELL.search(cell) or (unit is not None and unit[1] == "claim" and _BARE_CELL.fullmatch(cell)):
            timed += 1
    return timed
