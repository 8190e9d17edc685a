"""Command: demo — the case study replayed on a temporary registry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factreg.cli.common import handles_errors


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


@handles_errors
def demo(
    directory: Annotated[Path | None, typer.Option("--dir", help="Work here instead of a new temp dir.")] = None,
    live: Annotated[bool | None, typer.Option("--live/--no-live",
                                              help="Also run the real llama-bench and llama-server (default: when "
                                                   "installed).")] = None,
) -> None:
    """Replay the case study: record the facts, catch the wrong claims, flag and correct the stale doc."""
    from factreg.cli import app
    from factreg.demo import story as demo_mod
    from factreg.errors import Findings

    def command(args: list[str]) -> int | None:
        result: int | None = app(args, prog_name="factreg", standalone_mode=False)  # the command's exit code
        return result

    _, ok = demo_mod.run(command, directory, live=live)
    if not ok:
        raise Findings("the demo did not go as the case study says: see the steps marked above")
