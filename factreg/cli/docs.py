"""Commands: docs check, docs sync, docs cites, docs lint — citations of facts in Markdown documents.

Exit codes: 0 clean, 1 findings, 2 usage or configuration error, 3 could not verify.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from factreg.cli import quick
from factreg.cli.common import (
    AsOfOption,
    DbOption,
    FormatOption,
    JsonFlag,
    emit,
    emit_json,
    handles_errors,
    info,
    settings,
)

if TYPE_CHECKING:
    from factreg.config import Settings
    pass

docs_app = typer.Typer(
    help="Citations of facts in Markdown (<!-- fact: ID -->text<!-- /fact -->): check, sync, cites, lint.",
    no_args_is_help=True,
)

PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="PATH...",
        help="Markdown files or folders (any depth). Default: [docs] roots in "
        ".factreg/config.toml, else the current folder.",
        show_default=False,
    ),
]


ChangedSinceOption = Annotated[
    str | None,
    typer.Option(
        "--changed-since",
        metavar="REF",
        help="Judge only the lines added or changed since the merge-base of REF and HEAD (commits, staged and "
        "unstaged edits, untracked files; renames followed); what the changed files had before is counted as "
        "existing debt, never failed.",
        show_default=False,
    ),
]


def register(app: typer.Typer) -> None:
    docs_app.command("check")(check)
    docs_app.command("sync")(sync)
    docs_app.command("cites")(cites)
    docs_app.command("lint")(lint)
    docs_app.command("coverage")(coverage)
    app.add_typer(docs_app, name="docs")


JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        metavar="N",
        help="Processes for a large tree (default: the cores available; 1: one process).",
        show_default=False,
    ),
]


NoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Read and lint every file, neither using nor filling the document cache (FACTREG_CACHE_DIR).",
    ),
]


@handles_errors
def check(
    paths: PathsArg = None,
    as_of: AsOfOption = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
    changed_since: ChangedSinceOption = None,
    fmt: FormatOption = None,
    with_lint: Annotated[
        bool,
        typer.Option("--lint", help="Also find unsourced claims (as `docs lint`), reading each file once."),
    ] = False,
    jobs: JobsOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Check that every cited fact holds and every marker shows its current rendering; writes nothing.

    Exit 1 when a cited fact is stale, refuted, retracted, shifted, superseded, unknown or its conditions changed,
    when a marker's text differs from the registry, or a file or marker cannot be read; with --lint, also when
    there are unsourced claims (listed after the problems; in --json under "claims").
    """
    code = quick.check(paths, no_cache=no_cache, as_of=as_of, json_out=json_out, db=db,
                       changed_since=changed_since, fmt=fmt, with_lint=with_lint, jobs=jobs)
    if code:
        raise typer.Exit(code)


