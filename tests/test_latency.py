"""Serving-grade latency: percentiles with intervals, itl/tpot, percentile facts and their quantile test, the probe
under load (concurrency, Poisson arrivals), and the stand-in's kept-alive JSON routes.

Timings are never asserted against a wall-clock budget that machine load could flip: each is either a floor the
stand-in guarantees (it waits at least the injected delay) or a comparison with the times the stand-in recorded
for each chunk it sent (the same monotonic clock, one process), which load moves on both sides alike.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from factreg.demo import standin
from factreg.errors import UsageError
from factreg.measure import load as loading
from factreg.measure import probe as core
from factreg.measure import slo, verify
from factreg.measure.measurement import Measurement
from factreg.registry import metrics
from factreg.stats import quantiles

BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def server() -> Iterator[standin.FaultServer]:
    with standin.running() as srv:
        yield srv


@pytest.fixture
def body_file(tmp_path: Path) -> str:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(BODY), encoding="utf-8")
    return str(path)


def run(server: standin.FaultServer, spec_text: str, **kw: object) -> core.ProbeResult:
    spec = core.ProbeSpec(url=server.url(spec_text), body=dict(BODY), min_uptime=0, **kw)  # type: ignore[arg-type]
    return core.probe(spec, hostname="testhost")


def logged(server: standin.FaultServer, trace: object) -> dict:
    """The stand-in's log entry for the request a trace read (by the chunks' id)."""
    rid = getattr(trace, "response_id", None)
    found = [r for r in server.requests if r.get("id") == rid]
    assert len(found) == 1, rid
    return found[0]


# ---------------------------------------------------------------- distributions


def test_every_metric_has_p50_to_p99_with_intervals_and_says_when_n_is_too_small(server) -> None:
    result = run(server, "ok,first=0.02,gap=0.005,tokens=3,model=dist", n=20, warmup=0)
    assert result.verdict == core.OK, result.message
    summary = result.summary()
    for name in ("ttft", "e2e", "tpot", "itl", "answer_tokens"):
        pcts = summary[name]["percentiles"]
        assert list(pcts) == ["p50", "p90", "p95", "p99"]
        xs = result.samples[name]
        for label, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
            assert pcts[label]["value"] == pytest.approx(quantiles.percentile(xs, q), abs=1e-6)
    ttft = summary["ttft"]["percentiles"]
    # n = 20: enough for p50 (10 samples on each side), not for p90 (needs 100) or p99 (needs 1,000)
    low, high = ttft["p50"]["ci95"]
    assert ttft["p50"]["enough"] and ttft["p50"]["too_few"] is None
    assert low is not None and high is not None and low <= ttft["p50"]["value"] <= high
    assert not ttft["p90"]["enough"] and "p90 needs n ≥ 100" in ttft["p90"]["too_few"]
    assert not ttft["p99"]["enough"] and "p99 needs n ≥ 1000" in ttft["p99"]["too_few"]
    assert ttft["p99"]["ci95"][1] is None  # unbounded above at n = 20
    # itl pools 2 gaps per request: 40 samples
    assert summary["itl"]["n"] == 40


# ---------------------------------------------------------------- per-token timing


def test_itl_and_tpot_follow_the_chunks_the_stand_in_sent(server) -> None:
    tokens, gap = 6, 0.02
    result = run(server, f"ok,first=0.05,gap={gap},tokens={tokens},model=itl", n=3, warmup=0)
    assert result.verdict == core.OK, result.message
    measured = [r for r in result.requests if r.kind == "measured"]
    assert len(result.samples["itl"]) == 3 * (tokens - 1)
    assert result.samples["answer_tokens"] == [tokens] * 3 and result.samples["reasoning_tokens"] == [0] * 3
    for trace in measured:
        log = logged(server, trace)
        sent = [log["t0"] + t for t, kind in zip(log["sent"], log["kinds"], strict=True) if kind == "answer"]
        got = [trace.started + t for t in sorted(trace.answer_times)]
        assert len(got) == len(sent) == tokens
        # each chunk arrives after the stand-in began to send it (one clock, one process)
        assert all(s <= g for s, g in zip(sent, got, strict=True))
        m = trace.metrics()
        assert m["tpot"] == pytest.approx((m["e2e"] - m["ttft"]) / (tokens - 1))
        # floors: the stand-in sends token i no earlier than first + i·gap after the request arrived
        assert m["e2e"] >= 0.05 + (tokens - 1) * gap - 0.002
        assert sum(trace.gaps()["itl"]) == pytest.approx(m["e2e"] - m["ttft"])


def test_reasoning_and_answer_are_timed_separately(server) -> None:
    result = run(server, "ok,think=0.2,thinkgap=0.04,gap=0.01,tokens=4,usage=0,model=rs", n=2, warmup=0)
    assert result.verdict == core.OK, result.message
    for trace in (r for r in result.requests if r.kind == "measured"):
        m = trace.metrics()
        assert m["reasoning_tokens"] == trace.n_reasoning >= 4 and m["answer_tokens"] == 4
        assert len(trace.gaps()["itl_reasoning"]) == trace.n_reasoning - 1
        assert len(trace.gaps()["itl"]) == 3
        # the stand-in paces reasoning at 40 ms and answer at 10 ms: the reasoning tpot has the larger floor. A
        # first chunk read late on a loaded machine shortens the measured span, so the floors leave 10 ms and 5 ms.
        assert m["tpot_reasoning"] >= 0.04 - 0.010 and m["tpot"] >= 0.01 - 0.005
        assert m["tpot_reasoning"] > m["tpot"]
    assert {"itl_reasoning", "tpot_reasoning"} <= set(result.samples)


def test_metric_names_exist_in_the_vocabulary() -> None:
    for name in core.METRICS:
        assert name in metrics.VOCABULARY
    assert metrics.split_percentile("ttft_p90") == ("ttft", 0.9)
    assert metrics.split_percentile("e2e_p99.9") == ("e2e", 0.999)
    assert metrics.split_percentile("itl_p50") == ("itl", 0.5)
    for bad in ("ttft", "ttft_p0", "ttft_p100", "nosuch_p90", "ratio_p90", "ttft_p9x", "tg_rate_p"):
        assert metrics.split_percentile(bad) is None, bad
    m = metrics.get_metric("ttft_p90")
    assert m.unit == "s" and m.direction == metrics.LOWER and m.required == metrics.VOCABULARY["ttft"].required
    with pytest.raises(UsageError):
        metrics.get_metric("nosuch_p90")


# ---------------------------------------------------------------- percentile facts


def test_a_percentile_fact_is_recorded_with_its_interval_and_verified_by_the_quantile_test(
    cli, server, body_file
) -> None:
    url = server.url("ok,first=0.03,gap=0.005,tokens=3,model=pct")
    r = cli("probe", url, "--body", body_file, "--n", "40", "--warmup", "0", "--min-uptime", "0",
            "--record", "pc/p", "--percentile", "ttft_p90", "--json")
    assert r.exit_code == 0, r.stderr
    assert "pc/p/ttft_p90@1" in r.json()["recorded"] and "pc/p/e2e_p90@1" not in r.json()["recorded"]
    fact = cli("show", "pc/p/ttft_p90", "--json").json()
    xs = fact["samples"]
    est = quantiles.estimate(xs, 0.9)
    assert fact["metric"] == "ttft_p90" and fact["unit"] == "s" and len(xs) == 40
    assert fact["value"] == pytest.approx(est.value)
    assert fact["stats"]["ci95"] == [pytest.approx(est.low), pytest.approx(est.high)]  # order statistics, not the mean's t
    assert "few_for_percentile" in fact["flags"]
    assert fact["method"]["select"] == {"metric": "ttft", "q": 0.9}
    # The quantile test judges it: new samples all far above the recorded p90 refute it; at it, not refuted.
    slow = Measurement(samples=[x + 1.0 for x in xs] * 3, value=None, n=120)
    judged = verify.judge(fact, slow)
    assert judged["verdict"] == "refuted" and "new samples above" in judged["message"]
    same = Measurement(samples=list(xs), n=40)
    assert verify.judge(fact, same)["verdict"] != "refuted"
    # through the command: verify re-runs the probe and reports the quantile test
    v = cli("verify", "pc/p/ttft_p90", "--json")
    assert v.exit_code in (0, 1), v.stderr
    assert "new samples above" in json.dumps(v.json())


def test_a_plain_fact_is_still_judged_by_welch(server) -> None:
    fact = {"id": "x/ttft", "version": 1, "metric": "ttft", "unit": "s", "value": 0.1, "spread": 0.01, "n": 5,
            "samples": [0.09, 0.1, 0.11, 0.1, 0.1], "conditions": {"identity": {}}}
    out = verify.judge(fact, Measurement(samples=[0.1, 0.1, 0.11, 0.09, 0.1]))  # type: ignore[arg-type]
    assert "samples above" not in out["message"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--percentile", "100", "--record", "a/b"], "above 0 and below 100"),
        (["--percentile", "abc", "--record", "a/b"], "--percentile"),
        (["--percentile", "90"], "--record"),
        (["--percentile", "answer_tokens_p90", "--record", "a/b"], "does not record"),
        (["--concurrency", "5000"], "--concurrency"),
        (["--rate", "-1"], "--rate"),
        (["--duration", "5"], "go with --concurrency or --rate"),
        (["--rate", "5", "--burstiness", "0"], "--burstiness"),
        (["--concurrency", "2", "--spacing", "1"], "--spacing"),
    ],
)
def test_bad_load_and_percentile_options_exit_2(cli, server, body_file, args, needle) -> None:
    r = cli("probe", server.url("ok"), "--body", body_file, *args)
    assert r.exit_code == 2, r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and needle in errors[0] and "Traceback" not in r.stderr


# ---------------------------------------------------------------- load


def overlap(server: standin.FaultServer, key: str) -> int:
    """Most requests the stand-in was serving at once, from its own log (arrival → last chunk sent)."""
    spans = [(r["t0"], r["t0"] + r["sent"][-1]) for r in server.requests if r.get("id") and key in r["headers"].get(
        "x-key", "")]
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def test_concurrency_keeps_n_streams_in_flight(server) -> None:
    before = len(server.requests)
    result = run(server, "ok,first=0.5,gap=0.01,tokens=2,model=conc", n=8, warmup=0, concurrency=4,
                 headers={"x-key": "conc"})
    assert result.verdict == core.OK, result.message
    assert result.observed["concurrency"] == "4" and result.observed["load"] == "concurrency"
    assert result.info["requests_sent"] == "8" and result.info["connection_reuse"] == "on"
    assert len(server.requests) - before == 8 + 1  # the identity check's 1-token request, then 8
    # each request lasts at least 0.5 s, so the four first ones overlap, and never more than four
    assert overlap(server, "conc") == 4
    measured = [r for r in result.requests if r.kind == "measured"]
    assert len(measured) == 8 and all(r.written is not None and r.queued is not None for r in measured)
    assert all(r.queued >= 0 for r in measured)  # type: ignore[operator]
    assert "client_queue_s" in result.as_json()
    for trace in measured:  # each request's ttft is counted from its own write, not from the run's start
        # (slack 10 ms: in one process the client's thread may wait a GIL switch interval, 5 ms, after its write
        # while the stand-in's thread already reads the request; bench/ runs the stand-in in its own process)
        assert trace.metrics()["ttft"] >= 0.5 - 0.010
        log = logged(server, trace)
        first = log["t0"] + log["sent"][log["kinds"].index("answer")]
        assert first <= trace.started + trace.first_answer  # type: ignore[operator]


def test_rate_mode_sends_on_a_poisson_schedule(server) -> None:
    result = run(server, "ok,first=0.01,gap=0.005,tokens=2,model=rate", n=12, warmup=2, rate=40.0, seed=7,
                 headers={"x-key": "rate"})
    assert result.verdict == core.OK, result.message
    assert result.observed["rate"] == "40" and result.observed["burstiness"] == "1"
    assert len([r for r in result.requests if r.kind == "measured"]) == 12
    assert len([r for r in result.requests if r.kind == "warmup"]) == 2
    # The stand-in saw the last request no earlier than scheduled: the identity check's request came before the
    # schedule's start, so the span from it to the last arrival is at least the schedule's (0.3 s here; all at
    # once would be a few ms).
    arrivals = sorted(r["t0"] for r in server.requests if r.get("id") and r["headers"].get("x-key") == "rate")
    planned = loading.arrivals(loading.Load(rate=40.0, seed=7), 14)
    assert len(arrivals) == 14 + 1 and planned[-1] > 0.1
    assert arrivals[-1] - arrivals[0] >= planned[-1]
    # client queueing is measured against that schedule: write time − queued = the planned send time
    traces = sorted(result.requests[1:], key=lambda r: r.started)
    planned_at = [r.started + r.written - r.queued for r in traces]  # type: ignore[operator]
    assert [t - planned_at[0] for t in planned_at] == pytest.approx(planned, abs=1e-6)


def test_arrival_gaps_have_the_asked_rate_and_burstiness() -> None:
    for shape, cv in ((1.0, 1.0), (4.0, 0.5), (0.25, 2.0)):
        times = loading.arrivals(loading.Load(rate=50.0, burstiness=shape, seed=3), 20_001)
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        mean = statistics.fmean(gaps)
        assert mean == pytest.approx(1 / 50.0, rel=0.05)
        assert statistics.stdev(gaps) / mean == pytest.approx(cv, rel=0.1)
    assert loading.arrivals(loading.Load(rate=5.0, seed=1), 5) == loading.arrivals(loading.Load(rate=5.0, seed=1), 5)


def test_duration_stops_sending(server) -> None:
    result = run(server, "ok,first=0.1,gap=0.01,tokens=2,model=dur", n=1000, warmup=0, concurrency=2, duration=0.5)
    assert result.verdict == core.OK, result.message
    measured = len([r for r in result.requests if r.kind == "measured"])
    # each request takes at least 0.11 s: two streams send at most 2·(0.5/0.11 + 1) requests in 0.5 s
    assert 2 <= measured <= 2 * (int(0.5 / 0.11) + 1)


def test_a_failed_request_under_load_fails_the_probe(server) -> None:
    result = run(server, "ok,status=500", n=4, warmup=0, concurrency=2)
    assert result.failed and result.samples == {}
    result = run(server, "ok,after=1,tokens=3", n=4, warmup=0, concurrency=2)
    assert result.verdict == core.OK  # control: the same shape without a fault passes
    broken = run(server, "disconnect,after=2,tokens=4", n=4, warmup=0, concurrency=2)
    assert broken.verdict == "error" and "of 4 requests under load failed" in (broken.message or "")


def test_a_stored_load_method_is_bounded_and_replayed() -> None:
    spec = core.ProbeSpec(url="http://127.0.0.1:1/v1", body=dict(BODY), concurrency=3, rate=2.5, burstiness=0.5,
                          duration=10, seed=4)
    method = spec.method()
    again = core.spec_from_method(method)
    assert (again.concurrency, again.rate, again.burstiness, again.duration, again.seed) == (3, 2.5, 0.5, 10, 4)
    assert "concurrency" not in core.ProbeSpec(url="http://127.0.0.1:1/v1", body={}).method()
    assert core.spec_from_method({**method, "n": core.MAX_N}).n == core.MAX_N
    for key, value in (("concurrency", 5000), ("rate", 1e9), ("burstiness", 0), ("duration", 1e6), ("seed", -1),
                       ("n", core.MAX_N + 1)):
        with pytest.raises(UsageError):
            core.spec_from_method({**method, key: value})


# ---------------------------------------------------------------- the stand-in itself


def test_a_kept_alive_json_route_answers_without_a_delayed_ack(server) -> None:
    """Headers and body written separately used to wait for the client's delayed ACK (Nagle): ~40 ms each."""
    url = server.url("ok", "/v1/models")
    with httpx.Client() as client:
        client.get(url)
        times = []
        for _ in range(20):
            t = time.perf_counter()
            assert client.get(url).status_code == 200
            times.append(time.perf_counter() - t)
    assert statistics.median(times) < 0.020, times


