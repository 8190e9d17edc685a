"""llama-bench results as facts: test names and ids, identity and info conditions, the facts a run records, and
importing llama-bench's output files (`measure/llamabench.py` runs it; `llamabench_output` reads its formats)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg import clock
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import BadInput, FactregError, UsageError
from factreg.measure import hostinfo
from factreg.measure.llamabench_output import MD_COLUMNS, BenchResult, Reading, read
from factreg.registry import conditions as cond
from factreg.registry.ids import check_id, slugify

if TYPE_CHECKING:
    pass
from factreg.measure.llamabench_args import BINARY_NAME, model_paths, model_sha256

IDENTITY_KEYS = (
    "build_commit", "build_number", "backends", "gpu_info", "cpu_info", "model_filename", "model_type",
    "n_gpu_layers", "n_cpu_moe", "n_threads", "n_batch", "n_ubatch", "type_k", "type_v", "flash_attn",
    "split_mode", "tensor_split", "tensor_buft_overrides", "load_mode", "use_mmap", "n_prompt", "n_gen", "n_depth",
)  # fmt: skip


# Short names for the id suffix that tells apart tests differing in a parameter (`-t 4,8` → `tg32-t4`).
SHORT = {"n_threads": "t", "n_gpu_layers": "ngl", "n_batch": "b", "n_ubatch": "ub", "flash_attn": "fa",
         "type_k": "ctk", "type_v": "ctv", "n_cpu_moe": "ncmoe", "build_commit": "build"}  # fmt: skip


def test_name(r: BenchResult) -> str:
    """llama-bench's own test name: `pp512`, `tg128`, `pp512+tg128`, with ` @ d<depth>`."""
    if r.n_gen == 0:
        name = f"pp{r.n_prompt}"
    elif r.n_prompt == 0:
        name = f"tg{r.n_gen}"
    else:
        name = f"pp{r.n_prompt}+tg{r.n_gen}"
    return name + (f" @ d{r.n_depth}" if r.n_depth else "")


def test_slug(r: BenchResult) -> str:
    """The test name as an id segment: `pp512-tg128-d4096`."""
    return test_name(r).replace("+", "-").replace(" @ ", "-")


def metric_of(r: BenchResult) -> str:
    if r.n_gen == 0:
        return "pp_rate"
    if r.n_prompt == 0:
        return "tg_rate"
    return "pptg_rate"


def _text(key: str, value: Any) -> str:
    # Booleans as 1/0, the way CSV and SQL output write them, so formats and old/new builds compare equal.
    if isinstance(value, bool):
        return "1" if value else "0"
    return cond.as_text(value)


def split_conditions(r: BenchResult, also_identity: Iterable[str] = ()) -> tuple[dict[str, str], dict[str, str]]:
    """Identity and info conditions from a result's fields (unknown keys become info, unless `also_identity`
    names them: the fields a run swept)."""
    identity: dict[str, str] = {}
    info: dict[str, str] = {}
    extra = set(also_identity)
    for key, value in r.fields.items():
        if value is None or isinstance(value, (list, dict)) and not value:
            continue
        text = _text(key, value)
        if key in IDENTITY_KEYS or key in extra and key.replace("_", "").replace("-", "").isalnum():
            identity[key] = text
        elif key.replace("_", "").replace("-", "").isalnum():
            info[key] = text
    if "n_depth" not in identity:
        identity["n_depth"] = "0"
    return identity, info


# Fields that describe a result rather than set it up: never what tells two tests apart in an id.
NOT_PARAMETERS = ("n_prompt", "n_gen", "n_depth", "test_time", "model_filename", "model_type", "model_size",
                  "model_n_params", "model_size_text", "model_params_text", "build_number")


def _short(key: str) -> str:
    """A field's short name in ids: factreg's (`t`, `ngl`), else llama-bench's column title (`mla`, `lm`)."""
    if key in SHORT:
        return SHORT[key]
    titles = [t for t, k in MD_COLUMNS.items() if k == key and t != key]
    return slugify(titles[0] if titles else key)


def model_key(r: BenchResult) -> str:
    """The model as an id segment: its type (`qwen3moe 30B.A3B Q4_K - Medium`), which every format prints, so the
    Markdown and the JSON of one run name the same facts; else the file name's stem."""
    if r.fields.get("model_type"):
        return slugify(str(r.fields["model_type"]))
    return model_stem(r)


