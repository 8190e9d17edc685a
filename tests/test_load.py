"""Each request's times are its own under load (issue 28, "A race under load"), and an impossible time is an error
of the run, never a sample.

The race: a kept-alive connection went back to the pool before its request had copied its clock start (the time
just before the request's last write) from the connection, so a worker that took the connection at once and wrote
its own request gave the first one its write time: ttft of about −0.47 s for 11–22% of requests at 8 and 16
streams, `queued_p99_s` a whole request's length. The stand-in keeps its connections alive here (`keep=1`; by
default each stream closes its connection, which hid the race from every earlier test and benchmark).

Clocks: the stand-in logs on CLOCK_MONOTONIC (`time.perf_counter`), the clock of the probe's traces, the same in
every process of the machine; it stamps each request's arrival with the kernel's receive stamp, so its own log
says when a request reached it and when it began writing the first answer chunk, whatever the probe measured.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from factreg.demo import standin
from factreg.errors import UsageError
from factreg.measure import load as loading
from factreg.measure import probe as core
from factreg.measure import stream, wire
from factreg.measure.http import make_async_client, make_client
from tests.conftest import pinned_env

BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}]}
FIRST = 0.150  # the stand-in's delay before the first answer token, from when it has read the request
KEPT = f"ok,first={FIRST},gap=0.005,tokens=2,keep=1,model=race"


@pytest.fixture(scope="module")
def server() -> Iterator[standin.FaultServer]:
    with standin.running() as srv:
        yield srv


def logged(requests: list[dict[str, Any]], trace: stream.RequestTrace) -> dict[str, Any]:
    found = [r for r in requests if r.get("id") == trace.response_id]
    assert len(found) == 1, trace.response_id
    return found[0]


def first_answer_sent(entry: dict[str, Any]) -> float:
    """When the stand-in began writing the first answer chunk (monotonic seconds)."""
    return float(entry["t0"] + entry["sent"][entry["kinds"].index("answer")])


def assert_own_times(trace: stream.RequestTrace, entry: dict[str, Any]) -> None:
    """The trace's clock start is its own request's write: before that request reached the stand-in, and its ttft
    at least the stand-in's delay and no less than the stand-in's own first-answer time."""
    assert trace.written is not None and trace.first_answer is not None
    assert trace.started + trace.written <= entry["arrived"]  # written before it arrived, not another's write
    ttft = trace.metrics()["ttft"]
    assert ttft >= FIRST, ttft
    assert ttft >= first_answer_sent(entry) - entry["arrived"]


# ---------------------------------------------------------------- the race, made to happen every time


def test_a_connection_taken_again_the_moment_it_is_given_back_leaves_the_first_requests_times_alone(
    server, monkeypatch
) -> None:
    """Another worker takes the kept-alive connection in the loop turn after it is given back and writes its
    request on it, before the first request's own code runs again (asyncio runs callbacks in order: the
    other request's first step was queued first). On the old code the first trace then started its clock at the
    other request's write: ttft ≈ −(its whole length − 150 ms)."""
    give = wire.Pool.give
    spawned: list[asyncio.Task[stream.RequestTrace]] = []

    def give_and_reuse(self: wire.Pool, conn: wire.Connection) -> None:
        give(self, conn)
        if not spawned:  # once: the next request takes this very connection at once
            spawned.append(asyncio.get_running_loop().create_task(
                loading.astream_request(self, server.url(KEPT), {}, BODY, 10)
            ))

    monkeypatch.setattr(wire.Pool, "give", give_and_reuse)

    async def main() -> tuple[stream.RequestTrace, stream.RequestTrace]:
        client = make_async_client(10)
        try:
            first = await loading.astream_request(client, server.url(KEPT), {}, BODY, 10)
            second = await spawned[0]
        finally:
            await client.aclose()
        return first, second

    first, second = asyncio.run(main())
    assert first.connected is not None and second.connected is None  # written on the first one's connection
    assert first.response_id != second.response_id
    for trace in (first, second):
        assert_own_times(trace, logged(server.requests, trace))
    assert first.started + first.written < second.started + second.written  # type: ignore[operator]


