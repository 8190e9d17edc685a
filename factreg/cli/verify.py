"""Command: verify (re-run facts' methods, give verdicts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from factreg.cli.common import (
    DbOption,
    FormatOption,
    JsonFlag,
    console,
    emit_findings,
    emit_json,
    handles_errors,
    info,
    open_registry,
)

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.measure.result import VerifyResult
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)


@handles_errors
def verify(
    ids: Annotated[list[str] | None, typer.Argument(metavar="[ID]...", help="Facts to verify.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Verify every current fact.")] = False,
    stale: Annotated[bool, typer.Option("--stale", help="Only facts that are not fresh.")] = False,
    here: Annotated[bool, typer.Option("--here", help="Only facts whose machine condition is this host.")] = False,
    against: Annotated[str | None, typer.Option(
        "--against", help="Judge the fact by this newer measurement in the registry instead of re-running it "
        "(for numbers that cannot be re-run here).")] = None,
    due: Annotated[bool, typer.Option(
        "--due", help="Only the facts whose freshness asks for it (stale, then aging), within --budget; the summary "
        "says which statuses and change points this run changed. The command for cron.")] = False,
    budget: Annotated[str | None, typer.Option(
        "--budget", metavar="DURATION", help="With --due: start no re-run after this long, e.g. 10m (default 10m). "
        "Otherwise: how long a fact that one batch cannot decide may be measured again in batches (default "
        "[verify] budget = 5× its first batch).", show_default=False)] = None,
    trust_imported: Annotated[bool, typer.Option(
        "--trust-imported", help="Trust the imported methods of these facts (remembered) and re-run them; without "
        "it an imported method is never run.")] = False,
    api_key_env: Annotated[list[str] | None, typer.Option(
        "--api-key-env", help="An environment variable stored probe methods may expand in a header, besides the "
        "config's [probe] allow_env (repeat).")] = None,
    n: Annotated[int | None, typer.Option(
        "--n", min=1, max=1000, help="Samples for this run: a probe's requests, llama-bench's repetitions (-r); "
        "what an inconclusive verdict asks for.", show_default=False)] = None,
    fail_on: Annotated[list[str] | None, typer.Option(
        "--fail-on", metavar="VERDICT", help="Also exit 1 on this verdict: inconclusive, or skipped (a fact "
        "without a method). Default: [verify] fail_on in the config.", show_default=False)] = None,
    notify: Annotated[bool, typer.Option(
        "--notify", help="Then send one message to the [notify] channels listing what changed since the last "
        "message (refuted, shifted, stale, conditions_changed, unverifiable, repeatedly inconclusive, decisions "
        "needing review), with the commands to act; an undelivered one is retried by the next run. A failing "
        "channel changes neither the exit code nor the records.")] = False,
    notify_always: Annotated[bool, typer.Option(
        "--notify-always", help="As --notify, and send a message even when nothing changed.")] = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
    fmt: FormatOption = None,
) -> None:
    """Re-run facts' methods and record verdicts: exit 1 if refuted/changed, 3 if something could not run."""
    from factreg.cli import formats
    from factreg.measure import verify as engine
    from factreg.secrets import check_env_name

    out_format = formats.choose(fmt, json_out)
    json_out = out_format == "json"
    if due:
        _check_due(due, bool(ids or all_ or stale or here or against))
    also = engine.fail_on(fail_on)
    s, reg = open_registry(db, create=False)
    if fail_on is None:
        also = engine.fail_on(s.get("verify.fail_on"))
    s.extra_allow_env = tuple(check_env_name(v, "--api-key-env") for v in api_key_env or [])
    notify = notify or notify_always
    if notify:
        from factreg.notify import alerts

        alerts.channels(s)  # no notifier configured: said before anything runs
    if due:
        from factreg.measure import due as due_run
        from factreg.registry.freshness import parse_duration

        ran = due_run.run(reg, s, parse_duration(budget or due_run.DEFAULT_BUDGET))
        if json_out:
            emit_json(ran.as_json())
        elif out_format != "text":
            _emit_results(out_format, ran.results)
            for line in due_run.summary_lines(ran):
                info(line)
        else:
            if ran.results:
                _print_results(ran.results)
            console().print("\n".join(due_run.summary_lines(ran)), markup=False)
        _alert(reg, s, notify, notify_always)
        code = engine.exit_code(ran.results, also)
        if code:
            raise typer.Exit(code)
        return
    if against is not None:
        from factreg.errors import UsageError
        from factreg.registry import facts

        if len(ids or []) != 1 or all_ or stale or here:
            raise UsageError("--against judges exactly one fact: give one ID and no --all/--stale/--here")
        fact = facts.get(reg, (ids or [""])[0], config=s.file_config)
        results = [engine.against(reg, s, fact, facts.get(reg, against, config=s.file_config))]
        emit_json(results) if json_out else _print_results(results) if out_format == "text" else _emit_results(
            out_format, results)
        _alert(reg, s, notify, notify_always)
        code = engine.exit_code(results, also)
        if code:
            raise typer.Exit(code)
        return
    chosen = engine.select_facts(reg, s, ids or [], all_=all_, stale=stale, here=here)
    if not chosen:
        info("Nothing to verify.")
        if json_out:
            emit_json([])
        elif out_format != "text":
            _emit_results(out_format, [])
        _alert(reg, s, notify, notify_always)
        return
    from factreg.registry.freshness import parse_duration

    results = _run_with_progress(reg, s, chosen, trust_imported, n,
                                 parse_duration(budget) if budget is not None else None)
    if json_out:
        emit_json(results)
    elif out_format != "text":
        _emit_results(out_format, results)
    else:
        _print_results(results)
    _alert(reg, s, notify, notify_always)
    code = engine.exit_code(results, also)
    if code:
        raise typer.Exit(code)


