"""bench/bench_peers.py's readers of the peers' output files, on files AIPerf 0.13.0 and llama-benchy 0.4.0 wrote
(against the stand-in: 100 ms to the first answer token, then 20 ms between 10 tokens; one AIPerf record is a
failed request from a run against llama-server). The benchmark itself runs by hand, never in the suite."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "peers"


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_peers", ROOT / "bench" / "bench_peers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_peers"] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("bench_peers", None)


def test_aiperf_records_give_profiling_samples_in_seconds_and_count_failures(bench) -> None:
    text = (DATA / "aiperf_profile_export.jsonl").read_text()
    records = [json.loads(line) for line in text.splitlines()]
    measured = [r for r in records if r["metadata"]["benchmark_phase"] == "profiling" and "error" not in r]
    s = bench.aiperf_samples(text)
    assert len(measured) == 4 and s.errors == 1  # 2 warm-up records left out, 1 failed request counted apart
    assert s.ttft == pytest.approx([r["metrics"]["time_to_first_output_token"]["value"] / 1000 for r in measured])
    assert s.ttft_any == pytest.approx([r["metrics"]["time_to_first_token"]["value"] / 1000 for r in measured])
    assert s.e2e == pytest.approx([r["metrics"]["request_latency"]["value"] / 1000 for r in measured])
    assert len(s.itl) == 4 * 9  # every gap between 10 answer chunks, pooled
    assert min(s.ttft) > 0.1 and max(s.ttft) < 0.2 and 0.28 < min(s.e2e) < 0.4
    assert bench.quantiles.percentile(s.itl, 0.5) == pytest.approx(0.020, abs=0.002)
    # its inter_token_latency is the mean gap of one request: factreg's tpot
    assert s.tpot == pytest.approx([r["metrics"]["inter_token_latency"]["value"] / 1000 for r in measured])


def test_llama_benchy_report_gives_first_token_and_mean_gap_per_request(bench) -> None:
    text = (DATA / "llama_benchy_result.json").read_text()
    run = json.loads(text)["benchmarks"][0]
    s = bench.llama_benchy_samples(text)
    assert len(s.ttft) == len(run["e2e_ttft"]["values"]) == 24  # 3 batches of 8
    assert s.ttft == pytest.approx([v / 1000 for v in run["e2e_ttft"]["values"]])
    assert s.ttft_any == s.ttft and s.e2e == []  # it reports no end-to-end latency
    assert s.itl == pytest.approx([1 / v for v in run["tg_req_throughput"]["values"]])
    assert s.itl_kind.startswith("mean gap")
    assert s.tpot == s.itl  # a mean gap per request is compared as a tpot
    assert 0.019 < bench.quantiles.percentile(s.itl, 0.5) < 0.021
    assert 0.1 < bench.quantiles.percentile(s.ttft, 0.5) < 0.2  # one took 1.1 s: a SYN dropped by a full backlog


def test_truth_takes_the_last_full_length_requests_from_the_standin_log(bench, monkeypatch) -> None:
    full = {"sent": [0.0, 0.1, 0.12, 0.14, 0.15], "kinds": ["other", "answer", "answer", "answer", "other"]}
    short = {"sent": [0.0, 0.05, 0.06], "kinds": ["other", "answer", "other"]}  # an identity check's 1 token
    monkeypatch.setattr(bench, "TOKENS", 3)
    t = bench.truth_of([full, short, {**full, "sent": [0.0, 0.2, 0.23, 0.26, 0.27]}], 1)
    assert t.ttft == [0.2] and t.e2e == [0.26] and t.itl == pytest.approx([0.03, 0.03])
    assert t.tpot == pytest.approx([0.03])
