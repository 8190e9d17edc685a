"""Commands for agents: cite (the marker to paste) and mcp (the MCP server on stdio)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from factreg.cli.common import DbOption, JsonFlag, handles_errors, open_registry

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry


def register(app: typer.Typer) -> None:
    app.command("cite")(cite)
    app.command("mcp")(mcp)


@handles_errors
def cite(
    fact_id: Annotated[str, typer.Argument(metavar="ID", help="The fact id.")],
    format_: Annotated[
        str | None,
        typer.Option("--format", help='A format over the marker fields, e.g. "{value:.1f} tok/s".'),
    ] = None,
    asof: Annotated[bool, typer.Option("--asof", help="Append the measurement date.")] = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Print the citation marker for a fact with its current text, ready to paste.

    A superseded fact gives its successor's marker. Exit 1 when the fact should not be cited (not fresh or aging,
    or flagged cold or few_samples): the marker is printed, and why on stderr.
    """
    from factreg.cli import quick

    code = quick.cite(fact_id, format_, asof, json_out, db)
    if code:
        raise typer.Exit(code)


@handles_errors
def mcp(
    allow_write: Annotated[
        bool, typer.Option("--allow-write", help="Also offer the record tool (for measurement agents).")
    ] = False,
    db: DbOption = None,
) -> None:
    """Serve the registry to agents over MCP on stdin/stdout (needs pip install 'factreg[mcp]').

    Tools: search_facts, get_fact, check_text, cite, status (and record with --allow-write); resource
    facts://llms.txt. Read-only by default. docs/agents.md has a client configuration.
    """
    from factreg.agents import server

    def opener(create: bool) -> tuple[Settings, Registry]:
        return open_registry(db, create=create)

    server.serve(opener, allow_write)
