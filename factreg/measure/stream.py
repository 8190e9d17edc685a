"""The one streamed request: every POST whose reply is an event stream goes out and is read here, by an `Exchange`
that `astream_request` runs — the sequential probe's (`http://` and `https://`), the identity check's 1-token
request, and each request of a load run (`measure/load.py`). Synchronous code sends it with `stream_request` on
its client (`http.make_client`), which keeps one event loop and one pool for its requests (`OneAtATime`).

An exchange owns everything one request is timed by — its trace (`measure/trace.py`), its reading
(`measure/chunks.py`), its arrival clock (`measure/arrival.py`) and the stamps of its connection — and stamps each
time at the moment of its event into that state, never into the connection's: a kept-alive connection goes back
to the pool the moment the reply ends, and another request may be written on it before this one is finished.

`Exchange._open` is the one place a streamed request is written: `http://` on a connection of the lean client
(`measure/wire.py`: kept alive under load, one per request for the sequential probe, so its ttft includes
connection set-up), any other URL through httpx's asyncio client. One deadline covers the whole request (connect,
head, every byte of the stream); whatever goes wrong becomes a `ProbeFailure` with a verdict (`auth_failed`,
`unreachable`, `error`); a kept-alive connection the server closed before any answer is tried once more on a new
one. Also here: the small GETs of the identity check (`get_json`), which read a JSON document, not a stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from factreg import secrets
from factreg.measure import wire
from factreg.measure.arrival import ArrivalClock, Stamps
from factreg.measure.chunks import ChunkReader, Reading, _ThinkSplitter
from factreg.measure.http import USER_AGENT, encoding_message, redirect_message, unasked_encoding, where
from factreg.measure.trace import MeasurementError, ProbeFailure, RequestTrace
from factreg.verdicts import Verdict

if TYPE_CHECKING:
    import httpx

# This module's own names, and those its callers and tests have known it by since stream.py was split (a request's
# trace, its reading and its arrival clock, each defined in its own module now).
__all__ = [
    "DEFAULT_MAX_BYTES", "ArrivalClock", "ChunkReader", "Exchange", "MeasurementError", "OneAtATime", "ProbeFailure",
    "Reading", "RequestTrace", "_ThinkSplitter", "astream_request", "error_detail", "get_json", "request_body",
    "status_failure", "stream_headers", "stream_request", "streams_of", "transport_failure",
]

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
WRITTEN = "http11.send_request_body.complete"
CONNECTED = "connection.connect_tcp.complete"
ERROR_BODY = 4096  # bytes of an error reply read for its message


def request_body(body: Mapping[str, Any], no_cache: bool, max_tokens: int | None = None) -> dict[str, Any]:
    """The body as sent: streaming on, usage requested, prompt cache off when asked."""
    out = copy.deepcopy(dict(body))
    out["stream"] = True
    opts = out.get("stream_options")
    if not isinstance(opts, dict):
        opts = {}
    opts.setdefault("include_usage", True)
    out["stream_options"] = opts
    if no_cache:
        out["cache_prompt"] = False
    if max_tokens is not None:
        out["max_tokens"] = max_tokens
        if "max_completion_tokens" in out:
            out["max_completion_tokens"] = max_tokens
    return out


def stream_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers of a streamed POST: the caller's, then JSON in, an event stream out, no compression."""
    return {
        **headers,
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Accept-Encoding": "identity",
    }


