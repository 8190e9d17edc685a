"""Rows and tables, free of typer: which rows `list`, `status` and `history` show, in which order, with which
columns (`Column`, `select_rows`, `pick_columns`, `project`), and how they are printed — JSON lines, or a table
whose characters are written as rich would print them when those are known (piped), else by rich. cli/common.py
re-exports all of it; cli/quick.py uses it without typer.

Everything printed goes through `secrets.redact`."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from factreg import secrets
from factreg.cli.base import GLOBAL, PIPED_WIDTH, console
from factreg.secrets import redact
from factreg.terminal import visible

if TYPE_CHECKING:
    from rich.table import Table


def make_table(**kwargs: Any) -> Table:
    """A rich table (no box, no edge padding by default) whose string cells are redacted as rows are added."""
    from rich.table import Table

    class RedactingTable(Table):
        def add_row(self, *renderables: Any, **kw: Any) -> None:
            super().add_row(*(visible(redact(r)) if isinstance(r, str) else r for r in renderables), **kw)

    return RedactingTable(**{"box": None, "pad_edge": False, **kwargs})


@dataclass
class Column:
    """A table column: its name (for --columns and --sort), the JSON key it shows and how a row renders in it."""

    name: str
    key: str
    render: Callable[[Any], str]
    justify: Literal["left", "right"] = "left"


def select_rows(rows: list[Any], columns: list[Column], sort: str | None = None, since: str | None = None,
                limit: int | None = None, date_key: str = "measured_at") -> list[Any]:
    """The rows measured since `since`, sorted by `sort` (a column name or JSON key, `-` first: descending), then
    at most `limit` of them."""
    from factreg import clock
    from factreg.errors import UsageError

    if limit is not None and limit < 0:
        raise UsageError(f"--limit takes a whole number ≥ 0, got {limit}")
    if since is not None:
        start = clock.since(since, "--since")
        rows = [r for r in rows if r.get(date_key) and clock.parse(r[date_key]) >= start]
    if sort:
        descending = sort.startswith("-")
        name = sort.lstrip("-")
        keys = {c.name: c.key for c in columns}
        key = keys.get(name, name)
        if rows and not any(key in r for r in rows) or not rows and name not in keys:
            raise UsageError(f"--sort {sort[:40]!r}: no such field; choose one of {', '.join(keys)}")
        if any(isinstance(r.get(key), (dict, list)) for r in rows):
            raise UsageError(f"--sort {sort[:40]!r}: this field holds several values; sort by a plain one")
        present = [r for r in rows if r.get(key) is not None]
        missing = [r for r in rows if r.get(key) is None]  # rows without the field: last either way
        present.sort(key=lambda r: (isinstance(r[key], str), r[key]), reverse=descending)
        rows = present + missing
    return rows if limit is None else rows[:limit]


def pick_columns(columns: str | None, available: list[Column], default: list[str] | None = None) -> list[Column]:
    """The columns named by --columns (default: `default`, else all), checked against those available."""
    from factreg.errors import UsageError

    by_name = {c.name: c for c in available}
    if columns is None:
        return [by_name[n] for n in default] if default else available
    names = [n.strip() for n in columns.split(",") if n.strip()]
    unknown = [n for n in names if n not in by_name]
    if unknown or not names:
        raise UsageError(f"--columns {columns[:60]!r}: choose among {', '.join(by_name)}")
    return [by_name[n] for n in names]


def project(row: Any, columns: list[Column] | None) -> Any:
    """A row's JSON object, only the keys of `columns` when --columns was given."""
    return row if columns is None else {c.key: row.get(c.key) for c in columns}


def emit_jsonl(rows: Any) -> None:
    """One JSON object a line on stdout, each written (and flushed) as it is produced."""
    from factreg import jsontext

    for row in rows:
        sys.stdout.write(jsontext.printable(secrets.dumps(row, ensure_ascii=False, allow_nan=False)) + "\n")
        sys.stdout.flush()


