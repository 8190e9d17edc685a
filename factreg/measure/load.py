"""Load for the probe: N streams kept in flight (`concurrency`) or Poisson arrivals at a rate (`rate`,
`burstiness`), from one asyncio client.

One `httpx.AsyncClient` carries every request, with its connection pool unbounded and keep-alive on (connection
reuse is a condition of the run: a server that closes each stream, as llama-server's streams do, gets a new
connection per request either way). Each request keeps the raw event times of the sequential probe
(`stream.RequestTrace`), counted from the moment its body was written (the clock read just before the last write,
`stream.ArrivalClock.finish`; httpcore's `http11.send_request_body.complete` where the connection does not say), not
from when the client meant to send it. The difference is the client's
own queueing — an event loop busy reading other streams, a connection still being set up — and is reported as
its own number (`queued`, seconds from the scheduled send to the write), never folded into the latencies.

Every time of a request is its own: its exchange's stamps are copied into the request's clock before the
connection goes back to the pool, where another worker may take it at once and write its own request on it
(`measure/arrival.py` says what went wrong when they were not). A request whose times are impossible anyway (a
latency below zero, events out of order: `RequestTrace.impossible`) is a `MeasurementError`, counted apart from the
server's failures (`LoadRun.measurement_errors`) and never a sample; the probe then fails the run.

Arrivals in rate mode follow vLLM's `--burstiness`: gaps are Gamma-distributed with shape `burstiness` and mean
1/rate (burstiness 1 = Poisson; below 1 burstier, above 1 more regular). The generator is seeded, so a stored
method replays the same schedule. Warm-up is by count: the first `warmup` requests sent are discarded.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from factreg.measure import wire
from factreg.measure.http import USER_AGENT
from factreg.measure.stream import (
    DEFAULT_MAX_BYTES,
    ArrivalClock,
    MeasurementError,
    ProbeFailure,
    Reading,
    RequestTrace,
    error_detail,
    status_failure,
    stream_headers,
    transport_failure,
)
from factreg.verdicts import Verdict

WRITTEN = "http11.send_request_body.complete"
CONNECTED = "connection.connect_tcp.complete"


@dataclass
class Load:
    """How to load the endpoint: `concurrency` streams in flight, or arrivals at `rate` per second."""

    concurrency: int = 0
    rate: float = 0.0
    burstiness: float = 1.0
    duration: float = 0.0  # seconds of measured sending (0: until n requests)
    seed: int = 0

    @property
    def active(self) -> bool:
        return bool(self.concurrency or self.rate)

    def describe(self) -> dict[str, str]:
        """The run's load as conditions (identity: a latency under load is not one without)."""
        if self.rate:
            out = {"load": "rate", "rate": f"{self.rate:g}", "burstiness": f"{self.burstiness:g}"}
            if self.concurrency:
                out["max_concurrency"] = str(self.concurrency)
            return out
        return {"load": "concurrency", "concurrency": str(self.concurrency)}


@dataclass
class LoadRun:
    """What a load run gave: every finished trace (warm-up included), failures in order, and timing."""

    traces: list[RequestTrace] = field(default_factory=list)
    failures: list[ProbeFailure] = field(default_factory=list)  # the server's (or the network's)
    measurement_errors: list[MeasurementError] = field(default_factory=list)  # impossible times: the probe's fault
    sent: int = 0
    wall: float = 0.0  # seconds from the first scheduled send to the last reply's end


class OneAtATime:
    """Streamed requests one after another through the lean client (`measure/wire.py`), each on a connection of
    its own, as the sequential probe sends them: one event loop for the run, one request on it at a time."""

    def __init__(self, timeout: float):
        self.loop = asyncio.new_event_loop()
        self.pool = wire.Pool(timeout, keepalive=False)

    def request(
        self, url: str, headers: Mapping[str, str], body: Any, timeout: float, kind: str, max_bytes: int
    ) -> RequestTrace:
        return self.loop.run_until_complete(astream_request(self.pool, url, headers, body, timeout, kind, max_bytes))

    def close(self) -> None:
        self.loop.run_until_complete(self.pool.aclose())
        self.loop.close()

    def __enter__(self) -> OneAtATime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def arrivals(load: Load, count: int) -> list[float]:
    """Scheduled send times (seconds after the start) of `count` requests in rate mode."""
    rng = random.Random(load.seed)
    shape = load.burstiness
    scale = 1.0 / (load.rate * shape)
    t = 0.0
    out = []
    for _ in range(count):
        out.append(t)
        t += rng.gammavariate(shape, scale)
    return out


