"""What every command shares that needs no typer: the values of the global options, the lines printed (data on
stdout, messages on stderr, `Error: …`), the settings and the registry opened, and how a command's failure becomes
its exit code. cli/common.py adds typer's option aliases and its error decorator; cli/quick.py runs the plain forms
of the commands called most without importing typer at all.

Everything printed goes through `secrets.redact`: errors, messages, JSON, lines and tables.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factreg import secrets
from factreg.errors import FactregError
from factreg.secrets import redact
from factreg.terminal import visible

if TYPE_CHECKING:
    from rich.console import Console

    from factreg.config import Settings
    from factreg.registry.store import Registry

PIPED_WIDTH = 160


@dataclass
class Globals:
    """The options every command accepts, before the command (`factreg --db X list`) or after it
    (`factreg list --db X`); a command's own option wins over the global one."""

    db: str | None = None
    json: bool = False
    jsonl: bool = False
    quiet: bool = False
    color: bool | None = None  # None: rich decides (a terminal, NO_COLOR)

    def reset(self) -> None:
        self.db, self.json, self.jsonl, self.quiet, self.color = None, False, False, False, None


GLOBAL = Globals()


def print_error(exc: FactregError) -> None:
    """The one `Error: …` line of an expected failure on stderr: redacted, control characters made visible."""
    print(visible(redact(exc.line())), file=sys.stderr)


def check_arguments(values: list[Any]) -> None:
    """Refuse an argument that is not valid text: a lone surrogate (bytes in argv that are not UTF-8)."""
    from factreg.errors import UsageError

    for value in values:
        for item in value if isinstance(value, (list, tuple)) else [value]:
            try:
                str(item).encode("utf-8")
            except UnicodeEncodeError:
                raise UsageError(f"an argument is not valid UTF-8 text: {str(item).encode('utf-8', 'replace')!r}"
                                 ) from None


def warn_unreadable(skipped: dict[str, str], shown: int = 5) -> None:
    """One line on stderr naming the rows a command skipped because they cannot be read."""
    parts = [f"{key} ({why})" for key, why in list(skipped.items())[:shown]]
    more = f"; and {len(skipped) - shown} more" if len(skipped) > shown else ""
    print(visible(redact(f"Warning: skipped {len(skipped)} unreadable row(s): {'; '.join(parts)}{more}")),
          file=sys.stderr)


def emit_json(data: Any) -> None:
    """Pure JSON on stdout (every string redacted): containers of containers indented, flat ones on a line."""
    from factreg import jsontext

    text = secrets.dumps(data, encode=jsontext.dumps, ensure_ascii=False, allow_nan=False)
    sys.stdout.write(jsontext.printable(text))
    sys.stdout.write("\n")


def emit(text: str) -> None:
    """Data lines on stdout, redacted, control characters made visible."""
    sys.stdout.write(visible(redact(text)))


def settings(db: str | None) -> Settings:
    from factreg import config

    return config.resolve(db or GLOBAL.db)


def open_registry(db: str | None, create: bool = True) -> tuple[Settings, Registry]:
    """The resolved settings and the opened, migrated registry."""
    from factreg.registry import retention
    from factreg.registry.store import Registry

    s = settings(db)
    restore_text_copy(s)
    return s, Registry(s.db_url, create=create, raw_runs=retention.raw_runs(s))


def restore_text_copy(s: Settings) -> None:
    """A checkout with `.factreg/registry.jsonl` and no registry.db (a fresh clone, CI): build it first, and say so."""
    from factreg.registry import snapshot

    if snapshot.location(s) is None:
        return
    built = snapshot.restore(s)
    if built is not None:
        info(f"Built the local registry from .factreg/{snapshot.FILE} ({built.get('facts', 0)} fact(s), "
             f"{built.get('decisions', 0)} decision(s)); its methods are not trusted here: `factreg verify "
             "--trust-imported` runs them")


