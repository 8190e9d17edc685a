"""Arrival times from the kernel: the moment a block of the reply reached the socket, not the moment the probe got
round to reading it.

A probe that is descheduled, or whose event loop is busy with other streams, reads a chunk late although the chunk
reached the socket on time; a user-space clock read after the read then charges the server for the client's
scheduling. Linux stamps every received packet (`SO_TIMESTAMPNS`, CLOCK_REALTIME, taken in the receive path) and
`recvmsg` hands the stamp of the last packet a read consumed. The lean client (`measure/wire.py`) owns the reads of
plain TCP connections (`http://`) and keeps, for the latest read, that stamp converted to the monotonic clock of the traces
(`clock.realtime_offset_ns`, measured when the connection is made and again before each request is written).

What is exact: the stamp of a read is the arrival of the last packet it consumed, so it is never before the server's
write of those bytes and, for the last event of the read, it is that event's arrival. When the client fell behind
and several packets waited, the kernel merged them in the receive queue into one buffer that keeps the last
packet's stamp (tcp_try_coalesce; a peek at the first byte gives the same stamp), so the earlier events of that
read get it too: late by at most the gap to the last packet, never by how long the client was away, and still no
later than the user-space reading (`ArrivalClock` clamps to it and keeps times in order). The conversion to
the monotonic clock errs by under a microsecond (`clock.realtime_offset_ns`; on the benchmark machine the offset,
read once a second, stayed within 46 ns over a minute); a step of the wall clock during a
request would move it by the step, and is caught at the next request. The cost is ~1 µs per read (`recvmsg` and
its ancillary data against a plain `recv`, measured on loopback). `SIOCGSTAMPNS` (the ioctl) does not serve here:
TCP never sets the socket's last-packet stamp, so it answers ENOENT on a TCP socket even after a read
(tests/test_arrival_clock.py shows it); the stamp comes with `recvmsg` only.

Where no stamp comes — not Linux, a kernel that refuses `SO_TIMESTAMPNS`, a packet that arrived before the stamping
was switched on, TLS (`https://` goes through httpx's asyncio client: its reads happen inside OpenSSL; the stamp of the
TCP segment would still be the arrival of the encrypted record, but owning those reads would mean running TLS
through a memory BIO here) — the block's time is the user-space clock, and each trace says which clock it used.

The request side keeps the user-space clock just before the last write (`write_began_ns`), where the trace's clock
starts (`ArrivalClock.finish` says why), and just after it (`write_ended_ns`).

Whose times they are: a `Stamps` belongs to one exchange (one request and its reply), never to a connection. A
kept-alive connection carries many requests, and under load another worker takes it from the pool the moment it
is given back and writes its own request on it; times kept on the connection would then be that request's by the
time the first one reads them (issue 28: 11–22% of requests at 8 and 16 streams got a ttft of about −0.47 s, the
write time of the next request on their connection). So the lean client (`wire.Connection`) is handed the
exchange's `Stamps` with each write and read and keeps none; the reading side (`ArrivalClock.release`, called by
`stream.Exchange`) copies the request's times out before the connection can carry another request, and reads
nothing from it afterwards.
"""

from __future__ import annotations

import select
import socket
import ssl
import struct
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from factreg import clock

if TYPE_CHECKING:
    from factreg.measure.trace import RequestTrace

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux
SCM_TIMESTAMPNS = SO_TIMESTAMPNS
_TIMESPEC = struct.Struct("@qq")  # struct timespec on 64-bit Linux (time_t, long)
ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0


def enable(sock: socket.socket) -> bool:
    """Ask the kernel to stamp the packets `sock` receives; False where it cannot (then reads use the user clock)."""
    if not sys.platform.startswith("linux") or not ANCILLARY or isinstance(sock, ssl.SSLSocket):
        return False
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    return True


