"""Arrival times from the kernel: the moment a block of the reply reached the socket, not the moment the probe got
round to reading it.

A probe that is descheduled, or whose event loop is busy with other streams, reads a chunk late although the chunk
reached the socket on time; a user-space clock read after the read then charges the server for the client's
scheduling. Linux stamps every received packet (`SO_TIMESTAMPNS`, CLOCK_REALTIME, taken in the receive path) and
`recvmsg` hands the stamp of the last packet a read consumed. The streams here own the reads of plain TCP
connections (`http://`) and keep, for the latest read, that stamp converted to the monotonic clock of the traces
(`clock.realtime_offset_ns`, measured when the connection is made and again before each request is written).

What is exact: the stamp of a read is the arrival of the last packet it consumed, so it is never before the server's
write of those bytes and, for the last event of the read, it is that event's arrival. When the client fell behind
and several packets waited, the kernel merged them in the receive queue into one buffer that keeps the last
packet's stamp (tcp_try_coalesce; a peek at the first byte gives the same stamp), so the earlier events of that
read get it too: late by at most the gap to the last packet, never by how long the client was away, and still no
later than the user-space reading (`stream.ArrivalClock` clamps to it and keeps times in order). The conversion to
the monotonic clock errs by under a microsecond (`clock.realtime_offset_ns`; on the benchmark machine the offset,
read once a second, stayed within 46 ns over a minute); a step of the wall clock during a
request would move it by the step, and is caught at the next request. The cost is ~1 µs per read (`recvmsg` and
its ancillary data against a plain `recv`, measured on loopback). `SIOCGSTAMPNS` (the ioctl) does not serve here:
TCP never sets the socket's last-packet stamp, so it answers ENOENT on a TCP socket even after a read
(tests/test_arrival_clock.py shows it); the stamp comes with `recvmsg` only.

Where no stamp comes — not Linux, a kernel that refuses `SO_TIMESTAMPNS`, a packet that arrived before the stamping
was switched on, TLS (`https://` keeps httpx's own transport: its reads happen inside OpenSSL; the stamp of the
TCP segment would still be the arrival of the encrypted record, but owning those reads would mean running TLS
through a memory BIO here) — the block's time is the user-space clock, and each trace says which clock it used.

The request side keeps the user-space clock just before the last write (`write_began_ns`), where the trace's clock
starts (`stream.ArrivalClock.finish` says why), and just after it (`write_ended_ns`).

Whose times they are: a `Stamps` belongs to one exchange (one request and its reply), never to a connection. A
kept-alive connection carries many requests, and under load another worker takes it from the pool the moment it
is given back and writes its own request on it; times kept on the connection would then be that request's by the
time the first one reads them (issue 28: 11–22% of requests at 8 and 16 streams got a ttft of about −0.47 s, the
write time of the next request on their connection). So the lean client (`wire.Connection`) is handed the
exchange's `Stamps` with each write and read and keeps none, and `StampedStream` (httpcore's reads) starts a new
`Stamps` with each request it writes; the reading side (`stream.ArrivalClock.release`) copies the request's times
out before the connection can carry another request, and reads nothing from it afterwards.
"""

from __future__ import annotations

import select
import socket
import ssl
import struct
import sys
import time
from collections.abc import Iterable
from typing import Any

import httpcore

from factreg import clock

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux
SCM_TIMESTAMPNS = SO_TIMESTAMPNS
_TIMESPEC = struct.Struct("@qq")  # struct timespec on 64-bit Linux (time_t, long)
ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0
SocketOption = Any  # httpcore's SOCKET_OPTION tuples


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


class StampedStream(httpcore.NetworkStream):
    """httpcore's own stream of a TCP connection, with reads made by `recvmsg` to keep each one's kernel stamp.

    `stamps` are the current exchange's: the first write after a read (or the first write of all) is a new request
    on the connection and gets a new `Stamps`, so the object an earlier request took (`stream.ArrivalClock.attach`)
    is never written again."""

    def __init__(self, inner: httpcore.NetworkStream):
        self.inner = inner
        self.sock: socket.socket = inner.get_extra_info("socket")
        self.kernel = enable(self.sock)
        self.stamps = Stamps(self.kernel)
        self._replying = True  # the next write begins a new exchange

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._replying = True
        stamps = self.stamps
        if not stamps.kernel:
            data = self.inner.read(max_bytes, timeout)
            stamps.plain_read()
            return data
        try:
            self.sock.settimeout(timeout)
            data, ancillary, _flags, _addr = self.sock.recvmsg(max_bytes, ANCILLARY)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(exc) from exc
        except OSError as exc:
            raise httpcore.ReadError(exc) from exc
        stamps.read(ancillary)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._replying:
            self.stamps = Stamps(self.kernel)
            self._replying = False
        stamps = self.stamps
        stamps.before_write()
        self.inner.write(buffer, timeout)
        stamps.after_write()

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return self.inner.start_tls(ssl_context, server_hostname, timeout)  # reads inside OpenSSL: user clock

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


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


class StampingBackend(httpcore.NetworkBackend):
    """httpcore's sync backend whose TCP streams keep kernel arrival stamps."""

    def __init__(self) -> None:
        self.inner = httpcore.SyncBackend()
        keep_stamping()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.NetworkStream:
        return StampedStream(self.inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[SocketOption] | None = None
    ) -> httpcore.NetworkStream:  # pragma: no cover - factreg connects over TCP
        return self.inner.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
