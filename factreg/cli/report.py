"""Command: report (the Markdown pages and charts, or with --html the site)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factreg.cli.common import (
    AsOfOption,
    CommitFlag,
    DbOption,
    JsonFlag,
    LangOption,
    OutOption,
    TemplatesOption,
    emit_json,
    handles_errors,
    info,
    open_registry,
    out_folder,
)


def register(app: typer.Typer) -> None:
    app.command("report")(report)


@handles_errors
def report(
    out: OutOption = None,
    templates: TemplatesOption = None,
    commit: CommitFlag = False,
    as_of: AsOfOption = None,
    html: Annotated[bool, typer.Option("--html", help="Write the HTML site instead: index.html with a filter and a "
                                       "page per fact with its chart, into --out (default: site/ under the project "
                                       "root). Static files, nothing fetched from elsewhere.")] = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
    lang: LangOption = None,
) -> None:
    """Write facts/STALE.md, a page and SVG chart per fact, facts/README.md, facts/llms.txt, decision files;
    with --html, the HTML site (docs/history.md, "The HTML report")."""
    from factreg import clock
    from factreg.publish import report as rep
    from factreg.publish import site

    s, reg = open_registry(db, create=False)
    folder = (out if out is not None else Path(s.root) / "site") if html else out_folder(s, out)
    if commit:
        from factreg.publish import writer as publish

        publish.check_repo(folder)
    with clock.as_of(as_of):
        result = site.write(reg, s, folder, templates, commit) if html else rep.write(reg, s, folder, templates, commit,
                                                                                     lang)
    if json_out:
        emit_json(result)
        return
    for p in result["changed"]:
        info(f"wrote {p}")
    info(f"{len(result['written'])} file(s) rendered, {len(result['changed'])} changed")
    if commit:
        info(f"committed {result['commit'][:10]}" if result["commit"] else "nothing to commit")
