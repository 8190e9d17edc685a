"""The endpoint probe: time OpenAI-compatible streaming replies the way a user hears them.

Protocol (DESIGN.md, "Measurement protocol"): an identity check first (`/v1/models`, `/props`, one 1-token
authenticated request), then settle (warm-up requests discarded, server uptime), then `n` measured requests
with the same body. Each request keeps raw event times on a monotonic clock; every metric is derived from
them. A request that fails gives a verdict (`auth_failed`, `unreachable`, `error`), never a value.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from factreg import clock, secrets
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import UsageError
from factreg.measure.http import USER_AGENT, make_client, redirect_message
from factreg.measure.sse import SSEError, SSEParser
from factreg.registry import conditions as cond
from factreg.registry import stats
from factreg.registry.verdicts import FAILURES, Verdict

if TYPE_CHECKING:
    import httpx

    from factreg.measure.measurement import Measurement
    from factreg.registry.facts import NewFact

OK = "ok"
METRICS = ("ttft", "ttft_any", "ttfb", "reasoning_time", "e2e", "decode_rate")
# Observable before any timing: a difference here stops the probe early.
EARLY_KEYS = ("endpoint", "model", "build", "body_sha256", "machine")
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "ip6-localhost")
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


class ProbeFailure(Exception):
    """A measurement that could not be made: carries its verdict and a one-line message."""

    def __init__(self, verdict: str, message: str):
        super().__init__(message)
        self.verdict = verdict
        self.message = secrets.redact(message)


# ---------------------------------------------------------------- one request


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
            k: _r(getattr(self, k))
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
            "metrics": {k: _r(v) for k, v in self.metrics().items()},
        }


def _r(x: float | None) -> float | None:
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


# ---------------------------------------------------------------- uptime of a local server


def listening_pid(port: int, proc: str = "/proc") -> int | None:
    """The process listening on TCP `port` in this network namespace (from /proc/net/tcp and /proc/*/fd)."""
    inodes: set[str] = set()
    for table in ("net/tcp", "net/tcp6"):
        try:
            with open(f"{proc}/{table}", encoding="ascii") as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{parts[9]}]")
    if not inodes:
        return None
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"{proc}/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{proc}/{pid}/fd/{fd}") in inodes:
                    return int(pid)
            except OSError:
                continue
    return None


def process_started_at(pid: int, proc: str = "/proc") -> float | None:
    """When process `pid` started (Unix time): /proc/PID/stat starttime (clock ticks after boot) + btime."""
    try:
        with open(f"{proc}/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            stat = fh.read()
        with open(f"{proc}/stat", encoding="ascii") as fh:
            btime = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
        fields = stat[stat.rindex(")") + 2 :].split()
        ticks = int(fields[19])  # field 22 of stat(5); fields after the command start at field 3
        return btime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, StopIteration, IndexError):
        return None


def is_local(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.startswith("127.")


def local_uptime(url: str) -> tuple[float | None, int | None]:
    """(uptime in seconds, pid) of the local process serving `url`, when /proc tells."""
    if not is_local(url) or not os.path.isdir("/proc/net"):
        return None, None
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    pid = listening_pid(port)
    if pid is None:
        return None, None
    started = process_started_at(pid)
    if started is None:
        return None, pid
    return max(clock.wall() - started, 0.0), pid


# ---------------------------------------------------------------- the probe


@dataclass
class ProbeSpec:
    """What to probe and how; `headers` are templates (`${ENV}` names), expanded only when sending."""

    url: str
    body: dict[str, Any]
    n: int = 5
    warmup: int = 2
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    min_uptime: float = DEFAULT_MIN_UPTIME_S
    wait_for_uptime: bool = False
    server_started_at: datetime | None = None
    spacing: float = 0.0
    no_cache: bool = False
    expect: dict[str, str] = field(default_factory=dict)
    max_bytes: int = DEFAULT_MAX_BYTES

    def check(self) -> None:
        """Refuse arguments that cannot work (exit 2)."""
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"URL must be http(s)://host[:port]/…, got {self.url!r}")
        if parts.username or parts.password:
            raise UsageError("put credentials in --header or --api-key-env, not in the URL")
        if not isinstance(self.body, dict):
            raise UsageError("--body must hold a JSON object (a chat completions request)")
        if self.n < 1:
            raise UsageError("--n must be at least 1")
        if self.warmup < 0:
            raise UsageError("--warmup cannot be negative")
        if not self.timeout or self.timeout <= 0:
            raise UsageError("--timeout must be positive")
        if self.spacing < 0 or self.min_uptime < 0:
            raise UsageError("--spacing and --min-uptime cannot be negative")

    def method(self) -> dict[str, Any]:
        """The recipe stored with recorded facts: data, header templates only."""
        return {
            "kind": "probe",
            "url": self.url,
            "body": self.body,
            "n": self.n,
            "warmup": self.warmup,
            "headers": dict(self.headers),
            "timeout": self.timeout,
            "no_cache": self.no_cache,
            "min_uptime": self.min_uptime,
            "spacing": self.spacing,
        }


@dataclass
class ProbeResult:
    """Everything a probe saw: verdict, per-request raw events, metric samples, observed conditions."""

    verdict: str
    message: str | None = None
    requests: list[RequestTrace] = field(default_factory=list)
    samples: dict[str, list[float]] = field(default_factory=dict)
    observed: dict[str, str] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    diff: dict[str, list] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.verdict in FAILURES

    def summary(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name in METRICS:
            xs = self.samples.get(name)
            if not xs:
                continue
            s = stats.summarize(xs)
            assert s is not None
            out[name] = {
                "n": s.n,
                "median": _r(s.median),
                "mean": _r(s.mean),
                "stdev": _r(s.stdev),
                "min": _r(s.min),
                "max": _r(s.max),
                "samples": [_r(x) for x in xs],
            }
        return out

    def as_json(self) -> dict[str, Any]:
        data = {
            "verdict": self.verdict,
            "message": self.message,
            "metrics": self.summary(),
            "observed": dict(self.observed),
            "info": dict(self.info),
            "flags": list(self.flags),
            "diff": self.diff,
            "warnings": self.warnings,
            "requests": [r.as_json() for r in self.requests],
        }
        return dict(secrets.redact_data(data))


def endpoints(url: str) -> tuple[str, str]:
    """(/v1/models URL, /props URL) for a chat completions URL, keeping any path prefix before /v1."""
    parts = urlsplit(url)
    path = parts.path
    at = path.find("/v1/")
    prefix = path[:at] if at >= 0 else path.rsplit("/", 2)[0] if path.count("/") >= 2 else ""
    models = urlunsplit((parts.scheme, parts.netloc, prefix + "/v1/models", "", ""))
    props = urlunsplit((parts.scheme, parts.netloc, prefix + "/props", "", ""))
    return models, props


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


def _norm_expect(expect: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for k, v in expect.items():
        v = str(v)
        if k in ("thinking",):
            v = {"true": "on", "1": "on", "yes": "on", "false": "off", "0": "off", "no": "off"}.get(v.lower(), v)
        elif k == "warm":
            v = v.lower()
        out[k] = v
    return out


def _compare(
    expect: Mapping[str, str], observed: Mapping[str, str], keys: tuple[str, ...] | None = None
) -> dict[str, list]:
    names = [k for k in expect if (keys is None or k in keys) and k in observed]
    return cond.diff(dict(expect), dict(observed), names)


def _diff_line(diff: Mapping[str, list]) -> str:
    return "; ".join(f"{k}: expected {old!r}, observed {new!r}" for k, (old, new) in diff.items())


def probe(
    spec: ProbeSpec,
    *,
    hostname: str,
    client: httpx.Client | None = None,
    progress: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> ProbeResult:
    """Run the whole protocol against `spec.url`; failures come back as verdicts, not exceptions.

    Raises UsageError only for bad arguments (an unset `${ENV}` variable, a bad URL).
    """
    spec.check()
    headers = secrets.expand_headers(spec.headers, env)
    say = progress or (lambda _m: None)
    own = client is None
    http = client or make_client(spec.timeout, keepalive=False)
    result = ProbeResult(verdict=OK)
    result.observed["endpoint"] = spec.url
    result.observed["body_sha256"] = cond.body_sha256(spec.body)
    if is_local(spec.url):
        result.observed["machine"] = hostname
    result.info.update(
        {
            "n_warmup": str(spec.warmup),
            "user_agent": USER_AGENT,
            "no_cache": cond.as_text(spec.no_cache),
            "timeout_s": f"{spec.timeout:g}",
        }
    )
    expect = _norm_expect(spec.expect)
    try:
        _identity(http, spec, headers, result)
        result.diff = _compare(expect, result.observed, EARLY_KEYS)
        if result.diff:
            result.verdict = Verdict.CONDITIONS_CHANGED
            result.message = f"conditions changed before timing: {_diff_line(result.diff)}"
            return result
        uptime = _settle_uptime(spec, result, say)
        # Warm-up requests first (discarded later by their phase), then the measured ones, spaced if asked.
        for phase, count, label in (("warmup", spec.warmup, "warm-up"), ("measured", spec.n, "request")):
            for i in range(count):
                if phase == "measured" and i and spec.spacing:
                    time.sleep(spec.spacing)
                say(f"{label} {i + 1}/{count}")
                body = request_body(spec.body, spec.no_cache)
                result.requests.append(
                    stream_request(http, spec.url, headers, body, spec.timeout, phase, spec.max_bytes)
                )
    except ProbeFailure as exc:
        result.verdict, result.message = exc.verdict, exc.message
        result.samples = {}
        return result
    finally:
        if own:
            http.close()
    _derive(spec, result, uptime)
    result.diff = _compare(expect, result.observed)
    if result.diff:
        result.verdict = Verdict.CONDITIONS_CHANGED
        result.message = f"conditions changed: {_diff_line(result.diff)}"
    return result


def _identity(http: httpx.Client, spec: ProbeSpec, headers: Mapping[str, str], result: ProbeResult) -> None:
    """`/v1/models`, `/props` and one 1-token authenticated request, all within one --timeout."""
    deadline = time.monotonic() + spec.timeout
    models_url, props_url = endpoints(spec.url)

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ProbeFailure(Verdict.UNREACHABLE, f"identity check not finished within {spec.timeout:g} s")
        return remaining

    ids: list[str] = []
    models = get_json(http, models_url, headers, left())
    if isinstance(models, dict) and isinstance(models.get("data"), list):
        ids = [str(m["id"]) for m in models["data"] if isinstance(m, dict) and m.get("id")]
    props = get_json(http, props_url, headers, left())
    build_info = props.get("build_info") if isinstance(props, dict) else None
    trace = stream_request(
        http,
        spec.url,
        headers,
        request_body(spec.body, spec.no_cache, max_tokens=1),
        left(),
        "identity",
        spec.max_bytes,
    )
    result.requests.append(trace)
    model = trace.model or (ids[0] if len(ids) == 1 else None)
    if model:
        result.observed["model"] = model
    build = trace.system_fingerprint or (str(build_info) if build_info else None)
    if build:
        result.observed["build"] = build
    if ids:
        result.info["served_models"] = ",".join(ids[:10])
    if isinstance(props, dict) and props.get("model_path"):
        result.info["model_path"] = str(props["model_path"])


def _settle_uptime(spec: ProbeSpec, result: ProbeResult, say: Callable[[str], None]) -> float | None:
    uptime: float | None = None
    if spec.server_started_at is not None:
        started = spec.server_started_at
        if started.tzinfo is None:
            started = started.replace(tzinfo=clock.UTC)
        uptime = clock.wall() - started.timestamp()
        result.info["uptime_source"] = "--server-started-at"
    else:
        uptime, pid = local_uptime(spec.url)
        if uptime is not None:
            result.info["uptime_source"] = f"/proc (pid {pid})"
    if spec.wait_for_uptime:
        if uptime is None:
            raise UsageError("--wait-for-uptime needs a known uptime: a local server, or --server-started-at")
        if uptime < spec.min_uptime:
            wait = spec.min_uptime - uptime
            say(f"server up {uptime:.0f} s; waiting {wait:.0f} s until it has been up {spec.min_uptime:g} s")
            time.sleep(wait)
            uptime += wait
    return uptime


def _derive(spec: ProbeSpec, result: ProbeResult, uptime: float | None) -> None:
    measured = [r for r in result.requests if r.kind == "measured"]
    samples: dict[str, list[float]] = {}
    for r in measured:
        for name, value in r.metrics().items():
            samples.setdefault(name, []).append(value)
    result.samples = {k: samples[k] for k in METRICS if k in samples}
    timed = [r for r in result.requests if r.kind != "identity"]
    thinking = any(r.thinking for r in timed)
    result.observed["thinking"] = "on" if thinking else "off"
    cold = uptime is not None and uptime < spec.min_uptime
    result.observed["warm"] = "false" if cold or spec.warmup == 0 else "true"
    fps = {r.system_fingerprint for r in result.requests if r.system_fingerprint}
    models = {r.model for r in result.requests if r.model}
    if len(fps) > 1 or len(models) > 1:
        result.warnings.append(f"the reply changed during the probe: models {sorted(models)}, builds {sorted(fps)}")
    if uptime is not None:
        result.info["uptime_s"] = f"{uptime:.0f}"
    if cold:
        result.flags.append("cold")
    if spec.warmup == 0:
        result.flags.append("no_warmup")
    if thinking:
        result.flags.append("thinking_on")
    cache = [int(r.timings.get("cache_n") or 0) for r in measured if r.timings]
    if any(c > 0 for c in cache):
        result.flags.append("cache_hit")
        result.info["cache_n"] = ",".join(str(c) for c in cache)
    garbage = sum(r.garbage for r in result.requests)
    if garbage:
        result.flags.append("garbage_lines")
        result.warnings.append(f"{garbage} lines of the stream were not SSE data and were skipped")
    for name in ("ttft", "e2e"):
        missing = len(measured) - len(result.samples.get(name, []))
        if missing:
            result.warnings.append(f"{missing} of {len(measured)} replies had no answer token: no {name} for them")


# ---------------------------------------------------------------- recording and verifying


def new_facts(result: ProbeResult, prefix: str, method: Mapping[str, Any]) -> list[NewFact]:
    """The facts `--record PREFIX` writes: one per metric with samples (never for a failed probe)."""
    from factreg.registry.facts import NewFact
    from factreg.registry.ids import check_id

    if result.verdict != OK:
        raise UsageError(f"nothing recorded: the probe's verdict is {result.verdict}")
    prefix = check_id(prefix.rstrip("/"))
    identity = {k: v for k, v in result.observed.items()}
    raw = json.dumps(secrets.redact_data([r.as_json() for r in result.requests]), ensure_ascii=False)
    out = []
    for name, xs in result.samples.items():
        if name == "reasoning_time" and result.observed.get("thinking") != "on":
            continue
        out.append(
            NewFact(
                id=f"{prefix}/{name}",
                metric=name,
                samples=list(xs),
                identity=identity,
                info=dict(result.info),
                subject=prefix,
                method={**method, "select": {"metric": name}},
                raw=raw,
                extra_flags=[f for f in result.flags if f in ("cache_hit", "garbage_lines", "no_warmup")],
            )
        )
    return out


def spec_from_method(method: Mapping[str, Any]) -> ProbeSpec:
    """A stored probe method → ProbeSpec (the stored method is data: only known keys are read)."""
    try:
        return ProbeSpec(
            url=str(method["url"]),
            body=dict(method["body"]),
            n=int(method.get("n", 5)),
            warmup=int(method.get("warmup", 2)),
            headers={str(k): str(v) for k, v in (method.get("headers") or {}).items()},
            timeout=float(method.get("timeout", 60)),
            no_cache=bool(method.get("no_cache", False)),
            min_uptime=float(method.get("min_uptime", DEFAULT_MIN_UPTIME_S)),
            spacing=float(method.get("spacing", 0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"the stored probe method is incomplete: {exc}") from None


def remeasure(method: dict, facts: list[dict], settings: Any) -> dict[str, Measurement]:
    """Verifier for method kind `probe`: one probe run serves every fact of the group."""
    from factreg.measure.measurement import Measurement

    hostname = getattr(settings, "hostname", None) or socket.gethostname()
    try:
        spec = spec_from_method(method)
        if settings is not None and hasattr(settings, "get"):
            spec.max_bytes = int(float(settings.get("probe.max_response_mb", 32)) * 1024 * 1024)
        # Stop before timing when the served model or build is not the facts' (the wiring gap).
        first = facts[0]["conditions"]["identity"] if facts else {}
        spec.expect = {k: v for k, v in first.items() if k in ("model", "build")}
        result = probe(spec, hostname=hostname)
    except UsageError as exc:
        return {f["id"]: Measurement(failure=Verdict.ERROR, message=secrets.redact(exc.message)) for f in facts}
    out: dict[str, Measurement] = {}
    raw = json.dumps(result.as_json(), ensure_ascii=False)  # as_json() is redacted
    for fact in facts:
        if result.failed:
            out[fact["id"]] = Measurement(failure=result.verdict, message=result.message, raw=raw)
            continue
        metric = str((fact.get("method") or {}).get("select", {}).get("metric") or fact.get("metric"))
        xs = list(result.samples.get(metric, [])) if result.verdict == OK else []
        ident = fact.get("conditions", {}).get("identity", {})
        observed = {k: v for k, v in result.observed.items() if k in ident}
        s = stats.summarize(xs) if xs else None
        out[fact["id"]] = Measurement(
            samples=xs,
            value=s.median if s else None,
            spread=s.stdev if s else None,
            n=s.n if s else None,
            observed=observed,
            message=result.message,
            raw=raw,
            flags=list(result.flags),
        )
    return out
