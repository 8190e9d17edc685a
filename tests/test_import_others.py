"""`factreg import vllm-bench|aiperf|llama-benchy` on real result files (tests/data/results-others/, README there
names each source): every fact checked value by value against a plain reading of the JSON in this file, dates,
the not-re-runnable verify, `factreg method`, and bad input (one `Error:` line, exit 2, nothing stored)."""

from __future__ import annotations

import json
import sqlite3
import statistics
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "results-others"
VLLM = sorted((DATA / "vllm-bench").glob("*.json"))
AIPERF = DATA / "aiperf" / "profile_export_aiperf.json"
BENCHY = DATA / "llama-benchy" / "sample.json"


def one_line_error(r, contains: str, code: int = 2) -> None:
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr and contains in r.stderr, r.stderr


def facts_by_id(cli) -> dict[str, dict]:
    r = cli("list", "--json")
    return {} if r.exit_code == 2 else {f["id"]: f for f in r.json()}


def check(fact: dict, value: float, spread: float | None, n: int | None, unit: str) -> None:
    assert fact["value"] == pytest.approx(value, rel=1e-12), fact["id"]
    if spread is None:
        assert fact["spread"] is None, fact["id"]
    else:
        assert fact["spread"] == pytest.approx(spread, rel=1e-12), fact["id"]
    assert fact["n"] == n and fact["unit"] == unit, fact["id"]


# ---------------------------------------------------------------- vLLM: value by value


@pytest.mark.parametrize("path", VLLM, ids=lambda p: p.name[:30])
def test_vllm_bench_serve_result_value_by_value(cli, path):
    data = json.loads(path.read_text(encoding="utf-8"))
    r = cli("import", "vllm-bench", str(path), "--id", "t")
    assert r.exit_code == 0, r.stderr
    got = facts_by_id(cli)
    base = "t/vllm-bench/r1"  # request_rate 1.0, no max_concurrency, burstiness 1.0
    expected: dict[str, tuple[float, float | None, int, str]] = {}
    # vLLM's ttft is the first chunk of any kind → ttft_any; tpot, itl as they are; ms → s; n = completed requests.
    for part, metric in (("ttft", "ttft_any"), ("tpot", "tpot"), ("itl", "itl")):
        expected[f"{base}/{metric}"] = (data[f"median_{part}_ms"] / 1000, data[f"std_{part}_ms"] / 1000,
                                        data["completed"], "s")
        expected[f"{base}/{metric}_p99"] = (data[f"p99_{part}_ms"] / 1000, None, data["completed"], "s")
    expected[f"{base}/output_throughput"] = (data["output_throughput"], None, data["completed"], "tok/s")
    expected[f"{base}/request_throughput"] = (data["request_throughput"], None, data["completed"], "req/s")
    assert sorted(got) == sorted(expected)  # no e2e: these files have no e2el (not in --percentile-metrics)
    for fid, (value, spread, n, unit) in expected.items():
        check(got[fid], value, spread, n, unit)
        # p99 from ~200 requests: factreg's rule asks n ≥ 1000 (10 samples above it), so the fact says so
        assert ("few_for_percentile" in got[fid]["flags"]) == fid.endswith("_p99"), fid
        fact = got[fid]
        assert fact["measured_at"] == "2026-07-22T{}:{}:{}Z".format(
            data["date"][9:11], data["date"][11:13], data["date"][13:15])
        assert fact["method"]["kind"] == "imported" and fact["method"]["tool"] == "vllm-bench-serve"
        ident = fact["conditions"]["identity"]
        assert ident["model"] == data["model_id"] and ident["backend"] == data["backend"]
        assert ident["request_rate"] == "1" and ident["burstiness"] == "1" and ident["tool"] == "vllm-bench-serve"
        assert "concurrency" not in ident  # max_concurrency is null: unlimited
        info = fact["conditions"]["info"]
        assert info["completed"] == str(data["completed"]) and info["failed"] == str(data["failed"])
        assert info["num_prompts"] == str(data["num_prompts"]) and info["source_file"] == path.name
        assert fact["provenance"]["origin"] == "imported"


