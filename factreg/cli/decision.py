"""Commands: decision (add, list, show, revert, supersede): decision records citing facts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from factreg.cli.common import (
    CommitFlag,
    DbOption,
    JsonFlag,
    OutOption,
    TemplatesOption,
    console,
    emit_json,
    handles_errors,
    info,
    make_table,
    open_registry,
    out_folder,
    whole_number,
)

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry


decision_app = typer.Typer(
    help="Decision records that cite facts with the values they relied on.", no_args_is_help=True, rich_markup_mode=None
)


def register(app: typer.Typer) -> None:
    app.add_typer(decision_app, name="decision")


@decision_app.command("add")
@handles_errors
def decision_add(
    title: Annotated[str, typer.Argument(metavar="TITLE", help="What was decided, e.g. 'voice front end → 35B-A3B'.")],
    cites: Annotated[
        list[str] | None,
        typer.Option(
            "--cites",
            help="Fact ids relied on (ID or ID@VERSION; comma-separated "
            "or repeated). The current value of each is stored. Needed unless --driver names the facts.",
        ),
    ] = None,
    context: Annotated[str | None, typer.Option("--context", help="Context and problem statement.")] = None,
    outcome: Annotated[str | None, typer.Option("--outcome", help="The decision outcome, in words.")] = None,
    status: Annotated[str, typer.Option("--status", help="proposed or accepted.")] = "accepted",
    by: Annotated[list[str] | None, typer.Option("--by", metavar="NAME", help="Decision maker (repeat).")] = None,
    date: Annotated[
        str | None, typer.Option("--date", help="Date of the decision, YYYY-MM-DD (default: today).")
    ] = None,
    driver: Annotated[
        list[str] | None,
        typer.Option(
            "--driver",
            help="A comparison the decision holds on (repeat): 'ID < 1.0' (a number in the fact's unit; "
            "< <= > >=) or 'ID > OTHER_ID' (a fact of the same metric). Judged on the median whenever the "
            "decision is read; when it no longer holds, the decision needs review. Its facts are cited.",
        ),
    ] = None,
    review_by: Annotated[
        str | None,
        typer.Option("--review-by", metavar="DATE", help="The decision needs review after this date, YYYY-MM-DD."),
    ] = None,
    out: OutOption = None,
    templates: TemplatesOption = None,
    commit: CommitFlag = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Record a decision that cites facts (and the drivers it holds on), and write decisions/NNNN-<slug>.md."""
    from factreg.publish import decisions

    s, reg = _prepare(db, out, templates, commit)
    number = decisions.add(
        reg,
        title,
        decisions.parse_cites(cites or [], required=not driver),
        context=context,
        outcome=outcome,
        status=status,
        by=by or [],
        date=date,
        drivers=driver or [],
        review_by=review_by,
    )
    _write_decisions(reg, s, out, templates, commit, f"factreg decision {number}: {title}", [number])
    data = decisions.get(reg, number, s.file_config)
    if json_out:
        emit_json(data)
    else:
        info(f"decision {number} recorded: {data['path']} ({data['status']})")
        for j in data["drivers"]:
            info(f"  driver {j['text']}: {j['verdict']} ({j['detail']})")


def _prepare(db: str | None, out: Path | None, templates: Path | None, commit: bool) -> tuple[Settings, Registry]:
    """Settings and registry for a command that writes decision files; a bad --templates folder or a missing
    repository for --commit fails here, before anything is recorded."""
    from factreg.publish import render

    render.environment(templates)
    s, reg = open_registry(db, create=False)
    if commit:
        from factreg.publish import writer as publish

        publish.check_repo(out_folder(s, out))
    return s, reg


def _write_decisions(
    reg: Registry, s: Settings, out: Path | None, templates: Path | None, commit: bool, message: str, numbers: list[int]
) -> None:
    from factreg.publish import decisions
    from factreg.publish import writer as publish

    root = out_folder(s, out)
    written, changed = decisions.write_files(reg, s.file_config, root, templates, numbers=numbers)
    for p in changed:
        info(f"wrote {p}")
    if commit:
        from factreg.registry import snapshot

        copies = snapshot.for_commit(reg, s)  # the registry's text copy, in the same commit
        sha = publish.commit({**publish.contents_of(written), **copies}, message, root)
        snapshot.save(copies)
        info(f"committed {sha[:10]}" if sha else "nothing to commit")


