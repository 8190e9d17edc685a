"""HTTP/1.1 for load runs over plain TCP: one streamed POST at a time per connection, its reply read as it arrives,
connections kept alive between requests.

Why not httpx here: a load run's client must cost little per request, or it measures itself (issue: the probe's
own CPU per request at 8 streams). httpx, httpcore and h11 are general and pure Python: per network read they
go through the pool, its locks, the trace hooks and h11's state machine, about 0.3 ms of CPU per read. A load run
needs one thing: write a POST, read its head, decode its body (chunked, Content-Length or until close) and hand
each block to the exchange (`stream.Exchange`) with the kernel's arrival stamp of the read that brought it. `ReplyParser` does the
reading without I/O (tests feed it byte by byte); `Pool` owns the sockets, read with `recvmsg` to keep
the stamp of each read's last packet (`measure/arrival.py`).

Scope, on purpose narrow: `http://` URLs without credentials in them. `https://` (reads inside OpenSSL) and
anything else go through httpx (`stream.Exchange` decides with `handles`). The rules of `measure/http.py`
hold here too: no redirect followed (a 3xx reaches the caller), no proxy or `.netrc` from the environment, the
same user agent, a time-out on everything (`stream.astream_request` puts one deadline on the whole request).

Framing follows RFC 9112 §6.3: no body for 1xx, 204 and 304; Transfer-Encoding chunked when it is the last
coding; a Content-Length (several equal values accepted, different ones refused); else the body ends when the
server closes. Interim 1xx heads are skipped. A connection goes back to the pool only when its reply was read to
its framed end, HTTP/1.1 without `Connection: close` (HTTP/1.0 only with `keep-alive`); a pooled connection
that became readable while idle (the server closed it) is dropped before use. A head over 64 KiB, a chunk size
that is not hex, a header line without a name: `ProtocolError`.
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from factreg.measure import arrival
from factreg.measure.arrival import ANCILLARY

MAX_HEAD = 64 * 1024
READ_SIZE = 64 * 1024
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEX = re.compile(rb"0*[0-9A-Fa-f]{1,16}")  # at most 16 significant digits: no chunk is larger than 2^64 bytes
# A numeric field is ASCII digits only (`str.isdigit` also takes `²` and other Unicode digits, which int() refuses),
# and at most 18 of them (int() refuses over 4,300; no reply is an exabyte).
_DIGITS = re.compile(r"[0-9]{1,18}")
_BAD_VALUE = re.compile(r"[\r\n\x00]")

HEAD, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILERS, LENGTH, UNTIL_CLOSE, DONE = range(8)


class WireError(Exception):
    """A transport failure of the lean client."""


class ConnectFailed(WireError):
    """No connection could be made."""


class ProtocolError(WireError):
    """The reply broke HTTP/1.1, or the connection ended before the reply did."""


class ClosedBeforeReply(ProtocolError):
    """The connection ended (or was reset) before any byte of a reply: on a kept-alive connection, the server
    closed it as the request went out (RFC 9112 §9.3.1), which is not the server failing the request."""


class Head:
    """A reply's status line and headers (names in lower case; repeated fields joined with ", ")."""

    __slots__ = ("version", "status", "reason", "headers")

    def __init__(self, version: str, status: int, reason: str, headers: dict[str, str]):
        self.version, self.status, self.reason, self.headers = version, status, reason, headers

    def tokens(self, name: str) -> list[str]:
        return [t.strip().lower() for t in self.headers.get(name, "").split(",") if t.strip()]


def parse_head(block: bytes) -> Head:
    """The status line and header fields of one head (without its blank line)."""
    lines = block.split(b"\n")
    status_line = lines[0].rstrip(b"\r")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3 or not parts[1].isdigit():
        raise ProtocolError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    for raw in lines[1:]:
        line = raw.rstrip(b"\r")
        if line[:1] in (b" ", b"\t"):
            raise ProtocolError("folded header lines are not allowed (RFC 9112 §5.2)")
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.fullmatch(name):
            raise ProtocolError(f"malformed header line: {line[:80]!r}")
        key = name.decode("ascii").lower()
        text = value.strip(b" \t").decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return Head(parts[0].decode("ascii"), int(parts[1]), parts[2].decode("latin-1") if len(parts) > 2 else "", headers)


