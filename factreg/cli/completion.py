"""Command: completion — print the shell completion script for bash, zsh or fish."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from factreg.cli.common import handles_errors


def register(app: typer.Typer) -> None:
    app.command("completion")(completion)


@handles_errors
def completion(
    shell: Annotated[str, typer.Argument(metavar="bash|zsh|fish", help="The shell to complete in.")],
) -> None:
    """Print the shell completion script (commands, options, fact ids and metric names from the registry).

    bash: eval "$(factreg completion bash)" in ~/.bashrc; zsh: eval "$(factreg completion zsh)" in ~/.zshrc;
    fish: factreg completion fish > ~/.config/fish/completions/factreg.fish"""
    from factreg.complete import SCRIPTS
    from factreg.errors import UsageError

    if shell not in SCRIPTS:
        raise UsageError(f"completion: no script for {shell[:40]!r}; choose bash, zsh or fish")
    sys.stdout.write(SCRIPTS[shell])