@decision_app.command("list")
@handles_errors
def decision_list(
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """List decisions with their status (`needs review` when a cited fact changed)."""
    from factreg.publish import decisions

    s, reg = open_registry(db, create=False)
    data = decisions.list_decisions(reg, s.file_config)
    if json_out:
        emit_json(data)
        return
    table = make_table()
    for col in ("#", "date", "status", "title", "cites"):
        table.add_column(col)
    for d in data:
        table.add_row(
            str(d["number"]),
            d["date"],
            d["status"],
            d["title"],
            ", ".join(f"{c['id']}@v{c['version']}" for c in d["cites"]),
        )
    console().print(table)
    info(f"{len(data)} decision(s), {sum(d['status'] == 'needs review' for d in data)} needing review")


@decision_app.command("show")
@handles_errors
def decision_show(
    number: Annotated[int, typer.Argument(metavar="N", help="Decision number.", parser=whole_number("N"))],
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Show a decision, the values it relied on, their current state and why it needs review."""
    from factreg.publish import decisions

    s, reg = open_registry(db, create=False)
    d = decisions.get(reg, number, s.file_config)
    if json_out:
        emit_json(d)
        return
    out = console()
    out.print(f"{d['number']}. {d['title']}  [{d['status']}]  {d['date']}  {d['path']}")
    for c in d["cites"]:
        now = c["current"]
        out.print(
            f"  cites {c['id']}@v{c['version']}: relied on {c['relied_on']}; now "
            + (f"{now['text']} (v{now['version']}, {now['status']})" if now else "missing")
        )
    for j in d["drivers"]:
        out.print(f"  driver {j['text']}: {j['verdict']} — {j['detail']}")
    if d["review_by"]:
        out.print(f"  review by {d['review_by']}")
    for r in d["review_reasons"]:
        out.print(f"  needs review: {r}")
    if d["reverted"]:
        why = d["reverted"]["because_fact"] or d["reverted"]["because"]
        out.print(f"  reverted {d['reverted']['date']} because {why}")
    if d["superseded_by"]:
        out.print(f"  superseded by decision {d['superseded_by']['number']}")


@decision_app.command("revert")
@handles_errors
def decision_revert(
    number: Annotated[int, typer.Argument(metavar="N", help="Decision number.", parser=whole_number("N"))],
    because: Annotated[str, typer.Option("--because", help="The fact id that showed it wrong, or a reason.")],
    date: Annotated[str | None, typer.Option("--date", help="Date of the revert, YYYY-MM-DD (default: today).")] = None,
    out: OutOption = None,
    templates: TemplatesOption = None,
    commit: CommitFlag = False,
    db: DbOption = None,
) -> None:
    """Record that a decision was reverted, and why (a fact or words); re-render its file."""
    from factreg.publish import decisions

    s, reg = _prepare(db, out, templates, commit)
    decisions.revert(reg, number, because, date)
    _write_decisions(reg, s, out, templates, commit, f"factreg decision {number} reverted", [number])
    info(f"decision {number} reverted")


@decision_app.command("supersede")
@handles_errors
def decision_supersede(
    number: Annotated[int, typer.Argument(metavar="N", help="Decision number.", parser=whole_number("N"))],
    by: Annotated[int, typer.Option("--by", metavar="M", help="The decision that replaces it.",
                                                    parser=whole_number("--by"))],
    out: OutOption = None,
    templates: TemplatesOption = None,
    commit: CommitFlag = False,
    db: DbOption = None,
) -> None:
    """Record that decision N is superseded by decision M; re-render both files."""
    from factreg.publish import decisions

    s, reg = _prepare(db, out, templates, commit)
    decisions.supersede(reg, number, by)
    _write_decisions(reg, s, out, templates, commit, f"factreg decision {number} superseded by {by}", [number, by])
    info(f"decision {number} superseded by decision {by}")
