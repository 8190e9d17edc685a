"""Commands about the registry itself: init, env, metrics, export, import, method, prune."""

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

# `factreg import FORMAT FILE...`: the formats it reads.
IMPORT_FORMATS = ("jsonl", "llama-bench", "vllm-bench", "aiperf", "llama-benchy")
# The formats that are a benchmark's output (the rest carry their own fields): --measured-at, --cond, --info and
# --id apply to these.
BENCH_FORMATS = IMPORT_FORMATS[1:]
# From this size on (all files together), `import` shows a progress bar on a terminal.
LARGE_IMPORT_BYTES = 1024 * 1024


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
    app.command("export")(export)
    app.command("import")(import_)
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
    import factreg
    from factreg import config
    from factreg.registry.migrations import NAMES

    s = config.resolve(db)
    applied = _applied_count(s.db_url)
    schema = f"schema {len(NAMES)}"
    if applied is not None:
        schema += f" (registry: {applied} applied)"
    print(f"factreg {factreg.__version__}, {schema}")
    if verbose:
        print(f"registry: {s.redacted_db_url()} ({s.db_source}{'' if applied is not None else ', not created yet'})")
        print(f"python: {sys.version.split()[0]}")
        path = _llama_bench_or_none()
        print(f"llama.cpp: {_llama_build(path) if path else 'llama-bench not found'}" + (f" ({path})" if path else ""))


