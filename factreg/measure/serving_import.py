"""Result files of other serving benchmarks read as facts: `vllm bench serve --save-result` JSON, AIPerf's
`profile_export_aiperf.json`, and llama-benchy's `--format json` output (`factreg import vllm-bench|aiperf|
llama-benchy FILE...`).

Each file is read into `Run`s (a llama-benchy file holds one per benchmark entry); each statistic the tool reports
that factreg has a name for becomes one fact: the median (or, for llama-benchy, the per-request values as samples)
as the metric's fact, and the tail percentiles as percentile facts (`ttft_any_p99`). Milliseconds become seconds.
Which tool metric is which factreg metric, and why, is in docs/import.md; it was decided from each tool's source.

The facts cannot be re-run: their method is `{"kind": "imported", "tool": ...}` until `factreg method` gives them
one (measure/methods.py). Everything is validated before anything is written, and all facts land in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factreg import clock, stats
from factreg.errors import BadInput, FactregError, UsageError
from factreg.measure import serving_values as sv
from factreg.measure.serving_values import load_json

MAX_RUNS = 10_000

# `factreg import FORMAT`: the formats this module reads, and the tool each names in a fact's method.
TOOLS = {"vllm-bench": "vllm-bench-serve", "aiperf": "aiperf", "llama-benchy": "llama-benchy"}
# The tail percentiles imported as percentile facts when a file has them (the median is the metric's own fact).
TAIL_PERCENTILES = (90.0, 95.0, 99.0, 99.9)

# vLLM `vllm bench serve`: metric part of `median_<m>_ms` → factreg metric (vllm/benchmarks/serve.py and
# vllm/benchmarks/lib/endpoint_request_func.py: ttft is the first streamed chunk of any kind; itl every gap
# between chunks, pooled; tpot (latency − ttft) / (output tokens − 1) per request; e2el the request's latency).
VLLM_LATENCIES = {"ttft": "ttft_any", "tpot": "tpot", "itl": "itl", "e2el": "e2e"}
VLLM_RATES = {"output_throughput": "output_throughput", "request_throughput": "request_throughput"}

# AIPerf: metric tag → (factreg metric, the unit AIPerf writes). aiperf/metrics/types/: time_to_first_token is the
# first response of any kind (reasoning included), time_to_first_output_token the first non-reasoning token;
# inter_token_latency is (request_latency − ttft) / (osl − 1) per request (factreg's tpot), inter_chunk_latency
# every gap between chunks pooled (factreg's itl); output_token_throughput_per_user is 1 / inter_token_latency
# (factreg's decode_rate), prefill_throughput_per_user isl / ttft.
AIPERF_METRICS: dict[str, tuple[str, str]] = {
    "time_to_first_token": ("ttft_any", "ms"),
    "time_to_first_output_token": ("ttft", "ms"),
    "inter_token_latency": ("tpot", "ms"),
    "inter_chunk_latency": ("itl", "ms"),
    "request_latency": ("e2e", "ms"),
    "output_token_throughput_per_user": ("decode_rate", "tokens/sec/user"),
    "prefill_throughput_per_user": ("prefill_rate", "tokens/sec/user"),
    "output_token_throughput": ("output_throughput", "tokens/sec"),
    "request_throughput": ("request_throughput", "requests/sec"),
}
AIPERF_RUN_LEVEL = frozenset({"output_token_throughput", "request_throughput"})  # one number for the whole run

# llama-benchy (src/llama_benchy/client.py, results.py): e2e_ttft is request start → first chunk with content or
# reasoning (ms); tg_req_throughput (tokens − 1) / (end − first token) per request; pp_req_throughput prompt tokens
# / estimated prefill time per request; tg_throughput the batch's generated tokens / its span. Each `values` list
# holds the measurements themselves: they become the fact's samples.
BENCHY_METRICS: dict[str, tuple[str, float]] = {
    "e2e_ttft": ("ttft_any", 1e-3),
    "tg_req_throughput": ("decode_rate", 1.0),
    "pp_req_throughput": ("prefill_rate", 1.0),
    "tg_throughput": ("output_throughput", 1.0),
}


@dataclass
class Stat:
    """One statistic of a run as factreg stores it: a value (or samples) in factreg's unit."""

    metric: str  # factreg metric name, `ttft_any` or `ttft_any_p99`
    base: str  # the metric it is a statistic of
    source: str  # where in the file (`median_ttft_ms`, `time_to_first_token.p99`)
    value: float | None = None
    samples: list[float] | None = None
    spread: float | None = None
    n: int | None = None
    q: float | None = None  # the percentile as a fraction, None for the median