def test_the_sync_client_keeps_its_requests_times_when_its_connection_carries_another_request(
    server, monkeypatch
) -> None:
    """The synchronous client (the identity check, the sequential probe: `stream.stream_request`) gives a
    kept-alive connection back to its pool once the reply is read. Here the next request is written on it right
    then, before the first request's trace is finished; on the old code the connection's stamps then held the
    second request's write time."""
    give = wire.Pool.give
    client = make_client(10)  # keep-alive on
    spawned: list[asyncio.Task[stream.RequestTrace]] = []

    def give_and_send_another(self: wire.Pool, conn: wire.Connection) -> None:
        give(self, conn)
        if not spawned:  # once: the next request takes this very connection at once
            spawned.append(asyncio.get_running_loop().create_task(
                loading.astream_request(self, server.url(KEPT), {}, BODY, 10)
            ))

    monkeypatch.setattr(wire.Pool, "give", give_and_send_another)
    try:
        first = stream.stream_request(client, server.url(KEPT), {}, BODY, 10)
        second = [stream.streams_of(client).loop.run_until_complete(spawned[0])]
    finally:
        client.close()
    assert len(second) == 1 and first.response_id != second[0].response_id
    assert first.connected is not None and second[0].connected is None  # on the first one's connection
    assert first.arrival_clock == "kernel" and second[0].arrival_clock == "kernel"
    for trace in (first, second[0]):
        assert_own_times(trace, logged(server.requests, trace))


# ---------------------------------------------------------------- impossible times are errors, never samples


def trace_with(**events: float | None) -> stream.RequestTrace:
    trace = stream.RequestTrace(kind="measured")
    base: dict[str, float | None] = {"written": 0.001, "first_byte": 0.010, "first_chunk": 0.011,
                                     "first_answer": 0.150, "last_answer": 0.160, "last_token": 0.160,
                                     "done": 0.161, "end": 0.162}
    for name, value in {**base, **events}.items():
        setattr(trace, name, value)
    trace.n_answer = 2
    trace.answer_times = [0.150, 0.160]
    return trace


@pytest.mark.parametrize(
    ("events", "needle"),
    [
        ({"written": 0.4}, "ttfb -0.390000 s is below zero"),  # a clock start taken from a later write
        ({"first_answer": 0.005, "first_chunk": 0.004, "first_byte": 0.003, "written": 0.002,
          "last_answer": 0.004, "last_token": 0.004}, "e2e 0.002000 s is below ttft 0.003000 s"),
        ({"queued": -0.2}, "queued -0.200000 s is below zero"),
        ({"connected": 0.002}, "written (0.001000 s) came before connected (0.002000 s)"),
        ({"end": 0.155}, "end (0.155000 s) came before last_answer (0.160000 s)"),
    ],
)
def test_an_impossible_time_is_named(events: dict[str, float], needle: str) -> None:
    assert trace_with().impossible() is None
    assert trace_with(**events).impossible() == needle