# The columns a table never shortens: what people copy into the next command (as gh keeps a number and a title).
WHOLE = ("id", "version")
# The narrowest a shortened column gets before it is dropped instead (its header and `…` still readable).
NARROWEST = 8


def fit_columns(columns: list[Column], cells: list[list[str]], width: int) -> list[tuple[int, int]]:
    """The columns that fit a terminal `width`, as (index, width): every column whose cells are whole (`WHOLE`)
    keeps its full width; the others shrink to NARROWEST at the least (the leftmost get their full width first), and
    the last of them are dropped while even that does not fit. Rich shortens a cell wider than its column with `…`."""
    gap = 2  # rich pads each cell by one on either side: two between columns
    full = [max([len(c.name), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    whole = [c.name in WHOLE for c in columns]
    least = [w if keep else min(w, NARROWEST) for keep, w in zip(whole, full, strict=True)]
    kept = list(range(len(columns)))
    while len(kept) > 1 and sum(least[i] for i in kept) + gap * (len(kept) - 1) > width:
        droppable = [i for i in kept if not whole[i]]
        if not droppable:
            break
        kept.remove(droppable[-1])
    rest = width - gap * (len(kept) - 1) - sum(least[i] for i in kept)
    given = {i: least[i] for i in kept}
    for i in kept:
        extra = max(0, min(full[i] - given[i], rest))
        given[i] += extra
        rest -= extra
    return [(i, given[i]) for i in kept]


def fit_line(whole: str, rest: str, width: int | None) -> str:
    """`whole` + `rest`, with `rest` shortened with `…` to fit `width` (None: not on a terminal, the line is whole);
    `whole` is never cut (it holds the id)."""
    if width is None or len(whole) + len(rest) <= width:
        return whole + rest
    room = width - len(whole)
    return whole + (rest[:room - 1].rstrip() + "…" if room > 1 else "")


def plain_stdout() -> bool:
    """Whether stdout is piped with nothing forcing a terminal (--color, FORCE_COLOR or TTY_COMPATIBLE set to any
    value: then rich decides): rich would print plain characters, no escape codes, at least `PIPED_WIDTH` wide."""
    import os

    return (GLOBAL.color is not True and "FORCE_COLOR" not in os.environ and "TTY_COMPATIBLE" not in os.environ
            and not sys.stdout.isatty())


def terminal_width() -> int | None:
    """The terminal's width when stdout is one, else None (piped: whole lines)."""
    if plain_stdout():
        return None  # piped: no need to load rich to learn it
    out = console()
    return out.width if out.is_terminal else None


# Piped output is never narrower than this (`console`): a line or table that fits is printed whole by rich.
# Characters rich gives one column each (tests/test_cli_plain.py checks every one against rich.cells): printable
# ASCII, Latin-1 and Latin Extended-A but the soft hyphen, dashes, quotes, bullets and the ellipsis, arrows, − ≤ ≥.
_ONE_COLUMN = ((0x20, 0x7E), (0xA1, 0xAC), (0xAE, 0x17F), (0x2010, 0x2027), (0x2190, 0x2199), (0x2212, 0x2212),
               (0x2264, 0x2265))


# The emoji names of digits only that rich knows (tests/test_cli_plain.py checks them against rich's table).
_DIGIT_EMOJI = ("100", "1234")


@functools.cache
def _emoji_code() -> re.Pattern[str]:
    """What rich takes for an emoji code (`:smile:`; rich._emoji_replace's pattern), compiled on first use."""
    return re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")


def _no_emoji(text: str) -> bool:
    """Whether rich leaves every `:name:` of `text` as it is: each name empty or digits (a time's `:30:`) that
    name no emoji; any other name may be one."""
    return all(name == "" or (name.isascii() and name.isdigit() and name not in _DIGIT_EMOJI)
               for _, name, _ in _emoji_code().findall(text))


def plain_text(text: str, cell: bool = True) -> bool:
    """Whether rich prints `text` as it is, one column a character: no character of another width, no emoji code,
    no space at either end of a table's `cell` (rich strips a right-justified cell's) nor at a line's end."""
    if (text != text.strip(" ")) if cell else text.endswith(" "):
        return False
    if not (text.isascii() and text.isprintable()) and not all(
            any(lo <= ord(ch) <= hi for lo, hi in _ONE_COLUMN) for ch in text):
        return False
    return ":" not in text or _no_emoji(text)


def plain_table(names: list[str], justify: list[str], cells: list[list[str]]) -> str | None:
    """The text rich prints for a table of `make_table()` (no box, no edge padding) with these headers and cells
    when piped, or None when rich may print something else (a cell `plain_text` refuses, a justification other
    than left or right, wider than `PIPED_WIDTH`): then rich prints it."""
    if not names or any(j not in ("left", "right") for j in justify) or not all(plain_text(c) for r in [names, *cells] for c in r):
        return None
    widths = [max(len(r[i]) for r in [names, *cells]) for i in range(len(names))]
    if sum(widths) + 2 * (len(widths) - 1) > PIPED_WIDTH:
        return None
    return "".join("  ".join(c.rjust(w) if j == "right" else c.ljust(w) for c, w, j in zip(r, widths, justify,
                                                                                         strict=True)) + "\n"
                   for r in [names, *cells])


class Bold(str):
    """A part of a line printed bold on a terminal (`print_lines`)."""


def print_lines(lines: list[str | list[str]]) -> None:
    """Lines for people on stdout, redacted: a string is wrapped at the width, a list of parts (a `Bold` part bold
    on a terminal) never is. Piped, the characters themselves when rich would print them as they are (no secret to
    mask, `plain_text`, a wrapped line within `PIPED_WIDTH`, no backslash in parts, which rich's markup escaping
    doubles at a part's end); else rich prints them."""
    joined = [line if isinstance(line, str) else "".join(line) for line in lines]
    if plain_stdout() and all(
            plain_text(t, cell=False) and visible(redact(t)) == t
            and (len(t) <= PIPED_WIDTH if isinstance(line, str) else "\\" not in t)
            for t, line in zip(joined, lines, strict=True)):
        sys.stdout.write("".join(t + "\n" for t in joined))
        return
    from rich.markup import escape

    out = console()
    for line in lines:
        if isinstance(line, str):
            out.print(line)
        else:
            out.print("".join(f"[bold]{escape(p)}[/bold]" if isinstance(p, Bold) else escape(p) for p in line),
                      markup=True, soft_wrap=True)


def print_table(rows: list[Any], columns: list[Column]) -> None:
    """The rows as a table that fits the terminal's width without ever breaking an id: the id (and a history's
    version) stays whole on one line, other columns are shortened with `…` or, on a very narrow terminal, dropped
    from the right; piped, lines are whole."""
    cells = [[c.render(row) for c in columns] for row in rows]
    if plain_stdout():  # the characters rich would print, without loading rich (when they are known)
        text = plain_table([c.name for c in columns], [c.justify for c in columns],
                           [[visible(redact(x)) for x in r] for r in cells])
        if text is not None:
            sys.stdout.write(text)
            return
    out = console()
    kept: list[tuple[int, int | None]] = (list(fit_columns(columns, cells, out.width)) if out.is_terminal
                                          else [(i, None) for i in range(len(columns))])
    table = make_table()
    if out.is_terminal:  # exactly the widths chosen, even when an id alone is wider than the terminal
        table.width = sum(w or 0 for _, w in kept) + 2 * (len(kept) - 1)
    for i, width in kept:
        c = columns[i]
        table.add_column(c.name, justify=c.justify, no_wrap=True, width=width,
                         overflow="ignore" if c.name in WHOLE else "ellipsis")
    for r in cells:
        table.add_row(*(r[i] for i, _ in kept))
    out.print(table, crop=False)
