"""Command: plugins (what is loaded: factreg's own built-ins and installed plugins, with versions)."""

from __future__ import annotations

import typer

from factreg.cli.common import JsonFlag, console, emit_json, handles_errors, make_table


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins_)


@handles_errors
def plugins_(json_out: JsonFlag = False) -> None:
    """List the loaded plugins (entry-point group `factreg`) with their versions and what each provides: method
    kinds, import formats, output formats, notifiers. factreg's own come first; one that failed is named."""
    from factreg import plugins

    found = plugins.loaded()
    if json_out:
        emit_json({
            "plugins": [{"name": p.name, "distribution": p.distribution, "version": p.version, "builtin": p.builtin,
                         "provides": p.provides} for p in found.plugins],
            "failed": [{"name": name, "error": why} for name, why in found.failures],
        })
        return
    table = make_table()
    for column in ("plugin", "version", "provides"):
        table.add_column(column, overflow="fold")
    for p in found.plugins:
        name = f"{p.name} (built-in)" if p.builtin else (
            p.name if p.distribution == p.name else f"{p.name} ({p.distribution})")
        table.add_row(name, p.version, ", ".join(p.provides))
    console().print(table)
