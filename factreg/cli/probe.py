"""Command: probe — time an OpenAI-compatible streaming endpoint the way a user hears it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from factreg.cli.common import (
    DbOption,
    JsonFlag,
    console,
    emit_json,
    handles_errors,
    info,
    make_table,
    number,
    whole_number,
)

MAX_BODY_BYTES = 8 * 1024 * 1024


def register(app: typer.Typer) -> None:
    app.command("probe")(probe)


def read_body(path: str) -> dict[str, Any]:
    """The request body from a JSON file (`-` for stdin); bad input → BadInput (exit 2)."""
    import json

    from factreg.errors import BadInput
    from factreg.textfile import read_text

    text = read_text(path, "--body", MAX_BODY_BYTES)
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise BadInput(f"--body: {path} is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadInput(f"--body: {path} must hold a JSON object (a chat completions request)")
    return body


def request_headers(url: str, header: list[str] | None, api_key_env: str | None, record: str | None,
                    stored_by: str = "--record") -> dict[str, str]:
    """--header and --api-key-env as header templates; with --record (or `stored_by`, another command that stores
    the recipe), no literal secret in them or the URL."""
    from factreg import secrets
    from factreg.errors import UsageError

    headers: dict[str, str] = {}
    for text in header or []:
        name, value = secrets.parse_header(text)
        if any(k.lower() == name.lower() for k in headers):
            raise UsageError(f"--header {name} given twice")
        headers[name] = value
    if api_key_env:
        secrets.check_env_name(api_key_env, "--api-key-env")
        if any(k.lower() == "authorization" for k in headers):
            raise UsageError("give either --api-key-env or an Authorization --header, not both")
        headers["Authorization"] = "Bearer ${" + api_key_env + "}"
    if record:
        from factreg.registry.ids import check_id

        check_id(record.rstrip("/"))
        literal = secrets.literal_secret_headers(headers)
        if literal:
            raise UsageError(
                f"{stored_by} stores the probe recipe, so header {literal[0]} must name an environment variable "
                "instead of holding a literal value (it may be a secret): --header "
                f"'{literal[0]}: ${{MY_TOKEN}}', or --api-key-env MY_TOKEN for Authorization"
            )
        if secrets.url_credentials(url):
            raise UsageError(
                f"{stored_by} stores the probe recipe, so the URL may not hold a credential (?key=…): send it in a "
                "header that names an environment variable instead, e.g. --header 'x-goog-api-key: ${MY_KEY}'"
            )
    return headers


@handles_errors
def probe(
    url: Annotated[
        str,
        typer.Argument(
            help="The streaming chat completions URL, e.g. http://127.0.0.1:8080/v1/chat/completions "
            "(a base URL such as http://127.0.0.1:8080/v1 gets /chat/completions appended)."
        ),
    ],
    body: Annotated[str, typer.Option("--body", help="JSON file with the real request body ('-': stdin).")],
    n: Annotated[int | None, typer.Option("--n", help="Measured requests (default 5; with --duration, a cap).",
                                          parser=whole_number("--n"))] = None,
    warmup: Annotated[int, typer.Option("--warmup", help="Warm-up requests, discarded.",
                                                 parser=whole_number("--warmup"))] = 2,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header", "-H", help="'Name: value' (repeat); values may name ${ENV_VAR}s, expanded at run time."
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option("--api-key-env", help="Send 'Authorization: Bearer ${VAR}' from this environment variable."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds one request (and the identity check) may take, start to end.",
                            parser=number("--timeout"))
    ] = 60.0,
    min_uptime: Annotated[
        float | None,
        typer.Option(
            "--min-uptime", help="Seconds a server must have been up to count as warm (default: the config's [probe] min_uptime_s, 300).",
            parser=number("--min-uptime"),
        ),
    ] = None,
    wait_for_uptime: Annotated[
        bool, typer.Option("--wait-for-uptime", help="Wait until the server has been up --min-uptime seconds.")
    ] = False,
    server_started_at: Annotated[
        str | None,
        typer.Option("--server-started-at", help="ISO-8601 time the server started (when /proc cannot tell)."),
    ] = None,
    spacing: Annotated[float, typer.Option("--spacing", help="Seconds between measured requests.",
                                                   parser=number("--spacing"))] = 0.0,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Send cache_prompt: false (bust prompt caches).")
    ] = False,
    model_file: Annotated[
        Path | None,
        typer.Option("--model-file", metavar="FILE", help="The model file the (local) server serves: its SHA-256 is "
                     "recorded as the identity condition model_sha256 and checked again by verify."),
    ] = None,
    expect: Annotated[
        list[str] | None,
        typer.Option("--expect", help="Expected condition key=value (model, build, thinking=on|off, warm...); repeat."),
    ] = None,
    record: Annotated[
        str | None,
        typer.Option("--record", help="Record facts PREFIX/ttft, PREFIX/e2e, ... with this probe as their method."),
    ] = None,
    percentile: Annotated[
        list[str] | None,
        typer.Option(
            "--percentile",
            help="With --record, also record percentiles as facts of their own with their 95% interval: 90 "
            "(every recorded metric's p90, PREFIX/ttft_p90, ...) or ttft_p90 (one metric); repeat or comma-separate.",
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Keep N streams in flight (one async client, connections reused); "
                          "with --rate, at most N.", parser=whole_number("--concurrency"))
    ] = 0,
    rate: Annotated[
        float, typer.Option("--rate", help="Send requests at R per second, Poisson arrivals (see --burstiness).",
                            parser=number("--rate"))
    ] = 0.0,
    burstiness: Annotated[
        float, typer.Option("--burstiness", help="Arrival gaps Gamma(shape=B): 1 Poisson, <1 burstier, >1 steadier.",
                            parser=number("--burstiness"))
    ] = 1.0,
    duration: Annotated[
        float, typer.Option("--duration", help="Under load: send measured requests for this many seconds "
                            "(at most --n).", parser=number("--duration"))
    ] = 0.0,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the --rate arrival schedule.", parser=whole_number("--seed"))
    ] = 0,
    budget: Annotated[str | None, typer.Option(
        "--budget", metavar="DURATION", help="With --record: how long the probe may be repeated (its requests "
        "pooled) until ttft, e2e and decode_rate are within [record] precision (default: half the tolerance); "
        "default [record] budget = 4× the first run.", show_default=False)] = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Probe a streaming endpoint: identity check, warm-up, n timed requests; ttft, ttft_any, ttfb, e2e...

    Exit codes: 0 ok, 1 conditions changed (--expect not met), 2 bad usage or input,
    3 auth_failed / unreachable / error / no_answer (a measured reply held no answer token; nothing is recorded then).
    """
    from factreg import config
    from factreg.errors import CouldNotVerify, Findings, UsageError
    from factreg.measure import probe as core
    from factreg.registry import conditions
    from factreg.registry.freshness import parse_duration, parse_time

    headers = request_headers(url, header, api_key_env, record)
    asked = core.parse_percentiles(percentile or [])
    if asked and not record:
        raise UsageError("--percentile records percentile facts: give --record PREFIX too")
    settings = config.resolve(db)
    if min_uptime is None:
        min_uptime = settings.min_uptime_s
    spec = core.ProbeSpec(
        url=url,
        body=read_body(body),
        n=n if n is not None else (core.MAX_N if duration else 5),
        warmup=warmup,
        headers=headers,
        timeout=timeout,
        min_uptime=min_uptime,
        wait_for_uptime=wait_for_uptime,
        server_started_at=parse_time(server_started_at) if server_started_at else None,
        spacing=spacing,
        no_cache=no_cache,
        model_file=str(model_file) if model_file is not None else None,
        expect=conditions.parse_pairs(expect or [], "--expect"),
        max_bytes=int(float(settings.get("probe.max_response_mb", 32)) * 1024 * 1024),
        concurrency=concurrency,
        rate=rate,
        burstiness=burstiness,
        duration=duration,
        seed=seed,
    )
    spec.check()
    from factreg.cli import progress

    with progress.bar("probing", spec.warmup + spec.n) as step:
        shown = _counting(step, spec.warmup) if progress.shown() else info
        if record:  # a recorded probe keeps the machine's state and a control measurement (info conditions)
            from factreg.measure import control, endpoint, precision

            goal = precision.target(settings)
            (result, runs), seen = control.bracket(
                spec.method(), settings,
                lambda: core.probe_precise(spec, goal, budget=precision.budget_multiple(settings),
                                           budget_s=parse_duration(budget) if budget is not None else None,
                                           hostname=settings.hostname, progress=shown),
                server_ms=lambda ran: control.identity_ms(ran[0].as_json().get("requests")),
                spans=lambda ran: endpoint.spans_of_requests([r.as_json() for r in ran[0].requests]),
                headers=(sent := _expanded(spec.headers)), watch_server=sent is not None)
            result.info.update(seen.conditions())
        else:
            result = core.probe(spec, hostname=settings.hostname, progress=shown)
    data = result.as_json()
    recorded: list[str] = []
    if record and result.verdict == core.OK:
        from factreg.registry import facts, retention
        from factreg.registry.store import Registry

        news = core.new_facts(result, record, spec.method(), asked)
        _precision(news, goal, runs)
        recorded = facts.record_many(Registry(settings.db_url, raw_runs=retention.raw_runs(settings)), news,
                                     min_uptime)
    data["recorded"] = recorded
    if json_out:
        emit_json(data)
    else:
        _print(data)
    for warning in data["warnings"]:
        info(f"warning: {warning}")
    if recorded:
        info(f"recorded {', '.join(recorded)}")
    elif record:
        info("nothing recorded")
    from factreg.verdicts import Verdict

    if result.failed:  # the verdict names the kind of failure, except `error`: "Error: HTTP 404 from …"
        prefix = "" if result.verdict == Verdict.ERROR else f"{result.verdict}: "
        raise CouldNotVerify(f"{prefix}{result.message}")

    if result.verdict == Verdict.CONDITIONS_CHANGED:
        raise Findings(f"conditions_changed: {result.message}")


