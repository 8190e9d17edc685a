"""Arrival times from the kernel's packet stamps: a busy client still reads the server's timing, not its own.

The stand-in runs in a thread of this process and logs when it began writing each chunk (perf_counter, the
clock of the traces). The client is made busy exactly when the first answer chunk is due: the sync probe's
thread sleeps, or the async load client's event loop is blocked by a task that sleeps without yielding. Read on the
user-space clock the chunk would arrive when the client woke (≥ 250 ms); its kernel stamp says 100 ms.
Margins are tens of milliseconds where scheduling is involved; the busy window itself is 200 ms.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import pytest

from factreg import clock
from factreg.demo import standin
from factreg.measure import arrival, stream
from factreg.measure import load as loading
from factreg.measure import probe as core
from factreg.measure.http import make_async_client, make_client

BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}]}
FIRST, BUSY_FROM, BUSY_UNTIL = 0.100, 0.050, 0.250
# One answer chunk while the client is busy, the next long after it woke: no coalescing in the reads.
SPEC = f"ok,first={FIRST},gap=0.4,tokens=2,model=busy"


@pytest.fixture(scope="module")
def server() -> Iterator[standin.FaultServer]:
    with standin.running() as srv:
        yield srv


def answers_sent(server: standin.FaultServer, trace: stream.RequestTrace) -> list[float]:
    """When the stand-in began writing each answer chunk of `trace`'s request, in seconds after it read it."""
    found = [r for r in server.requests if r.get("id") == trace.response_id]
    assert len(found) == 1
    return [t for t, k in zip(found[0]["sent"], found[0]["kinds"], strict=True) if k == "answer"]


def delivery(server: standin.FaultServer, trace: stream.RequestTrace) -> list[float]:
    """Each answer chunk's arrival minus the moment the stand-in began writing it, on the one monotonic clock:
    never negative for a kernel stamp, and small unless the stamp is late."""
    found = [r for r in server.requests if r.get("id") == trace.response_id][0]
    began = [found["t0"] + t for t in answers_sent(server, trace)]
    return [trace.started + got - sent for got, sent in zip(sorted(trace.answer_times), began, strict=True)]


def near(ttft: float, sent: float) -> bool:
    """ttft within tens of ms of the stand-in's send (its clock starts when its thread read the request)."""
    return sent - 0.020 <= ttft <= sent + 0.030


def busy_reading(monkeypatch: pytest.MonkeyPatch, until: float) -> None:
    """Block the reading thread from its first block (the role chunk, at once) until `until` s after the request."""
    feed = stream.Reading.feed
    state = {"slept": False}

    def slow_feed(self: stream.Reading, chunk: bytes, t: float) -> None:
        feed(self, chunk, t)
        if not state["slept"]:
            state["slept"] = True
            time.sleep(max(0.0, self.trace.started + until - time.perf_counter()))

    monkeypatch.setattr(stream.Reading, "feed", slow_feed)


def sync_request(url: str) -> stream.RequestTrace:
    client = make_client(10, keepalive=False)
    try:
        return stream.stream_request(client, url, {}, BODY, 10)
    finally:
        client.close()


async def blocked_loop_request(url: str) -> tuple[stream.RequestTrace, float]:
    """One load-client request while another task blocks the event loop from 50 to 250 ms."""
    client = make_async_client(10)
    start = time.perf_counter()

    async def hog() -> float:
        await asyncio.sleep(BUSY_FROM)
        began = time.perf_counter()
        time.sleep(max(0.0, start + BUSY_UNTIL - time.perf_counter()))  # no await: the loop is stuck
        return began

    try:
        trace, began = await asyncio.gather(loading.astream_request(client, url, {}, BODY, 10), hog())
    finally:
        await client.aclose()
    return trace, began - start


def test_a_busy_sync_client_still_reads_the_server_time_of_the_first_answer(server, monkeypatch) -> None:
    busy_reading(monkeypatch, BUSY_UNTIL)
    trace = sync_request(server.url(SPEC))
    sent = answers_sent(server, trace)
    ttft = trace.metrics()["ttft"]
    assert trace.end is not None and trace.end >= BUSY_UNTIL  # the client really was busy when the chunk came
    # On the user-space clock this reads ≥ 250 ms; the kernel's stamp is the chunk's arrival, right after its send.
    assert near(ttft, sent[0]), (ttft, sent)
    assert -0.0005 <= delivery(server, trace)[0] <= 0.030
    assert trace.arrival_clock == "kernel"
    assert trace.write_ended is not None and trace.written is not None and trace.written <= trace.write_ended


def test_a_blocked_event_loop_still_reads_the_server_time_of_the_first_answer(server) -> None:
    trace, began = asyncio.run(blocked_loop_request(server.url(SPEC)))
    sent = answers_sent(server, trace)
    assert began < sent[0], "the loop must be blocked before the first answer is due"
    ttft = trace.metrics()["ttft"]
    assert near(ttft, sent[0]), (ttft, sent)
    assert all(-0.0005 <= d <= 0.030 for d in delivery(server, trace))
    assert trace.arrival_clock == "kernel"
    assert trace.answer_times[1] - trace.answer_times[0] == pytest.approx(sent[1] - sent[0], abs=0.030)


