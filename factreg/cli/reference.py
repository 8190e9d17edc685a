"""The command reference (docs/cli.md), generated from the CLI itself so that it cannot drift.

Regenerate with: python -m factreg.cli.reference > docs/cli.md"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

WIDTH = 100


def _walk(cmd: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    yield path, cmd
    if hasattr(cmd, "commands"):  # typer ships its own Click: no isinstance against `click`
        for name in sorted(cmd.commands):
            yield from _walk(cmd.commands[name], [*path, name])


def render() -> str:
    """Markdown with the `--help` of every command, in a stable order and width."""
    from factreg.cli import app

    root = typer.main.get_command(app)
    parts = ["# Command reference\n",
             "Generated from `factreg --help` of every command (`python -m factreg.cli.reference > docs/cli.md`);",
             "a test keeps it in sync.\n"]
    from typer.testing import CliRunner

    runner = CliRunner()
    for path, _cmd in _walk(root, ["factreg"]):
        # exactly what a user sees: the real `--help` of the command, at a fixed terminal width
        result = runner.invoke(app, [*path[1:], "--help"], terminal_width=WIDTH, prog_name="factreg")
        help_text = result.stdout.rstrip()
        parts.append(f"## `{' '.join(path)}`\n\n```\n{help_text}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    print(render(), end="")
