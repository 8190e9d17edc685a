"""Progress bars on stderr, with counts and an estimate of the time left, shown only on a terminal.

Piped or redirected (stderr not a terminal), or with --quiet, a bar prints nothing at all: logs and tests see
exactly the lines they saw before. stdout is never touched (it is data)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from factreg.cli.base import GLOBAL, console

Step = Callable[..., None]


def shown() -> bool:
    """Whether a bar would be drawn: stderr is a terminal (really: not --color on a pipe) and no --quiet."""
    import sys

    try:
        return not GLOBAL.quiet and sys.stderr.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stderr
        return False


def _silent(*_args: Any, **_kwargs: Any) -> None:
    return None


@contextmanager
def bar(label: str, total: int | None, minimum: int = 2, when: bool = True) -> Iterator[Step]:
    """Yield `step(done, what="", total=None)`: `done` items of `total` finished, `what` the one under way (a total
    learnt later is passed to `step`). The bar shows N/M, the time spent and the time left; without a total (a
    walk of unknown length), a pulse and the count. Nothing is drawn for fewer than `minimum` items, when `when`
    is false or when `shown()` is."""
    if not when or not shown() or (total is not None and total < minimum):
        yield _silent
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns: list[Any] = [TextColumn(label, markup=False), SpinnerColumn(), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                          TextColumn("{task.description}", markup=False)]
    from factreg.terminal import visible

    with Progress(*columns, console=console(stderr=True), transient=True) as progress:
        task = progress.add_task("", total=total)

        def step(done: int, what: str = "", total: int | None = None) -> None:
            if total is not None:
                progress.update(task, total=total)
            progress.update(task, completed=done, description=visible(what[:60]))  # a file name, a fact id

        yield step


def counting(items: Iterator[Any] | list[Any], step: Step) -> Iterator[Any]:
    """The items, ticking `step` after each one is taken."""
    for done, item in enumerate(items, 1):
        yield item
        step(done)
