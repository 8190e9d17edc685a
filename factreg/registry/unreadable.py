"""Rows a reader skipped because they cannot be read (`fact@version` → why), gathered for the command to name in
one warning. Its own module, free of the database, so that every command can open the gathering cheaply."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_unreadable: ContextVar[dict[str, str] | None] = ContextVar("factreg_unreadable", default=None)


@contextmanager
def collect_unreadable() -> Iterator[dict[str, str]]:
    """Within the block, rows that readers skip as unreadable are gathered in the dict yielded."""
    found: dict[str, str] = {}
    token = _unreadable.set(found)
    try:
        yield found
    finally:
        _unreadable.reset(token)


def note_unreadable(key: str, why: str) -> None:
    """A reader skipped row `key` (e.g. `a/b@2`) because of `why`: one bad row never breaks reading the rest."""
    found = _unreadable.get()
    if found is not None:
        found.setdefault(key, why)
