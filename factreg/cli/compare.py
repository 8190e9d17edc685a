"""Command: compare (two facts, a ratio of medians; --record stores it as a derived fact)."""

from __future__ import annotations

from typing import Annotated

import typer

from factreg.cli.common import (
    DbOption,
    JsonFlag,
    emit,
    emit_json,
    handles_errors,
    info,
    open_registry,
)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)


@handles_errors
def compare(
    a: Annotated[str, typer.Argument(metavar="A", help="Fact id (optionally ID@VERSION): the numerator.")],
    b: Annotated[str, typer.Argument(metavar="B", help="Fact id (optionally ID@VERSION): the denominator.")],
    allow_different: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-different",
            help="Identity condition allowed to differ, e.g. model (repeat, or comma-separated; "
            "`cold` allows cold vs warm).",
        ),
    ] = None,
    record: Annotated[
        str | None,
        typer.Option(
            "--record", metavar="ID", help="Store the ratio as a derived fact that goes stale when A or B changes."
        ),
    ] = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Compare two facts: ratio of medians with a 95% interval; refuses (exit 1) incomparable facts."""
    from factreg.errors import Findings
    from factreg.measure import compare as cmp
    from factreg.registry import facts
    from factreg.registry.ids import check_id, parse_ref, ref

    if record is not None:
        check_id(record)
    s, reg = open_registry(db, create=False)
    fa = facts.get(reg, *parse_ref(a), config=s.file_config)
    fb = facts.get(reg, *parse_ref(b), config=s.file_config)
    result = cmp.compare(fa, fb, allow_different or [])
    recorded = None
    if record is not None and not result["refused"]:
        recorded = facts.record(reg, cmp.derived_fact(result, fa, fb, record))
        result["recorded"] = ref(recorded["id"], recorded["version"])
    if json_out:
        emit_json(result)
    else:
        emit(cmp.summary_line(result) + "\n")
        emit("".join(f"  - {r['message']}\n" for r in result["reasons"]))
        for w in result["warnings"]:
            info(f"warning: {w['message']}")
        if recorded is not None:
            info(f"recorded {result['recorded']} (derived from {result['a']} and {result['b']})")
    if result["refused"]:
        if record is not None:
            info("nothing recorded: the comparison was refused")
        raise Findings(f"not comparable: {'; '.join(r['key'] for r in result['reasons'])}")
