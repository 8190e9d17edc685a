"""Commands: compare, decision (add, list, show, revert, supersede), correct, retract, report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from factreg.cli.common import (
    AsOfOption,
    DbOption,
    JsonFlag,
    console,
    emit,
    emit_json,
    handles_errors,
    info,
    make_table,
    open_registry,
    whole_number,
)

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry

OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Folder to write into (default: the project root, the folder holding .factreg/).",
        show_default=False,
    ),
]
TemplatesOption = Annotated[
    Path | None,
    typer.Option(
        "--templates", help="Folder of templates overriding the shipped ones, file by file.", show_default=False
    ),
]
LangOption = Annotated[
    str | None,
    typer.Option("--lang", help="Language of notes, reports and decisions: en or ko (default: [report] lang, else en).",
                 show_default=False),
]
CommitFlag = Annotated[
    bool,
    typer.Option("--commit", help="Commit exactly the files written (and changed) to the git repo holding them."),
]

decision_app = typer.Typer(
    help="Decision records that cite facts with the values they relied on.", no_args_is_help=True, rich_markup_mode=None
)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
    app.add_typer(decision_app, name="decision")
    app.command("correct")(correct)
    app.command("retract")(retract)
    app.command("report")(report)


def _out(s: Settings, out: Path | None) -> Path:
    return Path(out) if out is not None else Path(s.root)


@handles_errors
def compare(
    a: Annotated[str, typer.Argument(metavar="A", help="Fact id (optionally ID@VERSION): the numerator.")],
    b: Annotated[str, typer.Argument(metavar="B", help="Fact id (optionally ID@VERSION): the denominator.")],
    allow_different: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-different",
            help="Identity condition allowed to differ, e.g. model (repeat, or comma-separated; "
            "`cold` allows cold vs warm).",
        ),
    ] = None,
    record: Annotated[
        str | None,
        typer.Option(
            "--record", metavar="ID", help="Store the ratio as a derived fact that goes stale when A or B changes."
        ),
    ] = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Compare two facts: ratio of medians with a 95% interval; refuses (exit 1) incomparable facts."""
    from factreg.errors import Findings
    from factreg.measure import compare as cmp
    from factreg.registry import facts
    from factreg.registry.ids import check_id, parse_ref, ref

    if record is not None:
        check_id(record)
    s, reg = open_registry(db, create=False)
    fa = facts.get(reg, *parse_ref(a), config=s.file_config)
    fb = facts.get(reg, *parse_ref(b), config=s.file_config)
    result = cmp.compare(fa, fb, allow_different or [])
    recorded = None
    if record is not None and not result["refused"]:
        recorded = facts.record(reg, cmp.derived_fact(result, fa, fb, record))
        result["recorded"] = ref(recorded["id"], recorded["version"])
    if json_out:
        emit_json(result)
    else:
        emit(cmp.summary_line(result) + "\n")
        emit("".join(f"  - {r['message']}\n" for r in result["reasons"]))
        for w in result["warnings"]:
            info(f"warning: {w['message']}")
        if recorded is not None:
            info(f"recorded {result['recorded']} (derived from {result['a']} and {result['b']})")
    if result["refused"]:
        if record is not None:
            info("nothing recorded: the comparison was refused")
        raise Findings(f"not comparable: {'; '.join(r['key'] for r in result['reasons'])}")


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

        publish.check_repo(_out(s, out))
    return s, reg


def _write_decisions(
    reg: Registry, s: Settings, out: Path | None, templates: Path | None, commit: bool, message: str, numbers: list[int]
) -> None:
    from factreg.publish import decisions
    from factreg.publish import writer as publish

    root = _out(s, out)
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
        out=_out(s, out),
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
    result = corrections.retract(reg, s, fact_id, because=because, out=_out(s, out), templates=templates,
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
    folder = (out if out is not None else Path(s.root) / "site") if html else _out(s, out)
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
