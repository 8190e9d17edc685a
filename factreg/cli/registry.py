"""Commands about the registry itself: init, env (and --version), metrics, method, prune."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from factreg.cli.common import (
    DbOption,
    JsonFlag,
    console,
    emit_json,
    handles_errors,
    info,
    make_table,
    min_uptime,
    open_registry,
    whole_number,
)


class KeepsArguments(TyperCommand):
    """A command whose arguments after `--` are kept apart for it (`method ID... --bench -- ARGS`), not taken by a
    variadic argument before them."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta["after_dashes"] = list(args[cut + 1:])
            args = args[:cut]
        return super().parse_args(ctx, args)


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("env")(env)
    app.command("metrics")(metrics)
    app.command("method", cls=KeepsArguments)(method)
    app.command("prune")(prune)


@handles_errors
def init(
    directory: Annotated[Path, typer.Option("--dir", help="Where to create .factreg/.")] = Path("."),
    db: DbOption = None,
) -> None:
    """Create a project-local registry in .factreg/ (with a default config.toml)."""
    from factreg import config
    from factreg.cli.common import restore_text_copy
    from factreg.registry.store import Registry

    folder = config.init_project(directory.resolve())
    s = config.resolve(db, cwd=directory.resolve())
    url = s.db_url if db else config.sqlite_url(folder / config.REGISTRY_FILE)
    if not db:
        restore_text_copy(s)  # a clone with the registry as text: build the local registry from it
    reg = Registry(url)
    info(f"Registry ready: {config.redact_url(url)} ({len(reg.applied_migrations())} migrations applied)")
    info(f"Config: {folder / config.CONFIG_FILE}")
    if not db:
        info(f"git: .factreg/{config.REGISTRY_FILE} is ignored (.factreg/.gitignore); the registry travels as the "
             "text .factreg/registry.jsonl, which --commit writes into the same commit")
        if _tracked(folder / config.REGISTRY_FILE):
            info(f"git still tracks .factreg/{config.REGISTRY_FILE}: run `git rm --cached "
                 f".factreg/{config.REGISTRY_FILE}` and commit, so git keeps only the text")