@handles_errors
def sync(
    paths: PathsArg = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the files that would change; write nothing.")
    ] = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Rewrite every marker's text from the registry, in place and atomically; only files that change.

    A marker citing a superseded fact is rewritten to cite its successor (id and text). Exit 1 when some
    markers could not be rewritten (unknown fact, bad marker or format, unreadable file).
    """
    from factreg.docs import check as chk
    from factreg.docs import sync as sy
    from factreg.docs import walk

    s = settings(db)
    roots = quick.doc_paths(paths, s)
    docs = chk.scan(roots, s.file_config)
    index = chk.load_index(quick.registry_opener(db)(), s.file_config) if chk.needs_registry(docs) else {}
    result = sy.sync_scanned(docs, index, dry_run=dry_run, roots=roots, max_bytes=walk.max_bytes(s.file_config))
    if json_out:
        emit_json(
            {
                "changed": [str(p) for p in result.changed],
                "dry_run": dry_run,
                "markers": result.markers,
                "problems": [p.as_json() for p in result.problems],
                "notes": result.notes,
            }
        )
    else:
        if result.changed:
            emit("".join(f"{p}\n" for p in result.changed))
        for note in result.notes:
            info(note)
        for p in result.problems:
            info(f"{p.path}:{p.line}:{p.col}: " + (f"{p.fact_id}: " if p.fact_id else "") + f"{p.kind}: {p.message}")
    verb = "would change" if dry_run else "changed"
    info(
        f"docs sync: {result.markers} citation(s), {len(result.changed)} file(s) {verb}, "
        f"{len(result.problems)} problem(s) left"
    )
    if result.problems:
        raise typer.Exit(1)


@handles_errors
def cites(
    fact_id: Annotated[str, typer.Argument(metavar="ID", help="The fact id.")],
    paths: PathsArg = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """List the documents (path:line) that cite a fact."""
    from factreg.docs.markers import find_citations
    from factreg.registry.ids import check_id

    check_id(fact_id)
    s = settings(db)
    found = find_citations(quick.doc_paths(paths, s), fact_id)
    if json_out:
        emit_json([{"path": str(c.path), "line": c.line, "fact_id": c.fact_id, "text": c.text} for c in found])
    elif found:
        emit("".join(f"{c.path}:{c.line}: {c.text}\n" for c in found))
    info(f"{fact_id}: cited {len(found)} time(s) in {len({c.path for c in found})} document(s)")


@handles_errors
def lint(
    paths: PathsArg = None,
    include_code: Annotated[
        bool,
        typer.Option(
            "--include-code",
            help="Also look inside code blocks and spans (a code span holding a value alone, `30s`, or a tool's report of a time, `built in 50.26s`, is always read).",
        ),
    ] = False,
    json_out: JsonFlag = False,
    targets: Annotated[
        bool,
        typer.Option("--targets", help="Also list targets, limits and settings (kind target); they never fail."),
    ] = False,
    suggest: Annotated[
        bool, typer.Option("--suggest", help="List, for each unsourced claim, the facts that could back it, best first.")
    ] = False,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Wrap each claim that exactly one citable fact backs (keeping the text as written) in its marker.",
        ),
    ] = False,
    changed_since: ChangedSinceOption = None,
    fmt: FormatOption = None,
    jobs: JobsOption = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
    select: Annotated[
        str | None,
        typer.Option("--select", help="Only these rules: ids or prefixes, comma-separated (FR101,FR12).", metavar="IDS"),
    ] = None,
    ignore: Annotated[
        str | None,
        typer.Option("--ignore", help="Leave out these rules: ids or prefixes, comma-separated.", metavar="IDS"),
    ] = None,
    every_rule: Annotated[
        bool, typer.Option("--all", help="Also run the preview rules, outside the default set (less precise).")
    ] = False,
    explain: Annotated[
        str | None,
        typer.Option("--explain", help="Print a rule's doc, decision and examples (FR101), and exit.", metavar="ID"),
    ] = None,
) -> None:
    """Find unsourced claims: measured or asserted performance (durations, rates, ratios, spreads) outside fact
    markers; targets, limits and settings are not claims.

    Exit 1 when there are any; cite them with <!-- fact: ID -->…<!-- /fact --> or reword them. --suggest names
    the facts that could back each; --fix cites those with exactly one citable fact whose marker renders the text
    as written (never a refuted, superseded, stale, cold or few_samples fact), then lists what is left.
    """
    if explain is not None:
        emit(quick.explain_rule(explain))
        return
    if suggest or fix:
        s = settings(db)
        quick.lint_rules(s, select, ignore, every_rule)  # an unknown rule id is refused here too
        if include_code or targets:
            from factreg.errors import UsageError

            raise UsageError("--suggest and --fix read prose only: drop --include-code and --targets")
        _suggest_or_fix(quick.doc_paths(paths, s), s, db, fix, json_out)
        return
    code = quick.lint(paths, no_cache=no_cache, include_code=include_code, targets=targets,
                      changed_since=changed_since, fmt=fmt, json_out=json_out, jobs=jobs, db=db, select=select,
                      ignore=ignore, every_rule=every_rule)
    if code:
        raise typer.Exit(code)


def _suggest_or_fix(roots: list[Path], s: Settings, db: str | None, fix: bool, json_out: bool) -> None:
    from factreg.docs import check as chk
    from factreg.docs import suggest as sg
    from factreg.docs import walk

    facts = list(chk.load_index(quick.registry_opener(db)(), s.file_config).values())
    cited: list[sg.Suggestion] = []
    if fix:
        result = sg.fix_paths(roots, facts)
        cited = result.cited
        for note in result.notes:
            info(note)
        if not json_out:
            emit("".join(f"{x.finding.path}:{x.finding.line}:{x.finding.col}: cited {x.fix.fact_id if x.fix else ''}: "
                         f"{x.fix.marker if x.fix else ''}\n" for x in cited))
    found: list[sg.Suggestion] = []
    for path, text in walk.documents(roots):
        if not isinstance(text, walk.Problem):
            found.extend(sg.suggest_text(text, facts, str(path)))
    if json_out:
        emit_json({"cited": [x.as_json() for x in cited], "unsourced": [x.as_json() for x in found]})
    else:
        out = []
        for x in found:
            f = x.finding
            out.append(f"{f.path}:{f.line}:{f.col}: {f.text} ({quick.value_unit(f)})")
            out.extend(
                f"    {c.fact_id}  {c.text}  [{c.status}{', ' + ', '.join(c.flags) if c.flags else ''}]"
                f"{'  named by: ' + ', '.join(c.words) if c.words else ''}"
                for c in x.candidates
            )
            if x.fix and x.fix.marker:
                out.append(f"    fix: {x.fix.marker}")
            elif x.why_no_fix:
                out.append(f"    not fixed: {x.why_no_fix}")
        if out:
            emit("\n".join(out) + "\n")
    if fix:
        info(f"docs lint --fix: {len(cited)} claim(s) cited, {len(found)} unsourced claim(s) left")
    else:
        backed = sum(1 for x in found if x.candidates)
        info(f"docs lint --suggest: {len(found)} unsourced claim(s), {backed} with a fact that could back it")
    if found:
        raise typer.Exit(1)


@handles_errors
def coverage(
    paths: PathsArg = None,
    json_out: JsonFlag = False,
    fail_under: Annotated[
        float | None,
        typer.Option("--fail-under", metavar="PCT", help="Exit 1 when the total share cited and current is below "
                     "PCT percent.", show_default=False),
    ] = None,
    as_of: AsOfOption = None,
    jobs: JobsOption = None,
    no_cache: NoCacheOption = False,
    db: DbOption = None,
) -> None:
    """How much of the performance claims are sourced, per file and in total: claims found (unsourced ones and
    citations), cited, cited and current (the fact is fresh or aging), unsourced, and the share cited and current.
    One pass over the documents, as `docs check --lint` makes (processes, document cache).

    Exit 1 with --fail-under PCT when the total share is below PCT.
    """
    from factreg import clock
    from factreg.docs import check as chk
    from factreg.docs import coverage as cov
    from factreg.errors import UsageError

    if fail_under is not None and not 0 <= fail_under <= 100:
        raise UsageError(f"--fail-under is a percentage from 0 to 100, got {fail_under:g}")
    s = settings(db)
    with clock.as_of(as_of):
        scanned = quick.scan(quick.doc_paths(paths, s), no_cache, config=s.file_config, check=True, lint=True,
                             jobs=jobs)
        result = cov.tally(scanned, lambda: chk.load_index(quick.registry_opener(db)(), s.file_config))
    if json_out:
        emit_json(result.as_json())
    else:
        from factreg.terminal import name

        rows = [*result.files, result.total] if result.files else []
        if rows:
            width = max(len(name(r.path)) for r in rows)
            head = f"{'file':<{width}}  claims  cited  current  unsourced  share\n"
            emit(head + "".join(
                f"{name(r.path):<{width}}  {r.claims:>6}  {r.cited:>5}  {r.current:>7}  {r.unsourced:>9}  "
                f"{cov.pct(r.share if r.path != 'total' else result.share):>5}\n" for r in rows))
    total = result.total
    info(f"docs coverage: {total.claims} claim(s), {total.current} cited and current, {total.unsourced} "
         f"unsourced: {cov.pct(result.share)} cited and current")
    for path in result.unreadable:
        info(f"{path}: could not be read (see `factreg docs check`)")
    if fail_under is not None and result.share < fail_under:
        info(f"docs coverage: {cov.pct(result.share)} is under --fail-under {fail_under:g}%")
        raise typer.Exit(1)