def swept(results: Sequence[BenchResult]) -> list[str]:
    """The fields that tell results apart: any that varies between the rows of one run, or between results of the
    same test and model (different runs of a document, differing in a column or a build). They are identity
    conditions of those results and part of their ids. Known identity keys first, then in the order seen."""
    keys: list[str] = [k for k in IDENTITY_KEYS if k not in NOT_PARAMETERS]
    for r in results:
        keys.extend(k for k in r.fields if k not in keys and k not in NOT_PARAMETERS)
    groups: dict[tuple[Any, ...], list[BenchResult]] = {}
    for r in results:
        groups.setdefault(("test", model_key(r), test_slug(r)), []).append(r)
        groups.setdefault(("run", r.run), []).append(r)
    return [k for k in keys
            if any(len({_text(k, m.fields.get(k)) for m in members}) > 1 for members in groups.values())]


def fact_ids(results: Sequence[BenchResult], prefix_for: Any, keys: Sequence[str] | None = None) -> list[str]:
    """A readable id per result: `<prefix>/tg32`, with `-t4`, `-mla2` style suffixes for swept fields and `-run2`
    (the table's number) when two runs of one document hold the same test with nothing printed to tell them apart.

    Two results of one run can still share an id: the same test twice with the same parameters (repeats)."""
    keys = swept(results) if keys is None else keys
    ids = []
    for r in results:
        suffix = "".join(f"-{_short(k)}{slugify(_text(k, r.fields[k]), 20)}" for k in keys
                         if r.fields.get(k) not in (None, ""))
        ids.append(f"{prefix_for(r)}/{test_slug(r)}{suffix}")
    runs: dict[str, set[int]] = {}
    for fid, r in zip(ids, results, strict=True):
        runs.setdefault(fid, set()).add(r.run)
    return [check_id(f"{fid}-run{r.run}" if len(runs[fid]) > 1 else fid) for fid, r in zip(ids, results, strict=True)]


def selector(r: BenchResult, varying: Sequence[str]) -> dict[str, str]:
    """What picks this result out of a re-run's output."""
    sel = {"test": test_name(r), "n_prompt": str(r.n_prompt), "n_gen": str(r.n_gen), "n_depth": str(r.n_depth)}
    for key in varying:
        sel[key] = _text(key, r.fields.get(key))
    return sel


def matches(r: BenchResult, select: Mapping[str, str]) -> bool:
    for key, want in select.items():
        if key == "test":
            continue
        have = {"n_prompt": r.n_prompt, "n_gen": r.n_gen, "n_depth": r.n_depth}.get(key, r.fields.get(key))
        if _text(key, have) != str(want):
            return False
    return True


def model_stem(r: BenchResult) -> str:
    name = str(r.fields.get("model_filename") or r.fields.get("model_type") or "model")
    stem = Path(name).name
    for ext in (".gguf", ".bin"):
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
    return slugify(stem)


def method_for(args: Sequence[str]) -> dict[str, Any]:
    """The stored method: data, never a shell string."""
    return {"kind": "llama-bench", "binary": BINARY_NAME, "args": list(args)}


def observe(
    results: Sequence[BenchResult], args: Sequence[str], hostname: str | None, cache_file: Path | None = None
) -> dict[str, dict[str, str]]:
    """Per model file named in the arguments: its size and SHA-256 (hashes cached)."""
    out: dict[str, dict[str, str]] = {}
    for path in model_paths(args):
        if path in out:
            continue
        size, sha = model_sha256(path, cache_file)
        out[path] = {"model_file_size": str(size), "model_sha256": sha}
    return out


def _model_conditions(r: BenchResult, per_model: Mapping[str, dict[str, str]]) -> dict[str, str]:
    name = str(r.fields.get("model_filename") or "")
    if name in per_model:
        return per_model[name]
    for path, conds in per_model.items():
        if Path(path).name == Path(name).name:
            return conds
    return next(iter(per_model.values())) if len(per_model) == 1 else {}