def _applied_count(url: str) -> int | None:
    """How many migrations a registry has applied; None when there is no registry there yet."""
    import sqlite3
    from urllib.parse import quote

    from factreg.registry.store import Registry, sqlite_file

    try:
        if url.startswith("sqlite:///"):
            path = sqlite_file(url)
            if not Path(path).is_file():
                return None
            conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
            try:
                return int(conn.execute("SELECT count(*) FROM factreg_migration").fetchone()[0])
            finally:
                conn.close()
        return len(Registry(url, create=False).applied_migrations())
    except Exception:  # noqa: BLE001 - a version line must print whatever the registry's state
        return None


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
def export(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write to this file (atomically).")] = None,
    db: DbOption = None,
) -> None:
    """Export the whole registry as JSONL (lossless; `factreg import` reads it back)."""
    from factreg.atomic import atomic_write_text
    from factreg.registry import jsonl

    _, reg = open_registry(db, create=False)
    if out is None:
        n = jsonl.export(reg, sys.stdout)
    else:
        lines = list(jsonl.export_lines(reg))
        atomic_write_text(out, "".join(line + "\n" for line in lines))
        n = len(lines)
        info(f"Exported {n} line(s) to {out}")


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
def import_(
    files: Annotated[list[str], typer.Argument(
        metavar="[FORMAT] FILE...", help="Files to import; FORMAT is jsonl, llama-bench, vllm-bench, aiperf, "
        "llama-benchy or a plugin's format (default: recognised from each file's content, and said).")],
    measured_at: Annotated[str | None, typer.Option(
        "--measured-at", help="Benchmark output: when the run was made (ISO-8601), for output without its own date "
        "(llama-bench Markdown tables, old CSV; a result file without date); required for those.")] = None,
    cond: Annotated[list[str] | None, typer.Option(
        "--cond", "-c", help="Benchmark output: identity condition key=value for every fact (repeat).")] = None,
    info_: Annotated[list[str] | None, typer.Option(
        "--info", "-i", help="Benchmark output: info condition key=value for every fact (repeat).")] = None,
    id_prefix: Annotated[str | None, typer.Option(
        "--id", help="Benchmark output: id prefix instead of the machine's and model's name (e.g. gamebox/a3b).")
    ] = None,
    machine: Annotated[str | None, typer.Option(
        "--machine", metavar="NAME", help="llama-bench output: the machine it ran on, its ids' first part and its "
        "`machine` condition, as `bench` names them (<machine>/<model-stem>/<test>). Default: FACTREG_HOSTNAME, "
        "else this host's name.", show_default=False)] = None,
    trust: Annotated[bool, typer.Option(
        "--trust", help="Trust the imported methods: `verify` may re-run them (llama-bench, probe). Without it an "
        "imported method never runs until `verify --trust-imported`.")] = False,
    json_out: JsonFlag = False,
    db: DbOption = None,
) -> None:
    """Import facts: JSONL (an export, or record lines), llama-bench output (JSON, JSONL, CSV, SQL text, a SQLite
    database, or documents with Markdown tables), or the result files of other serving benchmarks (`vllm bench serve
    --save-result` JSON, AIPerf's profile_export_aiperf.json, llama-benchy's JSON; docs/import.md), or a format an
    installed plugin reads (`factreg plugins`). The format is recognised from each file's content and said on
    stderr; `import FORMAT FILE...` names it instead."""
    from factreg.errors import UsageError
    from factreg.registry import conditions

    fmt: str | None = None
    if files and (files[0] in IMPORT_FORMATS or (len(files) > 1 and not Path(files[0]).exists()
                                                  and _plugin_importer(files[0]))):
        fmt, files = files[0], files[1:]
    if not files:
        raise UsageError("give at least one file to import")
    paths = [Path(f) for f in files]
    for p in paths:
        if not p.exists():
            raise UsageError(f"no such file: {p}")
    said: list[str] = []  # the formats recognised, said once the import succeeded (an error is its one line)
    if fmt is None:
        fmt = _recognised(paths, said)
    given = [o for o, v in (("--measured-at", measured_at), ("--cond", cond), ("--info", info_), ("--id", id_prefix))
             if v]
    if fmt not in BENCH_FORMATS and given:
        raise UsageError(f"{given[0]} is for benchmark output (`import llama-bench FILE`, `import vllm-bench FILE`, "
                         "...); a JSONL line or a plugin's format carries its own fields")
    if machine is not None and fmt != "llama-bench":
        raise UsageError("--machine is for llama-bench output; the other formats name their facts by what they "
                         "measured")
    identity = conditions.parse_pairs(cond or [], "--cond")
    extra = conditions.parse_pairs(info_ or [], "--info")
    s, reg = open_registry(db)
    if fmt == "llama-bench":
        from factreg.measure import llamabench_facts

        result = llamabench_facts.import_files(reg, paths, min_uptime_s=min_uptime(s), measured_at=measured_at,
                                         identity=identity, info=extra, id_prefix=id_prefix,
                                         machine=machine if machine is not None else s.hostname, say=info)
        named = "--machine" if machine is not None else (
            "FACTREG_HOSTNAME" if os.environ.get("FACTREG_HOSTNAME") else "this host's name")
        info(f"machine {machine or s.hostname} (from {named}): the facts' machine condition"
             + (f", ids {machine or s.hostname}/<model>/<test>" if id_prefix is None else "")
             + ("; --machine NAME if the benchmark ran elsewhere" if machine is None else ""))
    elif fmt not in IMPORT_FORMATS:  # a plugin's format: its importer reads the files and records the facts
        from factreg import plugins

        importer = plugins.loaded().importers[fmt]
        result = plugins.load(importer.read)(reg, paths, settings=s, say=info, trust=trust)
    elif fmt in BENCH_FORMATS:
        from factreg.measure import serving_import

        result = serving_import.import_files(reg, fmt, paths, min_uptime(s), measured_at=measured_at,
                                             identity=identity, info=extra, id_prefix=id_prefix, say=info)
    else:
        from factreg.cli import progress
        from factreg.registry import jsonl

        large = sum(p.stat().st_size for p in paths if p.is_file()) >= LARGE_IMPORT_BYTES
        with progress.bar("importing", None, minimum=0, when=large) as step:

            def counted(lines: Any, count: int) -> Any:
                step(0, total=count)
                return progress.counting(lines, step)

            result = jsonl.import_files(reg, paths, min_uptime_s=min_uptime(s), trust=trust, progress=counted)
    if json_out:
        for line in said:
            info(line)
        emit_json(result)
        return
    info("".join(f"{line}; " for line in said)
         + "Imported: " + ", ".join(f"{v} {k}" for k, v in result.items() if not isinstance(v, list) and v))


def _plugin_importer(name: str) -> bool:
    """Whether an installed plugin reads the format of this name (`import FORMAT FILE...`)."""
    from factreg import plugins

    return name in plugins.loaded().importers


def _recognised(paths: list[Path], said: list[str]) -> str:
    """The format of the files to import, recognised by content (a line for stderr in `said`); one format for all
    of them."""
    from factreg.errors import UsageError
    from factreg.measure import resultfile

    found = {p: resultfile.recognise(p) for p in paths}
    said.extend(f"{p}: {r.describe()}" for p, r in found.items())
    kinds = {r.format for r in found.values()}
    if len(kinds) > 1:
        raise UsageError("these files are in different formats (" + ", ".join(
            f"{p.name}: {r.format}" for p, r in found.items()) + "): import each format on its own")
    return kinds.pop()


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