@dataclass
class Run:
    """One benchmark run of a file: what it measured under which conditions, and when."""

    tool: str  # TOOLS key
    where: str
    model: str
    load: str  # the id part naming the load (`r1`, `c2`, `pp2048-tg32-c1`)
    date: str | None  # ISO time from the file, None when it has none
    identity: dict[str, str] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)
    stats: list[Stat] = field(default_factory=list)


def _pct_word(q: float) -> str:
    return f"{q:g}"


# ---------------------------------------------------------------- what each tool's file looks like


def _blocks(data: Mapping[str, Any], table: Mapping[str, Any], where: str) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """Each metric block of `table` that `data` holds: its key, its entry in `table`, the block (an object, else
    BadInput)."""
    for key, entry in table.items():
        block = data.get(key)
        if block is not None:
            yield key, entry, sv.obj(block, key, where)


def is_vllm(data: Any) -> bool:
    """A `vllm bench serve --save-result` file: `completed` and a `median_<m>_ms` field."""
    return isinstance(data, dict) and "completed" in data and any(f"median_{m}_ms" in data for m in VLLM_LATENCIES)


def is_aiperf(data: Any) -> bool:
    """AIPerf's profile_export_aiperf.json: metric tags as objects, and its `input_config`."""
    return isinstance(data, dict) and "input_config" in data and any(
        isinstance(data.get(tag), dict) for tag in AIPERF_METRICS)


def is_benchy(data: Any) -> bool:
    """llama-benchy's JSON: its `version` and a `benchmarks` list."""
    return isinstance(data, dict) and isinstance(data.get("benchmarks"), list) and "version" in data


# The one home of each tool's signature: its reader refuses what does not have it, and `import FILE` names the tool
# of a file that has it (measure/resultfile.py).
SIGNATURES: dict[str, Callable[[Any], bool]] = {"vllm-bench": is_vllm, "aiperf": is_aiperf, "llama-benchy": is_benchy}


# ---------------------------------------------------------------- vLLM


def read_vllm(data: Any, where: str) -> list[Run]:
    """`vllm bench serve --save-result`: one run per file (vllm/benchmarks/serve.py, `result_json`)."""
    data = sv.obj(data, "the file", where)
    if not is_vllm(data):
        raise BadInput(f"{where}: no completed and median_*_ms fields: not a `vllm bench serve --save-result` file")
    completed = sv.count(data["completed"], "completed", where)
    if completed == 0:
        raise BadInput(f"{where}: completed is 0: the run measured nothing")
    model = sv.name(data.get("model_id"), "model_id", where)
    run = Run("vllm-bench", where, model, _vllm_load(data, where),
              sv.iso(data["date"], "date", where) if data.get("date") is not None else None)
    run.identity.update({k: v for k, v in (
        ("model", model), ("backend", sv.opt(data, "backend")), ("endpoint_type", sv.opt(data, "endpoint_type")),
        ("request_rate", sv.opt_number(data, "request_rate", where)),
        ("burstiness", sv.opt_number(data, "burstiness", where)),
        ("concurrency", sv.opt_count(data, "max_concurrency", where)), ("dataset", sv.opt(data, "dataset_name")),
        ("label", sv.opt(data, "label")),
    ) if v is not None})
    run.info.update({k: v for k, v in (
        ("tokenizer", sv.opt(data, "tokenizer_id")), ("num_prompts", sv.opt_count(data, "num_prompts", where)),
        ("completed", str(completed)), ("failed", sv.opt_count(data, "failed", where)),
        ("duration_s", sv.opt_number(data, "duration", where)),
        ("total_input_tokens", sv.opt_count(data, "total_input_tokens", where)),
        ("total_output_tokens", sv.opt_count(data, "total_output_tokens", where)), ("source_date", sv.opt(data, "date")),
    ) if v is not None})
    for part, metric in VLLM_LATENCIES.items():
        median_key = f"median_{part}_ms"
        if median_key in data and data[median_key] is not None:
            std = data.get(f"std_{part}_ms")
            run.stats.append(Stat(metric, metric, median_key, value=sv.number(data[median_key], median_key, where) / 1e3,
                                  spread=None if std is None else sv.number(std, f"std_{part}_ms", where) / 1e3,
                                  n=completed))
        for pct, value, key in _vllm_percentiles(data, part, where):
            run.stats.append(Stat("", metric, key, value=value / 1e3, n=completed, q=pct / 100))
    for key, metric in VLLM_RATES.items():
        if data.get(key) is not None:
            run.stats.append(Stat(metric, metric, key, value=sv.number(data[key], key, where), n=completed))
    return [run]


