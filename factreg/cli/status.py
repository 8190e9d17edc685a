"""Commands: status — every fact's freshness with its reason; exit 1 at or above the fail level."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from factreg.cli.common import (
    AsOfOption,
    Column,
    ColumnsOption,
    DbOption,
    FormatOption,
    JsonFlag,
    JsonlFlag,
    LimitOption,
    SinceOption,
    SortOption,
    emit,
    emit_findings,
    emit_json,
    emit_jsonl,
    fit_line,
    handles_errors,
    info,
    open_registry,
    pick_columns,
    print_table,
    project,
    select_rows,
    terminal_width,
)

if TYPE_CHECKING:
    from factreg.registry.store import Registry
    from factreg.registry.types import FactStatus


def register(app: typer.Typer) -> None:
    app.command("status")(status)


@handles_errors
def status(
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="aging|stale|refuted",
            help="Exit 1 when a fact is at or above this level. Severity: fresh = superseded < aging < "
            "stale = unverifiable = conditions_changed = shifted < refuted = retracted.",
        ),
    ] = "stale",
    as_of: AsOfOption = None,
    since: SinceOption = None,
    sort: SortOption = None,
    limit: LimitOption = None,
    columns: ColumnsOption = None,
    json_out: JsonFlag = False,
    jsonl: JsonlFlag = False,
    db: DbOption = None,
    fmt: FormatOption = None,
) -> None:
    """List every fact as fresh, aging, stale, refuted, retracted, conditions_changed, unverifiable, shifted or
    superseded, with why (`shifted`: its history's latest level began after its value and differs from it;
    docs/history.md).

    Decisions that rely on a fact that has since changed, whose driver no longer holds or whose review date has
    passed are listed as `needs review`. A summary line on
    stderr ends every run. Exit 0 when no fact is at or above --fail-on (default stale),
    1 when some are, 2 on a usage or configuration error. --since, --sort and --limit choose the facts shown;
    the summary and the exit code are about every fact.
    """
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
    if summary["failing"]:
        raise typer.Exit(1)


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