class Exchange:
    """One streamed POST and its reply: what to send, the per-request state its events are stamped into, and how
    far it got. `run` sends it and reads the reply to its end; `finish` checks and returns the trace."""

    def __init__(
        self, url: str, headers: Mapping[str, str], content: bytes, timeout: float, kind: str, max_bytes: int
    ):
        self.url, self.headers, self.content, self.timeout = url, headers, content, timeout
        self.lean = wire.handles(url)
        self.trace = trace = RequestTrace(kind=kind)
        self.t0 = time.perf_counter_ns()
        trace.started = self.t0 / 1e9
        self.reading = Reading(trace, url, max_bytes)
        self.arrival = ArrivalClock(self.t0)
        self.events: dict[str, int] = {}  # perf_counter_ns of CONNECTED and WRITTEN, taken as they happen
        self.started = False  # the reply's head arrived
        self.reused = False  # sent on a kept-alive connection
        self.stamps: Stamps | None = None  # this exchange's stamps on a lean connection (never the connection's)
        self.location: str | None = None
        self.error_body: list[bytes] = []

    async def run(self, client: wire.Pool) -> None:
        """Send the request and read its reply to the end (the caller puts the deadline on it)."""
        reply = await self._open(client)
        if isinstance(reply, wire.Connection):
            await self._read_lean(client, reply)
        else:
            await self._read_httpx(reply)

    async def _open(self, client: wire.Pool) -> wire.Connection | httpx.Response:
        """Write the request: the one place factreg sends a streamed request. `http://` on an idle kept-alive
        connection of the lean client or a new one (the time before the last write into this exchange's stamps);
        any other URL through httpx (its connection events into this exchange's `events`)."""
        headers = stream_headers(self.headers)
        if not self.lean:
            import httpx

            http = client.fallback()
            request = http.build_request(
                "POST", self.url, content=self.content, headers=headers, timeout=httpx.Timeout(self.timeout),
                extensions={"trace": self._on_httpx_event},
            )
            resp: httpx.Response = await http.send(request, stream=True)
            return resp
        key = wire.key_of(self.url)
        conn = client.take(key)
        if conn is None:
            conn = await client.connect(key)
            self.events[CONNECTED] = time.perf_counter_ns()
        else:
            self.reused = True
        self.stamps = stamps = conn.new_stamps()  # this exchange's times; the connection keeps none
        self.arrival.hold(stamps)
        try:
            await conn.write(wire.request_head(self.url, headers, len(self.content), USER_AGENT) + self.content, stamps)
        except BaseException as exc:
            self.arrival.release()
            conn.close()
            if isinstance(exc, OSError):
                raise wire.ClosedBeforeReply(f"the connection failed as the request went out ({exc})") from None
            raise
        self.events[WRITTEN] = time.perf_counter_ns()
        return conn

    async def _on_httpx_event(self, name: str, info: dict[str, Any]) -> None:
        if name in (WRITTEN, CONNECTED):
            self.events.setdefault(name, time.perf_counter_ns())

    # -- the reply, whichever client carried it

    def _head(self, status: int, headers: Mapping[str, str]) -> None:
        """The reply's head arrived: its time, its status; a redirect fails at once, an error after its body."""
        trace = self.trace
        trace.first_byte = self.arrival.now(count=False)
        self.started = True
        trace.status = status
        self.location = headers.get("location")
        if status < 300:
            self.reading.check_headers(headers.get("content-type", ""), headers.get("content-encoding"))
        elif status < 400:
            raise self._failure()

    def _body(self, parts: list[bytes]) -> None:
        """Blocks of the body that came in one read: the stream's, all at that read's arrival time."""
        if (self.trace.status or 0) >= 300:
            self.error_body.extend(parts)
            if sum(map(len, self.error_body)) >= ERROR_BODY:
                raise self._failure()
            return
        if parts:
            at = self.arrival.now()
            for part in parts:
                self.reading.feed(part, at)

    def _end(self) -> None:
        if (self.trace.status or 0) >= 300:
            raise self._failure()  # the error's body ended
        self.reading.close(self.arrival.end())

    def _failure(self) -> ProbeFailure:
        """The failure an HTTP status of 300 or more means, with the start of its body."""
        text = b"".join(self.error_body)
        failure = status_failure(self.trace.status or 0, self.location, self.url, lambda: error_detail(text))
        assert failure is not None
        return failure

    async def _read_lean(self, client: wire.Pool, conn: wire.Connection) -> None:
        parser = wire.ReplyParser()
        keep = False
        stamps = self.stamps
        assert stamps is not None

        def on_data(data: bytes) -> bool:
            if data:
                parts = parser.feed(data)
            else:
                if self.started and (self.trace.status or 0) >= 300:
                    raise self._failure()  # the error's body ended with the connection
                parser.eof()
                parts = []
            head = parser.head
            if head is None:
                return False
            if not self.started:
                self._head(head.status, head.headers)
            self._body(parts)
            if parser.done:
                self._end()
                return True
            return False

        try:
            try:
                await conn.receive(on_data, stamps)
            except OSError as exc:
                if not parser.received:
                    raise wire.ClosedBeforeReply(f"the connection was reset before any answer ({exc})") from None
                raise wire.ProtocolError(f"the connection failed mid-reply ({exc})") from None
            keep = parser.reusable
        finally:
            # Copy this request's times before another request can take the connection from the pool and write on it.
            self.arrival.release()
            if keep:
                client.give(conn)
            else:
                conn.close()

    async def _read_httpx(self, resp: httpx.Response) -> None:
        try:
            self._head(resp.status_code, resp.headers)
            async for chunk in resp.aiter_raw():
                self._body([chunk])
            self._end()
        finally:
            self.arrival.release()
            await resp.aclose()  # the connection goes back to httpx's pool (or is closed)

    # -- the outcome

    def stale(self, exc: Exception) -> bool:
        """Whether `exc` is a kept-alive connection the server closed before any answer (worth one more try)."""
        if self.started or CONNECTED in self.events:
            return False
        if self.lean:
            return isinstance(exc, wire.ClosedBeforeReply) and self.reused
        import httpx

        return isinstance(exc, httpx.RemoteProtocolError)

    def finish(self, scheduled: float | None) -> RequestTrace:
        """The trace, its connection events and clock start in place, checked (`Reading.finish`)."""
        trace = self.trace
        for name, key in (("connected", CONNECTED), ("written", WRITTEN)):
            if key in self.events:
                setattr(trace, name, (self.events[key] - self.t0) / 1e9)
        self.arrival.finish(trace)
        if scheduled is not None:
            sent_at = self.t0 / 1e9 + (trace.written if trace.written is not None else 0.0)
            trace.queued = sent_at - scheduled  # below zero is impossible: `Reading.finish` refuses it
        return self.reading.finish()


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
    """POST `body`, read the SSE reply to its end within `timeout` seconds, return the raw event times; failures
    raise ProbeFailure (a MeasurementError when the times themselves are impossible).

    `scheduled` (monotonic seconds) is when the request was meant to go; `queued` is the time from then until
    its body was written. A kept-alive connection that the server closed as the request went out (no byte of an
    answer; a server may close an idle connection at any time, RFC 9112 §9.3.1, and llama-server does) is not the
    server failing the request: it is sent once more, on a new connection, with a new trace.
    """
    ex = Exchange(url, headers, json.dumps(body, ensure_ascii=False).encode("utf-8"), timeout, kind, max_bytes)
    try:
        # One deadline for the whole request: connect, head, every byte of the stream.
        await asyncio.wait_for(ex.run(client), timeout)
    except ProbeFailure:
        raise
    except asyncio.TimeoutError as exc:
        raise transport_failure(exc, url, timeout, ex.started, True, ex.trace.n_chunks) from None
    except Exception as exc:  # noqa: BLE001 - transport errors and SSEError: one line, never a traceback
        if retry_stale and ex.stale(exc):  # a pooled connection closed before any answer
            return await astream_request(client, url, headers, body, timeout, kind, max_bytes, scheduled, False)
        if _transport_error(exc):
            raise transport_failure(exc, url, timeout, ex.started, False, ex.trace.n_chunks) from None
        raise ProbeFailure(Verdict.ERROR, str(exc) or type(exc).__name__) from None
    return ex.finish(scheduled)


