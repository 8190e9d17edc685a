"""Commands that move facts in and out: export (the whole registry as JSONL) and import (JSONL, benchmark output, a
plugin's format)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from factreg.cli.common import (
    DbOption,
    JsonFlag,
    emit_json,
    handles_errors,
    info,
    min_uptime,
    open_registry,
)

# `factreg import FORMAT FILE...`: the formats it reads.
IMPORT_FORMATS = ("jsonl", "llama-bench", "vllm-bench", "aiperf", "llama-benchy")
# The formats that are a benchmark's output (the rest carry their own fields): --measured-at, --cond, --info and
# --id apply to these.
BENCH_FORMATS = IMPORT_FORMATS[1:]
# From this size on (all files together), `import` shows a progress bar on a terminal.
LARGE_IMPORT_BYTES = 1024 * 1024


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("import")(import_)


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
