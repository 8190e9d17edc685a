"""One request of the probe: a streamed POST read event by event, and the small GETs of the identity check.

A streamed request keeps raw event times (`RequestTrace`) on a monotonic clock, splits reasoning from answer
(`reasoning_content`, `<think>` tags) chunk by chunk, and ends within one overall deadline (a watchdog shuts the
socket). Whatever goes wrong becomes a `ProbeFailure` with a verdict (`auth_failed`, `unreachable`, `error`).
"""

from __future__ import annotations

import contextlib
import copy
import json
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from factreg import secrets
from factreg.measure.http import redirect_message
from factreg.measure.sse import SSEError, SSEParser
from factreg.registry.verdicts import Verdict

if TYPE_CHECKING:
    import httpx

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


class ProbeFailure(Exception):
    """A measurement that could not be made: carries its verdict and a one-line message."""

    def __init__(self, verdict: str, message: str):
        super().__init__(message)
        self.verdict = verdict
        self.message = secrets.redact(message)


@dataclass
class RequestTrace:
    """Raw event times of one streamed request, in seconds after it was sent (monotonic clock)."""

    kind: str
    status: int | None = None
    connected: float | None = None  # TCP connection set up (each request opens its own, like curl)
    written: float | None = None  # request body written: "sent", where the metrics' clocks start
    first_byte: float | None = None
    first_chunk: float | None = None
    first_reasoning: float | None = None
    first_answer: float | None = None
    last_answer: float | None = None
    last_token: float | None = None
    done: float | None = None
    end: float | None = None
    n_reasoning: int = 0
    n_answer: int = 0
    n_chunks: int = 0
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    model: str | None = None
    system_fingerprint: str | None = None
    finish_reason: str | None = None
    done_seen: bool = False
    garbage: int = 0
    bytes: int = 0
    content_type: str | None = None

    @property
    def thinking(self) -> bool:
        return self.n_reasoning > 0

    def tokens(self) -> int:
        """Generated tokens: the server's usage count when it sent one, else the token chunks seen."""
        if self.usage and isinstance(self.usage.get("completion_tokens"), int):
            return int(self.usage["completion_tokens"])
        return self.n_reasoning + self.n_answer

    def metrics(self) -> dict[str, float]:
        """The metrics this request's events define (a metric without its events is absent).

        Latencies count from `written`, the moment the request was on the wire (the client library's own
        connection bookkeeping is not the server's latency); raw events keep both.
        """
        sent = self.written if self.written is not None else 0.0
        out: dict[str, float] = {}
        if self.first_byte is not None:
            out["ttfb"] = self.first_byte - sent
        if self.first_answer is not None:
            out["ttft"] = self.first_answer - sent
        firsts = [t for t in (self.first_reasoning, self.first_answer) if t is not None]
        if firsts:
            out["ttft_any"] = min(firsts) - sent
        if self.first_reasoning is not None and self.first_answer is not None:
            out["reasoning_time"] = self.first_answer - self.first_reasoning
        if self.last_answer is not None:
            out["e2e"] = self.last_answer - sent
        n = self.tokens()
        if firsts and self.last_token is not None and n >= 2 and self.last_token > min(firsts):
            out["decode_rate"] = (n - 1) / (self.last_token - min(firsts))
        return out

    def as_json(self) -> dict[str, Any]:
        events = {
            k: rounded(getattr(self, k))
            for k in (
                "connected",
                "written",
                "first_byte",
                "first_chunk",
                "first_reasoning",
                "first_answer",
                "last_answer",
                "last_token",
                "done",
                "end",
            )
        }
        return {
            "kind": self.kind,
            "status": self.status,
            "events_s": {"start": 0.0, **events},
            "tokens": {"reasoning_chunks": self.n_reasoning, "answer_chunks": self.n_answer, "usage": self.usage},
            "chunks": self.n_chunks,
            "timings": self.timings,
            "model": self.model,
            "system_fingerprint": self.system_fingerprint,
            "finish_reason": self.finish_reason,
            "done_seen": self.done_seen,
            "garbage_lines": self.garbage,
            "bytes": self.bytes,
            "metrics": {k: rounded(v) for k, v in self.metrics().items()},
        }


def rounded(x: float | None) -> float | None:
    """Seconds as written to JSON: rounded to the microsecond."""
    return None if x is None else round(x, 6)


