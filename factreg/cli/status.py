"""Commands: status — every fact's freshness with its reason; exit 1 at or above the fail level."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from factreg.cli.common import DbOption, JsonFlag, emit_json, handles_errors, info, open_registry


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
            "stale = unverifiable = conditions_changed < refuted.",
        ),
    ] = "stale",
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """List every fact as fresh, aging, stale, refuted, conditions_changed, unverifiable or superseded, with why.

    A summary line on stderr ends every run. Exit 0 when no fact is at or above --fail-on (default stale),
    1 when some are, 2 on a usage or configuration error.
    """
    from factreg import freshness
    from factreg import status as st

    freshness.fails("fresh", fail_on)  # validate --fail-on before opening anything
    s, reg = open_registry(db, create=False)
    facts = st.statuses(reg, s.file_config)
    summary = st.summary(facts, fail_on)
    if json_out:
        emit_json({"facts": facts, "summary": summary})
    elif facts:
        from factreg import fmt

        width = max(len(f["id"]) for f in facts)
        sys.stdout.write(
            "".join(
                f"{f['status']:<18} {f['id']:<{width}}  {fmt.value(f['value'], f['spread'], f['unit'])}  "
                f"{f['status_reason']}\n"
                for f in facts
            )
        )
    info(st.summary_line(summary))
    if summary["failing"]:
        raise typer.Exit(1)
