"""What every command shares: option aliases, the error decorator, tables and rows (the typer-free rest, output
and settings, is in cli/base.py and re-exported here).

Everything printed goes through `secrets.redact`: errors, messages, JSON, lines and tables.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from factreg.cli.base import (  # noqa: F401 - re-exported (implicit_reexport in pyproject.toml)
    GLOBAL,
    PIPED_WIDTH,
    Globals,
    check_arguments,
    console,
    emit,
    emit_findings,
    emit_json,
    expected_failure,
    info,
    open_registry,
    print_error,
    restore_text_copy,
    run_checked,
    settings,
    warn_unreadable,
)
from factreg.cli.tables import (  # noqa: F401 - re-exported (implicit_reexport in pyproject.toml)
    NARROWEST,
    WHOLE,
    Bold,
    Column,
    emit_jsonl,
    fit_columns,
    fit_line,
    make_table,
    pick_columns,
    plain_stdout,
    plain_table,
    plain_text,
    print_lines,
    print_table,
    project,
    select_rows,
    terminal_width,
)

if TYPE_CHECKING:

    from factreg.config import Settings

F = TypeVar("F", bound=Callable[..., Any])

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Registry: a SQLAlchemy URL or a SQLite file path. Default: FACTREG_DB, "
                 "then .factreg/registry.db above the current directory, then the user data dir.",
                 show_default=False),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")]
JsonlFlag = Annotated[bool, typer.Option("--jsonl", help="Print one JSON object per line, each written as it is "
                                         "produced.")]


AsOfOption = Annotated[
    str | None,
    typer.Option("--as-of", metavar="DATE", help="Judge freshness as of this date or time (ISO-8601) instead of "
                 "now. Default: FACTREG_NOW when set, else the clock.", show_default=False),
]

# the options of the commands that write files into the project (decision, correct, retract, report)
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Folder to write into (default: the project root, the folder holding .factreg/).",
        show_default=False,
    ),
]
TemplatesOption = Annotated[
    Path | None,
    typer.Option(
        "--templates", help="Folder of templates overriding the shipped ones, file by file.", show_default=False
    ),
]
LangOption = Annotated[
    str | None,
    typer.Option("--lang", help="Language of notes, reports and decisions: en or ko (default: [report] lang, else en).",
                 show_default=False),
]
CommitFlag = Annotated[
    bool,
    typer.Option("--commit", help="Commit exactly the files written (and changed) to the git repo holding them."),
]



def out_folder(s: Settings, out: Path | None) -> Path:
    """The folder a command writes into: --out, else the project root (the folder holding .factreg/)."""
    return Path(out) if out is not None else Path(s.root)


def handles_errors(func: F) -> F:
    """Turn expected failures into one line `Error: …` on stderr and their exit code, and name the rows the readers
    skipped as unreadable (`base.run_checked`), after filling the command's --db, --json and --jsonl from the
    global options."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _apply_globals(kwargs)
        result, failure = run_checked(func, args, kwargs)
        if failure is not None:
            raise typer.Exit(failure)
        return result

    return cast(F, wrapper)


def _apply_globals(kwargs: dict[str, Any]) -> None:
    """Fill a command's --db, --json and --jsonl from the global options when the command was not given them."""
    if "db" in kwargs and kwargs["db"] is None:
        kwargs["db"] = GLOBAL.db
    if "jsonl" in kwargs:
        kwargs["jsonl"] = kwargs["jsonl"] or GLOBAL.jsonl
    if "json_out" in kwargs:
        kwargs["json_out"] = kwargs["json_out"] or GLOBAL.json or (GLOBAL.jsonl and "jsonl" not in kwargs)


_WHOLE = re.compile(r"[+-]?[0-9]{1,18}")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?")


def whole_number(option: str) -> Callable[[Any], int]:
    """A typer `parser` for an integer option: plain digits only (int() would take `1_000` and 20-digit numbers)."""

    def parse(text: Any) -> int:
        if isinstance(text, int) and not isinstance(text, bool):
            return text
        if not isinstance(text, str) or not _WHOLE.fullmatch(text.strip()):
            from factreg.errors import UsageError

            raise UsageError(f"{option} takes a whole number, e.g. 5; got {str(text)[:40]!r}")
        return int(text)

    return parse


def number(option: str) -> Callable[[Any], float]:
    """A typer `parser` for a number option: finite decimal only (float() would take `nan`, `inf` and `1_000`)."""

    def parse(text: Any) -> float:
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            return float(text)
        value = math.inf
        if isinstance(text, str) and _NUMBER.fullmatch(text.strip()):
            value = float(text)
        if not math.isfinite(value):
            from factreg.errors import UsageError

            raise UsageError(f"{option} takes a finite number, e.g. 0.5; got {str(text)[:40]!r}")
        return value

    return parse


def min_uptime(s: Settings) -> float:
    return float(s.min_uptime_s)


FormatOption = Annotated[
    str | None,
    typer.Option("--format", metavar="text|json|github|sarif", help="Output format: text (default), json (as "
                 "--json), github (workflow commands: annotations on a pull request) or sarif (SARIF 2.1.0, for code "
                 "scanning).", show_default=False),
]


# `list`, `status` and `history`: which rows, in which order, with which columns.
LimitOption = Annotated[int | None, typer.Option("--limit", metavar="N", help="Show at most N rows (after --sort).",
                                                 parser=whole_number("--limit"), show_default=False)]
SortOption = Annotated[str | None, typer.Option("--sort", metavar="FIELD", help="Sort by this field (a column or "
                                                "JSON key: value, measured_at, id...); -FIELD sorts descending.",
                                                show_default=False)]
SinceOption = Annotated[str | None, typer.Option("--since", metavar="DATE", help="Only rows measured at or after "
                                                 "this date or time (ISO-8601), or this long ago: 7d, 2w, 12h, "
                                                 "today, yesterday.", show_default=False)]
ColumnsOption = Annotated[str | None, typer.Option("--columns", metavar="FIELD,...", help="Only these columns, in "
                                                   "this order (comma-separated); with --json/--jsonl, these keys.",
                                                   show_default=False)]