def test_many_streams_connecting_at_once_wait_no_syn_retransmit(server) -> None:
    """With socketserver's backlog of 5, connections beyond it were dropped and retried a second later (the
    client's queueing under load read ~1 s); 64 connections opened at once must all be taken within a second."""
    import socket

    t = time.perf_counter()
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(64)]
    took = time.perf_counter() - t
    for s in socks:
        s.close()
    assert took < 1.0, took


# ---------------------------------------------------------------- sweep


def test_sweep_finds_the_capacity_of_a_server_that_saturates(cli, server, body_file) -> None:
    # The stand-in adds 0.1 s to the first token per other stream in flight, so under ttft < 0.12 only a request
    # served alone can be good: at 2 and 4 streams most overlap (a level's first and last requests may run alone).
    url = server.url("ok,first=0.05,perstream=0.1,gap=0.005,tokens=3,model=sweep")
    r = cli("sweep", url, "--body", body_file, "--concurrency", "1,2,4", "--n", "8", "--warmup", "0",
            "--slo", "ttft<0.12", "--record", "sw/p", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    shares = {lv["concurrency"]: lv["goodput"]["share"] for lv in data["levels"]}
    assert shares[4] < 0.95 and shares[2] < 0.95
    assert data["capacity"] in (1, None)  # level 1 passes unless the machine stalls a request by 70 ms
    assert sorted(data["recorded"]) == sorted(
        f"sw/p/{m}@1" for m in ("capacity", "goodput_c1", "goodput_c2", "goodput_c4")
    )
    fact = cli("show", "sw/p/goodput_c4", "--json").json()
    assert fact["metric"] == "goodput" and fact["value"] == shares[4] and len(fact["samples"]) == 8
    assert set(fact["samples"]) <= {0.0, 1.0} and sum(fact["samples"]) / 8 == shares[4]
    assert fact["method"]["kind"] == "sweep" and fact["method"]["slos"] == ["ttft<0.12"]
    assert fact["conditions"]["identity"]["concurrency"] == "4"


def test_a_sweep_under_a_limit_nobody_meets_has_no_capacity(server) -> None:
    from factreg.measure import sweep

    base = core.ProbeSpec(url=server.url("ok,first=0.05,gap=0.005,tokens=2,model=none"), body=dict(BODY), n=4,
                          warmup=0, min_uptime=0)
    result = sweep.sweep(base, [1, 2], slo.parse_slos(["ttft<0.04"]), hostname="h")
    assert result.capacity.level is None and "no capacity" in result.capacity.message
    assert all(lv.goodput.good == 0 and lv.goodput.missed == {"ttft<0.04": 4} for lv in result.levels)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--concurrency", "4,2"], "must rise"),
        (["--concurrency", "0,1"], "each 1 to 1024"),
        (["--concurrency", "a"], "levels such as"),
        (["--slo", "ttft>0.5"], "upper bound"),
        ([], "no SLO"),
        (["--slo", "ttft<0.5", "--threshold", "2"], "--threshold"),
    ],
)
def test_bad_sweep_options_exit_2(cli, server, body_file, args, needle) -> None:
    r = cli("sweep", server.url("ok"), "--body", body_file, *args)
    assert r.exit_code == 2, r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and needle in errors[0]