def test_vllm_default_ids_come_from_the_model_name(cli):
    path = DATA / "vllm-bench" / "openai-1.0qps-Qwen3-VL-8B-Instruct-20260722-041843.json"
    assert cli("import", "vllm-bench", str(path)).exit_code == 0
    assert "qwen3-vl-8b-instruct/vllm-bench/r1/ttft_any" in facts_by_id(cli)


def test_vllm_percentiles_list_and_e2el_and_concurrency(cli, tmp_path):
    """The fields the real files lack, as vllm/benchmarks/serve.py writes them: e2el, p90 keys, the
    percentiles_*_ms pairs, max_concurrency and an infinite rate."""
    data = json.loads(VLLM[0].read_text(encoding="utf-8"))
    data.update({"request_rate": "inf", "max_concurrency": 8, "median_e2el_ms": 2000.0, "std_e2el_ms": 100.0,
                 "p90_e2el_ms": 2400.0, "percentiles_e2el_ms": [[50, 2000.0], [99, 3000.0]]})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cli("import", "vllm-bench", str(path), "--id", "t").exit_code == 0
    got = facts_by_id(cli)
    check(got["t/vllm-bench/rinf-c8/e2e"], 2.0, 0.1, data["completed"], "s")
    check(got["t/vllm-bench/rinf-c8/e2e_p90"], 2.4, None, data["completed"], "s")
    check(got["t/vllm-bench/rinf-c8/e2e_p99"], 3.0, None, data["completed"], "s")
    assert "t/vllm-bench/rinf-c8/e2e_p50" not in got  # the median is the metric's own fact
    assert got["t/vllm-bench/rinf-c8/e2e"]["conditions"]["identity"]["concurrency"] == "8"


# ---------------------------------------------------------------- AIPerf: value by value


# AIPerf metric tag → factreg metric (aiperf/metrics/types/: TTFT counts reasoning, TTFO does not; its
# inter_token_latency is per request (factreg's tpot), inter_chunk_latency the pooled gaps (factreg's itl)).
AIPERF_DISTRIBUTIONS = {"time_to_first_token": "ttft_any", "time_to_first_output_token": "ttft",
                        "inter_token_latency": "tpot", "inter_chunk_latency": "itl", "request_latency": "e2e",
                        "output_token_throughput_per_user": "decode_rate",
                        "prefill_throughput_per_user": "prefill_rate"}
AIPERF_RUN_LEVEL = {"output_token_throughput": ("output_throughput", "tok/s"),
                    "request_throughput": ("request_throughput", "req/s")}


def test_aiperf_export_value_by_value(cli):
    data = json.loads(AIPERF.read_text(encoding="utf-8"))
    assert cli("import", "aiperf", str(AIPERF), "--id", "t").exit_code == 0
    got = facts_by_id(cli)
    concurrency = data["input_config"]["phases"][-1]["concurrency"]
    base = f"t/aiperf/c{concurrency}"
    expected: dict[str, tuple[float, float | None, int, str]] = {}
    for tag, metric in AIPERF_DISTRIBUTIONS.items():
        block = data[tag]
        scale, unit = (1e-3, "s") if block["unit"] == "ms" else (1.0, "tok/s")
        expected[f"{base}/{metric}"] = (block["p50"] * scale, block["std"] * scale, block["count"], unit)
        for p in ("p90", "p95", "p99"):
            expected[f"{base}/{metric}_{p}"] = (block[p] * scale, None, block["count"], unit)
            # docs/latency.md: a percentile needs 10 samples beyond it (p90: n ≥ 100, p95: 200, p99: 1000)
            few = block["count"] < {"p90": 100, "p95": 200, "p99": 1000}[p]
            assert ("few_for_percentile" in got[f"{base}/{metric}_{p}"]["flags"]) == few, (tag, p)
    for tag, (metric, unit) in AIPERF_RUN_LEVEL.items():
        expected[f"{base}/{metric}"] = (data[tag]["avg"], None, int(data["request_count"]["avg"]), unit)
    assert sorted(got) == sorted(expected)
    for fid, (value, spread, n, unit) in expected.items():
        check(got[fid], value, spread, n, unit)
        fact = got[fid]
        assert fact["measured_at"] == data["start_time"] + "Z"  # no zone in the file: UTC, as every naive time
        ident = fact["conditions"]["identity"]
        assert ident["model"] == data["input_config"]["models"]["items"][0]["name"]
        # AIPerf's chat endpoint type posts to /v1/chat/completions under the base URL
        assert ident["endpoint"] == data["input_config"]["endpoint"]["urls"][0] + "/v1/chat/completions"
        assert ident["concurrency"] == str(concurrency) and ident["tool"] == "aiperf"
        assert fact["conditions"]["info"]["tool_version"] == data["aiperf_version"]
        assert fact["method"] == {**fact["method"], "kind": "imported", "tool": "aiperf",
                                  "tool_version": data["aiperf_version"]}


