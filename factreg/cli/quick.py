"""The commands a hook, an agent, a cron job or a script calls most, in the plain forms they call them (`docs lint
PATH…`, `docs check PATH…`, each with or without `--no-cache`, `cite ID`, `status` with or without `--json`, and
`list [PREFIX]` with `--limit N`, `--json`, both or neither), answered without importing typer; the bodies of those
commands, which the command line (cli/docs.py, cli/agents.py, cli/status.py, cli/facts.py) calls for every form; and
the helpers of the docs commands, of `status` and of `list`.

`main(args)` answers a plain form and returns its exit code, or None for anything else (another option, `--help`,
`--`, an empty or dash-led word, a global option): the command line answers that. A body returns its exit code and
prints what the command prints; `base.run_body` handles its failures as the command line's error decorator does.
tests/test_quick.py holds both paths to the same output and exit code."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.cli.base import emit, emit_findings, emit_json, info, open_registry, settings
from factreg.cli.tables import (
    Column,
    emit_jsonl,
    fit_line,
    pick_columns,
    print_table,
    project,
    select_rows,
    terminal_width,
)

if TYPE_CHECKING:
    from factreg.cli.formats import Finding as CiFinding
    from factreg.config import Settings
    from factreg.docs.changed import Changes
    from factreg.docs.findings import Finding
    from factreg.docs.scan import Scan
    from factreg.registry.store import Registry
    from factreg.registry.types import FactStatus

# the options each plain form takes, besides its words (paths, or the one id); `--limit` takes a number of digits
_PLAIN = {("docs", "lint"): {"--no-cache"}, ("docs", "check"): {"--no-cache"}, ("cite",): set(),
          ("status",): {"--json"}, ("list",): {"--json", "--limit"}}


def _parse(rest: list[str], options: set[str]) -> tuple[list[str], dict[str, str | bool]] | None:
    """The words and the options given after a plain form's words, or None when anything else is there."""
    given: list[str] = []
    chosen: dict[str, str | bool] = {}
    words = iter(rest)
    for a in words:
        if a == "--limit" and a in options:
            value = next(words, "")
            if not (value.isascii() and value.isdigit() and len(value) <= 6) or a in chosen:
                return None
            chosen[a] = value
        elif a in options:
            chosen[a] = True
        elif a and not a.startswith("-"):
            given.append(a)
        else:
            return None
    return given, chosen


def main(args: list[str]) -> int | None:
    """The exit code of a plain form after running it, or None when the command line must answer `args`."""
    from factreg.cli.base import run_body

    for words, options in _PLAIN.items():
        if tuple(args[:len(words)]) != words:
            continue
        parsed = _parse(args[len(words):], options)
        if parsed is None:
            return None
        given, chosen = parsed
        if words == ("cite",):
            return run_body(cite, given[0]) if len(given) == 1 else None
        if words == ("status",):
            return run_body(status, json_out="--json" in chosen) if not given else None
        if words == ("list",):
            limit = chosen.get("--limit")
            return run_body(list_facts, *given, json_out="--json" in chosen,
                            limit=int(limit) if isinstance(limit, str) else None) if len(given) <= 1 else None
        body = lint if words[1] == "lint" else check
        return run_body(body, [Path(p) for p in given] or None, no_cache="--no-cache" in chosen)
    return None


def lint(
    paths: list[Path] | None,
    *,
    no_cache: bool = False,
    include_code: bool = False,
    targets: bool = False,
    changed_since: str | None = None,
    fmt: str | None = None,
    json_out: bool = False,
    jobs: int | None = None,
    db: str | None = None,
    select: str | None = None,
    ignore: str | None = None,
    every_rule: bool = False,
) -> int:
    """`docs lint` (without --explain, --suggest or --fix): the unsourced claims, exit 1 when there are any."""
    from factreg.cli import formats

    s = settings(db)
    rules = lint_rules(s, select, ignore, every_rule)
    out_format = formats.choose(fmt, json_out)
    roots, changes = changed_only(doc_paths(paths, s), changed_since)
    findings = scan(
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
            lint_findings(findings),
            rules=rule_docs(),
            properties={"existingDebt": debt} if changes is not None else None,
        )
    elif out_format == "json":
        emit_json(findings_json(findings))
    elif findings:
        emit(findings_text(findings))
    info(f"docs lint: {len(claims)} unsourced claim(s) in {len({str(f.path) for f in claims})} file(s)")
    if targets:
        info(f"docs lint: {len(findings) - len(claims)} target(s), limit(s) or setting(s)")
    debt_line("docs lint", debt, changed_since, "unsourced claim(s)")
    return 1 if claims else 0


