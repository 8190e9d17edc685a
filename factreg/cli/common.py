"""What every command shares: option aliases, the error decorator, JSON and table output.

Everything printed goes through `secrets.redact`: errors, messages, JSON, lines and tables.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from factreg import secrets
from factreg.errors import FactregError
from factreg.secrets import redact

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry

F = TypeVar("F", bound=Callable[..., Any])

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Registry: a SQLAlchemy URL or a SQLite file path. Default: FACTREG_DB, "
                 "then .factreg/registry.db above the current directory, then the user data dir.",
                 show_default=False),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")]
AsOfOption = Annotated[
    str | None,
    typer.Option("--as-of", metavar="DATE", help="Judge freshness as of this date or time (ISO-8601) instead of "
                 "now. Default: FACTREG_NOW when set, else the clock.", show_default=False),
]


def handles_errors(func: F) -> F:
    """Turn expected failures into one line `Error: …` on stderr and their exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except FactregError as exc:
            print(redact(exc.line()), file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            print("Error: interrupted", file=sys.stderr)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            raise typer.Exit(0) from None

    return wrapper  # type: ignore[return-value]


def emit_json(data: Any) -> None:
    """Pure JSON on stdout (every string redacted)."""
    sys.stdout.write(secrets.dumps(data, ensure_ascii=False, indent=2, allow_nan=False))
    sys.stdout.write("\n")


def emit(text: str) -> None:
    """Data lines on stdout, redacted."""
    sys.stdout.write(redact(text))


def settings(db: str | None) -> Settings:
    from factreg import config

    return config.resolve(db)


def open_registry(db: str | None, create: bool = True) -> tuple[Settings, Registry]:
    """The resolved settings and the opened, migrated registry."""
    from factreg.registry.store import Registry

    s = settings(db)
    return s, Registry(s.db_url, create=create)


def min_uptime(s: Settings) -> float:
    return float(s.min_uptime_s)


def console(stderr: bool = False):  # type: ignore[no-untyped-def]
    from rich.console import Console

    class RedactingConsole(Console):
        """A console whose printed strings are redacted (tables from `make_table()` redact their cells)."""

        def print(self, *objects: Any, **kwargs: Any) -> None:
            super().print(*(redact(o) if isinstance(o, str) else o for o in objects), **kwargs)

    out = RedactingConsole(stderr=stderr, highlight=False, soft_wrap=False)
    if not out.is_terminal:
        out.width = max(out.width, 160)  # piped output: whole lines, not an 80-column wrap
    return out


def info(message: str) -> None:
    """A line for people, on stderr (stdout is data)."""
    print(redact(message), file=sys.stderr)


def make_table(**kwargs: Any):  # type: ignore[no-untyped-def]
    """A rich table (no box, no edge padding by default) whose string cells are redacted as rows are added."""
    from rich.table import Table

    class RedactingTable(Table):
        def add_row(self, *renderables: Any, **kw: Any) -> None:
            super().add_row(*(redact(r) if isinstance(r, str) else r for r in renderables), **kw)

    return RedactingTable(**{"box": None, "pad_edge": False, **kwargs})