def test_coalesced_chunks_share_the_last_packet_stamp_never_before_their_send(server, monkeypatch) -> None:
    # Two answer chunks 10 ms apart while the client sleeps: one read takes both; each gets the second's arrival.
    busy_reading(monkeypatch, BUSY_UNTIL)
    trace = sync_request(server.url(f"ok,first={FIRST},gap=0.01,tokens=2,model=coalesced"))
    sent = answers_sent(server, trace)
    first, second = sorted(trace.answer_times)
    late_first, late_second = delivery(server, trace)
    assert -0.0005 <= late_second <= 0.030, late_second  # the last chunk of the read: exact
    assert first == second  # the earlier one shares its stamp: late by the gap, not by the client's sleep
    assert sent[1] - sent[0] - 0.0005 <= late_first <= late_second + sent[1] - sent[0]
    assert second < BUSY_UNTIL - 0.050
    assert trace.arrival_clock == "kernel"


def test_without_kernel_stamps_the_user_space_clock_is_used_and_said(server, monkeypatch) -> None:
    # setsockopt(SO_TIMESTAMPNS) refused (an unknown option number): the fallback, named in the trace and the result.
    monkeypatch.setattr(arrival, "SO_TIMESTAMPNS", 0x7FFF)
    with socket.socket() as probe_socket, pytest.raises(OSError):
        probe_socket.setsockopt(socket.SOL_SOCKET, arrival.SO_TIMESTAMPNS, 1)
    trace = sync_request(server.url(SPEC))
    sent = answers_sent(server, trace)
    assert trace.arrival_clock == "user"
    assert sent[0] - 0.020 <= trace.metrics()["ttft"] <= sent[0] + 0.100
    assert min(delivery(server, trace)) >= -0.0005
    result = core.probe(
        core.ProbeSpec(url=server.url(SPEC), body=dict(BODY), n=2, warmup=0, timeout=10, min_uptime=0),
        hostname="testhost",
    )
    assert result.verdict == "ok", result.message
    assert result.info["arrival_clock"] == "user"
    # ...and the busy client then reads the moment it woke: what the kernel's stamps are for.
    busy_reading(monkeypatch, BUSY_UNTIL)
    late = sync_request(server.url(SPEC))
    assert late.first_answer is not None and late.first_answer >= BUSY_UNTIL - 0.001


def test_a_probe_says_which_clock_timed_the_arrivals(server) -> None:
    result = core.probe(
        core.ProbeSpec(url=server.url(SPEC), body=dict(BODY), n=2, warmup=0, timeout=10, min_uptime=0),
        hostname="testhost",
    )
    assert result.verdict == "ok", result.message
    assert result.info["arrival_clock"] == "kernel"
    assert all(r["arrival_clock"] == "kernel" for r in result.as_json()["requests"] if r["kind"] == "measured")


class FakeStamps:
    def __init__(self) -> None:
        self.arrival_ns: int | None = None
        self.write_began_ns: int | None = None


def test_arrival_times_are_clamped_to_the_user_clock_and_kept_in_order() -> None:
    t0 = time.perf_counter_ns() - 10**9  # the request went out a second ago
    clk = stream.ArrivalClock(t0)
    stamps = FakeStamps()
    clk.hold(stamps)
    stamps.arrival_ns = t0 + 5_000_000
    assert clk.now() == pytest.approx(0.005)
    stamps.arrival_ns = t0 + 2_000_000  # earlier than the previous block: kept in order
    assert clk.now() == pytest.approx(0.005)
    stamps.arrival_ns = t0 + 10**12  # a stamp after the reading itself (a stepped clock): the reading wins
    assert 1.0 <= clk.now() < 100.0
    assert clk.kind == "kernel"
    stamps.arrival_ns = None  # a read without a stamp
    before = clk.last
    assert (clk.now() * 1e9 + t0) >= before
    assert clk.kind == "mixed"


def test_the_stamp_comes_from_the_ancillary_data_and_only_from_it() -> None:
    data = arrival._TIMESPEC.pack(1_700_000_000, 123)
    assert arrival.stamp_of([(socket.SOL_SOCKET, arrival.SCM_TIMESTAMPNS, data)]) == 1_700_000_000_000_000_123
    assert arrival.stamp_of([]) is None
    assert arrival.stamp_of([(socket.SOL_SOCKET, arrival.SCM_TIMESTAMPNS + 1, data)]) is None


def test_the_realtime_offset_converts_a_kernel_stamp_to_the_trace_clock() -> None:
    offset = clock.realtime_offset_ns()
    assert offset is not None
    a = time.perf_counter_ns()
    wall = time.time_ns()
    b = time.perf_counter_ns()
    assert a - 1_000_000 <= wall - offset <= b + 1_000_000


def test_a_tcp_socket_has_no_last_packet_stamp_for_the_ioctl() -> None:
    # Why the stamps come from recvmsg: SIOCGSTAMPNS answers ENOENT on TCP even after data was read.
    import fcntl

    with socket.create_server(("127.0.0.1", 0)) as srv, socket.create_connection(srv.getsockname()) as c:
        peer, _ = srv.accept()
        with peer:
            arrival.enable(c)
            peer.sendall(b"x")
            assert c.recv(1) == b"x"
            with pytest.raises(OSError):
                fcntl.ioctl(c.fileno(), 0x8907, bytes(16))  # SIOCGSTAMPNS

