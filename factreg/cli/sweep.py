"""Command: sweep — the probe at rising concurrency: goodput under SLOs per level, and the capacity."""

from __future__ import annotations

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


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)


@handles_errors
def sweep(
    url: Annotated[str, typer.Argument(help="The streaming chat completions URL (or its base URL), as for probe.")],
    body: Annotated[str, typer.Option("--body", help="JSON file with the real request body ('-': stdin).")],
    concurrency: Annotated[
        str, typer.Option("--concurrency", help="Rising load levels, streams in flight: 1,2,4,8.")
    ] = "1,2,4,8",
    slo: Annotated[
        list[str] | None,
        typer.Option("--slo", help="METRIC[:pNN]<LIMIT per request, e.g. ttft<0.5, itl:max<0.1 (repeat or "
                     "comma-separate); a request is good when it meets every one."),
    ] = None,
    n: Annotated[int, typer.Option("--n", help="Measured requests per level.", parser=whole_number("--n"))] = 50,
    warmup: Annotated[int, typer.Option("--warmup", help="Warm-up requests per level, discarded.",
                                        parser=whole_number("--warmup"))] = 2,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Goodput share a level must keep to count as capacity.",
                            parser=number("--threshold"))
    ] = 0.95,
    header: Annotated[list[str] | None, typer.Option("--header", "-H", help="'Name: value' (repeat), as for probe.")] = None,
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", help="Send 'Authorization: Bearer ${VAR}' from this variable.")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds one request may take.",
                                           parser=number("--timeout"))] = 60.0,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Send cache_prompt: false.")] = False,
    record: Annotated[
        str | None,
        typer.Option("--record", help="Record PREFIX/capacity and PREFIX/goodput_c<N> with the sweep as method."),
    ] = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Probe at each concurrency level; per level the goodput (share of requests meeting every --slo, 95% interval)
    and each SLO on the pooled percentile; the capacity is the highest level that, with every lower one, keeps
    goodput ≥ --threshold.

    Exit codes: 0 ok, 2 bad usage, 3 when no level could be measured.
    """
    from factreg import config
    from factreg.cli.probe import read_body, request_headers
    from factreg.errors import CouldNotVerify, UsageError
    from factreg.measure import probe as core
    from factreg.measure import slo as slo_rules
    from factreg.measure import sweep as core_sweep

    levels = core_sweep.parse_levels(concurrency)
    slos = slo_rules.parse_slos(slo or [])
    if not 0 < threshold <= 1:
        raise UsageError("--threshold is a share in (0, 1], e.g. 0.95")
    headers = request_headers(url, header, api_key_env, record)
    settings = config.resolve(db)
    base = core.ProbeSpec(
        url=url, body=read_body(body), n=n, warmup=warmup, headers=headers, timeout=timeout, no_cache=no_cache,
        min_uptime=settings.min_uptime_s, concurrency=1,
        max_bytes=int(float(settings.get("probe.max_response_mb", 32)) * 1024 * 1024),
    )
    base.check()
    result = core_sweep.sweep(base, levels, slos, hostname=settings.hostname, threshold=threshold, progress=info)
    data = result.as_json()
    recorded: list[str] = []
    if record and result.ok:
        from factreg.registry import facts, retention
        from factreg.registry.store import Registry

        news = core_sweep.new_facts(result, record, core_sweep.method(base, levels, slos, threshold))
        reg = Registry(settings.db_url, raw_runs=retention.raw_runs(settings))
        recorded = facts.record_many(reg, news, settings.min_uptime_s)
    data["recorded"] = recorded
    if json_out:
        emit_json(data)
    else:
        _print(data)
    if recorded:
        info(f"recorded {', '.join(recorded)}")
    elif record:
        info("nothing recorded")
    if not result.ok:
        raise CouldNotVerify(f"no level could be measured: {result.levels[0].result.message}")


def _print(data: dict[str, Any]) -> None:
    out = console()
    table = make_table()
    for col in ("streams", "verdict", "goodput", "95% interval", *data["slos"]):
        table.add_column(col, justify="left" if col == "verdict" else "right", no_wrap=True)
    for lv in data["levels"]:
        g = lv["goodput"]
        checks = {c["slo"]: c for c in lv["slo_checks"]}
        cells = []
        for s in data["slos"]:
            c = checks.get(s)
            if c is None:
                cells.append("—")
                continue
            est = c["estimate"]
            mark = "" if est["enough"] or est["q"] == 1.0 else "~"
            cells.append(f"{mark}{est['value']:.4g} {'met' if c['met'] else 'not met'}")
        table.add_row(str(lv["concurrency"]), str(lv["verdict"]), f"{g['good']}/{g['total']}",
                      f"{g['ci95'][0] * 100:.1f}–{g['ci95'][1] * 100:.1f}%", *cells)
    out.print(table)
    out.print(f"  {data['capacity_message']}")
