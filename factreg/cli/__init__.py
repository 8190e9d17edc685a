"""The command line: a thin layer that parses, calls the core and prints."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from factreg.cli import changes, decisions, demo, docs, facts, probe, registry, status, sweep, verify
from factreg.errors import EXIT_INTERNAL, FactregError


class GuardedGroup(TyperGroup):
    """The last resort: an exception no command expected prints one line `Error: internal error: …` and where its
    traceback was written (FACTREG_DEBUG=1 prints it instead), exit code 70. Expected failures (`FactregError`,
    also one raised while the options are parsed) are one line `Error: …` with their own exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except FactregError as exc:
            from factreg.secrets import redact

            print(redact(exc.line()), file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None
        except Exception as exc:  # noqa: BLE001 - the one place that catches everything
            if type(exc).__module__.split(".")[0] in ("typer", "click"):
                raise  # the parser's own control flow: usage errors, Exit, Abort
            internal_error(exc)
            raise typer.Exit(EXIT_INTERNAL) from None


def internal_error(exc: BaseException) -> None:
    """Report an unexpected exception in one line; the traceback goes to a file (or stderr with FACTREG_DEBUG=1)."""
    import tempfile
    import traceback

    from factreg.secrets import redact

    trace = redact("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    first = (str(exc).splitlines() or [""])[0][:300]
    what = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if os.environ.get("FACTREG_DEBUG") == "1":
        sys.stderr.write(trace)
        where = "traceback above"
    else:
        try:
            fd, path = tempfile.mkstemp(prefix="factreg-traceback-", suffix=".txt")
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
                fh.write(trace)
            where = f"traceback in {path}; FACTREG_DEBUG=1 prints it"
        except OSError:
            where = "no traceback written; FACTREG_DEBUG=1 prints it"
    print(redact(f"Error: internal error: {what} ({where})"), file=sys.stderr)


app = typer.Typer(
    name="factreg",
    cls=GuardedGroup,
    help="A registry of performance facts for local LLM servers: every number with its conditions, re-verified.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

for module in (facts, registry, verify, probe, sweep, status, changes, docs, decisions, demo):
    module.register(app)


def main() -> None:
    app()
