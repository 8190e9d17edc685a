"""Load for the probe: N streams kept in flight (`concurrency`) or Poisson arrivals at a rate (`rate`,
`burstiness`), from one asyncio client.

One client (`http.make_async_client`: the lean client of `measure/wire.py` for `http://`, httpx's for others)
carries every request, with its connection pool unbounded and keep-alive on (connection reuse is a condition of
the run: a server that closes each stream, as llama-server's streams do, gets a new connection per request either
way). Each request is the sequential probe's own streamed request (`stream.astream_request`) and keeps its raw
event times (`trace.RequestTrace`), counted from the moment its body was written (the clock read just before the
last write, `arrival.ArrivalClock.finish`; httpcore's `http11.send_request_body.complete` where the connection does
not say), not from when the client meant to send it. The difference is the client's
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
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from factreg.measure import wire
from factreg.measure.stream import (
    DEFAULT_MAX_BYTES,
    MeasurementError,
    OneAtATime,
    ProbeFailure,
    RequestTrace,
    astream_request,
)

# Each request of a run is the one streamed request (`stream.astream_request`); one after another from synchronous
# code is `stream.OneAtATime`. Both are named here too, where load runs were first written.
__all__ = ["Load", "LoadRun", "OneAtATime", "arrivals", "astream_request", "run"]


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
