"""The command line: a thin layer that parses, calls the core and prints."""

from __future__ import annotations

import typer

from factreg.cli import changes, decisions, demo, docs, facts, probe, registry, status, verify

app = typer.Typer(
    name="factreg",
    help="A registry of performance facts for local LLM servers: every number with its conditions, re-verified.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

for module in (facts, registry, verify, probe, status, changes, docs, decisions, demo):
    module.register(app)


def main() -> None:
    app()