async def astream_request(
    client: wire.Pool,
    url: str,
    headers: Mapping[str, str],
    body: Any,
    timeout: float,
    kind: str = "measured",
    max_bytes: int = DEFAULT_MAX_BYTES,
    scheduled: float | None = None,
    retry_stale: bool = True,
) -> RequestTrace:
    """The async twin of `stream.stream_request`: one streamed POST within `timeout` seconds, raw event times.

    `scheduled` (monotonic seconds) is when the request was meant to go; `queued` is the time from then until
    its body was written. A kept-alive connection that the server closed as the request went out (no byte of an
    answer; a server may close an idle connection at any time, RFC 9112 §9.3.1, and llama-server does) is not the
    server failing the request: it is sent once more, on a new connection, with a new trace.

    `http://` URLs go through the lean client (`measure/wire.py`); others through httpx (`client.fallback()`).
    """
    trace = RequestTrace(kind=kind)
    t0 = time.perf_counter_ns()
    trace.started = t0 / 1e9
    ex = _Exchange(
        url, headers, json.dumps(body, ensure_ascii=False).encode("utf-8"), timeout, trace,
        Reading(trace, url, max_bytes), ArrivalClock(t0),
    )
    lean = wire.handles(url)
    exchange = _wire_exchange if lean else _httpx_exchange
    try:
        # One deadline for the whole request (connect, headers, every byte), as the sync probe's watchdog.
        await asyncio.wait_for(exchange(client, ex), timeout)
    except ProbeFailure:
        raise
    except asyncio.TimeoutError as exc:
        raise transport_failure(exc, url, timeout, ex.started, True, trace.n_chunks) from None
    except Exception as exc:  # noqa: BLE001 - transport errors and SSEError: one line, never a traceback
        if _stale(exc, lean, ex) and retry_stale:  # a pooled connection closed before any answer
            return await astream_request(client, url, headers, body, timeout, kind, max_bytes, scheduled, False)
        if _transport_error(exc):
            raise transport_failure(exc, url, timeout, ex.started, False, trace.n_chunks) from None
        raise ProbeFailure(Verdict.ERROR, str(exc) or type(exc).__name__) from None
    for name, key in (("connected", CONNECTED), ("written", WRITTEN)):
        if key in ex.events:
            setattr(trace, name, (ex.events[key] - t0) / 1e9)
    ex.arrival.finish(trace)
    if scheduled is not None:
        sent_at = t0 / 1e9 + (trace.written if trace.written is not None else 0.0)
        trace.queued = sent_at - scheduled  # below zero is impossible: `Reading.finish` refuses it
    return ex.reading.finish()


@dataclass
class _Exchange:
    """One streamed request as either client carries it: what to send, where its events go, how far it got."""

    url: str
    headers: Mapping[str, str]
    content: bytes
    timeout: float
    trace: RequestTrace
    reading: Reading
    arrival: ArrivalClock
    events: dict[str, int] = field(default_factory=dict)  # perf_counter_ns of CONNECTED and WRITTEN
    started: bool = False  # the reply's head arrived
    reused: bool = False  # sent on a kept-alive connection


def _stale(exc: Exception, lean: bool, ex: _Exchange) -> bool:
    """Whether `exc` is a kept-alive connection the server closed before any answer (worth one more try)."""
    if ex.started or CONNECTED in ex.events:
        return False
    if lean:
        return isinstance(exc, wire.ClosedBeforeReply) and ex.reused
    import httpx

    return isinstance(exc, httpx.RemoteProtocolError)


def _transport_error(exc: Exception) -> bool:
    if isinstance(exc, wire.WireError):
        return True
    import httpx

    return isinstance(exc, (httpx.TimeoutException, httpx.TransportError))


async def _wire_exchange(client: wire.Pool, ex: _Exchange) -> None:
    """One request on a kept-alive connection of the lean client (a new one when none is idle)."""
    url, trace, reading, arrival, events = ex.url, ex.trace, ex.reading, ex.arrival, ex.events
    key = wire.key_of(url)
    conn = client.take(key)
    if conn is None:
        conn = await client.connect(key)
        events[CONNECTED] = time.perf_counter_ns()
    else:
        ex.reused = True
    parser = wire.ReplyParser()
    keep = False
    stamps = conn.new_stamps()  # this exchange's times; the connection keeps none
    arrival.hold(stamps)
    try:
        try:
            await conn.write(
                wire.request_head(url, stream_headers(ex.headers), len(ex.content), USER_AGENT) + ex.content, stamps
            )
        except OSError as exc:
            raise wire.ClosedBeforeReply(f"the connection failed as the request went out ({exc})") from None
        events[WRITTEN] = time.perf_counter_ns()
        error_body: list[bytes] = []

        def on_data(data: bytes) -> bool:
            if not data and trace.status is not None and trace.status >= 300:
                raise _failure(url, trace.status, parser, error_body)  # the error's body ended with the connection
            if data:
                parts = parser.feed(data)
            else:
                parser.eof()
                parts = []
            head = parser.head
            if head is None:
                return False
            if not ex.started:
                trace.first_byte = arrival.now(count=False)
                ex.started = True
                trace.status = head.status
                if head.status < 300:
                    reading.check_headers(head.headers.get("content-type", ""), head.headers.get("content-encoding"))
            if head.status >= 300:
                error_body.extend(parts)
                if head.status < 400 or parser.done or sum(map(len, error_body)) >= 4096:
                    raise _failure(url, head.status, parser, error_body)
                return False
            if parts:
                at = arrival.now()
                for part in parts:
                    reading.feed(part, at)
            if parser.done:
                reading.close(arrival.end())
                return True
            return False

        try:
            await conn.receive(on_data, stamps)
        except OSError as exc:
            if not parser.received:
                raise wire.ClosedBeforeReply(f"the connection was reset before any answer ({exc})") from None
            raise wire.ProtocolError(f"the connection failed mid-reply ({exc})") from None
        keep = parser.reusable
    finally:
        # Copy this request's times before another worker can take the connection from the pool and write on it.
        arrival.release()
        if keep:
            client.give(conn)
        else:
            conn.close()