def _precision(news: list[Any], goal: float, runs: int) -> None:
    """Each recorded fact says the precision it reached; one short of the target is flagged `imprecise`."""
    from factreg.measure import precision

    for fact in news:
        xs = list(fact.samples or [])
        if fact.metric not in ("ttft", "e2e", "decode_rate") or len(xs) < 2:
            continue
        fact.info = {**fact.info, precision.KEY: precision.describe(xs, goal) + (f", {runs} runs" if runs > 1 else "")}
        reached = precision.half_width(xs)
        if reached is not None and reached > goal:
            fact.extra_flags = [*fact.extra_flags, precision.FLAG]


def _expanded(headers: dict[str, str]) -> dict[str, str] | None:
    """The probe's headers as sent (for the same server's /metrics); None when a variable is unset (the probe
    then fails before sending anything, and so does the watch)."""
    from factreg import secrets
    from factreg.errors import FactregError

    try:
        return secrets.expand_headers(headers)
    except FactregError:
        return None


def _counting(step: Callable[..., None], warmup: int) -> Callable[[str], None]:
    """The probe's `warm-up 1/2`, `request 3/5` lines move the bar; any other line is printed."""
    import re

    def say(message: str) -> None:
        m = re.fullmatch(r"(warm-up|request) (\d+)/(\d+)", message)
        if m:
            step(int(m[2]) - 1 + (warmup if m[1] == "request" else 0), message)
        else:
            info(message)

    return say


