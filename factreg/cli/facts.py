"""Commands that record and read facts: record, show, list, history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from factreg.cli.common import (
    Bold,
    Column,
    ColumnsOption,
    DbOption,
    JsonFlag,
    JsonlFlag,
    LimitOption,
    SinceOption,
    SortOption,
    emit_json,
    emit_jsonl,
    handles_errors,
    info,
    min_uptime,
    number,
    open_registry,
    pick_columns,
    print_lines,
    print_table,
    project,
    select_rows,
    whole_number,
)

if TYPE_CHECKING:
    from factreg.registry.types import FactData


def register(app: typer.Typer) -> None:
    app.command("record")(record)
    app.command("show")(show)
    app.command("list")(list_)
    app.command("history")(history)
    app.command("rm")(rm)
    app.command("mv")(mv)


@handles_errors
def record(
    fact_id: Annotated[str, typer.Argument(metavar="ID", help="Fact id, a slug such as gamebox/a3b/tg32.")],
    metric: Annotated[str, typer.Option("--metric", "-m", help="Metric name (see `factreg metrics`).")],
    value: Annotated[str | None, typer.Option("--value", help="The value, when there are no samples.")] = None,
    samples: Annotated[str | None, typer.Option("--samples", help="Raw samples, comma-separated; value = median.")] = None,
    unit: Annotated[str | None, typer.Option("--unit", help="Unit; required for a custom metric.")] = None,
    spread: Annotated[str | None, typer.Option("--spread", help="Standard deviation (default: of the samples).")] = None,
    n: Annotated[int | None, typer.Option("--n", help="Number of samples behind --value.",
                                                        parser=whole_number("--n"))] = None,
    cond: Annotated[list[str] | None, typer.Option("--cond", "-c", help="Identity condition key=value (repeat).")] = None,
    info: Annotated[list[str] | None, typer.Option("--info", "-i", help="Info condition key=value (repeat).")] = None,
    subject: Annotated[str | None, typer.Option("--subject", help="What was measured (default: id's parent).")] = None,
    measured_at: Annotated[str | None, typer.Option("--measured-at", help="ISO-8601 time (default: now).")] = None,
    warn_after: Annotated[str | None, typer.Option("--warn-after", help="Aging after this long, e.g. 30d.")] = None,
    error_after: Annotated[str | None, typer.Option("--error-after", help="Stale after this long, e.g. 90d.")] = None,
    tolerance: Annotated[float | None, typer.Option("--tolerance", help="Practical tolerance, e.g. 0.1.",
                                                                      parser=number("--tolerance"))] = None,
    direction: Annotated[str | None, typer.Option("--direction", help="higher|lower is better (custom metric).")] = None,
    note: Annotated[str | None, typer.Option("--note", help="Free text kept with the fact.")] = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Record a measurement as a fact (a new version when the id exists)."""
    from factreg.errors import UsageError
    from factreg.registry import conditions, facts

    if (value is None) == (samples is None):
        raise UsageError("give exactly one of --value and --samples")
    new = facts.NewFact(
        id=fact_id, metric=metric,
        value=facts.parse_number(value, "--value") if value is not None else None,
        samples=facts.parse_samples(samples) if samples is not None else None,
        unit=unit, spread=facts.parse_number(spread, "--spread") if spread is not None else None, n=n,
        identity=conditions.parse_pairs(cond or [], "--cond"), info=conditions.parse_pairs(info or [], "--info"),
        subject=subject, measured_at=measured_at, warn_after=warn_after, error_after=error_after,
        tolerance=tolerance, note=note, direction=direction,
    )
    facts.build_rows(new)  # validate before touching the database
    s, reg = open_registry(db)
    new_id = not reg.query("SELECT 1 AS one FROM fact WHERE id = :id", {"id": fact_id})
    data = facts.record(reg, new, min_uptime(s))
    if new_id:  # said once, when the typed fact is new
        from factreg.cli.common import info as say  # `info` here is the --info option
        from factreg.measure.methods import typed_note

        say(typed_note(data["id"]))
    if json_out:
        emit_json(data)
        return
    _print_fact(data)