def _tracked(path: Path) -> bool:
    """Whether git tracks `path` (False outside a repository, or without git)."""
    import subprocess

    try:
        done = subprocess.run(["git", "ls-files", "--error-unmatch", "--", path.name], cwd=path.parent,
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@handles_errors
def env(json_out: JsonFlag = False, db: DbOption = None) -> None:
    """Show the resolved configuration and where each value came from."""
    from factreg import config

    s = config.resolve(db)
    data: dict[str, Any] = {
        "db": s.redacted_db_url(),
        "db_source": s.db_source,
        "project_dir": str(s.project_dir) if s.project_dir else None,
        "config_file": str(s.config_path) if s.config_path else None,
        "user_data_dir": str(config.user_data_dir()),
        "cache_dir": str(cache) if (cache := config.user_cache_dir()) else "off (FACTREG_CACHE_DIR is empty)",
        "hostname": s.hostname,
        "hostname_source": "FACTREG_HOSTNAME" if os.environ.get("FACTREG_HOSTNAME") else "system",
        "llama_bench": _llama_bench_or_none(),
        "environment": {k: ("***" if "KEY" in k or "TOKEN" in k or k == "FACTREG_DB" and "@" in v else v)
                        for k, v in sorted(os.environ.items()) if k.startswith("FACTREG_")},
    }
    if json_out:
        emit_json(data)
        return
    out = console()
    for key, value in data.items():
        if key == "environment":
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "none set"
        out.print(f"{key:>16}: {value}")


def version(verbose: bool = False, db: str | None = None) -> None:
    """`factreg --version`: factreg's version, the schema it knows and, when a registry is found, the migrations
    applied to it; with --verbose also where the registry is and the llama.cpp build found."""
    from factreg import config
    from factreg.registry.store import version_line

    s = config.resolve(db)
    line, applied = version_line(s.db_url)
    print(line)
    if verbose:
        print(f"registry: {s.redacted_db_url()} ({s.db_source}{'' if applied is not None else ', not created yet'})")
        print(f"python: {sys.version.split()[0]}")
        path = _llama_bench_or_none()
        print(f"llama.cpp: {_llama_build(path) if path else 'llama-bench not found'}" + (f" ({path})" if path else ""))


def _llama_build(path: str) -> str:
    """`build 1234 (abc123f)` from `llama-bench --version`, or why it could not tell."""
    import re
    import subprocess

    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({type(exc).__name__})"
    m = re.search(r"version:\s*(\S+)\s*\(([0-9a-f]+)\)", done.stdout + done.stderr)
    return f"build {m[1]} ({m[2]})" if m else "unknown build"


def _llama_bench_or_none() -> str | None:
    try:
        from factreg.measure.llamabench import find_binary

        return str(find_binary(None))
    except Exception:
        return None


@handles_errors
def metrics(json_out: JsonFlag = False) -> None:
    """List the metric vocabulary: unit, direction, meaning and required conditions."""
    from factreg.registry.metrics import VOCABULARY

    rows: list[dict[str, Any]] = [{"name": m.name, "unit": m.unit, "direction": m.direction, "family": m.family, "meaning": m.meaning,
             "required_conditions": ["|".join(a) for a in m.required]} for m in VOCABULARY.values()]
    if json_out:
        emit_json(rows)
        return
    table = make_table()
    for col in ("metric", "unit", "better", "requires", "meaning"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["unit"], r["direction"] or "—", ", ".join(r["required_conditions"]) or "—",
                      r["meaning"])
    console().print(table)


@handles_errors
def prune(
    keep: Annotated[int | None, typer.Option(
        "--keep", help="Runs of each fact whose raw output is kept (default: [retention] raw_runs, 5).",
        parser=whole_number("--keep"))] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be pruned; change nothing.")] = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Drop the raw output (per-request events) of each fact's runs beyond the newest N and its current version;
    values, statistics and samples stay."""
    from factreg import fmt
    from factreg.registry import retention

    s, reg = open_registry(db, create=False)
    n = retention.raw_runs(s) if keep is None else retention.check_keep(keep)
    result = retention.prune_registry(reg, n, dry_run=dry_run)
    if json_out:
        emit_json({**result.as_json(), "dry_run": dry_run})
        return
    verb = "would drop" if dry_run else "dropped"
    info(f"{verb} the raw output of {result.runs} run(s) of {len(result.facts)} fact(s), "
         f"{fmt.num(result.bytes / 1e6)} MB; kept that of {result.kept_runs} run(s), "
         f"{fmt.num(result.kept_bytes / 1e6)} MB (the newest {n} of each fact and its current version)")


@handles_errors
def method(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Facts to give the method (any fact: typed, "
                                             "imported or measured).")],
    probe_url: Annotated[str | None, typer.Option(
        "--probe", metavar="URL", help="Verify them by probing this streaming chat completions URL (as `factreg "
        "probe URL`).", show_default=False)] = None,
    body: Annotated[str | None, typer.Option("--body", help="With --probe: JSON file with the request body the probe "
                                             "sends.", show_default=False)] = None,
    bench: Annotated[bool, typer.Option(
        "--bench", help="Verify them by running llama-bench with the arguments after -- (as `factreg bench -- "
        "ARGS`); each fact is the test its conditions or the arguments name.")] = False,
    n: Annotated[int, typer.Option("--n", help="With --probe: measured requests of each re-run.",
                                   parser=whole_number("--n"))] = 5,
    warmup: Annotated[int, typer.Option("--warmup", help="With --probe: warm-up requests, discarded.",
                                        parser=whole_number("--warmup"))] = 2,
    concurrency: Annotated[int, typer.Option("--concurrency", help="With --probe: streams in flight at once (0: one "
                                             "after another).", parser=whole_number("--concurrency"))] = 0,
    header: Annotated[list[str] | None, typer.Option(
        "--header", "-H", help="With --probe: 'Name: value' (repeat); values must name ${ENV_VAR}s (the method is "
        "stored).")] = None,
    api_key_env: Annotated[str | None, typer.Option(
        "--api-key-env", help="With --probe: send 'Authorization: Bearer ${VAR}' from this environment variable.")
    ] = None,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Give facts a method `verify` can re-run — a probe (`--probe URL --body FILE`) or a llama-bench run (`--bench
    -- ARGS`): a new version of each, same numbers, conditions and date, whose method is this one, trusted as
    recorded here. Any fact: a number typed with `record`, an imported result, a measured one. Nothing is run now."""
    from factreg.errors import UsageError
    from factreg.measure import methods

    after = list(ctx.meta.get("after_dashes") or [])
    if bench == (probe_url is not None):
        raise UsageError("give the method: --probe URL --body FILE, or --bench -- LLAMA-BENCH ARGS")
    if bench:
        if not after:
            raise UsageError("give llama-bench's arguments after --, e.g. factreg method ID --bench -- -m model.gguf "
                             "-p 0 -n 32")
        given = [o for o, v in (("--body", body), ("--header", header), ("--api-key-env", api_key_env)) if v]
        if given:
            raise UsageError(f"{given[0]} goes with --probe, not --bench")
        stored = methods.bench_method(after)
    else:
        from factreg.cli.probe import read_body, request_headers
        from factreg.measure import probe as core

        if after:
            raise UsageError("arguments after -- go with --bench")
        if body is None:
            raise UsageError("--probe needs --body FILE: the request body it sends")
        assert probe_url is not None
        headers = request_headers(probe_url, header, api_key_env, record="method", stored_by="`factreg method`")
        spec = core.ProbeSpec(url=probe_url, body=read_body(body), n=n, warmup=warmup, headers=headers,
                              concurrency=concurrency)
        spec.check()
        stored = spec.method()
    s, reg = open_registry(db, create=False)
    written = methods.attach(reg, ids, stored, min_uptime(s))
    if json_out:
        emit_json({"ids": written})
        return
    info(f"Gave {len(written)} fact(s) the {stored['kind']} method: " + ", ".join(written))