def _vllm_percentiles(data: Mapping[str, Any], part: str, where: str) -> list[tuple[float, float, str]]:
    """(percentile, value in ms, key) of a metric's tail percentiles: `p99_ttft_ms` keys, or a `percentiles_ttft_ms`
    list of [p, value] pairs (the in-memory form, written by some versions)."""
    found: dict[float, tuple[float, str]] = {}
    for pct in TAIL_PERCENTILES:
        key = f"p{_pct_word(pct)}_{part}_ms"
        if data.get(key) is not None:
            found[pct] = (sv.number(data[key], key, where), key)
    pairs = data.get(f"percentiles_{part}_ms")
    if pairs is not None:
        key = f"percentiles_{part}_ms"
        if not isinstance(pairs, list):
            raise BadInput(f"{where}: {key} must be a list of [percentile, value] pairs")
        for pair in pairs[:1000]:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise BadInput(f"{where}: {key} must be a list of [percentile, value] pairs")
            pct = sv.number(pair[0], f"a percentile in {key}", where)
            if pct in TAIL_PERCENTILES and pct not in found:
                found[pct] = (sv.number(pair[1], f"a value in {key}", where), f"{key}[{_pct_word(pct)}]")
    return [(p, v, k) for p, (v, k) in sorted(found.items())]


def _vllm_load(data: Mapping[str, Any], where: str) -> str:
    rate = data.get("request_rate")
    if isinstance(rate, str) and rate.strip().lower() in ("inf", "infinity"):
        label = "rinf"
    elif rate is None:
        label = "r-"
    else:
        label = f"r{sv.number(rate, 'request_rate', where):g}"
    if data.get("max_concurrency") is not None:
        label += f"-c{sv.count(data['max_concurrency'], 'max_concurrency', where)}"
    burst = data.get("burstiness")
    if burst is not None and sv.number(burst, "burstiness", where) != 1.0:
        label += f"-b{float(burst):g}"
    return label


# ---------------------------------------------------------------- AIPerf