def _failure(url: str, status: int, parser: wire.ReplyParser, body: list[bytes]) -> ProbeFailure:
    """The failure an HTTP status of 300 or more means, with the start of its body."""
    assert parser.head is not None
    text = b"".join(body)
    failure = status_failure(status, parser.head.headers.get("location"), url, lambda: error_detail(text))
    assert failure is not None
    return failure


async def _httpx_exchange(client: wire.Pool, ex: _Exchange) -> None:
    """One request through httpx (URLs the lean client does not carry: `https://`)."""
    import httpx

    url, trace, reading, arrival, events = ex.url, ex.trace, ex.reading, ex.arrival, ex.events

    ticks = time.perf_counter_ns

    async def on_event(name: str, info: dict[str, Any]) -> None:
        if name in (WRITTEN, CONNECTED):
            events.setdefault(name, ticks())

    async with client.fallback().stream(
        "POST", url, content=ex.content, headers=stream_headers(ex.headers), timeout=httpx.Timeout(ex.timeout),
        extensions={"trace": on_event},
    ) as resp:
        arrival.attach(resp)
        try:
            trace.first_byte = arrival.now(count=False)
            ex.started = True
            trace.status = resp.status_code
            if resp.status_code >= 300:
                body_bytes = b""
                if resp.status_code >= 400:
                    async for part in resp.aiter_raw():
                        body_bytes += part
                        if len(body_bytes) >= 4096:
                            break
                failure = status_failure(
                    resp.status_code, resp.headers.get("location"), url, lambda: error_detail(body_bytes)
                )
                assert failure is not None
                raise failure
            reading.check_headers(resp.headers.get("content-type", ""), resp.headers.get("content-encoding"))
            async for chunk in resp.aiter_raw():
                reading.feed(chunk, arrival.now())
            reading.close(arrival.end())
        finally:
            arrival.release()  # before the connection goes back to httpx's pool


async def run(
    load: Load,
    url: str,
    headers: Mapping[str, str],
    make_body: Callable[[], Any],
    *,
    n: int,
    warmup: int,
    timeout: float,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Callable[[str], None] | None = None,
    client: wire.Pool | None = None,
) -> LoadRun:
    """Send `warmup` + `n` requests (fewer when `duration` ends first) under `load`; every outcome is kept."""
    from factreg.measure.http import make_async_client

    say = progress or (lambda _m: None)
    out = LoadRun()
    total = warmup + n
    own = client is None
    http = client or make_async_client(timeout)
    clock = time.perf_counter
    start = clock()
    deadline: float | None = None

    def kind_of(i: int) -> str:
        return "warmup" if i < warmup else "measured"

    async def one(i: int, scheduled: float) -> None:
        try:
            trace = await astream_request(
                http, url, headers, make_body(), timeout, kind_of(i), max_bytes, scheduled=scheduled
            )
            out.traces.append(trace)
        except MeasurementError as exc:
            out.measurement_errors.append(exc)
        except ProbeFailure as exc:
            out.failures.append(exc)
        done = len(out.traces) + len(out.failures) + len(out.measurement_errors)
        if done % max(1, total // 20) == 0 or done == total:
            say(f"{done}/{total} requests done")

    def may_send(i: int) -> bool:
        nonlocal deadline
        if i >= total:
            return False
        if i == warmup and load.duration:
            deadline = clock() + load.duration
        return deadline is None or clock() < deadline

    try:
        if load.rate:
            limit = asyncio.Semaphore(load.concurrency) if load.concurrency else None
            tasks = []
            for i, at in enumerate(arrivals(load, total)):
                when = start + at
                delay = when - clock()
                if delay > 0:
                    await asyncio.sleep(delay)
                if not may_send(i):
                    break
                out.sent += 1

                async def limited(i: int = i, when: float = when) -> None:
                    if limit is None:
                        await one(i, when)
                    else:
                        async with limit:
                            await one(i, when)

                tasks.append(asyncio.create_task(limited()))
            await asyncio.gather(*tasks)
        else:
            counter = iter(range(total))

            async def worker() -> None:
                for i in counter:
                    if not may_send(i):
                        return
                    out.sent += 1
                    await one(i, clock())

            await asyncio.gather(*(worker() for _ in range(load.concurrency)))
    finally:
        if own:
            await http.aclose()
    out.wall = clock() - start
    return out