def build_facts(
    results: Sequence[BenchResult],
    args: Sequence[str],
    hostname: str,
    per_model: Mapping[str, dict[str, str]],
    id_prefix: str | None = None,
) -> list[Any]:
    """NewFacts for a run's results: conditions from llama-bench's fields, the host and the model file."""

    host_ident = hostinfo.identity(hostname)
    host_info = hostinfo.info()
    keys = swept(results)
    host_slug = slugify(hostname)

    def prefix(r: BenchResult) -> str:
        if id_prefix:
            multi_model = len({x.fields.get("model_filename") for x in results}) > 1
            return f"{id_prefix}/{model_stem(r)}" if multi_model else id_prefix
        return f"{host_slug}/{model_stem(r)}"

    ids = fact_ids(results, prefix, keys)
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UsageError(f"llama-bench ran the test of {dupes[0]!r} twice with the same parameters (a value listed "
                         "twice?): give each value once, or -r for more repetitions")
    cold = "--no-warmup" in args or "-nwu" in args
    news = []
    for r, fid in zip(results, ids, strict=True):
        identity, info = split_conditions(r, keys)
        identity.update(host_ident)
        identity.update(_model_conditions(r, per_model))
        info.update(host_info)
        if cold:
            info["warm"] = "false"
        method = {**method_for(args), "select": selector(r, keys)}
        # factreg ran it just now: dated by factreg's clock (llama-bench's own test_time stays an info condition)
        news.append(new_fact(r, fid, identity, info, method, f"llama-bench {test_name(r)}", measured_at=clock.iso()))
    return news


def new_fact(r: BenchResult, fid: str, identity: dict[str, str], info: dict[str, str], method: dict[str, Any],
             note: str, measured_at: str | None = None) -> Any:
    """The NewFact for one llama-bench result: samples_ts, avg_ts ± stddev_ts, dated `measured_at` or else the
    run's own test time (an imported file's results)."""
    from factreg.registry.facts import NewFact

    return NewFact(
        id=fid,
        metric=metric_of(r),
        value=r.avg_ts,
        samples=r.samples_ts or None,
        spread=r.stddev_ts,
        n=None if r.samples_ts else r.n,
        identity=identity,
        info=info,
        measured_at=measured_at or (str(r.fields["test_time"]) if r.fields.get("test_time") else None),
        method=method,
        raw=r.raw,
        note=note,
    )