def read_aiperf(data: Any, where: str) -> list[Run]:
    """AIPerf's `profile_export_aiperf.json`: one run per file (metric tag → {unit, avg, p50, …, std, count})."""
    data = sv.obj(data, "the file", where)
    if not is_aiperf(data):
        raise BadInput(f"{where}: no AIPerf metrics and input_config: not a profile_export_aiperf.json")
    config = sv.obj(data["input_config"], "input_config", where)
    model = _aiperf_model(config, where)
    endpoint = sv.obj(config.get("endpoint") or {}, "input_config.endpoint", where)
    urls = endpoint.get("urls") or ([endpoint["url"]] if endpoint.get("url") else [])
    phase = _aiperf_profiling_phase(config, where)
    loadgen = sv.obj(config.get("loadgen") or {}, "loadgen", where)
    concurrency = (sv.opt_count(phase, "concurrency", f"{where} input_config.phases")
                   or sv.opt_count(loadgen, "concurrency", f"{where} input_config.loadgen"))
    rate = (sv.opt_number(phase, "request_rate", f"{where} input_config.phases")
            or sv.opt_number(loadgen, "request_rate", f"{where} input_config.loadgen"))
    load = (f"c{concurrency}" if concurrency else "") + (f"{'-' if concurrency else ''}r{rate}" if rate else "")
    date = data.get("start_time")
    run = Run("aiperf", where, model, load or "run", sv.iso(date, "start_time", where) if date is not None else None)
    datasets = config.get("datasets")
    dataset = datasets[0] if isinstance(datasets, list) and datasets and isinstance(datasets[0], dict) else {}
    run.identity.update({k: v for k, v in (
        ("model", model), ("endpoint", _aiperf_endpoint(endpoint, urls, where)),
        ("endpoint_type", sv.opt(endpoint, "type")), ("streaming", sv.opt(endpoint, "streaming")),
        ("concurrency", concurrency), ("request_rate", rate),
        ("dataset", sv.opt(dataset, "dataset") or sv.opt(dataset, "name")),
    ) if v is not None})
    requests = data.get("request_count")
    n_requests = (sv.count(requests["avg"], "request_count.avg", where)
                  if isinstance(requests, dict) and requests.get("avg") is not None else None)
    run.info.update({k: v for k, v in (
        ("tool_version", sv.opt(data, "aiperf_version")), ("benchmark_id", sv.opt(data, "benchmark_id")),
        ("requests", None if n_requests is None else str(n_requests)),
        ("tokenizer", sv.opt(sv.obj(config.get("tokenizer") or {}, "tokenizer", where), "name")),
        ("source_date", sv.opt(data, "start_time")),
    ) if v is not None})
    for tag, (metric, unit), block in _blocks(data, AIPERF_METRICS, where):
        if block.get("unit") != unit:
            raise BadInput(f"{where}: {tag} is in {str(block.get('unit'))[:40]!r}, factreg reads it in {unit!r}")
        scale = 1e-3 if unit == "ms" else 1.0
        count = sv.count(block["count"], f"{tag}.count", where) if block.get("count") is not None else n_requests
        if count == 0:
            continue
        if tag in AIPERF_RUN_LEVEL:
            if block.get("avg") is not None:
                run.stats.append(Stat(metric, metric, f"{tag}.avg", value=sv.number(block["avg"], f"{tag}.avg", where),
                                      n=n_requests))
            continue
        if block.get("p50") is not None:
            std = block.get("std")
            run.stats.append(Stat(metric, metric, f"{tag}.p50", value=sv.number(block["p50"], f"{tag}.p50", where) * scale,
                                  spread=None if std is None else sv.number(std, f"{tag}.std", where) * scale, n=count))
        for pct in TAIL_PERCENTILES:
            key = f"p{_pct_word(pct)}"
            if block.get(key) is not None:
                run.stats.append(Stat("", metric, f"{tag}.{key}",
                                      value=sv.number(block[key], f"{tag}.{key}", where) * scale, n=count, q=pct / 100))
    if not run.stats:
        raise BadInput(f"{where}: no metric factreg reads has values (p50 or avg)")
    return [run]


def _aiperf_model(config: Mapping[str, Any], where: str) -> str:
    models = config.get("models")
    if isinstance(models, dict) and isinstance(models.get("items"), list) and models["items"]:
        first = models["items"][0]
        if isinstance(first, dict):
            return sv.name(first.get("name"), "input_config.models.items[0].name", where)
    names = config.get("model_names")
    if isinstance(names, list) and names:
        return sv.name(names[0], "input_config.model_names[0]", where)
    raise BadInput(f"{where}: input_config names no model (models.items or model_names)")


def _aiperf_endpoint(endpoint: Mapping[str, Any], urls: Sequence[Any], where: str) -> str | None:
    """The URL the requests went to: AIPerf's `chat` type posts to the base URL's /v1/chat/completions, which is
    what `factreg probe` observes for the same server (so a probe method given later compares like with like)."""
    if not urls:
        return None
    url = sv.name(urls[0], "input_config.endpoint.urls", where)
    if endpoint.get("type") == "chat" and not endpoint.get("custom_endpoint"):
        from factreg.measure.probe_spec import chat_url

        return chat_url(url)
    return url


def _aiperf_profiling_phase(config: Mapping[str, Any], where: str) -> dict[str, Any]:
    phases = config.get("phases")
    if not isinstance(phases, list):
        return {}
    measured = [p for p in phases if isinstance(p, dict) and not p.get("exclude_from_results")]
    return sv.obj(measured[-1], "input_config.phases[]", where) if measured else {}


# ---------------------------------------------------------------- llama-benchy