def test_aiperf_unit_it_does_not_expect_is_refused(cli, tmp_path):
    data = json.loads(AIPERF.read_text(encoding="utf-8"))
    data["time_to_first_token"]["unit"] = "s"
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    one_line_error(cli("import", "aiperf", str(path)), "time_to_first_token is in 's'")
    assert facts_by_id(cli) == {}


# ---------------------------------------------------------------- llama-benchy: samples


# llama-benchy key → (factreg metric, scale to factreg's unit, unit)
BENCHY_METRICS = {"e2e_ttft": ("ttft_any", 1e-3, "s"), "tg_req_throughput": ("decode_rate", 1.0, "tok/s"),
                  "pp_req_throughput": ("prefill_rate", 1.0, "tok/s"), "tg_throughput": ("output_throughput", 1.0, "tok/s")}


def test_llama_benchy_value_by_value(cli):
    data = json.loads(BENCHY.read_text(encoding="utf-8"))
    assert cli("import", "llama-benchy", str(BENCHY), "--id", "t").exit_code == 0
    got = facts_by_id(cli)
    expected = {}
    for bench in data["benchmarks"]:
        base = f"t/llama-benchy/pp{bench['prompt_size']}-tg{bench['response_size']}-c{bench['concurrency']}"
        for key, (metric, scale, unit) in BENCHY_METRICS.items():
            samples = [v * scale for v in bench[key]["values"]]
            expected[f"{base}/{metric}"] = (samples, unit, bench)
    assert sorted(got) == sorted(expected)
    for fid, (samples, unit, bench) in expected.items():
        fact = got[fid]
        assert fact["samples"] == pytest.approx(samples, rel=1e-12)
        check(fact, statistics.median(samples), statistics.stdev(samples), len(samples), unit)
        assert fact["measured_at"] == "2026-02-07T19:09:00Z"
        ident = fact["conditions"]["identity"]
        assert ident["concurrency"] == str(bench["concurrency"])
        assert ident["prompt_tokens"] == str(bench["prompt_size"])
        assert ident["response_tokens"] == str(bench["response_size"])
        assert ident["model"] == data["model"] and ident["tool"] == "llama-benchy"
        assert fact["conditions"]["info"]["tool_version"] == data["version"]


# ---------------------------------------------------------------- dates


def _without(path: Path, key: str, tmp_path: Path) -> Path:
    data = json.loads(path.read_text(encoding="utf-8"))
    del data[key]
    out = tmp_path / f"nodate-{path.name}"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


@pytest.mark.parametrize(("fmt", "path", "key"), [("vllm-bench", VLLM[0], "date"), ("aiperf", AIPERF, "start_time"),
                                                  ("llama-benchy", BENCHY, "timestamp")])
def test_a_file_without_a_date_needs_measured_at(cli, tmp_path, fmt, path, key):
    undated = _without(path, key, tmp_path)
    one_line_error(cli("import", fmt, str(undated)), "--measured-at")
    assert facts_by_id(cli) == {}
    r = cli("import", fmt, str(undated), "--measured-at", "2026-10-26T14:05:00+02:00")
    assert r.exit_code == 0, r.stderr
    assert {f["measured_at"] for f in facts_by_id(cli).values()} == {"2026-10-26T12:05:00Z"}