class ReplyParser:
    """The reply to one request, fed the bytes as they come; returns the body's blocks, decoded from its framing.

    `head` is set once the (final, non-1xx) head is complete; `done` once the body reached its framed end;
    `reusable` then says whether the connection may carry another request.
    """

    def __init__(self) -> None:
        self.head: Head | None = None
        self.done = False
        self.reusable = False
        self._buf = b""
        self._state = HEAD
        self._left = 0
        self._keep_alive = False
        self.received = 0  # bytes of the reply so far

    def feed(self, data: bytes) -> list[bytes]:
        """Take `data`; return the body's bytes it completed, in order (possibly none)."""
        self.received += len(data)
        out: list[bytes] = []
        buf = self._buf + data if self._buf else data
        state = self._state
        # An index into `buf` rather than slicing what is left after each step: many small chunks in one read
        # would otherwise copy the read's rest once per chunk.
        i, n = 0, len(buf)
        while i < n:
            if state in (CHUNK_DATA, LENGTH):
                j = min(n, i + self._left)
                out.append(buf[i:j] if i or j < n else buf)
                self._left -= j - i
                i = j
                if not self._left:
                    state = CHUNK_END if state == CHUNK_DATA else self._finish()
            elif state == CHUNK_SIZE:
                end = buf.find(b"\n", i)
                if end < 0:
                    if n - i > 1024:
                        raise ProtocolError("a chunk-size line over 1 KiB")
                    break
                size = buf[i:end].rstrip(b"\r").split(b";", 1)[0].strip(b" \t")
                if not _HEX.fullmatch(size):
                    raise ProtocolError(f"not a chunk size: {size[:40]!r}")
                self._left = int(size, 16)
                i = end + 1
                state = CHUNK_DATA if self._left else TRAILERS
            elif state == CHUNK_END:
                if buf.startswith(b"\r\n", i):
                    i += 2
                elif buf.startswith(b"\n", i):
                    i += 1
                elif n - i == 1 and buf[i] == 13:  # the CR of a CRLF split between two reads
                    break
                else:
                    raise ProtocolError("a chunk's data is not followed by CRLF")
                state = CHUNK_SIZE
            elif state == UNTIL_CLOSE:
                out.append(buf[i:] if i else buf)
                i = n
            elif state == HEAD:
                match = _HEAD_END.search(buf, i)
                if match is None:
                    if n - i > MAX_HEAD:
                        raise ProtocolError(f"the reply's head exceeds {MAX_HEAD // 1024} KiB")
                    break
                head = parse_head(buf[i : match.start()])
                i = match.end()
                if 100 <= head.status < 200:
                    if head.status == 101:
                        raise ProtocolError("the server switched protocols (101), which was not asked for")
                    continue  # an interim reply (100 Continue, 103 Early Hints): the final one follows
                self.head = head
                state = self._framing(head)
            elif state == TRAILERS:
                end = buf.find(b"\n", i)
                if end < 0:
                    if n - i > MAX_HEAD:
                        raise ProtocolError(f"trailer fields exceed {MAX_HEAD // 1024} KiB")
                    break
                line = buf[i:end].rstrip(b"\r")
                i = end + 1
                if not line:
                    state = self._finish()
            else:  # DONE: bytes after the framed end of the reply: the connection is not in a known state
                self.reusable = self._keep_alive = False
                i = n
        self._buf = buf[i:] if i < n else b""
        self._state = state
        return out

    def _framing(self, head: Head) -> int:
        version_ok = head.version == "HTTP/1.1"
        connection = head.tokens("connection")
        self._keep_alive = ("close" not in connection) if version_ok else ("keep-alive" in connection)
        if head.status in (204, 304):
            return self._finish()
        coding = head.tokens("transfer-encoding")
        if coding:
            if "content-length" in head.headers:
                self._keep_alive = False  # both: Transfer-Encoding wins, the connection must not be reused
            if coding[-1] == "chunked":
                return CHUNK_SIZE
            self._keep_alive = False
            return UNTIL_CLOSE
        if "content-length" in head.headers:
            values = {v.strip() for v in head.headers["content-length"].split(",")}
            if len(values) != 1 or not _DIGITS.fullmatch(next(iter(values))):
                raise ProtocolError(f"invalid Content-Length: {head.headers['content-length'][:40]!r}")
            self._left = int(values.pop())
            return LENGTH if self._left else self._finish()
        self._keep_alive = False
        return UNTIL_CLOSE

    def _finish(self) -> int:
        self.done = True
        self.reusable = self._keep_alive
        return DONE

    def eof(self) -> None:
        """The connection ended: the end of a close-delimited body, else a reply cut short."""
        if self._state == UNTIL_CLOSE:
            self._finish()
            self._state = DONE
            self.reusable = False
        elif self._state != DONE:
            if not self.received:
                raise ClosedBeforeReply("the server closed the connection before answering")
            raise ProtocolError("the server closed the connection before the reply ended")