class OneAtATime:
    """Streamed requests one after another from synchronous code: one event loop and one pool for all of them.
    `keepalive=False` (the sequential probe) opens a connection per request, as curl does, so that time to first
    byte includes connection set-up."""

    def __init__(self, timeout: float, keepalive: bool = False):
        from factreg.measure.http import make_async_client

        self.loop = asyncio.new_event_loop()
        self.pool = make_async_client(timeout, keepalive=keepalive)

    def request(
        self, url: str, headers: Mapping[str, str], body: Any, timeout: float, kind: str = "measured",
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> RequestTrace:
        return self.loop.run_until_complete(astream_request(self.pool, url, headers, body, timeout, kind, max_bytes))

    def close(self) -> None:
        if not self.loop.is_closed():
            self.loop.run_until_complete(self.pool.aclose())
            self.loop.close()

    def __enter__(self) -> OneAtATime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stream_request(
    client: httpx.Client,
    url: str,
    headers: Mapping[str, str],
    body: Any,
    timeout: float,
    kind: str = "measured",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> RequestTrace:
    """`astream_request` from synchronous code, on the streams of `client` (made by `http.make_client`: its
    keep-alive rule, one loop and pool for all its requests, made on first use and closed with the client)."""
    return streams_of(client).request(url, headers, body, timeout, kind, max_bytes)


def streams_of(client: httpx.Client) -> OneAtATime:
    """The streamed requests of a client of `http.make_client`, made on first use."""
    streams = getattr(client, "streams", None)
    if streams is None:
        rule = getattr(client, "stream_rule", None)
        if rule is None:
            raise TypeError("streamed requests go through a client of factreg.measure.http.make_client")
        streams = OneAtATime(*rule)
        client.streams = streams  # type: ignore[attr-defined]  # a client of make_client carries its streams
    assert isinstance(streams, OneAtATime)
    return streams


def _transport_error(exc: Exception) -> bool:
    if isinstance(exc, wire.WireError):
        return True
    import httpx

    return isinstance(exc, (httpx.TimeoutException, httpx.TransportError))


def status_failure(status: int, location: str | None, url: str, detail: Callable[[], str]) -> ProbeFailure | None:
    """The failure an HTTP status means (None for 2xx); `detail` reads the error body only when needed."""
    if 300 <= status < 400:
        return ProbeFailure(Verdict.ERROR, redirect_message(status, location, url))
    if status in (401, 403):
        text = detail()
        return ProbeFailure(Verdict.AUTH_FAILED, f"HTTP {status} from {where(url)}" + (f": {text}" if text else ""))
    if status >= 400:
        text = detail()
        return ProbeFailure(Verdict.ERROR, f"HTTP {status} from {where(url)}" + (f": {text}" if text else ""))
    return None


def transport_failure(
    exc: Exception, url: str, timeout: float, started: bool, deadline: bool, n_chunks: int
) -> ProbeFailure:
    """The failure a transport error (httpx's or the lean client's) means: unreachable before the reply began, an
    error after."""
    import httpx

    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, wire.ConnectFailed)):
        return ProbeFailure(Verdict.UNREACHABLE, f"cannot connect to {where(url)}: {_short(exc)}")
    if deadline or isinstance(exc, httpx.TimeoutException):
        if not started:
            return ProbeFailure(Verdict.UNREACHABLE, f"no answer from {where(url)} within {timeout:g} s")
        return ProbeFailure(
            Verdict.ERROR,
            f"the stream stalled: not finished within --timeout {timeout:g} s ({n_chunks} chunks received)",
        )
    if started:
        return ProbeFailure(Verdict.ERROR, f"the connection closed mid-stream after {n_chunks} chunks ({_short(exc)})")
    return ProbeFailure(Verdict.UNREACHABLE, f"cannot reach {where(url)}: {_short(exc)}")


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return secrets.redact(" ".join(text.split())[:160])


