"""Rules of tables: units in the header row, percentages in rows of measured times (reading: factreg/docs/lint/tables.py)."""

from __future__ import annotations

from factreg.docs.lint.rules import Rule

EXAMPLES_FR151 = (
    (
        "a column of rates",
        "| model | decode (t/s) |\n|---|---|\n| q4 | 52.5 |",
        "52.5",
        "| model | weights (GB) |\n|---|---|\n| q4 | 52.5 |",
    ),
    (
        "a column of goals",
        "| model | decode (t/s) |\n|---|---|\n| q4 | 31.2 |",
        "31.2",
        "| model | goal decode (t/s) |\n|---|---|\n| q4 | 31.2 |",
    ),
)

EXAMPLES_FR152 = (
    ("decorated cell", "| 응답 시간 | 300ms | 90ms | 🚀 70% |", "70%", "| 메모리 | 3GB | 1GB | 🚀 66% |"),
)

RULES = (
    Rule(
        "FR151",
        "table-header-unit",
        "A bare number in a table column whose header names a time or rate unit: `| pp512 (t/s) |` over `| 1234.5 |`.",
        (
            "Reads each bare number (emphasis, `~`, ranges and spreads allowed) in a column whose header cell "
            "names a time or rate unit; a column headed by a target, limit or setting holds targets (FR201), a "
            "column of media lengths nothing."
        ),
        EXAMPLES_FR151,
        preview=True,
    ),
    Rule(
        "FR152",
        "table-row-percent",
        "A percentage alone in a table cell of a row of measured times: `| 120 ms | 95 ms | -21% |`.",
        (
            "Reads percentages in their own cell (or with a sign or change word) in a row that holds a measured "
            "time or rate; leaves rows labelled by a non-performance noun and the share of a target reached (`| < "
            "500ms | 150ms | 333% |`)."
        ),
        EXAMPLES_FR152,
        preview=True,
    ),
)