def handles(url: str) -> bool:
    """Whether this client carries `url`: plain `http://` with a host and no credentials in it."""
    parts = urlsplit(url)
    return parts.scheme == "http" and bool(parts.hostname) and parts.username is None and parts.password is None


def request_head(url: str, headers: Mapping[str, str], length: int, user_agent: str) -> bytes:
    """The bytes of a POST's head: request line, Host, the caller's fields, Content-Length."""
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    host = parts.netloc
    fields = {"Host": host, "Accept": "*/*", "Connection": "keep-alive", "User-Agent": user_agent}
    lower = {k.lower(): k for k in fields}
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name.encode("latin-1", "replace")) or _BAD_VALUE.search(value):
            raise ValueError(f"header {name!r} holds characters HTTP does not allow (a line break?)")
        old = lower.pop(name.lower(), None)
        if old is not None:
            del fields[old]
        fields[name] = value
    fields["Content-Length"] = str(length)
    lines = [f"POST {target} HTTP/1.1"] + [f"{k}: {v}" for k, v in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class Connection:
    """A TCP connection on the running asyncio loop, read with `recvmsg` to keep each read's kernel stamp.

    It keeps no times of its own: each write and each reading is handed the exchange's `arrival.Stamps`, so a
    connection back in the pool holds nothing a finished request still reads (`measure/arrival.py`)."""

    def __init__(self, sock: socket.socket, key: tuple[str, int]):
        self.sock = sock
        self.key = key
        self.fd = sock.fileno()
        self.kernel = arrival.enable(sock)  # the kernel stamps this socket's packets

    def new_stamps(self) -> arrival.Stamps:
        """The times of one exchange on this connection, kept by the exchange."""
        return arrival.Stamps(self.kernel)

    async def _wait(self, writing: bool = False) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        # By its number: the selector's look-up of a socket object formats its repr (see arrival.py).
        if writing:
            loop.add_writer(self.fd, wake)
        else:
            loop.add_reader(self.fd, wake)
        try:
            await ready
        finally:
            if writing:
                loop.remove_writer(self.fd)
            else:
                loop.remove_reader(self.fd)

    def receive(self, on_data: Callable[[bytes], bool], stamps: arrival.Stamps) -> asyncio.Future[None]:
        """Hand each read of the connection to `on_data` as it comes, from the event loop's own callback (no task
        switch per read: under load a reply's blocks come one wake-up each), until `on_data` says the reply is
        complete (True) or raises; the returned future ends then, with that exception or a failed read's
        `OSError`. `on_data(b"")` is the end of the connection. Cancelling the future stops the reading. Each
        read's arrival goes to `stamps`, the exchange's, before `on_data` sees its bytes."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        fd, sock = self.fd, self.sock
        kernel = stamps.kernel

        def finish(exc: Exception | None) -> None:
            loop.remove_reader(fd)
            if not done.done():
                if exc is None:
                    done.set_result(None)
                else:
                    done.set_exception(exc)

        def readable() -> None:
            try:
                if kernel:
                    data, ancillary, _flags, _addr = sock.recvmsg(READ_SIZE, ANCILLARY)
                    stamps.read(ancillary)
                else:
                    data = sock.recv(READ_SIZE)
                    stamps.plain_read()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                finish(exc)
                return
            try:
                complete = on_data(data)
            except Exception as exc:  # noqa: BLE001 - handed to the awaiting request, which reports it
                finish(exc)
                return
            if complete:
                finish(None)

        def stop(future: asyncio.Future[None]) -> None:
            # Runs a loop turn after the cancellation: by then `close` may have unregistered the socket and a new
            # connection may hold the same number, whose reader must stay.
            if future.cancelled() and sock.fileno() != -1:
                loop.remove_reader(fd)

        loop.add_reader(fd, readable)
        done.add_done_callback(stop)
        return done

    async def write(self, data: bytes, stamps: arrival.Stamps) -> None:
        """Write all of `data`; the clock around the last write goes to `stamps`, the exchange's."""
        stamps.before_write()
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view) :]
                continue
            except (BlockingIOError, InterruptedError):
                pass
            await self._wait(writing=True)
        stamps.after_write()

    def close(self) -> None:
        """Unregister the socket from the running loop, then close it (a closed number left in the selector would
        be confused with the next socket given the same number)."""
        if self.sock.fileno() != -1:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is not None:
                loop.remove_reader(self.fd)
                loop.remove_writer(self.fd)
        self.sock.close()