def test_a_load_run_does_not_search_the_path_for_a_missing_sniffio_at_every_request(server, monkeypatch) -> None:
    """httpcore asks `import sniffio` at each async lock set-up; without sniffio installed (anyio ≥ 4 dropped it)
    every ask walked sys.path again, ~1.7 ms of CPU per request (bench/bench_peers.py). At most one look-up now."""
    import importlib.abc
    import sys

    lookups: list[str] = []

    class Counter(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
            if name == "sniffio":
                lookups.append(name)
            return None

    monkeypatch.delitem(sys.modules, "sniffio", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Counter(), *sys.meta_path])
    result = run(server, "ok,first=0.01,gap=0.002,tokens=3", n=6, warmup=0, concurrency=2)
    assert result.verdict == "ok", result.message
    assert len(lookups) <= 1, f"{len(lookups)} searches for sniffio during 6 requests"


def test_a_kept_alive_connection_the_server_closed_is_sent_again_not_failed() -> None:
    """A server that closes a kept-alive connection when the next request arrives on it (no byte of answer) does
    not fail the request: it goes again on a new connection (llama-server did this to 1 in 150 requests at c=8).
    A fresh connection closed the same way still fails: the server refused that request."""
    import asyncio

    from tests.raw_server import RawServer

    events = [{"choices": [{"index": 0, "delta": {"content": f"t{i} "}}]} for i in range(3)]
    sse = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n" % len(sse)) + sse
    served = {"answered": 0, "dropped": 0}
    mode = {"first_only": True}

    def reply(_n: int, on_connection: int) -> list[bytes] | None:
        if on_connection > 1 or not mode["first_only"]:
            served["dropped"] += 1
            return None  # close without a byte of answer
        served["answered"] += 1
        return [answer]

    server = RawServer(reply, close_after=False)
    url = server.url
    try:
        out = asyncio.run(loading.run(loading.Load(concurrency=1), url, {}, lambda: dict(BODY), n=4, warmup=0,
                                      timeout=10))
        assert not out.failures, [f.message for f in out.failures]
        assert len(out.traces) == 4 and all(t.n_answer == 3 for t in out.traces)
        assert served == {"answered": 4, "dropped": 3}  # requests 2-4 each met a closed connection once
        mode["first_only"] = False  # now every connection closes on its first request: a real failure
        out = asyncio.run(loading.run(loading.Load(concurrency=1), url, {}, lambda: dict(BODY), n=1, warmup=0,
                                      timeout=10))
        assert len(out.failures) == 1 and out.failures[0].verdict == "unreachable"
    finally:
        server.close()
