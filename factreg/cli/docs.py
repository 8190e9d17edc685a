"""Commands: docs check, docs sync, docs cites, docs lint — citations of facts in Markdown documents.

Exit codes: 0 clean, 1 findings, 2 usage or configuration error, 3 could not verify.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from factreg.cli.common import (
    AsOfOption,
    DbOption,
    FormatOption,
    JsonFlag,
    emit,
    emit_findings,
    emit_json,
    handles_errors,
    info,
    open_registry,
    settings,
)

if TYPE_CHECKING:
    from factreg.cli.formats import Finding as CiFinding
    from factreg.config import Settings
    from factreg.docs.changed import Changes
    from factreg.docs.findings import Finding
    from factreg.docs.scan import Scan
    from factreg.registry.store import Registry

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


def _paths(paths: list[Path] | None, s: Settings) -> list[Path]:
    if paths:
        return list(paths)
    roots = s.get("docs.roots", ["."])
    if isinstance(roots, str):
        roots = [roots]
    return [s.root / r for r in roots]


def _changed(roots: list[Path], ref: str | None) -> tuple[list[Path], Changes | None]:
    """The documents to read: all under `roots`, or with --changed-since only the changed ones."""
    if ref is None:
        return roots, None
    from factreg.docs import changed

    changes = changed.since(ref)
    return changed.documents(roots, changes), changes


def _debt_line(command: str, debt: int, ref: str | None, what: str) -> None:
    if ref is not None:
        info(f"{command}: {debt} existing {what} on lines unchanged since {ref} (debt, not judged)")


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


def _scan(roots: list[Path], no_cache: bool, **kwargs: Any) -> Scan:
    """factreg.docs.scan.scan with the document cache, unless --no-cache or it cannot be used (then a warning
    says why, and the run goes on without it)."""
    from factreg.docs.scan import scan

    cache = None
    if not no_cache:
        from factreg.docs import cache as dc

        try:
            cache = dc.DocCache.open()
        except dc.CacheError as exc:
            if "turned off" not in str(exc):
                info(f"warning: document cache not used: {exc}")
    try:
        result = scan(roots, cache=cache, **kwargs)
    finally:
        if cache is not None:
            cache.close()
    if result.cache_problem:
        info(f"warning: document cache not used: {result.cache_problem}")
    if result.odd_names:
        from factreg import terminal

        names = ", ".join(terminal.name(p) for p in result.odd_names[:5])
        more = f" and {len(result.odd_names) - 5} more" if len(result.odd_names) > 5 else ""
        info(f"warning: {len(result.odd_names)} file name(s) not UTF-8, read and shown with \\xNN escapes: "
             f"{names}{more}")
    return result


def _registry_opener(db: str | None) -> Callable[[], Registry]:
    def opener() -> Registry:
        return open_registry(db, create=False)[1]

    return opener


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
    from factreg import clock
    from factreg.cli import formats, progress
    from factreg.docs import check as chk

    out_format = formats.choose(fmt, json_out)
    s = settings(db)
    roots, changes = _changed(_paths(paths, s), changed_since)
    with progress.bar("reading documents", None, minimum=0) as step:
        scanned = _scan(roots, no_cache, config=s.file_config, lint=with_lint, jobs=jobs, progress=step)
    docs = scanned.docs
    rules = lint_rules(s, None, None, False) if with_lint else frozenset()
    claims = [f for f in scanned.findings if f.kind == "claim" and f.rule in rules]
    if changes is not None:
        claims = [f for f in claims if changes.changed(f.path, f.line)]
    with clock.as_of(as_of):
        index = (chk.load_index(_registry_opener(db)(), s.file_config, chk.cited_ids(docs))
                 if chk.needs_registry(docs) else {})
        problems = chk.check_scanned(docs, index)
    debt: list[chk.Problem] = []
    if changes is not None:
        debt = [p for p in problems if not changes.changed(p.path, p.line)]
        problems = [p for p in problems if changes.changed(p.path, p.line)]
    n_markers = sum(len(d.markers) for d in docs)
    if out_format == "json":
        emit_json(
            {
                "problems": [p.as_json() for p in problems],
                "markers": n_markers,
                "documents_with_markers": sum(1 for d in docs if d.markers),
                **({"changed_since": changed_since, "existing_debt": len(debt)} if changes is not None else {}),
                **({"claims": _findings_json(claims)} if with_lint else {}),
            }
        )
    elif out_format != "text":  # github, sarif or a plugin's format
        emit_findings(
            out_format,
            [formats.Finding(p.kind, p.message, p.path, p.line, p.col, "error", p.fix, p.fact_id) for p in problems]
            + _lint_findings(claims),  # with --lint, the claims under their rules' ids
            rules=_rule_docs() if claims else None,
            properties={"existingDebt": len(debt)} if changes is not None else None,
        )
    else:
        out = []
        for p in problems:
            head = f"{p.path}:{p.line}:{p.col}: " + (f"{p.fact_id}: " if p.fact_id else "") + f"{p.kind}: {p.message}"
            out.append(head)
            out.extend(f"    {d}" for d in p.diff)
            if p.fix:
                out.append(f"    fix: {p.fix}")
        if out:
            emit("\n".join(out) + "\n")
        if claims:
            emit(_findings_text(claims))
    files = len({p.path for p in problems})
    info(f"docs check: {n_markers} citation(s), {len(problems)} problem(s) in {files} file(s)")
    _debt_line("docs check", len(debt), changed_since, "problem(s)")
    if with_lint:
        info(f"docs lint: {len(claims)} unsourced claim(s) in {len({f.path for f in claims})} file(s)")
    if problems or claims:
        raise typer.Exit(1)


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
    roots = _paths(paths, s)
    docs = chk.scan(roots, s.file_config)
    index = chk.load_index(_registry_opener(db)(), s.file_config) if chk.needs_registry(docs) else {}
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
    found = find_citations(_paths(paths, s), fact_id)
    if json_out:
        emit_json([{"path": str(c.path), "line": c.line, "fact_id": c.fact_id, "text": c.text} for c in found])
    elif found:
        emit("".join(f"{c.path}:{c.line}: {c.text}\n" for c in found))
    info(f"{fact_id}: cited {len(found)} time(s) in {len({c.path for c in found})} document(s)")


@handles_errors
def lint(
    paths: PathsArg = None,
    include_code: Annotated[
        bool, typer.Option("--include-code", help="Also look inside code blocks and spans.")
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
    from factreg.cli import formats

    if explain is not None:
        emit(_explain(explain))
        return
    s = settings(db)
    rules = lint_rules(s, select, ignore, every_rule)
    if suggest or fix:
        if include_code or targets:
            from factreg.errors import UsageError

            raise UsageError("--suggest and --fix read prose only: drop --include-code and --targets")
        _suggest_or_fix(_paths(paths, s), db, fix, json_out)
        return
    out_format = formats.choose(fmt, json_out)
    roots, changes = _changed(_paths(paths, s), changed_since)
    findings = _scan(
        roots, no_cache, check=False, lint=True, include_code=include_code, targets=targets, jobs=jobs
    ).findings
    findings = [f for f in findings if f.rule in rules]
    debt = 0
    if changes is not None:
        kept = [f for f in findings if changes.changed(f.path, f.line)]
        debt = sum(1 for f in findings if f.kind == "claim") - sum(1 for f in kept if f.kind == "claim")
        findings = kept
    claims = [f for f in findings if f.kind == "claim"]
    if out_format in ("github", "sarif"):
        emit_findings(
            out_format,
            _lint_findings(findings),
            rules=_rule_docs(),
            properties={"existingDebt": debt} if changes is not None else None,
        )
    elif out_format == "json":
        emit_json(_findings_json(findings))
    elif findings:
        emit(_findings_text(findings))
    info(f"docs lint: {len(claims)} unsourced claim(s) in {len({str(f.path) for f in claims})} file(s)")
    if targets:
        info(f"docs lint: {len(findings) - len(claims)} target(s), limit(s) or setting(s)")
    _debt_line("docs lint", debt, changed_since, "unsourced claim(s)")
    if claims:
        raise typer.Exit(1)


def _suggest_or_fix(roots: list[Path], db: str | None, fix: bool, json_out: bool) -> None:
    from factreg.docs import check as chk
    from factreg.docs import suggest as sg
    from factreg.docs import walk

    facts = list(chk.load_index(_registry_opener(db)(), settings(db).file_config).values())
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
            out.append(f"{f.path}:{f.line}:{f.col}: {f.text} ({_value_unit(f)})")
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
        scanned = _scan(_paths(paths, s), no_cache, config=s.file_config, check=True, lint=True, jobs=jobs)
        result = cov.tally(scanned, lambda: chk.load_index(_registry_opener(db)(), s.file_config))
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


LINT_FIX = (
    "cite a fact: <!-- fact: ID -->the number<!-- /fact --> (record it first with `factreg record`), reword it, "
    "or mark a target, limit or setting as such"
)


def _findings_json(findings: list[Finding]) -> list[dict[str, Any]]:
    from dataclasses import fields

    from factreg.docs.findings import Finding

    # a Finding holds only strings and numbers: no deep copy needed; `by` is always "rules" here (only the
    # experiment bench/claimmodel.py makes other findings), so the JSON keeps its keys
    names = [f.name for f in fields(Finding) if f.name != "by"]
    return [{k: (str(v) if isinstance(v, Path) else v) for k in names for v in (getattr(f, k),)} for f in findings]


def _findings_text(findings: list[Finding]) -> str:
    return "".join(
        f"{f.path}:{f.line}:{f.col}: {f.rule} {f.text} ({_value_unit(f)}){' [target]' if f.kind != 'claim' else ''}\n"
        for f in findings
    )


def lint_rules(conf: Settings, select: str | None, ignore: str | None, every: bool) -> frozenset[str]:
    """The lint rules in force: `--select`/`--ignore` (else `[lint] select`/`ignore`), the preview rules with
    `--all` or `[lint] preview = true`; UsageError for an id that names no rule."""
    from factreg.docs.lint.rules import UnknownRule, selected
    from factreg.errors import UsageError

    chosen = [c for c in select.split(",") if c.strip()] if select is not None else conf.names("lint.select")
    left = [c for c in ignore.split(",") if c.strip()] if ignore is not None else conf.names("lint.ignore")
    preview = every or str(conf.get("lint.preview", "false")).strip().lower() in ("true", "1", "yes", "on")
    try:
        return selected(chosen or None, left, preview)
    except UnknownRule as exc:
        raise UsageError(str(exc)) from None


def _explain(rule_id: str) -> str:
    from factreg.docs.lint.rules import UnknownRule, by_id, explain
    from factreg.errors import UsageError

    try:
        return explain(by_id(rule_id))
    except UnknownRule as exc:
        raise UsageError(str(exc)) from None


def _lint_findings(findings: list[Finding]) -> list[CiFinding]:
    """The lint's findings as formats.Finding (GitHub annotations, SARIF results), each under its rule's id."""
    from factreg.cli import formats

    return [
        formats.Finding(
            f.rule,
            f"{f.rule} unsourced performance claim {f.text!r} ({_value_unit(f)})"
            if f.kind == "claim"
            else f"{f.rule} target, limit or setting {f.text!r} (not a claim)",
            str(f.path),
            f.line,
            f.col,
            "error" if f.kind == "claim" else "note",
            LINT_FIX if f.kind == "claim" else "",
        )
        for f in findings
    ]


def _rule_docs() -> dict[str, str]:
    """SARIF's rule descriptions: each lint rule's one-line doc."""
    from factreg.docs.lint.rules import all_rules

    return {r.id: f"{r.name}: {r.doc}" for r in all_rules()}


def _value_unit(f: Finding) -> str:
    value = f.value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value} {f.unit}".strip() if value is not None else str(f.unit or "")
