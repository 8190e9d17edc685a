"""The command line: a thin layer that parses, calls the core and prints.

cli/application.py builds it with typer, only the command group a command line names; cli/quick.py answers the plain
forms of the commands called most (`docs lint PATH…`, `docs check PATH…`, `cite ID`) without importing typer;
cli/base.py (typer-free) and cli/common.py hold what the commands share. Importing this package imports neither:
`app`, `build`, `MODULES` and the rest of cli/application.py are read from it on first use."""

from __future__ import annotations

from typing import Any


def main() -> None:
    """The entry point after factreg/__main__.py's fast paths: the command line named by sys.argv."""
    from factreg.cli.application import main as run

    run()


# what the rest of factreg and the tests read from here; anything else named is a submodule or nothing
_APPLICATION = frozenset({"app", "build", "command_word", "MODULES", "ORDER"})


def __getattr__(name: str) -> Any:
    if name not in _APPLICATION:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module("factreg.cli.application"), name)
