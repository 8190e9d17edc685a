"""Commands: docs check, docs sync, docs cites, docs lint — citations of facts in Markdown documents.

Exit codes: 0 clean, 1 findings, 2 usage or configuration error, 3 could not verify.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from factreg.cli.common import (
    AsOfOption,
    DbOption,
    JsonFlag,
    emit,
    emit_json,
    handles_errors,
    info,
    open_registry,
    settings,
)

if TYPE_CHECKING:
    from factreg.config import Settings
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


def register(app: typer.Typer) -> None:
    docs_app.command("check")(check)
    docs_app.command("sync")(sync)
    docs_app.command("cites")(cites)
    docs_app.command("lint")(lint)
    app.add_typer(docs_app, name="docs")


def _paths(paths: list[Path] | None, s: Settings) -> list[Path]:
    if paths:
        return list(paths)
    roots = s.get("docs.roots", ["."])
    if isinstance(roots, str):
        roots = [roots]
    return [s.root / r for r in roots]


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
    with_lint: Annotated[
        bool,
        typer.Option("--lint", help="Also find unsourced claims (as `docs lint`), reading each file once."),
    ] = False,
    jobs: JobsOption = None,
) -> None:
    """Check that every cited fact holds and every marker shows its current rendering; writes nothing.

    Exit 1 when a cited fact is stale, refuted, retracted, shifted, superseded, unknown or its conditions changed,
    when a marker's text differs from the registry, or a file or marker cannot be read; with --lint, also when
    there are unsourced claims (listed after the problems; in --json under "claims").
    """
    from factreg import clock
    from factreg.docs import check as chk
    from factreg.docs.scan import scan

    s = settings(db)
    scanned = scan(_paths(paths, s), s.file_config, lint=with_lint, jobs=jobs)
    docs = scanned.docs
    claims = [f for f in scanned.findings if f.kind == "claim"]
    with clock.as_of(as_of):
        index = chk.load_index(_registry_opener(db)(), s.file_config) if chk.needs_registry(docs) else {}
        problems = chk.check_scanned(docs, index)
    n_markers = sum(len(d.markers) for d in docs)
    if json_out:
        emit_json(
            {
                "problems": [p.as_json() for p in problems],
                "markers": n_markers,
                "documents_with_markers": sum(1 for d in docs if d.markers),
                **({"claims": _findings_json(claims)} if with_lint else {}),
            }
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

    s = settings(db)
    roots = _paths(paths, s)
    docs = chk.scan(roots, s.file_config)
    index = chk.load_index(_registry_opener(db)(), s.file_config) if chk.needs_registry(docs) else {}
    result = sy.sync_scanned(docs, index, dry_run=dry_run, roots=roots, max_bytes=chk.max_bytes(s.file_config))
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
    jobs: JobsOption = None,
) -> None:
    """Find unsourced claims: measured or asserted performance (durations, rates, ratios, spreads) outside fact
    markers; targets, limits and settings are not claims.

    Exit 1 when there are any; cite them with <!-- fact: ID -->…<!-- /fact --> or reword them.
    """
    from factreg.docs.scan import scan

    s = settings(None)
    findings = scan(
        _paths(paths, s), check=False, lint=True, include_code=include_code, targets=targets, jobs=jobs
    ).findings
    claims = [f for f in findings if f.kind == "claim"]
    if json_out:
        emit_json(_findings_json(findings))
    elif findings:
        emit(_findings_text(findings))
    info(f"docs lint: {len(claims)} unsourced claim(s) in {len({str(f.path) for f in claims})} file(s)")
    if targets:
        info(f"docs lint: {len(findings) - len(claims)} target(s), limit(s) or setting(s)")
    if claims:
        raise typer.Exit(1)


def _findings_json(findings: list) -> list[dict]:  # type: ignore[type-arg]
    from dataclasses import fields

    from factreg.docs.lint import Finding

    names = [f.name for f in fields(Finding)]  # a Finding holds only strings and numbers: no deep copy needed
    return [{k: (str(v) if isinstance(v, Path) else v) for k in names for v in (getattr(f, k),)} for f in findings]


def _findings_text(findings: list) -> str:  # type: ignore[type-arg]
    return "".join(
        f"{f.path}:{f.line}:{f.col}: {f.text} ({_value_unit(f)}){' [target]' if f.kind != 'claim' else ''}\n"
        for f in findings
    )


def _value_unit(f) -> str:  # type: ignore[no-untyped-def]
    value = f.value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value} {f.unit}".strip() if value is not None else str(f.unit or "")