def emit_findings(fmt: str, findings: Any, rules: Any = None, properties: Any = None) -> None:
    """Findings (factreg.cli.formats.Finding) on stdout in an output format with a renderer (github, sarif, or
    a plugin's), text or JSON as the format produces."""
    from factreg import plugins
    from factreg.errors import UsageError

    spec = plugins.output_format(fmt)
    if spec is None or spec.render is None:
        raise UsageError(f"--format {fmt} has no renderer for findings")
    if spec.produces == "json":
        emit_json(plugins.load(spec.render)(findings, rules, properties))
    else:
        emit(plugins.load(spec.render)(findings, rules, properties))


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    class RedactingConsole(Console):
        """A console whose printed strings are redacted (tables from `make_table()` redact their cells)."""

        def print(self, *objects: Any, **kwargs: Any) -> None:
            super().print(*(visible(redact(o)) if isinstance(o, str) else o for o in objects), **kwargs)

    # No markup: text from a user or a file (`[/bold]` in a condition) is printed as it is; styled lines pass
    # markup=True with every user part through `rich.markup.escape`.
    import os

    color: dict[str, Any] = {}
    if GLOBAL.color is True:
        color = {"force_terminal": True, "no_color": False}
    elif GLOBAL.color is False or os.environ.get("NO_COLOR"):
        color = {"color_system": None}  # no escape codes at all, bold included (https://no-color.org)
    quiet = stderr and GLOBAL.quiet
    out = RedactingConsole(stderr=stderr, highlight=False, soft_wrap=False, markup=False, quiet=quiet, **color)
    if not out.is_terminal:
        out.width = max(out.width, PIPED_WIDTH)  # piped output: whole lines, not an 80-column wrap
    return out


def info(message: str) -> None:
    """A line for people, on stderr (stdout is data); --quiet leaves it out."""
    if not GLOBAL.quiet:
        print(visible(redact(message)), file=sys.stderr)


def internal_error(exc: BaseException) -> None:
    """Report an unexpected exception in one line; the traceback goes to a file (or stderr with FACTREG_DEBUG=1)."""
    import os
    import tempfile
    import traceback

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


def expected_failure(exc: BaseException) -> int | None:
    """The exit code of an expected failure, its line printed: a `FactregError` (`Error: …`, its own code), an
    interrupt (`Error: interrupted`, 130), a reader gone (a broken pipe: nothing, 0); None for anything else."""
    if isinstance(exc, FactregError):
        print_error(exc)
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        print("Error: interrupted", file=sys.stderr)
        return 130
    if isinstance(exc, BrokenPipeError):
        return 0
    return None


def run_checked(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, int | None]:
    """A command's result and None, or None and the exit code of an expected failure (`expected_failure`, its line
    printed): the arguments checked first, and the rows the readers skipped as unreadable
    (`unreadable.note_unreadable`) named in one line `Warning: …` unless the command failed. Anything else raised
    goes on. The one core of `common.handles_errors` (typer's commands) and `run_body` (cli/quick.py's bodies)."""
    from factreg.registry.unreadable import collect_unreadable

    failed = False
    with collect_unreadable() as skipped:
        try:
            check_arguments([*args, *kwargs.values()])
            return func(*args, **kwargs), None
        except (FactregError, KeyboardInterrupt, BrokenPipeError) as exc:
            failed = isinstance(exc, FactregError)
            return None, expected_failure(exc)
        finally:
            if skipped and not failed:
                warn_unreadable(skipped)


def run_body(body: Callable[..., int], *args: Any, **kwargs: Any) -> int:
    """Run a command's typer-free body (cli/quick.py) as the command line runs the command (`run_checked`), with
    anything unexpected reported by `internal_error` (exit 70), as the command line's group does; its exit code."""
    from factreg.errors import EXIT_INTERNAL

    try:
        code, failure = run_checked(body, args, kwargs)
    except Exception as exc:  # noqa: BLE001 - the last resort; SystemExit and the like keep their meaning
        internal_error(exc)
        return EXIT_INTERNAL
    return int(code) if failure is None else failure