def merge_repeats(results: Sequence[BenchResult]) -> BenchResult:
    """One result from the same test repeated in one run with the same parameters (a value listed twice, or a table
    with the same row twice): one measurement with more repetitions, not versions of a fact. With per-repetition
    samples (JSON, JSONL) the samples are pooled; without (Markdown, CSV, SQL) each row's average is one sample."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    if all(r.samples_ts for r in results):
        samples = [x for r in results for x in r.samples_ts]
    else:
        samples = [r.avg_ts for r in results]
    return BenchResult(dict(first.fields), sum(samples) / len(samples), None, samples, len(samples),
                       "\n".join(r.raw for r in results), first.run, first.line)


FORMAT_NAMES = {"md": "a Markdown table", "csv": "this CSV", "sql": "this SQL", "sqlite": "this database",
                "json": "this JSON", "jsonl": "this JSONL"}


def _dated(r: BenchResult, measured_at: str | None, where: str, fmt: str) -> str:
    """A result's date: its own test_time, else the one the user gave; never the import's time."""
    if r.fields.get("test_time"):
        return clock.iso(clock.parse(str(r.fields["test_time"]), f"test_time in {where}"))
    if measured_at is None:
        raise UsageError(f"{where}: {FORMAT_NAMES.get(fmt, fmt)} carries no date (no test_time): give --measured-at, "
                         "when llama-bench ran (e.g. 2026-10-26 or 2026-10-26T14:05:00Z)")
    return measured_at


def _span(ranges: Sequence[tuple[int, int]], limit: int = 8) -> str:
    shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:limit])
    return shown + (f", … ({len(ranges) - limit} more)" if len(ranges) > limit else "")


def describe(path: Path, reading: Reading) -> list[str]:
    """Lines for stderr: which tables of a document were read and which lines were skipped."""
    if reading.fmt != "md":
        return []
    out = [f"{path}: read {len(reading.results)} result(s) from {len(reading.tables)} llama-bench table(s) at lines "
           f"{_span(reading.tables)}"]
    if reading.skipped:
        out.append(f"{path}: skipped {reading.skipped_count} non-blank line(s) outside the tables (prose, logs, "
                   f"other tables): lines {_span(reading.skipped)}")
    if reading.skipped_rows:
        out.append(f"{path}: skipped {len(reading.skipped_rows)} line(s) inside tables: " + "; ".join(
            f"line {n} ({why})" for n, why in reading.skipped_rows[:8]) + (" …" if len(reading.skipped_rows) > 8 else ""))
    return out


def import_files(
    registry: Any,
    paths: Sequence[Path],
    min_uptime_s: float = DEFAULT_MIN_UPTIME_S,
    *,
    measured_at: str | None = None,
    identity: Mapping[str, str] | None = None,
    info: Mapping[str, str] | None = None,
    id_prefix: str | None = None,
    machine: str | None = None,
    say: Any = None,
) -> dict[str, Any]:
    """`factreg import llama-bench FILE...`: read every file first, then record all facts in one transaction.

    Every table of a document is one run; fields swept within a run, or differing between runs for the same test,
    become identity conditions and id suffixes. A result is dated by its own test_time, else by `measured_at`; a
    result with neither is refused (a date is never made up). Ids are `bench`'s, `<machine>/<model-stem>/<test>`:
    `machine` (default: this host's name) is also each fact's `machine` condition. `identity`/`info` are added to
    every fact (they win over the file's fields), `id_prefix` replaces the machine and model part of the ids. The
    facts are imported (`{"kind": "imported", "tool": "llama-bench"}`): `factreg method ID --bench -- ARGS` makes
    one re-runnable. `say` gets lines for stderr."""
    from factreg.registry import facts

    when = clock.iso(clock.parse(measured_at, "--measured-at")) if measured_at is not None else None
    if id_prefix is not None:
        check_id(id_prefix)
    from factreg import config

    host = machine if machine is not None else config.hostname()
    if not host.strip() or not slugify(host):
        raise UsageError(f"--machine {host[:40]!r}: give the name of the machine the benchmark ran on")
    news: list[Any] = []
    formats: dict[str, int] = {}
    merged = dated_by_file = 0
    for path in paths:
        reading = read(Path(path))
        results, fmt = reading.results, reading.fmt
        formats[fmt] = formats.get(fmt, 0) + 1
        keys = swept(results)
        models = {model_key(r) for r in results}
        if id_prefix is None and any(not (r.fields.get("model_type") or r.fields.get("model_filename"))
                                     for r in results):
            raise UsageError(f"{path}: a table without a model column does not say what was measured: give --id "
                             "PREFIX to name its facts (e.g. --id gamebox/qwen3-30b)")

        def prefix(r: BenchResult) -> str:
            if id_prefix:
                return f"{id_prefix}/{model_key(r)}" if len(models) > 1 else id_prefix  # noqa: B023
            return f"{slugify(host)}/{model_stem(r)}"  # as `bench` names them

        groups: dict[str, list[BenchResult]] = {}
        for r, fid in zip(results, fact_ids(results, prefix, keys), strict=True):
            groups.setdefault(fid, []).append(r)
        for fid, members in groups.items():
            r = merge_repeats(members)
            where = f"{path} line {r.line}" if r.line else str(path)
            ident, extra = split_conditions(r, keys)
            ident["machine"] = host
            ident.update(identity or {})
            extra.update({"source_file": Path(path).name, "source_format": fmt, **(info or {})})
            if reading.runs > 1:
                extra["source_run"] = str(r.run)
            if len(members) > 1:
                merged += len(members) - 1
                extra["repeats"] = str(len(members))
            method = {"kind": "imported", "tool": "llama-bench", "format": fmt, "select": selector(r, keys)}
            note = f"llama-bench {test_name(r)}, imported from {Path(path).name}" + (
                f" ({len(members)} repeated rows merged)" if len(members) > 1 else "")
            dated_by_file += bool(r.fields.get("test_time"))
            moment = _dated(r, when, where, fmt)
            try:
                new = new_fact(r, fid, ident, extra, method, note, measured_at=moment)
                new.origin, new.source, new.trusted = "imported", Path(path).name, False
                news.append(new)
            except FactregError as exc:
                raise BadInput(f"{path}: {exc.message}") from None
        for line in describe(Path(path), reading) if say else ():
            say(line)
    # Validate everything before writing anything.
    for n in news:
        facts.build_rows(n, min_uptime_s)
    written = facts.record_many(registry, news, min_uptime_s)
    if say and merged:
        say(f"merged {merged} repeated row(s) (same test, same parameters, same run) into the fact they repeat")
    if say and when and dated_by_file:
        say(f"{dated_by_file} fact(s) dated by llama-bench's own test_time, not by --measured-at")
    return {"facts": len(written), "files": len(paths), **formats, "ids": written}