def _emit_results(out_format: str, results: list[VerifyResult]) -> None:
    """Verdicts other than confirmed as findings: refuted and conditions_changed are errors, the rest warnings."""
    from factreg.cli.formats import Finding
    from factreg.verdicts import FINDINGS

    emit_findings(out_format, [
        Finding(str(r["verdict"]), f"{r['id']}: {r['verdict']}: {r['message']}"
                + (f" — to resolve: {r['resolve']}" if r.get("resolve") else ""), fact_id=str(r["id"]),
                level="error" if r["verdict"] in FINDINGS else "warning")
        for r in results if r["verdict"] != "confirmed"
    ])


def _alert(reg: Registry, s: Settings, notify: bool, always: bool) -> None:
    """`--notify`: what changed since the last message, sent; lines on stderr, never an exit code of its own."""
    if not notify:
        return
    from factreg.notify import alerts

    try:
        lines = alerts.run(reg, s, always=always).lines()
    except Exception as exc:  # noqa: BLE001 - alerts never change the run's outcome
        from factreg.plugins import one_line

        lines = [f"notify: could not report the changes ({one_line(exc)}); the verdicts above stand"]
    for line in lines:
        info(line)


def _check_due(due: bool, selected: bool) -> None:
    from factreg.errors import UsageError

    if selected:
        raise UsageError("--due picks the facts itself: give no ID, --all, --stale, --here or --against")


def _run_with_progress(
    reg: Registry, s: Settings, chosen: list[FactData], trust: bool, n: int | None = None,
    budget_s: float | None = None,
) -> list[VerifyResult]:
    """A progress bar on stderr, on a terminal, when there is more than one fact (stdout stays data)."""
    from factreg.cli import progress
    from factreg.measure import verify as engine

    with progress.bar("verifying", len(chosen)) as step:
        return engine.verify(reg, s, chosen, progress=step, trust_imported=trust, n=n, budget_s=budget_s)


def _print_results(results: list[VerifyResult]) -> None:
    from rich.markup import escape

    from factreg.fmt import value

    out = console()
    from factreg.verdicts import Verdict

    styles = {
        Verdict.CONFIRMED: "green",
        Verdict.REFUTED: "red",
        Verdict.CONDITIONS_CHANGED: "yellow",
        Verdict.INCONCLUSIVE: "cyan",
        "skipped": "dim",
    }
    for r in results:
        style = styles.get(r["verdict"], "magenta")
        old = value(r["old"]["value"], r["old"]["spread"], r["unit"])
        new = value(r["new"]["value"], r["new"]["spread"], r["unit"]) if r["new"]["value"] is not None else "—"
        number = f"  verification {r['verification']}" if r.get("verification") is not None else ""
        out.print(f"[{style}]{escape(r['verdict']):<18}[/{style}] {escape(r['id'])}  {escape(old)} → {escape(new)}"
                  f"{number}", markup=True)
        out.print(f"    {r['message']}", markup=False)
        if r.get("resolve"):
            out.print(f"    to resolve: {r['resolve']}", markup=False)
        if r["verdict"] in (Verdict.REFUTED, Verdict.CONDITIONS_CHANGED) and r.get("verification") is not None:
            out.print(f"    to correct: factreg correct {r['id']} --verification {r['verification']}", markup=False)
    counts: dict[str, int] = {}
    for r in results:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    info(", ".join(f"{n} {v}" if v != "skipped" else f"{n} without a method (skipped: `factreg method ID` gives "
                   "one)" for v, n in sorted(counts.items())))