def read_benchy(data: Any, where: str) -> list[Run]:
    """llama-benchy's JSON: one run per entry of `benchmarks` (src/llama_benchy/results.py, BenchmarkReport)."""
    data = sv.obj(data, "the file", where)
    benches = data.get("benchmarks")
    if not is_benchy(data):
        raise BadInput(f"{where}: no version and benchmarks list: not llama-benchy's JSON output")
    if not benches:
        raise BadInput(f"{where}: the benchmarks list is empty")
    if len(benches) > MAX_RUNS:
        raise BadInput(f"{where}: {len(benches)} benchmarks: more than llama-benchy ever writes")
    model = sv.name(data.get("model"), "model", where)
    date = sv.iso(data["timestamp"], "timestamp", where) if data.get("timestamp") is not None else None
    runs = []
    for i, bench in enumerate(benches, 1):
        at = f"{where} benchmarks[{i}]"
        bench = sv.obj(bench, "a benchmark", at)
        conc = sv.count(bench.get("concurrency"), "concurrency", at)
        prompt = sv.count(bench.get("prompt_size"), "prompt_size", at)
        response = sv.count(bench.get("response_size"), "response_size", at)
        context = sv.count(bench.get("context_size", 0) or 0, "context_size", at)
        prefill_phase = bench.get("is_context_prefill_phase") is True
        load = f"pp{prompt}-tg{response}" + (f"-d{context}" if context else "") + ("-ctx" if prefill_phase else "") \
            + f"-c{conc}"
        run = Run("llama-benchy", at, model, load, date)
        run.identity.update({k: v for k, v in (
            ("model", model), ("concurrency", str(conc)), ("prompt_tokens", str(prompt)),
            ("response_tokens", str(response)), ("context_tokens", str(context)),
            ("phase", "context_prefill" if prefill_phase else None),
            ("prefix_caching", sv.opt(data, "prefix_caching_enabled")),
        ) if v is not None})
        run.info.update({k: v for k, v in (
            ("tool_version", sv.opt(data, "version")), ("latency_mode", sv.opt(data, "latency_mode")),
            ("latency_ms", sv.opt_number(data, "latency_ms", where)), ("source_date", sv.opt(data, "timestamp")),
        ) if v is not None})
        for key, (metric, scale), block in _blocks(bench, BENCHY_METRICS, at):
            values = block.get("values")
            if not isinstance(values, list) or not values:
                raise BadInput(f"{at}: {key}.values must be a non-empty list of numbers")
            if len(values) > stats.MAX_SAMPLES:
                raise BadInput(f"{at}: {key} has {len(values):,} values: at most {stats.MAX_SAMPLES:,} samples are "
                               "kept per version")
            samples = [sv.number(v, f"every {key} value", at) * scale for v in values]
            run.stats.append(Stat(metric, metric, f"{key}.values", samples=samples))
        if not run.stats:
            raise BadInput(f"{at}: no metric factreg reads (e2e_ttft, tg_req_throughput, pp_req_throughput, "
                           "tg_throughput)")
        runs.append(run)
    return runs


READERS: dict[str, Callable[[Any, str], list[Run]]] = {
    "vllm-bench": read_vllm, "aiperf": read_aiperf, "llama-benchy": read_benchy}


def read(tool: str, path: Path) -> list[Run]:
    """Every run of one result file of `tool` (a TOOLS key); BadInput with one line when it cannot be read."""
    runs = READERS[tool](load_json(path), str(path))
    for run in runs:
        _check_order(run)
    return runs


def _check_order(run: Run) -> None:
    """BadInput when a run's percentiles of one metric do not rise with the percentile (a p99 below the median):
    no distribution has them, so the file is wrong, and its facts would contradict each other."""
    by_metric: dict[str, list[tuple[float, float, str]]] = {}
    for stat in run.stats:
        if stat.value is not None:
            by_metric.setdefault(stat.base, []).append((0.5 if stat.q is None else stat.q, stat.value, stat.source))
    for points in by_metric.values():
        points.sort()
        for (q1, v1, s1), (q2, v2, s2) in zip(points, points[1:], strict=False):
            if q2 > q1 and v2 < v1:
                raise BadInput(f"{run.where}: {s2} is below {s1}: a higher percentile cannot be lower")


# ---------------------------------------------------------------- facts