def check(
    paths: list[Path] | None,
    *,
    no_cache: bool = False,
    as_of: str | None = None,
    json_out: bool = False,
    db: str | None = None,
    changed_since: str | None = None,
    fmt: str | None = None,
    with_lint: bool = False,
    jobs: int | None = None,
) -> int:
    """`docs check`: every cited fact and marker judged, exit 1 on a problem (or, with --lint, a claim)."""
    from factreg import clock
    from factreg.cli import formats, progress
    from factreg.docs import check as chk

    out_format = formats.choose(fmt, json_out)
    s = settings(db)
    roots, changes = changed_only(doc_paths(paths, s), changed_since)
    with progress.bar("reading documents", None, minimum=0) as step:
        scanned = scan(roots, no_cache, config=s.file_config, lint=with_lint, jobs=jobs, progress=step)
    docs = scanned.docs
    rules = lint_rules(s, None, None, False) if with_lint else frozenset()
    claims = [f for f in scanned.findings if f.kind == "claim" and f.rule in rules]
    if changes is not None:
        claims = [f for f in claims if changes.changed(f.path, f.line)]
    with clock.as_of(as_of):
        index = (chk.load_index(registry_opener(db)(), s.file_config, chk.cited_ids(docs))
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
                **({"claims": findings_json(claims)} if with_lint else {}),
            }
        )
    elif out_format != "text":  # github, sarif or a plugin's format
        emit_findings(
            out_format,
            [formats.Finding(p.kind, p.message, p.path, p.line, p.col, "error", p.fix, p.fact_id) for p in problems]
            + lint_findings(claims),  # with --lint, the claims under their rules' ids
            rules=rule_docs() if claims else None,
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
            emit(findings_text(claims))
    files = len({p.path for p in problems})
    info(f"docs check: {n_markers} citation(s), {len(problems)} problem(s) in {files} file(s)")
    debt_line("docs check", len(debt), changed_since, "problem(s)")
    if with_lint:
        info(f"docs lint: {len(claims)} unsourced claim(s) in {len({f.path for f in claims})} file(s)")
    return 1 if problems or claims else 0


def status(
    *,
    fail_on: str = "stale",
    as_of: str | None = None,
    since: str | None = None,
    sort: str | None = None,
    limit: int | None = None,
    columns: str | None = None,
    json_out: bool = False,
    jsonl: bool = False,
    db: str | None = None,
    fmt: str | None = None,
) -> int:
    """`status`: every fact's status with why, and the decisions needing review; exit 1 at or above --fail-on."""
    from factreg import clock
    from factreg.cli import formats
    from factreg.registry import freshness
    from factreg.registry import status as st

    out_format = formats.choose(fmt, json_out)
    json_out = out_format == "json"
    freshness.fails("fresh", fail_on)  # validate --fail-on before opening anything
    available = _columns()
    chosen = pick_columns(columns, available)
    with clock.as_of(as_of):
        s, reg = open_registry(db, create=False)
        facts = st.statuses(reg, s.file_config)
        _uncited_retractions(reg, s, facts)
        summary = st.summary(facts, fail_on)
        review = _decisions_needing_review(reg, s.file_config, facts)
        machines = _machine_sides(reg, facts)
    facts = select_rows(facts, available, sort=sort, since=since, limit=limit)
    keys = chosen if columns else None

    def with_machine(f: FactStatus) -> dict[str, object]:
        row = project(f, keys)
        return {**row, "machine": machines[f["id"]]} if f["id"] in machines and keys is None else row

    if jsonl:
        emit_jsonl(with_machine(f) for f in facts)
    elif json_out:
        emit_json({"facts": [with_machine(f) for f in facts], "summary": summary,
                   "decisions_needing_review": review})
    elif out_format != "text":  # github, sarif or a plugin's format
        emit_findings(out_format, _findings(facts, review, fail_on))
    elif columns and facts:
        print_table(facts, chosen)
    elif facts and terminal_width() is not None:
        # On a terminal: a table that keeps every id whole, shortening or dropping the other columns.
        print_table(facts, pick_columns(None, available, ["status", "id", "value", "reason"]))
        screen = terminal_width()
        for fid, sides in machines.items():
            emit(fit_line(f"{fid}: ", f"machine when measured: {sides['fact']}", screen) + "\n"
                 + fit_line(f"{fid}: ", f"machine at verification: {sides['verification']}", screen) + "\n")
    elif facts:
        from factreg.registry import display, freshness

        width = max(len(f["id"]) for f in facts)
        emit(
            "".join(
                f"{freshness.label(f):<18} {f['id']:<{width}}  {display.headline(f)}  {f['status_reason']}\n"
                + (f"{'':<18} machine when measured: {machines[f['id']]['fact']}\n"
                   f"{'':<18} machine at verification: {machines[f['id']]['verification']}\n"
                   if f["id"] in machines else "")
                for f in facts
            )
        )
    if review and out_format == "text" and not jsonl:
        emit("".join(
            f"{'needs review':<18} decision {d['number']}: {d['title']} — {d['review_reason']}\n" for d in review))
    line = st.summary_line(summary)
    if review:
        line += f"; {len(review)} decision(s) need review"
    info(line)
    return 1 if summary["failing"] else 0


def list_facts(
    prefix: str | None = None,
    *,
    metric: str | None = None,
    status: list[str] | None = None,
    subject: str | None = None,
    cond: list[str] | None = None,
    since: str | None = None,
    sort: str | None = None,
    limit: int | None = None,
    columns: str | None = None,
    json_out: bool = False,
    jsonl: bool = False,
    db: str | None = None,
) -> int:
    """`list`: the current facts, optionally under a prefix, filtered, sorted and cut to --limit."""
    from factreg.errors import UsageError
    from factreg.registry import conditions, facts, freshness
    from factreg.registry.ids import check_id

    available = _list_columns()
    chosen = pick_columns(columns, available, ["id", "metric", "value", "status", "flags", "measured"])
    wanted = {w.strip() for item in status or [] for w in item.split(",") if w.strip()}
    unknown = sorted(wanted - set(freshness.ORDER))
    if unknown:
        raise UsageError(f"--status {unknown[0]!r}: choose among {', '.join(freshness.ORDER)}")
    if prefix is not None:
        check_id(prefix.rstrip("/"))
    s, reg = open_registry(db, create=False)
    filters = {"metric": metric, "subject": subject, "conds": conditions.parse_pairs(cond or [], "--cond"),
               "prefix": prefix}

    def pick(found: list[Any]) -> list[Any]:
        return select_rows([f for f in found if not wanted or f.get("status") in wanted], available, since=since)

    select_rows([], available, sort=sort, since=since, limit=limit)  # a bad --sort, --since or --limit: an error now
    if limit is not None and (sort or "id").lstrip("-") == "id":
        # In id order: read and judge only the facts it takes to fill --limit.
        data = facts.list_first(reg, s.file_config, limit, pick if wanted or since is not None else None,
                                descending=(sort or "").startswith("-"), **filters)
    else:
        data = select_rows(pick(facts.list_facts(reg, s.file_config, **filters)), available, sort=sort, limit=limit)
    keys = chosen if columns else None
    if jsonl:
        emit_jsonl(project(f, keys) for f in data)
    elif json_out:
        emit_json([project(f, keys) for f in data])
    else:
        print_table(data, chosen)
        info(f"{len(data)} fact(s)")
    return 0


def cite(fact_id: str, format_: str | None = None, asof: bool = False, json_out: bool = False,
         db: str | None = None) -> int:
    """`cite`: the citation marker for a fact; exit 1 when the fact should not be cited."""
    from factreg.agents.tools import Tools

    s, reg = open_registry(db, create=False)
    advice = Tools(reg, s).cite(fact_id, format_, asof)
    if json_out:
        emit_json(advice)
    else:
        emit(advice["marker"] + "\n")
    if advice.get("replaces"):
        info(f"{fact_id} is superseded: this cites {advice['fact_id']}")
    if advice["why_not"]:
        info(f"{advice['fact_id']} should not be cited: {advice['why_not']}")
        return 1
    return 0


def doc_paths(paths: list[Path] | None, s: Settings) -> list[Path]:
    if paths:
        return list(paths)
    roots = s.get("docs.roots", ["."])
    if isinstance(roots, str):
        roots = [roots]
    return [s.root / r for r in roots]


def changed_only(roots: list[Path], ref: str | None) -> tuple[list[Path], Changes | None]:
    """The documents to read: all under `roots`, or with --changed-since only the changed ones."""
    if ref is None:
        return roots, None
    from factreg.docs import changed

    changes = changed.since(ref)
    return changed.documents(roots, changes), changes


def debt_line(command: str, debt: int, ref: str | None, what: str) -> None:
    if ref is not None:
        info(f"{command}: {debt} existing {what} on lines unchanged since {ref} (debt, not judged)")


def scan(roots: list[Path], no_cache: bool, **kwargs: Any) -> Scan:
    """factreg.docs.scan.scan with the document cache, unless --no-cache or it cannot be used (then a warning
    says why, and the run goes on without it)."""
    from factreg.docs import scan as sc

    cache = None
    if not no_cache:
        from factreg.docs import cache as dc

        try:
            cache = dc.DocCache.open()
        except dc.CacheError as exc:
            if "turned off" not in str(exc):
                info(f"warning: document cache not used: {exc}")
    try:
        result = sc.scan(roots, cache=cache, **kwargs)
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


def registry_opener(db: str | None) -> Callable[[], Registry]:
    def opener() -> Registry:
        return open_registry(db, create=False)[1]

    return opener


LINT_FIX = (
    "cite a fact: <!-- fact: ID -->the number<!-- /fact --> (record it first with `factreg record`), reword it, "
    "or mark a target, limit or setting as such"
)


def findings_json(findings: list[Finding]) -> list[dict[str, Any]]:
    from dataclasses import fields

    from factreg.docs.findings import Finding

    # a Finding holds only strings and numbers: no deep copy needed; `by` is always "rules" here (only the
    # experiment bench/claimmodel.py makes other findings), so the JSON keeps its keys
    names = [f.name for f in fields(Finding) if f.name != "by"]
    return [{k: (str(v) if isinstance(v, Path) else v) for k in names for v in (getattr(f, k),)} for f in findings]


def findings_text(findings: list[Finding]) -> str:
    return "".join(
        f"{f.path}:{f.line}:{f.col}: {f.rule} {f.text} ({value_unit(f)}){' [target]' if f.kind != 'claim' else ''}\n"
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


def explain_rule(rule_id: str) -> str:
    from factreg.docs.lint.rules import UnknownRule, by_id, explain
    from factreg.errors import UsageError

    try:
        return explain(by_id(rule_id))
    except UnknownRule as exc:
        raise UsageError(str(exc)) from None


def lint_findings(findings: list[Finding]) -> list[CiFinding]:
    """The lint's findings as formats.Finding (GitHub annotations, SARIF results), each under its rule's id."""
    from factreg.cli import formats

    return [
        formats.Finding(
            f.rule,
            f"{f.rule} unsourced performance claim {f.text!r} ({value_unit(f)})"
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


def rule_docs() -> dict[str, str]:
    """SARIF's rule descriptions: each lint rule's one-line doc."""
    from factreg.docs.lint.rules import all_rules

    return {r.id: f"{r.name}: {r.doc}" for r in all_rules()}


def value_unit(f: Finding) -> str:
    value = f.value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value} {f.unit}".strip() if value is not None else str(f.unit or "")


# status's helpers

def _uncited_retractions(reg: Registry, s: Any, facts: list[FactStatus]) -> None:
    """A retracted fact that nothing cites any more (no document, decision or fact) fails nothing: severity 0."""
    if not any(f["status"] == "retracted" for f in facts):
        return
    from factreg.publish import tidy

    uncited = tidy.retracted_uncited(reg, s, facts)
    for f in facts:
        if f["id"] in uncited:
            f["severity"] = 0
            f["status_reason"] += "; nothing cites it any more"


def _findings(facts: list[FactStatus], review: list[dict[str, object]], fail_on: str) -> list[Any]:
    """Facts that are not fresh (an error at or above --fail-on, else a warning) and decisions needing review."""
    from factreg.cli.formats import Finding
    from factreg.registry import freshness

    out = []
    for f in facts:
        if f["status"] in ("fresh", "superseded"):
            continue
        level = "error" if f["severity"] >= freshness.FAIL_LEVELS[fail_on] else "warning"
        fix = (f"factreg method {f['id']} --probe URL --body FILE (or --bench -- ARGS), then factreg verify {f['id']}"
               if freshness.label(f) != f["status"] else f"factreg verify {f['id']}")
        out.append(Finding(f["status"], f"{f['id']} is {freshness.label(f)}: {f['status_reason']}", level=level,
                           fact_id=f["id"], fix=fix))
    for d in review:
        out.append(Finding("decision_needs_review", f"decision {d['number']}: {d['title']} — {d['review_reason']}",
                           level="warning", title=f"decision {d['number']} needs review"))
    return out


def _machine_sides(reg: Registry, facts: list[FactStatus]) -> dict[str, dict[str, str]]:
    """For each refuted or conditions_changed fact: the machine's state and control, measured and verified."""
    from factreg.measure import machinestate

    return machinestate.for_facts(reg, [f["id"] for f in facts if f["status"] in ("refuted", "conditions_changed")])


def _columns() -> list[Column]:
    from factreg.registry import display, freshness

    return [Column("status", "status", freshness.label),
            Column("id", "id", lambda f: f["id"]),
            Column("value", "value", display.headline),
            Column("reason", "status_reason", lambda f: f["status_reason"]),
            Column("metric", "metric", lambda f: f["metric"]),
            Column("measured", "measured_at", lambda f: (f["measured_at"] or "")[:10]),
            Column("subject", "subject", lambda f: f["subject"] or "—"),
            Column("severity", "severity", lambda f: str(f["severity"]), "right")]


def _decisions_needing_review(
    reg: Registry, config: Mapping[str, Any], facts: list[FactStatus]
) -> list[dict[str, object]]:
    """Open decisions whose cited facts have since changed (none loaded when the registry has no decisions).

    The cited facts' statuses are taken from `facts`, the statuses just computed for every fact."""
    if not reg.query("SELECT count(*) AS n FROM decision")[0]["n"]:
        return []
    from factreg.publish import decisions

    return [{"number": d["number"], "title": d["title"], "review_reason": "; ".join(d["review_reasons"])}
            for d in decisions.needing_review(reg, config, statuses=facts)]


def _list_columns() -> list[Column]:
    from factreg.registry import display, freshness

    return [Column("id", "id", lambda f: f["id"]),
            Column("metric", "metric", lambda f: f["metric"]),
            Column("value", "value", display.headline),
            Column("n", "n", lambda f: str(f["n"] or "—"), "right"),
            Column("status", "status", freshness.label),
            Column("flags", "flags", lambda f: ", ".join(f["flags"])),
            Column("measured", "measured_at", lambda f: f["measured_at"][:10]),
            Column("subject", "subject", lambda f: f["subject"] or "—"),
            Column("unit", "unit", lambda f: f["unit"]),
            Column("version", "version", lambda f: str(f["version"]), "right"),
            Column("reason", "status_reason", lambda f: f.get("status_reason") or "")]
