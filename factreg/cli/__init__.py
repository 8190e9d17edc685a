"""The command line: a thin layer that parses, calls the core and prints."""

from __future__ import annotations

import copy
import os
import sys
from typing import Annotated, Any

import typer
from typer import _click as click  # typer's own Click: the classes its commands are made of
from typer.core import TyperArgument, TyperGroup

from factreg.cli import (
    agents,
    changes,
    completion,
    decisions,
    demo,
    docs,
    facts,
    panels,
    plugins,
    probe,
    registry,
    status,
    sweep,
    verify,
)
from factreg.cli.common import GLOBAL
from factreg.errors import EXIT_INTERNAL, FactregError


class GuardedGroup(TyperGroup):
    """The last resort: an exception no command expected prints one line `Error: internal error: …` and where its
    traceback was written (FACTREG_DEBUG=1 prints it instead), exit code 70. Expected failures (`FactregError`,
    also one raised while the options are parsed) are one line `Error: …` with their own exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except FactregError as exc:
            from factreg.cli.common import print_error

            print_error(exc)
            raise typer.Exit(exc.exit_code) from None
        except Exception as exc:  # noqa: BLE001 - the one place that catches everything
            if type(exc).__module__.split(".")[0] in ("typer", "click"):
                raise  # the parser's own control flow: usage errors, Exit, Abort
            internal_error(exc)
            raise typer.Exit(EXIT_INTERNAL) from None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        own = {p.name: p for p in self.params if p.name}
        for name, cmd in self.commands.items():
            cmd.rich_help_panel = panels.PANELS.get(name)  # type: ignore[attr-defined]
            _shape(cmd, own)

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        GLOBAL.reset()  # every run starts from the defaults (tests run many in one process)
        return super().make_context(*args, **kwargs)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands in panels by job (panels.PANELS), each panel in the order of the table."""
        by_panel: dict[str, list[tuple[str, str]]] = {}
        commands = [(n, c) for n in self.list_commands(ctx) if (c := self.get_command(ctx, n)) and not c.hidden]
        if not commands:
            return
        limit = formatter.width - 6 - max(len(n) for n, _ in commands)
        order = {name: i for i, name in enumerate(panels.PANELS)}
        for name, cmd in sorted(commands, key=lambda nc: order.get(nc[0], len(order))):
            by_panel.setdefault(panels.PANELS.get(name, "Other"), []).append((name, cmd.get_short_help_str(limit)))
        for panel in [*panels.PANEL_ORDER, "Other"]:
            if panel in by_panel:
                with formatter.section(panel):
                    formatter.write_dl(by_panel[panel])


class _Argument(TyperArgument):
    """An argument whose help shows its metavar (`ID`) without a python type after it (`ID <str>`)."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


def _global_option(name: str) -> Any:
    """A callback storing a global option given after the command, when it was given (not its default)."""

    def store(ctx: Any, param: Any, value: Any) -> None:
        if ctx.get_parameter_source(param.name) not in (None, click.core.ParameterSource.DEFAULT):
            setattr(GLOBAL, name, value)

    return store


def _shape(cmd: Any, root: dict[str, Any]) -> None:
    """Readable metavars on every option and argument, and the global options a command lacks (copies of the root
    ones, hidden: they are described once, in `factreg --help`)."""
    for sub in getattr(cmd, "commands", {}).values():
        _shape(sub, root)
    if getattr(cmd, "commands", None) is not None:
        return
    names = set()
    for param in cmd.params:
        names.update(param.opts)
        if param.param_type_name == "argument":
            if type(param) is TyperArgument:
                param.__class__ = _Argument
            if param.metavar is None:
                param.metavar = (param.name or "value").upper()
        elif param.param_type_name == "option" and not param.is_flag and param.metavar is None:
            long = max(param.opts, key=len)
            bare = getattr(param, "bare_type", lambda: "str")()
            bare = bare[5:-1] if bare.startswith("list[") else bare
            param.metavar = panels.METAVARS.get(long) or panels.TYPE_METAVARS.get(bare, "TEXT")
    for name, flag in (("db", "--db"), ("quiet", "--quiet"), ("color", "--color")):
        if flag not in names and name in root:
            extra = copy.copy(root[name])
            extra.hidden, extra.expose_value, extra.callback = True, False, _global_option(name)
            cmd.params.append(extra)


def internal_error(exc: BaseException) -> None:
    """Report an unexpected exception in one line; the traceback goes to a file (or stderr with FACTREG_DEBUG=1)."""
    import tempfile
    import traceback

    from factreg.secrets import redact
    from factreg.terminal import visible

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
    print(visible(redact(f"Error: internal error: {what} ({where})")), file=sys.stderr)


app = typer.Typer(
    name="factreg",
    cls=GuardedGroup,
    help="A registry of performance facts for local LLM servers: every number with its conditions, re-verified.\n\n"
    "The options below are accepted before the command and after it (`factreg --db X list`, `factreg list --db X`); "
    "NO_COLOR is honoured.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

for module in (facts, registry, verify, probe, sweep, status, changes, docs, decisions, demo, agents, completion,
               plugins):
    module.register(app)


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version of factreg and of the registry's "
                                          "schema, then exit (with --verbose: also the llama.cpp build found).")
                       ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="With --version: more detail.")] = False,
    db: Annotated[str | None, typer.Option("--db", metavar="URL|FILE", help="Registry for any command (a "
                                           "SQLAlchemy URL or a SQLite file), as the command's own --db.",
                                           show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="JSON on stdout, for any command that prints it.")
                        ] = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON object per line (list, status, history).")
                     ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary or progress lines on stderr "
                                        "(errors still are).")] = False,
    color: Annotated[bool | None, typer.Option("--color/--no-color", help="Colour even when piped, or never. "
                                               "Default: on a terminal unless NO_COLOR is set.",
                                               show_default=False)] = None,
) -> None:
    GLOBAL.db, GLOBAL.json, GLOBAL.jsonl, GLOBAL.quiet, GLOBAL.color = db, json_out, jsonl, quiet, color
    if version:
        from factreg.cli.common import handles_errors

        handles_errors(registry.version)(verbose=verbose, db=db)
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        sys.stdout.write(panels.START_HERE)
        raise typer.Exit(0)


def main() -> None:
    app()