@handles_errors
def show(
    fact_id: Annotated[str, typer.Argument(metavar="ID")],
    version: Annotated[int | None, typer.Option("--version", help="A past version instead of the current.",
                                                                    parser=whole_number("--version"))] = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Show one fact: value, statistics, conditions, flags, status and method."""
    from factreg.registry import facts

    s, reg = open_registry(db, create=False)
    data = facts.get(reg, fact_id, version, s.file_config)
    if json_out:
        emit_json(data)
        return
    _print_fact(data)


@handles_errors
def list_(
    prefix: Annotated[str | None, typer.Argument(
        metavar="[PREFIX]", help="Only this fact and the ids under it (gamebox/a3b: gamebox/a3b/tg32, …).",
        show_default=False)] = None,
    metric: Annotated[str | None, typer.Option("--metric", "-m", help="Only this metric.")] = None,
    status: Annotated[list[str] | None, typer.Option(
        "--status", metavar="STATUS", help="Only facts with this status: fresh, aging, stale, unverifiable, "
        "conditions_changed, shifted, refuted, retracted or superseded (repeat, or comma-separated).",
        show_default=False)] = None,
    subject: Annotated[str | None, typer.Option("--subject", help="Only this subject.")] = None,
    cond: Annotated[list[str] | None, typer.Option("--cond", "-c", help="Only facts with condition key=value.")] = None,
    since: SinceOption = None,
    sort: SortOption = None,
    limit: LimitOption = None,
    columns: ColumnsOption = None,
    json_out: JsonFlag = False,
    jsonl: JsonlFlag = False,
    db: DbOption = None,
) -> None:
    """List current facts, optionally under a PREFIX, filtered, sorted and cut to --limit."""
    from factreg.cli import quick

    quick.list_facts(prefix, metric=metric, status=status, subject=subject, cond=cond, since=since, sort=sort,
                     limit=limit, columns=columns, json_out=json_out, jsonl=jsonl, db=db)


def _history_columns(fact_id: str) -> list[Column]:
    from factreg.registry import display

    def verifications(v: dict[str, Any]) -> str:
        return "; ".join(f"verification {x['pk']}: {x['verified_at'][:10]} {x['verdict']}"
                         for x in v["verifications"]) or "—"

    def version(v: dict[str, Any]) -> str:
        fix = v.get("corrected")
        return f"{v['version']}" + (" (current)" if v["current"] else "") + (
            f" (corrected by v{fix['by_version']})" if fix else "")

    return [Column("version", "version", version),
            Column("value", "value", display.headline),
            Column("n", "n", lambda v: str(v["n"] or "—"), "right"),
            Column("measured", "measured_at", lambda v: v["measured_at"][:16].replace("T", " ")),
            Column("flags", "flags", lambda v: ",".join(v["flags"])),
            Column("verifications", "verifications", verifications),
            Column("recorded", "recorded_at", lambda v: v["recorded_at"][:16].replace("T", " ")),
            Column("note", "note", lambda v: v.get("note") or ""),
            Column("correction", "corrected", lambda v: (v.get("corrected") or {}).get("note") or "")]


@handles_errors
def history(
    fact_id: Annotated[str, typer.Argument(metavar="ID")],
    since: SinceOption = None,
    sort: SortOption = None,
    limit: LimitOption = None,
    columns: ColumnsOption = None,
    json_out: JsonFlag = False,
    jsonl: JsonlFlag = False,
    db: DbOption = None,
) -> None:
    """Show every version of a fact and the verifications made of each."""
    from factreg.registry import facts

    available = _history_columns(fact_id)
    chosen = pick_columns(columns, available, ["version", "value", "measured", "flags", "verifications"])
    _, reg = open_registry(db, create=False)
    data = select_rows(facts.history(reg, fact_id), available, sort=sort, since=since, limit=limit)
    keys = chosen if columns else None
    if jsonl:
        emit_jsonl(project(v, keys) for v in data)
        return
    if json_out:
        emit_json([project(v, keys) for v in data])
        return
    print_lines([[Bold(fact_id), f" — {len(data)} version(s)"]])
    print_table(data, chosen)


def _print_fact(f: FactData) -> None:
    from factreg import fmt
    from factreg.registry import display

    lines: list[str | list[str]] = [
        [Bold(f["id"]), f"  v{f['version']}  {f['metric']}: ", Bold(display.headline(f))]]
    st = f["stats"]
    if st["ci95"]:
        lines.append(f"  mean {fmt.num(st['mean'])} · 95% interval of the mean {fmt.num(st['ci95'][0])} … "
                     f"{fmt.num(st['ci95'][1])} · cv {fmt.num((st['cv'] or 0) * 100, 2)}%")
    if f["samples"]:
        lines.append("  samples: " + ", ".join(fmt.num(x, 4) for x in f["samples"]))
    ident = f["conditions"]["identity"]
    info = f["conditions"]["info"]
    lines.append("  identity: " + (", ".join(f"{k}={v}" for k, v in ident.items()) or "none"))
    if info:
        lines.append("  info: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    flags = [flag if flag != "no_conditions" or not display.missing_identity(f)
             else f"no_conditions (missing: {', '.join(display.missing_identity(f))})" for flag in f["flags"]]
    lines.append(f"  flags: {', '.join(flags) or 'none'}")
    if "status" in f:
        lines.append(f"  status: {f['status']} — {f['status_reason']}")
    lines.append(f"  measured {f['measured_at']}, recorded {f['recorded_at']}, method "
                 f"{display.method_text(f['method'])}")
    if f.get("note"):
        lines.append(f"  note: {f['note']}")
    print_lines(lines)


@handles_errors
def rm(
    ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Facts to remove, every version.")],
    force: Annotated[bool, typer.Option("--force", help="Remove them even while documents, decisions or other "
                                        "facts cite them (which then cite a fact that is gone).")] = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Remove facts — every version, its verifications and corrections — for a fact recorded or imported under a
    wrong id; refused (exit 1) while a document under the docs roots or a decision cites it, unless --force. Says
    what was removed."""
    from factreg.publish import tidy

    s, reg = open_registry(db, create=False)
    result = tidy.rm(reg, s, ids, force=force)
    if json_out:
        emit_json(result)
        return
    for r in result["removed"]:
        rows = r["rows"]
        info(f"removed {r['id']}: {rows['fact_version']} version(s), {rows['sample']} sample(s), "
             f"{rows['condition']} condition(s), {rows['verification']} verification(s), {rows['correction']} "
             "correction(s)" + (f"; still cited by {', '.join(r['still_cited_by'])}" if r["still_cited_by"] else ""))


@handles_errors
def mv(
    old: Annotated[str, typer.Argument(metavar="OLD", help="The fact's id now.")],
    new: Annotated[str, typer.Argument(metavar="NEW", help="Its new id (not a fact yet).")],
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Rename a fact: every version and verification, the markers citing it in the documents under the docs roots
    and the decisions citing it — byte for byte, nothing else changes; all or nothing, like `docs sync`."""
    from factreg.publish import tidy

    s, reg = open_registry(db, create=False)
    result = tidy.mv(reg, s, old, new)
    if json_out:
        emit_json(result)
        return
    info(f"renamed {old} to {new}: {result['rows']['fact_version']} version(s), "
         f"{result['rows']['verification']} verification(s); {len(result['documents'])} document(s) and "
         f"{len(result['decisions'])} decision(s) rewritten")
    for p in result["changed"]:
        info(f"wrote {p}")