class Pool:
    """Kept-alive connections by (host, port), for one run; `fallback` is the httpx client of the URLs this client
    does not carry (made on first use). `keepalive=False` closes each connection after its request (a sequential
    probe opens one per request, as curl does)."""

    def __init__(self, timeout: float, keepalive: bool = True, fallback: Callable[[float], Any] | None = None):
        self.timeout = timeout
        self.keepalive = keepalive
        self.idle: dict[tuple[str, int], list[Connection]] = {}
        self.addresses: dict[tuple[str, int], list[Any]] = {}
        self._make_fallback = fallback
        self._fallback: Any = None

    def fallback(self) -> Any:
        if self._fallback is None:
            if self._make_fallback is None:
                raise WireError("this client carries plain http:// only")
            self._fallback = self._make_fallback(self.timeout)
        return self._fallback

    def take(self, key: tuple[str, int]) -> Connection | None:
        """An idle connection to `key` that the server has not closed meanwhile, or None."""
        idle = self.idle.get(key)
        while idle:
            conn = idle.pop()
            if arrival.readable(conn.sock):  # data or the end while idle: closed by the server
                conn.close()
                continue
            return conn
        return None

    def give(self, conn: Connection) -> None:
        if not self.keepalive:
            conn.close()
            return
        self.idle.setdefault(conn.key, []).append(conn)

    async def connect(self, key: tuple[str, int]) -> Connection:
        arrival.keep_stamping()
        loop = asyncio.get_running_loop()
        infos = await self._addresses(key)
        error: OSError = OSError(f"no address for {key[0]}")
        for family, kind, proto, _name, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                await loop.sock_connect(sock, address)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            except BaseException:
                sock.close()
                raise
            return Connection(sock, key)
        raise ConnectFailed(str(error) or type(error).__name__)

    async def _addresses(self, key: tuple[str, int]) -> list[Any]:
        """The addresses of `key`, looked up once per run: a numeric host at once, a name in asyncio's resolver
        thread (a thread hand-off per connection would cost each request two more wake-ups)."""
        found = self.addresses.get(key)
        if found is None:
            host, port = key
            try:
                try:
                    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
                except socket.gaierror:
                    found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                raise ConnectFailed(str(exc) or type(exc).__name__) from None
            self.addresses[key] = found
        return found

    async def aclose(self) -> None:
        for conns in self.idle.values():
            for conn in conns:
                conn.close()
        self.idle.clear()
        if self._fallback is not None:
            await self._fallback.aclose()
            self._fallback = None


def key_of(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return (parts.hostname or "", parts.port or 80)