def test_the_files_own_date_wins_over_measured_at_and_says_so(cli):
    r = cli("import", "llama-benchy", str(BENCHY), "--measured-at", "2026-10-26")
    assert r.exit_code == 0 and "dated by the file's own date" in r.stderr
    assert {f["measured_at"] for f in facts_by_id(cli).values()} == {"2026-02-07T19:09:00Z"}


# ---------------------------------------------------------------- not re-runnable; `factreg method`


def test_verify_skips_imported_facts_and_says_how_to_give_a_method(cli):
    assert cli("import", "aiperf", str(AIPERF), "--id", "t").exit_code == 0
    r = cli("verify", "t/aiperf/c2/ttft_any", "--json")
    assert r.exit_code == 0, r.stderr
    [result] = r.json()
    assert result["verdict"] == "skipped" and result["recorded"] is False
    assert "imported from aiperf output" in result["message"]
    assert "factreg method t/aiperf/c2/ttft_any --probe URL --body FILE" in result["message"]
    assert cli("history", "t/aiperf/c2/ttft_any", "--json").json()[0]["verifications"] == []


def test_method_gives_imported_facts_a_probe_and_keeps_their_numbers(cli, tmp_path):
    assert cli("import", "aiperf", str(AIPERF), "--id", "t").exit_code == 0
    before = facts_by_id(cli)
    body = tmp_path / "body.json"
    body.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}', encoding="utf-8")
    ids = ["t/aiperf/c2/ttft_any", "t/aiperf/c2/ttft_any_p99"]
    r = cli("method", *ids, "--probe", "http://127.0.0.1:9/v1", "--body", str(body), "--n", "20")
    assert r.exit_code == 0, r.stderr
    after = facts_by_id(cli)
    for fid in ids:
        old, new = before[fid], after[fid]
        assert new["version"] == 2 and new["method"]["kind"] == "probe" and new["method"]["n"] == 20
        assert new["method"]["url"] == "http://127.0.0.1:9/v1/chat/completions"
        assert new["method"]["select"] == {"metric": "ttft_any"}
        for key in ("value", "spread", "n", "measured_at", "metric", "unit"):
            assert new[key] == old[key], key
        assert new["conditions"]["identity"] == old["conditions"]["identity"]
    assert after["t/aiperf/c2/e2e"]["version"] == 1  # the others untouched


@pytest.mark.parametrize(("fid", "why"), [("t/aiperf/c2/output_throughput", "the probe does not measure"),
                                          ("t/aiperf/c2/nothing", "no fact")])
def test_method_refuses_what_a_probe_cannot_verify_and_writes_nothing(cli, tmp_path, fid, why):
    assert cli("import", "aiperf", str(AIPERF), "--id", "t").exit_code == 0
    body = tmp_path / "body.json"
    body.write_text('{"model": "m", "messages": []}', encoding="utf-8")
    r = cli("method", "t/aiperf/c2/ttft_any", fid, "--probe", "http://127.0.0.1:9/v1", "--body", str(body))
    one_line_error(r, why)
    assert {f["version"] for f in facts_by_id(cli).values()} == {1}


def test_method_refuses_a_derived_fact_and_a_metric_the_probe_does_not_measure(cli, tmp_path):
    """Any fact can get a method (tests/test_methods.py), but not one that follows other facts, nor a probe for a
    metric the probe does not measure."""
    for fid in ("x/a/ttft", "x/b/ttft"):
        assert cli("record", fid, "-m", "ttft", "--samples", "0.2,0.3,0.25", "-c", "model=m", "-c",
                   "endpoint=e").exit_code == 0
    assert cli("compare", "x/a/ttft", "x/b/ttft", "--record", "x/ratio").exit_code == 0
    assert cli("record", "x/tg", "-m", "tg_rate", "--value", "10").exit_code == 0
    body = tmp_path / "body.json"
    body.write_text('{"model": "m", "messages": []}', encoding="utf-8")
    one_line_error(cli("method", "x/ratio", "--probe", "http://127.0.0.1:9/v1", "--body", str(body)),
                   "derived from other facts")
    one_line_error(cli("method", "x/tg", "--probe", "http://127.0.0.1:9/v1", "--body", str(body)),
                   "the probe does not measure tg_rate")


