"""Commands: correct and retract, a wrong fact's two ways out (a value that holds, or none)."""

from __future__ import annotations

from typing import Annotated

import typer

from factreg.cli.common import (
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
    app.command("correct")(correct)
    app.command("retract")(retract)


@handles_errors
def correct(
    fact_id: Annotated[str, typer.Argument(metavar="ID", help="The fact whose value was wrong or outdated.")],
    by: Annotated[str | None, typer.Option(
        "--by", metavar="OTHER_ID", help="Correct it with this fact's value (a new version of ID; with --as "
        "OTHER_ID, superseded by OTHER_ID instead).")] = None,
    verification: Annotated[
        str | None,
        typer.Option(
            "--verification",
            metavar="N|latest",
            help="Correct it with what verification N measured (as verify, status and history print it; latest: the "
            "newest that measured a value), recorded as a new version of ID.",
        ),
    ] = None,
    as_id: Annotated[
        str | None, typer.Option("--as", metavar="NEW_ID", help="Only when the claim itself changes: record the "
                                 "correction as fact NEW_ID and supersede ID by it (docs are rewritten to cite it).")
    ] = None,
    cause: Annotated[str | None, typer.Option("--cause", help="What went wrong, in words.")] = None,
    out: OutOption = None,
    templates: TemplatesOption = None,
    commit: CommitFlag = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
    lang: LangOption = None,
) -> None:
    """Correct a fact: the value that holds becomes a new version of the same id (the wrong one stays in its
    history, marked corrected), a correction note is written and the docs synced; --commit commits exactly those
    files."""
    from factreg.publish import corrections, render

    render.environment(templates)
    s, reg = open_registry(db, create=False)
    number = None if verification is None else corrections.pick_verification(reg, fact_id, verification)
    if number is not None and verification == corrections.LATEST:
        info(f"--verification latest: verification {number}")
    result = corrections.correct(
        reg,
        s,
        fact_id,
        by=by,
        verification=number,
        new_id=as_id,
        cause=cause,
        out=out_folder(s, out),
        templates=templates,
        commit=commit,  # without a repository it fails before anything is recorded
        lang=lang,
    )
    sha = result["commit"]
    if json_out:
        emit_json(result)
        return
    if result["same_id"]:
        info(f"{result['old']} corrected: {result['new']} holds now; note {result['note']}")
    else:
        info(f"{result['old']} superseded by {result['new']}; note {result['note']}")
    for p in result["changed"]:
        info(f"wrote {p}")
    if commit:
        info(f"committed {sha[:10]}" if sha else "nothing to commit")


@handles_errors
def retract(
    fact_id: Annotated[str, typer.Argument(metavar="ID", help="The fact that was wrong, with nothing to replace it.")],
    because: Annotated[str, typer.Option("--because", help="Why it is wrong, in words (kept in its note).")],
    out: OutOption = None,
    templates: TemplatesOption = None,
    commit: CommitFlag = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Withdraw a wrong fact that nothing replaces: it becomes `retracted`, its note lists what cited it, citing
    documents fail `docs check` and decisions relying on it need review; --commit commits exactly those files."""
    from factreg.publish import corrections, render

    render.environment(templates)
    s, reg = open_registry(db, create=False)
    result = corrections.retract(reg, s, fact_id, because=because, out=out_folder(s, out), templates=templates,
                                 commit=commit)
    if json_out:
        emit_json(result)
        return
    info(f"{result['retracted']} retracted; note {result['note']}")
    for p in result["changed"]:
        info(f"wrote {p}")
    for number in result["decisions"]:
        info(f"decision {number} relied on it: re-rendered")
    if commit:
        info(f"committed {result['commit'][:10]}" if result["commit"] else "nothing to commit")
