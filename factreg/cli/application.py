"""The command line built with typer (factreg/cli/__init__.py reads `app`, `build` and the rest from here).

`main()` builds only the command group a command line names (`MODULES`): `factreg show ID` turns the functions of
cli/facts.py into Click commands, not those of every module, and imports no other command's module. `app`, the
whole command line (help, the reference, the tests), is built on first use."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from typer import _click as click  # typer's own Click: the classes its commands are made of
from typer.core import TyperArgument, TyperCommand, TyperGroup

from factreg.cli import panels
from factreg.cli.base import GLOBAL, internal_error
from factreg.errors import EXIT_INTERNAL, FactregError


class GuardedGroup(TyperGroup):
    """The last resort: an exception no command expected prints one line `Error: internal error: …` and where its
    traceback was written (FACTREG_DEBUG=1 prints it instead), exit code 70. Expected failures (`FactregError`,
    also one raised while the options are parsed) are one line `Error: …` with their own exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except FactregError as exc:
            from factreg.cli.base import print_error

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
        for param in self.params:
            _plain_coercion(param)
        _plain_help(self)
        for name, cmd in self.commands.items():
            # typer's commands and groups (its own Click's Command subclasses) carry a help panel
            cast("TyperCommand | TyperGroup", cmd).rich_help_panel = panels.PANELS.get(name)
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
    _plain_help(cmd)
    if getattr(cmd, "commands", None) is not None:
        return
    names = set()
    for param in cmd.params:
        names.update(param.opts)
        _plain_coercion(param)
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


class _Plain:
    """A parameter's value as typer's own coercion gives it for the plain shapes of factreg's options (text, a flag,
    a `parser=`, a list of text, a path), without building a pydantic TypeAdapter per parameter (pydantic's import
    alone was a third of a read command's CPU). Any other value takes typer's coercion."""

    def __init__(self, param: Any, descriptor: Any) -> None:
        self.param, self.descriptor = param, descriptor

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        info, ann = self.descriptor.parameter_info, self.descriptor.annotation
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        if info.parser is not None and not multi:
            return info.parser(value)
        if ann is str and isinstance(value, str):
            return value
        if ann is bool and isinstance(value, bool):
            return value
        if getattr(ann, "__origin__", None) is list and isinstance(value, (list, tuple)):
            if ann.__args__ == (str,) and all(isinstance(v, str) for v in value):
                return list(value)
            if ann.__args__ == (Path,) and all(isinstance(v, (str, Path)) for v in value):
                return [self._path(v, Path, param, ctx) for v in value]
        if self.descriptor.is_path and ann is Path and isinstance(value, (str, Path)):
            return self._path(value, ann, param, ctx)
        from typer._coercion import build_runtime_param

        return build_runtime_param(self.descriptor).coerce(value, param=param, ctx=ctx)


    def _path(self, value: str | Path, ann: type, param: Any, ctx: Any) -> Any:
        from typer._param_types import coerce_cli_path  # what typer's own path coercion calls

        info = self.descriptor.parameter_info
        return coerce_cli_path(Path(value), info, path_type=info.path_type or ann, param=param, ctx=ctx)


def _plain_coercion(param: Any) -> None:
    """Give a parameter the plain coercion (`_Plain`) when typer coerces it lazily (typer ≥ 0.25; else nothing)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or getattr(param, "_runtime_param", False) is not None or descriptor.is_file \
            or descriptor.is_choice or descriptor.is_ranged or descriptor.is_tuple or descriptor.is_datetime:
        return
    param._runtime_param = _Plain(param, descriptor)


def _plain_help(cmd: Any) -> None:
    """The `--help` option typer makes on first use, given the plain coercion too."""
    made = cmd.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = made(ctx)
        if option is not None:
            _plain_coercion(option)
        return option

    cmd.get_help_option = get_help_option


# command -> the module of factreg/cli that registers it (tests/test_cli_shape.py holds it to the modules)
MODULES: dict[str, str] = {
    "record": "facts", "show": "facts", "list": "facts", "history": "facts", "rm": "facts", "mv": "facts",
    "init": "registry", "env": "registry", "metrics": "registry", "export": "transfer", "import": "transfer",
    "method": "registry", "prune": "registry",
    "bench": "bench", "verify": "verify",
    "probe": "probe", "sweep": "sweep", "status": "status", "changes": "changes", "docs": "docs",
    "compare": "compare", "decision": "decision", "correct": "corrections", "retract": "corrections",
    "report": "report",
    "demo": "demo", "cite": "agents", "mcp": "agents", "completion": "completion", "plugins": "plugins",
}
ORDER = ("facts", "registry", "transfer", "bench", "verify", "probe", "sweep", "status", "changes", "docs", "compare",
         "decision", "corrections", "report", "demo", "agents", "completion", "plugins")


def build(modules: tuple[str, ...] = ORDER, only: str | None = None) -> typer.Typer:
    """The command line with the commands of these modules of factreg/cli (all of them: the whole of it), or of
    those only the command (or group) named `only`."""
    import importlib

    app = typer.Typer(
        name="factreg",
        cls=GuardedGroup,
        help="A registry of performance facts for local LLM servers: every number with its conditions, "
        "re-verified.\n\nThe options below are accepted before the command and after it (`factreg --db X list`, "
        "`factreg list --db X`); NO_COLOR is honoured.",
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for name in modules:
        importlib.import_module(f"factreg.cli.{name}").register(app)
    if only is not None:  # typer turns every registered function's signature into options: only the one named
        app.registered_commands = [c for c in app.registered_commands if c.name == only]
        app.registered_groups = [g for g in app.registered_groups if g.name == only]
    app.callback(invoke_without_command=True)(root)
    return app


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
        from factreg.cli import registry
        from factreg.cli.common import handles_errors

        handles_errors(registry.version)(verbose=verbose, db=db)
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        sys.stdout.write(panels.START_HERE)
        raise typer.Exit(0)


def command_word(args: list[str]) -> str | None:
    """The command a command line names (its first word that is not a global option or its value), or None."""
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--db":
            i += 2
            continue
        if word == "--" or not word.startswith("-"):
            return None if word == "--" else word
        i += 1
    return None


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole command line, built once on first use
        globals()["app"] = whole = build()
        return whole
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """The entry point: only the named command's module is built (the whole command line for help or a typo)."""
    word = command_word(sys.argv[1:]) or ""
    module = MODULES.get(word)
    build((module,), only=word)() if module else build()()