def test_verify_of_an_unknown_method_kind_is_an_error_that_runs_nothing(cli, db_path):
    """A kind no verifier knows can only be written into the database behind factreg's back: verify says so
    (error verdict) and runs nothing."""
    assert cli("record", "x/ttft", "-m", "ttft", "--value", "0.2", "-c", "model=m", "-c", "endpoint=e").exit_code == 0
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("UPDATE fact_version SET method = ? WHERE fact_id = 'x/ttft'",
                            ('{"kind": "mystery", "url": "http://127.0.0.1:9"}',)).rowcount == 1
    r = cli("verify", "x/ttft", "--json")
    [result] = r.json()
    assert result["verdict"] == "error" and "no verifier for method kind 'mystery'" in result["message"]
    assert result["recorded"] is False


# ---------------------------------------------------------------- bad input


def _vllm(**changes) -> str:
    data = json.loads(VLLM[0].read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is ...:
            del data[key]
        else:
            data[key] = value
    return json.dumps(data)


def _benchy_with_text_value() -> str:
    data = json.loads(BENCHY.read_text(encoding="utf-8"))
    data["benchmarks"][0]["tg_req_throughput"]["values"][0] = "50"
    return json.dumps(data)


def _aiperf(path: str, value) -> str:  # type: ignore[no-untyped-def]
    """AIPerf's sample file with the value at a dotted `path` replaced."""
    data = json.loads(AIPERF.read_text(encoding="utf-8"))
    *parents, last = path.split(".")
    node = data
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value
    return json.dumps(data)


def _benchy(key: str, value) -> str:  # type: ignore[no-untyped-def]
    """llama-benchy's sample with a key of the file (or `bench.KEY` of its first benchmark) replaced."""
    data = json.loads(BENCHY.read_text(encoding="utf-8"))
    if key.startswith("bench."):
        data["benchmarks"][0][key[6:]] = value
    else:
        data[key] = value
    return json.dumps(data)


HUGE = 10**400  # a 401-digit integer: JSON has no limit, float() overflows

# Issue 30, item 5 and the readers not tried before: the same hostile shapes for vLLM, AIPerf and llama-benchy.
HOSTILE_NUMBERS = {
    "vllm-huge-completed": ("vllm-bench", _vllm(completed=HUGE), "completed must be a number up to"),
    "vllm-huge-median": ("vllm-bench", _vllm(median_ttft_ms=HUGE), "median_ttft_ms must be a number up to"),
    "vllm-1e300-median": ("vllm-bench", _vllm(median_ttft_ms=1e300), "median_ttft_ms must be a number up to"),
    "vllm-negative-duration": ("vllm-bench", _vllm(duration=-5.0), "duration must be a finite number"),
    "vllm-negative-num-prompts": ("vllm-bench", _vllm(num_prompts=-200), "num_prompts must be a finite number"),
    "vllm-negative-failed": ("vllm-bench", _vllm(failed=-1), "failed must be a finite number"),
    "vllm-string-failed": ("vllm-bench", _vllm(failed="none"), "failed must be a number"),
    "vllm-fraction-prompts": ("vllm-bench", _vllm(num_prompts=2.5), "num_prompts must be a whole number"),
    "vllm-p99-below-median": ("vllm-bench", _vllm(p99_ttft_ms=1.0), "p99_ttft_ms is below median_ttft_ms"),
    "vllm-huge-total-tokens": ("vllm-bench", _vllm(total_output_tokens=HUGE), "total_output_tokens must be a"),
    "aiperf-huge-p50": ("aiperf", _aiperf("time_to_first_token.p50", HUGE), "time_to_first_token.p50 must be"),
    "aiperf-huge-count": ("aiperf", _aiperf("request_count.avg", HUGE), "request_count.avg must be a number up"),
    "aiperf-negative-p99": ("aiperf", _aiperf("request_latency.p99", -3.0), "request_latency.p99 must be"),
    "aiperf-p99-below-p50": ("aiperf", _aiperf("time_to_first_token.p99", 1.0),
                             "time_to_first_token.p99 is below time_to_first_token.p95"),
    "aiperf-negative-concurrency": ("aiperf", _aiperf("input_config.phases.1.concurrency", -2),
                                    "concurrency must be a finite number"),
    "aiperf-string-count": ("aiperf", _aiperf("time_to_first_token.count", "96"), "count must be a number"),
    "aiperf-unit-swap": ("aiperf", _aiperf("time_to_first_token.unit", "s"), "factreg reads it in 'ms'"),
    "benchy-huge-value": ("llama-benchy", json.dumps({**json.loads(_benchy("x", 0)), "benchmarks": [
        {**json.loads(BENCHY.read_text(encoding="utf-8"))["benchmarks"][0], "e2e_ttft": {"values": [HUGE]}}]}),
        "must be a number up to"),
    "benchy-negative-concurrency": ("llama-benchy", _benchy("bench.concurrency", -1), "concurrency must be"),
    "benchy-huge-prompt": ("llama-benchy", _benchy("bench.prompt_size", HUGE), "prompt_size must be a number up"),
    "benchy-negative-latency": ("llama-benchy", _benchy("latency_ms", -1.0), "latency_ms must be a finite"),
    "benchy-values-not-list": ("llama-benchy", _benchy("bench.e2e_ttft", {"values": 5}), "non-empty list"),
    "benchy-control-model": ("llama-benchy", _benchy("model", "m\x1b]0;title\x07"), "not a name"),
}

HOSTILE = {
    **HOSTILE_NUMBERS,
    "empty": ("vllm-bench", "", "empty"),
    "not-json": ("vllm-bench", "{not json", "not valid JSON"),
    "nan": ("vllm-bench", _vllm(median_ttft_ms=float("nan")), "not valid JSON"),
    "infinity": ("vllm-bench", _vllm(output_throughput=float("inf")), "not valid JSON"),
    "array": ("vllm-bench", "[1, 2]", "must be a JSON object"),
    "deep": ("vllm-bench", "[" * 100_000 + "]" * 100_000, "nested"),
    "negative": ("vllm-bench", _vllm(median_ttft_ms=-1.0), "median_ttft_ms must be a finite number"),
    "string-median": ("vllm-bench", _vllm(median_itl_ms="27.3"), "median_itl_ms must be a number"),
    "bool-completed": ("vllm-bench", _vllm(completed=True), "completed must be a number"),
    "zero-completed": ("vllm-bench", _vllm(completed=0), "completed is 0"),
    "no-model": ("vllm-bench", _vllm(model_id=...), "model_id"),
    "bad-date": ("vllm-bench", _vllm(date="yesterday"), "invalid date"),
    "percentiles-not-pairs": ("vllm-bench", _vllm(percentiles_ttft_ms=[1, 2]), "pairs"),
    "aiperf-as-vllm": ("vllm-bench", AIPERF.read_text(encoding="utf-8"), "not a `vllm bench serve"),
    "vllm-as-aiperf": ("aiperf", _vllm(), "not a profile_export_aiperf.json"),
    "benchy-as-aiperf": ("aiperf", BENCHY.read_text(encoding="utf-8"), "not a profile_export_aiperf.json"),
    "vllm-as-benchy": ("llama-benchy", _vllm(), "not llama-benchy"),
    "benchy-bad-value": ("llama-benchy", _benchy_with_text_value(), "must be a number"),
    "benchy-empty": ("llama-benchy", json.dumps({"version": "1", "model": "m", "benchmarks": []}), "empty"),
    "control-chars-model": ("vllm-bench", _vllm(model_id="a\x1b[2Jb"), "not a name"),
    "not-utf8": ("vllm-bench", "\udcff", "UTF-8"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_bad_and_hostile_files_are_one_line_exit_2_and_store_nothing(cli, tmp_path, name):
    fmt, text, contains = HOSTILE[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    one_line_error(cli("import", fmt, str(path)), contains)
    assert facts_by_id(cli) == {}


def test_a_bad_second_file_leaves_the_first_unrecorded(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(_vllm(median_ttft_ms="x"), encoding="utf-8")
    one_line_error(cli("import", "vllm-bench", str(VLLM[0]), str(bad)), "bad.json")
    assert facts_by_id(cli) == {}


def test_two_files_that_give_the_same_ids_are_refused(cli, tmp_path):
    copy = tmp_path / "copy.json"
    copy.write_text(VLLM[0].read_text(encoding="utf-8"), encoding="utf-8")
    one_line_error(cli("import", "vllm-bench", str(VLLM[0]), str(copy), "--id", "t"), "give --id")
    assert facts_by_id(cli) == {}


def test_cond_info_and_id_apply_to_every_imported_fact(cli):
    r = cli("import", "vllm-bench", str(VLLM[0]), "--id", "gpu1/q", "-c", "endpoint=http://gpu1:8000/v1",
            "-c", "machine=gpu1", "-i", "note=after the driver update")
    assert r.exit_code == 0, r.stderr
    got = facts_by_id(cli)
    assert got and all(fid.startswith("gpu1/q/vllm-bench/r1/") for fid in got)
    for fact in got.values():
        assert fact["conditions"]["identity"]["endpoint"] == "http://gpu1:8000/v1"
        assert fact["conditions"]["identity"]["machine"] == "gpu1"
        assert fact["conditions"]["info"]["note"] == "after the driver update"
        assert "no_conditions" not in fact["flags"]  # model + endpoint/machine: a latency fact's required conditions


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", ""])
def test_an_invalid_measured_at_is_one_line_and_stores_nothing(cli, tmp_path, bad):
    one_line_error(cli("import", "vllm-bench", str(_without(VLLM[0], "date", tmp_path)), "--measured-at", bad),
                   "--measured-at")
    assert facts_by_id(cli) == {}


def test_method_never_stores_a_literal_secret_header(cli, tmp_path):
    assert cli("import", "aiperf", str(AIPERF), "--id", "t").exit_code == 0
    body = tmp_path / "body.json"
    body.write_text('{"model": "m", "messages": []}', encoding="utf-8")
    r = cli("method", "t/aiperf/c2/ttft_any", "--probe", "http://127.0.0.1:9/v1", "--body", str(body),
            "-H", "Authorization: Bearer sk-live-123456")
    one_line_error(r, "`factreg method` stores the probe recipe, so header Authorization must name an environment")
    assert "sk-live-123456" not in r.stderr + r.stdout
    assert facts_by_id(cli)["t/aiperf/c2/ttft_any"]["version"] == 1


def test_imported_facts_survive_export_and_import_and_stay_not_rerunnable(cli, tmp_path):
    assert cli("import", "llama-benchy", str(BENCHY), "--id", "t").exit_code == 0
    before = facts_by_id(cli)
    dump = tmp_path / "export.jsonl"
    assert cli("export", "--out", str(dump)).exit_code == 0
    other = f"sqlite:///{tmp_path / 'other.db'}"
    r = cli("import", str(dump), "--db", other)
    assert r.exit_code == 0, r.stderr
    after = {f["id"]: f for f in cli("list", "--json", "--db", other).json()}
    assert sorted(after) == sorted(before)
    for fid, fact in after.items():
        for key in ("value", "spread", "n", "samples", "measured_at", "method", "conditions"):
            assert fact[key] == before[fid][key], (fid, key)
    [result] = cli("verify", "t/llama-benchy/pp2048-tg32-c1/ttft_any", "--json", "--db", other).json()
    assert result["verdict"] == "skipped" and "factreg method" in result["message"]