def stamp_of(ancillary: Iterable[tuple[int, int, bytes]]) -> int | None:
    """The CLOCK_REALTIME nanoseconds of the last packet a `recvmsg` consumed, from its ancillary data."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS and len(data) >= _TIMESPEC.size:
            sec, nsec = _TIMESPEC.unpack(data[: _TIMESPEC.size])
            return int(sec) * 1_000_000_000 + int(nsec)
    return None


class Stamps:
    """What one exchange (a request and its reply) saw on its connection, on the monotonic clock (nanoseconds): the
    latest read's arrival and the request's last write. Made for the exchange, never kept by the connection after
    it (the module's docstring says why)."""

    __slots__ = ("kernel", "offset", "arrival_ns", "reads", "stamped_reads", "write_began_ns", "write_ended_ns")

    def __init__(self, kernel: bool):
        self.kernel = kernel  # stamping is on for this socket
        self.offset: int | None = None  # CLOCK_REALTIME − monotonic, measured as the request is written
        self.arrival_ns: int | None = None  # the latest read's last packet, None when that read had no stamp
        self.reads = 0
        self.stamped_reads = 0
        self.write_began_ns: int | None = None
        self.write_ended_ns: int | None = None

    def read(self, ancillary: Iterable[tuple[int, int, bytes]]) -> None:
        self.reads += 1
        stamp = stamp_of(ancillary) if self.offset is not None else None
        self.arrival_ns = None if stamp is None or self.offset is None else stamp - self.offset
        self.stamped_reads += self.arrival_ns is not None

    def plain_read(self) -> None:
        self.reads += 1
        self.arrival_ns = None

    def before_write(self) -> None:
        if self.kernel:
            # Measured for each request: a step of the wall clock between requests is caught here.
            self.offset = clock.realtime_offset_ns(3)
            self.kernel = self.offset is not None
        self.write_began_ns = time.perf_counter_ns()

    def after_write(self) -> None:
        self.write_ended_ns = time.perf_counter_ns()


def readable(sock: socket.socket) -> bool:
    """Whether a read would return at once (data or the end): how httpcore decides a kept-alive connection is dead."""
    if sock.fileno() < 0:
        return True
    if getattr(select, "poll", None) is None:  # pragma: no cover - not Linux
        return bool(select.select([sock], [], [], 0)[0])
    p = select.poll()
    p.register(sock, select.POLLIN)
    return bool(p.poll(0))


_keeper: list[socket.socket] = []


def keep_stamping() -> None:
    """Keep the kernel's packet stamping switched on for the life of the process, with one idle socket that asks
    for it: stamping is global, switched on (late, by deferred work) with the first socket that asks and off with
    the last, so without it the first packets of each new connection of a sequential probe could come unstamped."""
    if _keeper:
        return
    try:
        keeper = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:  # pragma: no cover
        return
    if enable(keeper):
        _keeper.append(keeper)
    else:
        keeper.close()


class ArrivalClock:
    """When each block of a reply arrived, in seconds after `t0` (perf_counter nanoseconds).

    With a connection that keeps the kernel's stamps (above), a block's time is the stamp of the
    read that brought it: the arrival of that read's last packet, whatever the probe was doing meanwhile. Several
    blocks out of one read (packets coalesced while the client was busy) share that stamp, exact for the last one
    and late by at most the gap to it for the earlier ones. Without a stamp, the time is the user-space clock now.
    A time is never after the user-space reading (a block cannot arrive after it was read) nor before the previous
    one (events keep their order).

    The stamps are the exchange's (`hold`) only while it lasts: `release`, called
    before the connection can carry another request, copies this request's write time out and lets them go;
    `finish` reads only that copy.
    """

    def __init__(self, t0: int):
        self.t0 = t0
        self.last = t0
        self.stamps: Any = None  # the exchange's `arrival.Stamps` while it lasts, else None
        self.write_began_ns: int | None = None  # copied from the stamps at `release`
        self.kernel = self.user = 0

    def hold(self, stamps: Any) -> None:
        """Read the arrival times from `stamps`, the exchange's own, until `release`."""
        self.stamps = stamps

    def release(self) -> None:
        """The exchange is over, its connection about to be given back or closed: keep this request's write time
        and read nothing of the stamps again."""
        stamps, self.stamps = self.stamps, None
        if stamps is not None:
            self.write_began_ns = getattr(stamps, "write_began_ns", None)

    def now(self, count: bool = True) -> float:
        user = time.perf_counter_ns()
        stamp = getattr(self.stamps, "arrival_ns", None)
        began = getattr(self.stamps, "write_began_ns", None)
        if stamp is not None and began is not None and stamp < began:
            # A reply cannot arrive before its request was written: a stamp that says so was converted with a
            # wall clock that moved (or was moved) apart from the monotonic one. The user-space clock times it.
            stamp = None
        if count:
            self.kernel += stamp is not None
            self.user += stamp is None
        at = max(self.last, user if stamp is None else min(stamp, user))
        self.last = at
        return (at - self.t0) / 1e9

    def end(self) -> float:
        """The end of the reading, on the user-space clock (the end of the stream carries no stamp)."""
        self.last = max(self.last, time.perf_counter_ns())
        return (self.last - self.t0) / 1e9

    @property
    def kind(self) -> str:
        if self.kernel and not self.user:
            return "kernel"
        return "mixed" if self.kernel else "user"

    def finish(self, trace: RequestTrace) -> None:
        """Note the clock used; start the clock just before the request's last write when the connection saw it.

        Before, not after: a clock read after the write is late whenever the client is descheduled as the write
        returns — on loopback the write itself wakes the server, which may preempt the client there — and then the
        reply seems to come sooner than it did (bench/bench_load.py: under load the request reached the stand-in's
        socket up to 10.7 ms before such a clock start). Read just before, the clock start is early only by the
        write's own few microseconds (p99 0.01–0.04 ms there), or by a descheduling in the handful of instructions
        between the two. The time is the one `release` copied: the connection's stamps may belong to another
        request by now.
        """
        trace.arrival_clock = self.kind
        if self.write_began_ns is not None:
            trace.write_ended = trace.written
            trace.written = (self.write_began_ns - self.t0) / 1e9