def error_detail(body: bytes, limit: int = ERROR_BODY) -> str:
    """One line of an error body: the OpenAI-shaped `error.message`, else the text."""
    text = body[:limit].decode("utf-8", "replace")
    try:
        obj = json.loads(text)
        err = obj.get("error") if isinstance(obj, dict) else None
        if isinstance(err, dict) and err.get("message"):
            text = str(err["message"])
        elif isinstance(err, str):
            text = err
    except ValueError:
        pass
    return " ".join(text.split())[:160]


# ---------------------------------------------------------------- the identity check's small GETs


def _error_text(resp: httpx.Response, limit: int = ERROR_BODY) -> str:
    """The server's error message from a small error body (OpenAI-shaped JSON or text); a compressed one is not
    read."""
    coding = unasked_encoding(resp.headers.get("content-encoding"))
    if coding is not None:
        return f"(a {coding}-encoded body, not read)"
    body = b""
    try:
        for part in resp.iter_raw():
            body += part
            if len(body) >= limit:
                break
    except Exception:  # noqa: BLE001 - the status line already says what matters
        return ""
    return error_detail(body, limit)


class _Watchdog:
    """Ends a GET at its overall deadline by shutting its socket down (a per-read time-out is not enough: a server
    that trickles bytes would otherwise keep the identity check waiting)."""

    def __init__(self, seconds: float):
        self.fired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event == CONNECTED:
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            with self._lock:
                self._sock = sock
                if self.fired:
                    self._shutdown()

    def _shutdown(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            self._shutdown()

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def get_json(client: httpx.Client, url: str, headers: Mapping[str, str], timeout: float) -> Any | None:
    """GET a small JSON document for the identity check; None when it is absent (404 and the like)."""
    import httpx

    with _Watchdog(timeout) as dog:
        try:
            with client.stream(
                "GET", url, headers=headers, timeout=httpx.Timeout(timeout), extensions={"trace": dog.trace}
            ) as resp:
                if 300 <= resp.status_code < 400 or resp.status_code in (401, 403):
                    failure = status_failure(
                        resp.status_code, resp.headers.get("location"), url, lambda: _error_text(resp)
                    )
                    assert failure is not None
                    raise failure
                if resp.status_code != 200:
                    return None
                coding = unasked_encoding(resp.headers.get("content-encoding"))
                if coding is not None:
                    raise ProbeFailure(Verdict.ERROR, encoding_message(url, coding))
                body = b""
                for part in resp.iter_raw():
                    body += part
                    if len(body) > 4 * 1024 * 1024:
                        return None
        except ProbeFailure:
            raise
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ProbeFailure(Verdict.UNREACHABLE, f"cannot connect to {where(url)}: {_short(exc)}") from None
        except (httpx.TimeoutException, httpx.TransportError):
            if dog.fired:
                raise ProbeFailure(Verdict.UNREACHABLE, f"no answer from {where(url)} within {timeout:g} s") from None
            return None
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