def method_of(tool: str, path: Path, stat: Stat, version: str | None = None) -> dict[str, Any]:
    """An imported fact's method: which tool (and version, when the file says) measured it and where it came from;
    it cannot be re-run (`factreg method` gives it one)."""
    select: dict[str, Any] = {"metric": stat.base, "source": stat.source}
    if stat.q is not None:
        select["q"] = stat.q
    return {"kind": "imported", "tool": TOOLS[tool], **({"tool_version": version} if version else {}),
            "file": path.name, "select": select}


def new_facts(tool: str, path: Path, runs: Sequence[Run], *, measured_at: str | None, identity: Mapping[str, str],
              info: Mapping[str, str], id_prefix: str | None) -> tuple[list[Any], int]:
    """The NewFacts of one file's runs, and how many were dated by the file itself (not --measured-at)."""
    from factreg.registry.facts import NewFact
    from factreg.registry.ids import check_id, slugify
    from factreg.registry.metrics import percentile_name
    from factreg.stats import quantiles

    out = []
    dated = 0
    for run in runs:
        if run.date is None and measured_at is None:
            raise UsageError(f"{run.where}: this {TOOLS[tool]} result carries no date: give --measured-at, when the "
                             "benchmark ran (e.g. 2026-10-26 or 2026-10-26T14:05:00Z)")
        dated += run.date is not None
        prefix = id_prefix or slugify(run.model.rstrip("/").rsplit("/", 1)[-1])
        base_id = check_id(f"{prefix}/{tool}/{slugify(run.load)}")
        ident = {**run.identity, "tool": TOOLS[tool], **identity}
        extra = {**run.info, "source_file": path.name, "source_format": tool, **info}
        for stat in run.stats:
            metric = stat.metric or percentile_name(stat.base, stat.q or 0.5)
            few = quantiles.shortfall(stat.q, stat.n) if stat.q is not None and stat.n else None
            new = NewFact(
                id=f"{base_id}/{metric}", metric=metric, value=stat.value, samples=stat.samples, spread=stat.spread,
                n=stat.n if stat.samples is None else None, identity=ident, info=extra, subject=base_id,
                measured_at=run.date or measured_at, method=method_of(tool, path, stat, run.info.get("tool_version")),
                note=f"{TOOLS[tool]} {stat.source}, imported from {path.name}" + (f"; {few}" if few else ""),
                extra_flags=["few_for_percentile"] if few else [],
            )
            new.origin, new.source, new.trusted = "imported", path.name, False
            out.append(new)
    return out, dated


def import_files(
    registry: Any,
    tool: str,
    paths: Sequence[Path],
    min_uptime_s: float,
    *,
    measured_at: str | None = None,
    identity: Mapping[str, str] | None = None,
    info: Mapping[str, str] | None = None,
    id_prefix: str | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """`factreg import vllm-bench|aiperf|llama-benchy FILE...`: read every file, validate every fact, then record
    them all in one transaction (nothing is written when any file or fact is refused)."""
    from factreg.registry import facts
    from factreg.registry.ids import check_id

    if tool not in TOOLS:
        raise UsageError(f"unknown format {tool!r}: use one of {', '.join(TOOLS)}")
    when = clock.iso(clock.parse(measured_at, "--measured-at")) if measured_at is not None else None
    if id_prefix is not None:
        check_id(id_prefix)
    news: list[Any] = []
    dated = 0
    for path in paths:
        runs = read(tool, Path(path))
        try:
            made, n = new_facts(tool, Path(path), runs, measured_at=when, identity=identity or {}, info=info or {},
                                id_prefix=id_prefix)
        except BadInput:
            raise
        except FactregError as exc:
            if "--measured-at" in exc.message:
                raise
            raise BadInput(f"{path}: {exc.message}") from None
        news += made
        dated += n
    seen: dict[str, str] = {}
    for new in news:
        if new.id in seen:
            raise BadInput(f"two results give the fact id {new.id} ({seen[new.id]} and {new.source}): import them "
                           "one at a time, or give --id to tell them apart")
        seen[new.id] = str(new.source)
    for new in news:  # validate everything before writing anything
        try:
            facts.build_rows(new, min_uptime_s)
        except FactregError as exc:
            raise BadInput(f"{new.source}: {new.id}: {exc.message}") from None
    written = facts.record_many(registry, news, min_uptime_s)
    if say and when and dated:
        say(f"{dated} run(s) dated by the file's own date, not by --measured-at")
    return {"facts": len(written), "files": len(paths), tool: len(paths), "ids": written}