class _ThinkSplitter:
    """Splits `content` deltas into reasoning (inside `<think>…</think>`) and answer text, tags split anywhere."""

    def __init__(self) -> None:
        self.inside = False
        self.pending = ""

    def feed(self, text: str) -> tuple[str, str]:
        """(reasoning, answer) text of this delta; a partial tag at the end waits for the next delta."""
        buf = self.pending + text
        self.pending = ""
        reasoning: list[str] = []
        answer: list[str] = []
        while buf:
            tag = THINK_CLOSE if self.inside else THINK_OPEN
            at = buf.find(tag)
            if at >= 0:
                (reasoning if self.inside else answer).append(buf[:at])
                buf = buf[at + len(tag) :]
                self.inside = not self.inside
                continue
            keep = 0
            for k in range(min(len(tag) - 1, len(buf)), 0, -1):
                if tag.startswith(buf[-k:]):
                    keep = k
                    break
            (reasoning if self.inside else answer).append(buf[: len(buf) - keep])
            self.pending = buf[len(buf) - keep :]
            break
        return "".join(reasoning), "".join(answer)


def _handle(trace: RequestTrace, obj: dict[str, Any], t: float, think: _ThinkSplitter) -> None:
    if trace.first_chunk is None:
        trace.first_chunk = t
    trace.n_chunks += 1
    if isinstance(obj.get("error"), (dict, str)):
        err = obj["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        raise ProbeFailure(Verdict.ERROR, f"the server reported an error mid-stream: {str(msg)[:200]}")
    if isinstance(obj.get("model"), str):
        trace.model = obj["model"]
    if isinstance(obj.get("system_fingerprint"), str) and obj["system_fingerprint"]:
        trace.system_fingerprint = obj["system_fingerprint"]
    if isinstance(obj.get("usage"), dict):
        trace.usage = obj["usage"]
    if isinstance(obj.get("timings"), dict):
        trace.timings = obj["timings"]
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return
    choice = choices[0]
    if choice.get("finish_reason"):
        trace.finish_reason = str(choice["finish_reason"])
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return
    reasoning = ""
    for key in ("reasoning_content", "reasoning"):
        if isinstance(delta.get(key), str):
            reasoning += delta[key]
    answer = ""
    if isinstance(delta.get("content"), str):
        r, a = think.feed(delta["content"])
        reasoning += r
        answer += a
    if reasoning:
        trace.n_reasoning += 1
        trace.last_token = t
        if trace.first_reasoning is None:
            trace.first_reasoning = t
    if delta.get("tool_calls"):
        answer += "\0"  # a tool call is the reply: it counts as answer output
    if answer:
        trace.n_answer += 1
        trace.last_token = t
        trace.last_answer = t
        if trace.first_answer is None and answer.strip():
            trace.first_answer = t


def _error_text(resp: httpx.Response, limit: int = 4096) -> str:
    """The server's error message from a small error body (OpenAI-shaped JSON or text)."""
    body = b""
    try:
        for part in resp.iter_bytes():
            body += part
            if len(body) >= limit:
                break
    except Exception:  # noqa: BLE001 - the status line already says what matters
        return ""
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


class _Watchdog:
    """Ends a request at its overall deadline by shutting its socket down (a per-read time-out is not enough:
    a server that trickles bytes or stalls after the headers would otherwise keep the probe waiting)."""

    def __init__(self, seconds: float):
        self.fired = False
        self.events: dict[str, int] = {}
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event in ("connection.connect_tcp.complete", "http11.send_request_body.complete"):
            self.events.setdefault(event, time.perf_counter_ns())
        if event == "connection.connect_tcp.complete":
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


def _status_failure(status: int, resp: httpx.Response, url: str) -> ProbeFailure | None:
    if 300 <= status < 400:
        return ProbeFailure(Verdict.ERROR, redirect_message(status, resp.headers.get("location"), url))
    if status in (401, 403):
        detail = _error_text(resp)
        return ProbeFailure(Verdict.AUTH_FAILED, f"HTTP {status} from {_where(url)}" + (f": {detail}" if detail else ""))
    if status >= 400:
        detail = _error_text(resp)
        return ProbeFailure(Verdict.ERROR, f"HTTP {status} from {_where(url)}" + (f": {detail}" if detail else ""))
    return None


def _where(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}{parts.path}" if parts.port else f"{parts.hostname}{parts.path}"


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


def stream_request(
    client: httpx.Client,
    url: str,
    headers: Mapping[str, str],
    body: Any,
    timeout: float,
    kind: str = "measured",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> RequestTrace:
    """POST `body`, read the SSE reply to its end, return the raw event times; failures raise ProbeFailure.

    The whole request — connect, headers, every byte of the stream — ends within `timeout` seconds.
    """
    import httpx

    content = json.dumps(body, ensure_ascii=False).encode("utf-8")
    send_headers = {
        **headers,
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Accept-Encoding": "identity",
    }
    trace = RequestTrace(kind=kind)
    parser = SSEParser()
    think = _ThinkSplitter()
    ticks = time.perf_counter_ns
    started = False
    with _Watchdog(timeout) as dog:
        t0 = ticks()
        try:
            with client.stream(
                "POST",
                url,
                content=content,
                headers=send_headers,
                timeout=httpx.Timeout(timeout),
                extensions={"trace": dog.trace},
            ) as resp:
                trace.first_byte = (ticks() - t0) / 1e9
                started = True
                trace.status = resp.status_code
                failure = _status_failure(resp.status_code, resp, url)
                if failure is not None:
                    raise failure
                trace.content_type = resp.headers.get("content-type", "")
                if "json" in trace.content_type and "event-stream" not in trace.content_type:
                    raise ProbeFailure(
                        Verdict.ERROR,
                        f'{_where(url)} answered with JSON, not an event stream (does it support "stream": true?)',
                    )
                for chunk in resp.iter_bytes():
                    t = (ticks() - t0) / 1e9
                    trace.bytes += len(chunk)
                    if trace.bytes > max_bytes:
                        raise ProbeFailure(
                            Verdict.ERROR, f"the reply exceeded {max_bytes // (1024 * 1024)} MB; stopped reading"
                        )
                    for ev in parser.feed(chunk):
                        if ev.done:
                            trace.done_seen = True
                            trace.done = t
                        else:
                            _handle(trace, ev.data, t, think)
                    if dog.fired:
                        break
                t = (ticks() - t0) / 1e9
                for ev in parser.close():
                    if ev.done:
                        trace.done_seen, trace.done = True, t
                    else:
                        _handle(trace, ev.data, t, think)
                trace.end = t
        except ProbeFailure:
            raise
        except SSEError as exc:
            raise ProbeFailure(Verdict.ERROR, str(exc)) from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ProbeFailure(Verdict.UNREACHABLE, f"cannot connect to {_where(url)}: {_short(exc)}") from None
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            if dog.fired or isinstance(exc, httpx.TimeoutException):
                if not started:
                    raise ProbeFailure(Verdict.UNREACHABLE, f"no answer from {_where(url)} within {timeout:g} s") from None
                raise ProbeFailure(
                    Verdict.ERROR,
                    f"the stream stalled: not finished within --timeout {timeout:g} s "
                    f"({trace.n_chunks} chunks received)",
                ) from None
            if started:
                raise ProbeFailure(
                    Verdict.ERROR, f"the connection closed mid-stream after {trace.n_chunks} chunks ({_short(exc)})"
                ) from None
            raise ProbeFailure(Verdict.UNREACHABLE, f"cannot reach {_where(url)}: {_short(exc)}") from None
    trace.garbage = parser.garbage
    for name, key in (
        ("connected", "connection.connect_tcp.complete"),
        ("written", "http11.send_request_body.complete"),
    ):
        if key in dog.events:
            setattr(trace, name, (dog.events[key] - t0) / 1e9)
    if dog.fired:
        raise ProbeFailure(
            Verdict.ERROR, f"the stream stalled: not finished within --timeout {timeout:g} s ({trace.n_chunks} chunks received)"
        )
    if not trace.done_seen:
        if trace.finish_reason:
            raise ProbeFailure(Verdict.ERROR, f"the stream ended without data: [DONE] after {trace.n_chunks} chunks")
        raise ProbeFailure(
            Verdict.ERROR, f"the stream ended early, without finish_reason or [DONE], after {trace.n_chunks} chunks"
        )
    if trace.n_chunks == 0:
        raise ProbeFailure(Verdict.ERROR, "the stream held no JSON chunks")
    return trace


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return secrets.redact(" ".join(text.split())[:160])


def get_json(client: httpx.Client, url: str, headers: Mapping[str, str], timeout: float) -> Any | None:
    """GET a small JSON document for the identity check; None when it is absent (404 and the like)."""
    import httpx

    with _Watchdog(timeout) as dog:
        try:
            with client.stream(
                "GET", url, headers=headers, timeout=httpx.Timeout(timeout), extensions={"trace": dog.trace}
            ) as resp:
                if 300 <= resp.status_code < 400 or resp.status_code in (401, 403):
                    failure = _status_failure(resp.status_code, resp, url)
                    assert failure is not None
                    raise failure
                if resp.status_code != 200:
                    return None
                body = b""
                for part in resp.iter_bytes():
                    body += part
                    if len(body) > 4 * 1024 * 1024:
                        return None
        except ProbeFailure:
            raise
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ProbeFailure(Verdict.UNREACHABLE, f"cannot connect to {_where(url)}: {_short(exc)}") from None
        except (httpx.TimeoutException, httpx.TransportError):
            if dog.fired:
                raise ProbeFailure(Verdict.UNREACHABLE, f"no answer from {_where(url)} within {timeout:g} s") from None
            return None
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