def _print(data: dict[str, Any]) -> None:
    from rich.markup import escape

    from factreg import fmt

    out = console()
    obs = data["observed"]
    out.print(f"[bold]{escape(str(data['verdict']))}[/bold]  {escape(str(obs.get('endpoint', '')))}", markup=True)
    shown = [f"{k}={obs[k]}" for k in ("model", "build", "thinking", "warm", "machine") if k in obs]
    if shown:
        out.print("  observed: " + "  ".join(shown))
    if data["info"].get("uptime_s"):
        out.print(f"  server uptime: {data['info']['uptime_s']} s ({data['info'].get('uptime_source', '')})")
    metrics = data["metrics"]
    if metrics:
        from factreg.registry.metrics import VOCABULARY

        table = make_table()
        for col in ("metric", "median", "mean ± sd", "min", "max", "n"):
            table.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
        for name, m in metrics.items():
            unit = VOCABULARY[name].unit
            table.add_row(
                name,
                fmt.value(m["median"], None, unit),
                fmt.value(m["mean"], m["stdev"]),
                fmt.num(m["min"]),
                fmt.num(m["max"]),
                str(m["n"]),
            )
        out.print(table)
        _print_percentiles(out, metrics)
    if data.get("client_queue_s"):
        q = data["client_queue_s"]
        out.print(f"  client queueing (scheduled send → written): p50 {fmt.num(q['p50']['value'])} s, "
                  f"p99 {fmt.num(q['p99']['value'])} s")
    if data["flags"]:
        out.print("  flags: " + ", ".join(data["flags"]))


def _print_percentiles(out: Any, metrics: dict[str, Any]) -> None:
    """p50/p90/p95/p99 with 95% intervals; a percentile n cannot support is marked `~` and explained once."""
    from factreg import fmt
    from factreg.cli.common import make_table

    table = make_table()
    for col in ("metric", "p50", "p90", "p95", "p99"):
        table.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
    notes: list[str] = []
    for name, m in metrics.items():
        cells = []
        for label, est in (m.get("percentiles") or {}).items():
            low, high = est["ci95"]
            span = f" [{fmt.num(low) if low is not None else '−∞'}, {fmt.num(high) if high is not None else '∞'}]"
            cells.append(("~" if not est["enough"] else "") + fmt.num(est["value"]) + span)
            if est["too_few"] and label not in {n.split(" ")[0] for n in notes}:
                notes.append(est["too_few"].split(";")[0])
        table.add_row(name, *cells)
    out.print(table)
    if notes:
        out.print("  ~ too few samples: " + "; ".join(notes))
