"""Commands: status — every fact's freshness with its reason; exit 1 at or above the fail level."""

from __future__ import annotations

from typing import Annotated

import typer

from factreg.cli.common import (
    AsOfOption,
    ColumnsOption,
    DbOption,
    FormatOption,
    JsonFlag,
    JsonlFlag,
    LimitOption,
    SinceOption,
    SortOption,
    handles_errors,
)


def register(app: typer.Typer) -> None:
    app.command("status")(status)


@handles_errors
def status(
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="aging|stale|refuted",
            help="Exit 1 when a fact is at or above this level. Severity: fresh = superseded < aging < "
            "stale = unverifiable = conditions_changed = shifted < refuted = retracted.",
        ),
    ] = "stale",
    as_of: AsOfOption = None,
    since: SinceOption = None,
    sort: SortOption = None,
    limit: LimitOption = None,
    columns: ColumnsOption = None,
    json_out: JsonFlag = False,
    jsonl: JsonlFlag = False,
    db: DbOption = None,
    fmt: FormatOption = None,
) -> None:
    """List every fact as fresh, aging, stale, refuted, retracted, conditions_changed, unverifiable, shifted or
    superseded, with why (`shifted`: its history's latest level began after its value and differs from it;
    docs/history.md).

    Decisions that rely on a fact that has since changed, whose driver no longer holds or whose review date has
    passed are listed as `needs review`. A summary line on
    stderr ends every run. Exit 0 when no fact is at or above --fail-on (default stale),
    1 when some are, 2 on a usage or configuration error. --since, --sort and --limit choose the facts shown;
    the summary and the exit code are about every fact.
    """
    from factreg.cli import quick

    code = quick.status(fail_on=fail_on, as_of=as_of, since=since, sort=sort, limit=limit, columns=columns,
                        json_out=json_out, jsonl=jsonl, db=db, fmt=fmt)
    if code:
        raise typer.Exit(code)