class LateClockStart:
    """A clock start 1 s late (what the race did: another request's write time) on every exchange after the first
    `spare` ones: an edge no real server can produce, injected where the probe copies its write time."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, spare: int):
        self.seen = 0
        self.spare = spare
        release = stream.ArrivalClock.release

        def late_release(clk: stream.ArrivalClock) -> None:
            release(clk)
            self.seen += 1
            if self.seen > self.spare and clk.write_began_ns is not None:
                clk.write_began_ns += 1_000_000_000

        monkeypatch.setattr(stream.ArrivalClock, "release", late_release)


def test_impossible_times_under_load_fail_the_run_as_a_measurement_error_and_record_nothing(
    server, monkeypatch
) -> None:
    LateClockStart(monkeypatch, spare=1)  # the identity check's request keeps its true clock start
    result = core.probe(
        core.ProbeSpec(url=server.url(KEPT), body=dict(BODY), n=6, warmup=2, concurrency=3, min_uptime=0),
        hostname="testhost",
    )
    assert result.verdict == "error" and result.samples == {}
    assert result.message is not None and result.message.startswith(
        "internal measurement error: 8 of 8 requests under load had impossible times (none recorded); first: ttfb -0."
    ), result.message
    assert result.info["measurement_errors"] == "8" and result.info["requests_failed"] == "0"  # not the server's
    assert [r.kind for r in result.requests] == ["identity"]  # no impossible trace kept
    with pytest.raises(UsageError):
        core.new_facts(result, "box/race", {})


def test_an_impossible_time_in_the_sequential_probe_fails_it(server, monkeypatch) -> None:
    LateClockStart(monkeypatch, spare=2)  # identity check and the warm-up are true; the first measured is not
    result = core.probe(
        core.ProbeSpec(url=server.url(KEPT), body=dict(BODY), n=3, warmup=1, min_uptime=0), hostname="testhost"
    )
    assert result.verdict == "error" and result.samples == {}
    assert (result.message or "").startswith("internal measurement error: ttfb -0."), result.message


def test_a_load_run_counts_measurement_errors_apart_from_the_servers_failures(server, monkeypatch) -> None:
    LateClockStart(monkeypatch, spare=3)
    out = asyncio.run(loading.run(loading.Load(concurrency=2), server.url(KEPT), {}, lambda: dict(BODY), n=5,
                                  warmup=0, timeout=10))
    assert len(out.traces) == 3 and not out.failures and len(out.measurement_errors) == 2
    assert all(isinstance(e, stream.MeasurementError) and e.verdict == "error" for e in out.measurement_errors)


# ---------------------------------------------------------------- acceptance: 2,000 requests at 8 and 16 streams


@pytest.fixture(scope="module")
def standin_process() -> Iterator[int]:
    """The stand-in in a process of its own (no interpreter lock shared with the probe): its port."""
    with subprocess.Popen([sys.executable, "-m", "factreg.demo.standin"], stdout=subprocess.PIPE, text=True,
                          env=pinned_env()) as proc:
        try:
            assert proc.stdout is not None
            yield int(proc.stdout.readline())
        finally:
            proc.terminate()  # the stand-in this fixture started, by its own handle


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", [8, 16])
def test_under_load_every_ttft_is_the_stand_ins_and_nobody_waits_in_the_client(standin_process, concurrency) -> None:
    """1,000 measured requests at each of 8 and 16 streams on kept-alive connections against a stand-in whose first
    answer token comes 150 ms after it has read the request: no ttft below 150 ms, mean and median ttft within
    1 ms of the stand-in's own (first answer chunk sent − request arrived, from its log), `queued_p99_s` below
    10 ms. On the old code 11–22% of the ttfts were about −0.47 s and `queued_p99_s` a whole request."""
    base = f"http://127.0.0.1:{standin_process}"
    spec = core.ProbeSpec(url=f"{base}/{KEPT}/v1/chat/completions", body=dict(BODY), n=1000,
                          warmup=concurrency, concurrency=concurrency, timeout=30, min_uptime=0)
    result = core.probe(spec, hostname="testhost")
    assert result.verdict == core.OK, result.message
    with urllib.request.urlopen(f"{base}/ok/log", timeout=30) as resp:  # noqa: S310 - the stand-in on 127.0.0.1
        log = json.loads(resp.read())
    measured = [r for r in result.requests if r.kind == "measured"]
    assert len(measured) == 1000 and result.info["arrival_clock"] == "kernel"
    ttfts, truths = [], []
    for trace in measured:
        entry = logged(log, trace)
        # The clock start is this request's own write: never after the stand-in received the request (1 ms of
        # slack for the two processes' conversions of kernel stamps to the monotonic clock, each under 1 µs).
        assert trace.started + trace.written <= entry["arrived"] + 0.001  # type: ignore[operator]
        ttfts.append(trace.metrics()["ttft"])
        truths.append(first_answer_sent(entry) - entry["arrived"])
    assert min(ttfts) >= FIRST, sorted(ttfts)[:5]
    assert abs(statistics.fmean(ttfts) - statistics.fmean(truths)) <= 0.001, (statistics.fmean(ttfts),
                                                                              statistics.fmean(truths))
    assert abs(statistics.median(ttfts) - statistics.median(truths)) <= 0.001, (statistics.median(ttfts),
                                                                                statistics.median(truths))
    assert float(result.info["queued_p99_s"]) < 0.010, result.info["queued_p99_s"]


def test_a_sweep_level_with_impossible_times_says_nothing_about_a_capacity(cli, server, tmp_path, monkeypatch) -> None:
    """A capacity is not judged from a level whose requests had impossible times: that level measured nothing (on
    the old code it counted as goodput 0, as if the server had failed every request, and the verdict was a
    judgement, `inconclusive`, instead of `error`)."""
    url = server.url("ok,first=0.05,gap=0.005,tokens=2,keep=1,model=cap")
    body = tmp_path / "body.json"
    body.write_text(json.dumps(BODY), encoding="utf-8")
    r = cli("sweep", url, "--body", str(body), "--concurrency", "1,2", "--n", "2", "--warmup", "0",
            "--slo", "ttft<0.5", "--threshold", "0.5", "--record", "cap/m")
    assert r.exit_code == 0, r.stderr
    LateClockStart(monkeypatch, spare=4)  # level 1 (identity check, 2 requests) and level 2's identity check are true
    v = cli("verify", "cap/m/capacity", "--json")
    out = v.json()[0]
    assert out["verdict"] == "error" and v.exit_code == 3, out
    assert "internal measurement error: 2 of 2 requests" in json.dumps(out), out
