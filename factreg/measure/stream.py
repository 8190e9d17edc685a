"""One request of the probe: a streamed POST read event by event, and the small GETs of the identity check.

A streamed request keeps raw event times (`RequestTrace`) on a monotonic clock, splits reasoning from answer
chunk by chunk (`ChunkReader`: `reasoning_content`/`reasoning`/`reasoning_details`, `<think>` tags in content, a
leading `</think>` whose opening tag was in the prompt, Mistral's content parts, refusals), and ends within one
overall deadline (a watchdog shuts the socket). Whatever goes wrong becomes a `ProbeFailure` with a verdict (`auth_failed`, `unreachable`, `error`).
"""

from __future__ import annotations

import contextlib
import copy
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlsplit

from factreg import secrets
from factreg.measure.http import ACCEPT_ENCODING, redirect_message, unasked_encoding
from factreg.measure.sse import SSEError, SSEParser
from factreg.verdicts import Verdict

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


class MeasurementError(ProbeFailure):
    """A request whose own times are impossible (a negative duration, events out of order): a fault of the
    measurement, never of the server, and never a sample. The run that meets one is an error and counts them."""

    def __init__(self, problem: str):
        super().__init__(Verdict.ERROR, f"internal measurement error: {problem}")
        self.problem = problem


@dataclass
class RequestTrace:
    """Raw event times of one streamed request, in seconds after it was sent (monotonic clock)."""

    kind: str
    status: int | None = None
    connected: float | None = None  # TCP connection set up (each request opens its own, like curl)
    written: float | None = None  # request body written: "sent", where the metrics' clocks start (see ArrivalClock.finish)
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
    answer_times: list[float] = field(default_factory=list)  # arrival of each answer chunk
    reasoning_times: list[float] = field(default_factory=list)  # arrival of each reasoning chunk
    queued: float | None = None  # seconds the request waited in the client before it was sent (load runs)
    response_id: str | None = None  # the chunks' `id` (chatcmpl-…): ties a trace to the server's own log
    started: float = 0.0  # the monotonic clock (seconds) at this trace's zero, to compare with another clock's log
    arrival_clock: str = "user"  # what timed the reply's blocks: "kernel" (packet stamps), "user", or "mixed"
    write_ended: float | None = None  # httpcore's "request body sent" event, after the write (kept for comparison)

    @property
    def thinking(self) -> bool:
        return self.n_reasoning > 0

    def token_counts(self) -> tuple[int, int, str]:
        """(answer tokens, reasoning tokens, source): from the server's usage when it says enough (`usage`),
        else the chunks seen (`counted`, one token per chunk).

        OpenAI's usage counts reasoning inside `completion_tokens` (`completion_tokens_details.reasoning_tokens`
        is part of it); xAI's leaves it out (then `total_tokens` = prompt + completion + reasoning, or reasoning
        exceeds completion). A server that streamed reasoning but reports none, or no split at all, gives the
        counted split (`tokens()` still takes the server's total).
        """
        counted = (self.n_answer, self.n_reasoning, "counted")
        usage = self.usage or {}
        completion = usage.get("completion_tokens")
        if not _count(completion):
            return counted
        details = usage.get("completion_tokens_details")
        stated = (details if isinstance(details, dict) else {}).get("reasoning_tokens", usage.get("reasoning_tokens"))
        reasoning = int(stated) if _count(stated) else None
        if reasoning is None or (reasoning == 0 and self.n_reasoning):
            if not self.n_reasoning:
                return int(completion), 0, "usage"
            return counted  # the usage has no trustworthy split
        prompt, total = usage.get("prompt_tokens"), usage.get("total_tokens")
        if _count(prompt) and _count(total) and reasoning and total == prompt + completion + reasoning:
            return int(completion), reasoning, "usage"  # xAI: completion_tokens leaves reasoning out
        if reasoning <= completion:
            return int(completion) - reasoning, reasoning, "usage"
        if not (_count(prompt) and _count(total) and total == prompt + completion):
            return int(completion), reasoning, "usage"  # reasoning beyond completion: counted beside it
        return counted

    def tokens(self) -> int:
        """Generated tokens (answer and reasoning): from usage when the server sent it, else the chunks seen."""
        answer, reasoning, source = self.token_counts()
        usage = self.usage or {}
        if source == "counted" and _count(usage.get("completion_tokens")):
            return int(usage["completion_tokens"])  # the server's total, without a split
        return answer + reasoning

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
        answer, reasoning, _ = self.token_counts()
        out["answer_tokens"] = float(answer)
        out["reasoning_tokens"] = float(reasoning)
        # Time per output token after the first (vLLM, AIPerf, GuideLLM): answer and reasoning separately.
        if self.first_answer is not None and self.last_answer is not None and answer >= 2:
            out["tpot"] = (self.last_answer - self.first_answer) / (answer - 1)
        if len(self.reasoning_times) >= 1 and reasoning >= 2:
            span = max(self.reasoning_times) - min(self.reasoning_times)
            out["tpot_reasoning"] = span / (reasoning - 1)
        return out

    def gaps(self) -> dict[str, list[float]]:
        """Inter-token latency: every gap between consecutive answer chunks (`itl`) and reasoning chunks
        (`itl_reasoning`) of this request; a chunk carrying several tokens is one gap, not divided."""
        out = {}
        for name, times in (("itl", self.answer_times), ("itl_reasoning", self.reasoning_times)):
            xs = sorted(times)
            out[name] = [b - a for a, b in zip(xs, xs[1:], strict=False)]
        return out

    def impossible(self) -> str | None:
        """What is impossible about this request's times, or None: a latency below zero (ttfb, ttft, ttft_any, e2e,
        queued), e2e below ttft, or events out of the order a request's events happen in. Such a time is a fault
        of the measurement (a clock start taken from another request, a stepped clock), never of the server."""
        metrics = self.metrics()
        for name in ("ttfb", "ttft", "ttft_any", "e2e"):
            if metrics.get(name, 0.0) < 0:
                return f"{name} {metrics[name]:.6f} s is below zero"
        if "e2e" in metrics and "ttft" in metrics and metrics["e2e"] < metrics["ttft"]:
            return f"e2e {metrics['e2e']:.6f} s is below ttft {metrics['ttft']:.6f} s"
        if self.queued is not None and self.queued < 0:
            return f"queued {self.queued:.6f} s is below zero"
        for earlier, later in _EVENT_ORDER:
            a, b = getattr(self, earlier), getattr(self, later)
            if a is not None and b is not None and b < a:
                return f"{later} ({b:.6f} s) came before {earlier} ({a:.6f} s)"
        times = self.answer_times + self.reasoning_times
        if times and self.written is not None and min(times) < self.written:
            return f"a chunk arrived {self.written - min(times):.6f} s before the request was written"
        return None

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
            "started_s": round(self.started, 6),  # the monotonic clock at "start" (this process's; for spans)
            "events_s": {"start": 0.0, **events},
            "tokens": {
                "reasoning_chunks": self.n_reasoning,
                "answer_chunks": self.n_answer,
                "usage": self.usage,
                **dict(zip(("answer_tokens", "reasoning_tokens", "tokens_source"), self.token_counts(), strict=True)),
                "generated_tokens": self.tokens(),
            },
            "chunks": self.n_chunks,
            "timings": self.timings,
            "model": self.model,
            "system_fingerprint": self.system_fingerprint,
            "finish_reason": self.finish_reason,
            "done_seen": self.done_seen,
            "garbage_lines": self.garbage,
            "bytes": self.bytes,
            "metrics": {k: rounded(v) for k, v in self.metrics().items()},
            "queued_s": rounded(self.queued),
            "arrival_clock": self.arrival_clock,
            "chunk_times_s": {
                "answer": [rounded(t) for t in sorted(self.answer_times)],
                "reasoning": [rounded(t) for t in sorted(self.reasoning_times)],
            },
        }


# (earlier, later): the order a request's events happen in, whatever the server sends (`impossible`).
_EVENT_ORDER = (
    ("connected", "written"),
    ("written", "first_byte"),
    ("first_byte", "first_chunk"),
    ("first_chunk", "first_reasoning"),
    ("first_chunk", "first_answer"),
    ("first_answer", "last_answer"),
    ("first_byte", "done"),
    ("last_answer", "end"),
    ("last_token", "end"),
    ("done", "end"),
)


def _count(x: Any) -> TypeGuard[int]:
    """A token count as JSON gives it: a non-negative integer (not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def rounded(x: float | None) -> float | None:
    """Seconds as written to JSON: rounded to the microsecond."""
    return None if x is None else round(x, 6)


class _ThinkSplitter:
    """Splits `content` deltas into reasoning (inside `<think>…</think>`) and answer text, tags split anywhere.

    Until the first tag, content is undecided (`provisional`): a leading run that ends in `</think>` without an
    opening tag is reasoning (Qwen3 / DeepSeek-R1 templates open the think block in the prompt); a run that meets
    `<think>` first, or the end of the stream, is answer. `resolved` says how the earlier undecided text turned out.
    """

    def __init__(self) -> None:
        self.state = "start"  # "start" (no tag seen yet), "answer" (outside a think block) or "inside"
        self.pending = ""
        self.provisional = ""  # this delta's undecided text (state "start")
        self.resolved: str | None = None  # "answer" / "reasoning": what this delta decided about earlier text

    @property
    def inside(self) -> bool:
        return self.state == "inside"

    def feed(self, text: str) -> tuple[str, str]:
        """(reasoning, answer) text of this delta; a partial tag at the end waits for the next delta."""
        buf = self.pending + text
        self.pending = ""
        self.provisional = ""
        self.resolved = None
        reasoning: list[str] = []
        answer: list[str] = []
        provisional: list[str] = []
        while buf:
            if self.state == "start":
                tags = [(buf.find(tag), tag) for tag in (THINK_OPEN, THINK_CLOSE)]
                found = [(at, tag) for at, tag in tags if at >= 0]
                if found:
                    at, tag = min(found)
                    if tag == THINK_OPEN:
                        self.resolved, self.state = "answer", "inside"
                        answer.append("".join(provisional) + buf[:at])
                    else:
                        self.resolved, self.state = "reasoning", "answer"
                        reasoning.append("".join(provisional) + buf[:at])
                    provisional = []
                    buf = buf[at + len(tag) :]
                    continue
                keep = _partial_tag(buf, (THINK_OPEN, THINK_CLOSE))
                provisional.append(buf[: len(buf) - keep])
                self.pending = buf[len(buf) - keep :]
                break
            tag = THINK_CLOSE if self.state == "inside" else THINK_OPEN
            at = buf.find(tag)
            if at >= 0:
                (reasoning if self.state == "inside" else answer).append(buf[:at])
                buf = buf[at + len(tag) :]
                self.state = "answer" if self.state == "inside" else "inside"
                continue
            keep = _partial_tag(buf, (tag,))
            (reasoning if self.state == "inside" else answer).append(buf[: len(buf) - keep])
            self.pending = buf[len(buf) - keep :]
            break
        self.provisional = "".join(provisional)
        return "".join(reasoning), "".join(answer)

    def flush(self) -> str:
        """The end of the stream: a partial tag left waiting is plain text after all."""
        text, self.pending = self.pending, ""
        return text


def _partial_tag(buf: str, tags: tuple[str, ...]) -> int:
    """Length of the longest end of `buf` that may begin one of `tags`."""
    longest = min(max(len(t) for t in tags) - 1, len(buf))
    if "<" not in buf[len(buf) - longest :]:  # every tag begins with "<": the common case, one look
        return 0
    for k in range(longest, 0, -1):
        if any(t.startswith(buf[-k:]) for t in tags):
            return k
    return 0


@dataclass
class _Chunk:
    """What one JSON chunk was counted as (reasoning, answer), for decisions made after it arrived."""

    t: float
    reasoning: bool = False
    answer: bool = False
    visible: bool = False  # answer text that is not only whitespace (or a tool call): the user sees it
    provisional_visible: bool = False


def _text_of(value: Any) -> str:
    """Text of a reasoning/thinking value: a string, or a list of `{"text": …}` parts (Mistral)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            v if isinstance(v, str) else str(v["text"]) if isinstance(v, dict) and isinstance(v.get("text"), str) else ""
            for v in value
        )
    return ""


def _content_parts(parts: list[Any]) -> tuple[str, str]:
    """(reasoning, answer) of a list-valued `content` (Mistral Magistral: `thinking` and `text` parts)."""
    reasoning, answer = "", ""
    for part in parts:
        if isinstance(part, str):
            answer += part
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind in ("thinking", "reasoning"):
                reasoning += _text_of(part.get("thinking", part.get("reasoning", part.get("text"))))
            elif kind in (None, "text", "output_text") and isinstance(part.get("text"), str):
                answer += part["text"]
    return reasoning, answer


def _reasoning_fields(delta: dict[str, Any]) -> str:
    """Reasoning text of a delta: `reasoning_content` (DeepSeek, vLLM, llama.cpp), `reasoning` (Groq, Ollama,
    OpenRouter), else the text of `reasoning_details` (OpenRouter, Anthropic behind gateways)."""
    for key in ("reasoning_content", "reasoning"):
        if isinstance(delta.get(key), str) and delta[key]:
            return str(delta[key])
    text = ""
    details = delta.get("reasoning_details")
    for item in details if isinstance(details, list) else []:
        if isinstance(item, dict):
            value = item.get("summary") if item.get("type") == "reasoning.summary" else item.get("text")
            if item.get("type") in ("reasoning.text", "reasoning.summary") and isinstance(value, str):
                text += value
    return text


class ChunkReader:
    """Reads one request's JSON chunks into its trace: reasoning vs answer chunk by chunk, usage, timings.

    `feed(obj, t)` per chunk (t: seconds after sending), `finish()` at the end of the stream: content that was
    still undecided (before any think tag) is answer then.
    """

    def __init__(self, trace: RequestTrace):
        self.trace = trace
        self.think = _ThinkSplitter()
        self._undecided: list[_Chunk] = []
        self._last_content: _Chunk | None = None

    def _reasoning(self, c: _Chunk) -> None:
        tr = self.trace
        if not c.reasoning:
            c.reasoning = True
            tr.n_reasoning += 1
            tr.reasoning_times.append(c.t)
            tr.first_reasoning = c.t if tr.first_reasoning is None else min(tr.first_reasoning, c.t)
            tr.last_token = c.t if tr.last_token is None else max(tr.last_token, c.t)

    def _answer(self, c: _Chunk, visible: bool) -> None:
        tr = self.trace
        if not c.answer:
            c.answer = True
            tr.n_answer += 1
            tr.answer_times.append(c.t)
            tr.last_token = c.t if tr.last_token is None else max(tr.last_token, c.t)
            tr.last_answer = c.t if tr.last_answer is None else max(tr.last_answer, c.t)
        if visible and not c.visible:
            c.visible = True
            tr.first_answer = c.t if tr.first_answer is None else min(tr.first_answer, c.t)

    def _resolve(self, kind: str) -> None:
        for c in self._undecided:
            if kind == "reasoning":
                self._reasoning(c)
            else:
                self._answer(c, c.provisional_visible)
        self._undecided = []

    def feed(self, obj: dict[str, Any], t: float) -> None:
        tr = self.trace
        if tr.first_chunk is None:
            tr.first_chunk = t
        tr.n_chunks += 1
        if isinstance(obj.get("error"), (dict, str)):
            err = obj["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            raise ProbeFailure(Verdict.ERROR, f"the server reported an error mid-stream: {str(msg)[:200]}")
        if isinstance(obj.get("model"), str):
            tr.model = obj["model"]
        if tr.response_id is None and isinstance(obj.get("id"), str):
            tr.response_id = obj["id"][:200]
        if isinstance(obj.get("system_fingerprint"), str) and obj["system_fingerprint"]:
            tr.system_fingerprint = obj["system_fingerprint"]
        groq = obj.get("x_groq")
        if isinstance(obj.get("usage"), dict):
            tr.usage = obj["usage"]
        elif isinstance(groq, dict) and isinstance(groq.get("usage"), dict):
            tr.usage = groq["usage"]  # Groq sends usage only inside x_groq
        if isinstance(obj.get("timings"), dict):
            tr.timings = obj["timings"]
        choices = obj.get("choices")
        if not isinstance(choices, list):
            return
        choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0), None)
        if choice is None:
            return
        if choice.get("finish_reason"):
            tr.finish_reason = str(choice["finish_reason"])
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        chunk = _Chunk(t)
        reasoning = _reasoning_fields(delta)
        answer = delta["refusal"] if isinstance(delta.get("refusal"), str) else ""  # a refusal is the reply
        content = delta.get("content")
        if isinstance(content, str):
            r, a = self.think.feed(content)
            if self.think.resolved:
                self._resolve(self.think.resolved)
            reasoning += r
            answer += a
            self._last_content = chunk
            if self.think.provisional:
                chunk.provisional_visible = bool(self.think.provisional.strip())
                self._undecided.append(chunk)
        elif isinstance(content, list):
            r, a = _content_parts(content)
            reasoning += r
            answer += a
        if reasoning:
            self._reasoning(chunk)
        if answer or delta.get("tool_calls"):  # a tool call is the reply: it counts as answer output
            self._answer(chunk, bool(answer.strip()) or bool(delta.get("tool_calls")))

    def finish(self) -> None:
        """The stream ended: undecided content is answer; a partial tag left waiting is text."""
        rest = self.think.flush()
        inside = self.think.inside
        self._resolve("answer")
        if rest and self._last_content is not None:
            if inside:
                self._reasoning(self._last_content)
            else:
                self._answer(self._last_content, bool(rest.strip()))


def _error_text(resp: httpx.Response, limit: int = 4096) -> str:
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


def error_detail(body: bytes, limit: int = 4096) -> str:
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
    return status_failure(status, resp.headers.get("location"), url, lambda: _error_text(resp))


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


def where(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}{parts.path}" if parts.port else f"{parts.hostname}{parts.path}"


class ArrivalClock:
    """When each block of a reply arrived, in seconds after `t0` (perf_counter nanoseconds).

    With a connection that keeps the kernel's stamps (`measure/arrival.py`), a block's time is the stamp of the
    read that brought it: the arrival of that read's last packet, whatever the probe was doing meanwhile. Several
    blocks out of one read (packets coalesced while the client was busy) share that stamp, exact for the last one
    and late by at most the gap to it for the earlier ones. Without a stamp, the time is the user-space clock now.
    A time is never after the user-space reading (a block cannot arrive after it was read) nor before the previous
    one (events keep their order).

    The stamps are the exchange's (`hold`, or `attach` for httpx's response) only while it lasts: `release`, called
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

    def attach(self, resp: httpx.Response) -> None:
        """Read the stamps of `resp`'s connection for this exchange (none: the user-space clock times every block)."""
        self.hold(getattr(resp.extensions.get("network_stream"), "stamps", None))

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


def encoding_message(url: str, coding: str) -> str:
    """Why a compressed reply is refused."""
    return (f"{where(url)} answered with Content-Encoding {coding!r} though factreg asked for {ACCEPT_ENCODING}: "
            "refused, not inflated")


class Reading:
    """Reads one streamed reply into its trace (both clients, sync and async, feed it): the content type, each
    block of bytes with its arrival time, the end; `finish` checks the reply was complete."""

    def __init__(self, trace: RequestTrace, url: str, max_bytes: int):
        self.trace, self.url, self.max_bytes = trace, url, max_bytes
        self.parser = SSEParser()
        self.reader = ChunkReader(trace)

    def check_headers(self, content_type: str, content_encoding: str | None = None) -> None:
        self.trace.content_type = content_type
        coding = unasked_encoding(content_encoding)
        if coding is not None:
            raise ProbeFailure(Verdict.ERROR, encoding_message(self.url, coding))
        if "json" in content_type and "event-stream" not in content_type:
            raise ProbeFailure(
                Verdict.ERROR,
                f'{where(self.url)} answered with JSON, not an event stream (does it support "stream": true?)',
            )

    def feed(self, chunk: bytes, t: float) -> None:
        trace = self.trace
        trace.bytes += len(chunk)
        if trace.bytes > self.max_bytes:
            raise ProbeFailure(
                Verdict.ERROR, f"the reply exceeded {self.max_bytes // (1024 * 1024)} MB; stopped reading"
            )
        for ev in self.parser.feed(chunk):
            if ev.done:
                trace.done_seen = True
                trace.done = t
            else:
                self.reader.feed(ev.data, t)

    def close(self, t: float) -> None:
        for ev in self.parser.close():
            if ev.done:
                self.trace.done_seen, self.trace.done = True, t
            else:
                self.reader.feed(ev.data, t)
        self.reader.finish()
        self.trace.end = t

    def finish(self) -> RequestTrace:
        trace = self.trace
        trace.garbage = self.parser.garbage
        if not trace.done_seen and not trace.finish_reason and not trace.n_answer:
            # A clean end of the connection without [DONE] (ik_llama.cpp, Gemini) is the end of a reply that said
            # it finished or that carried an answer; with neither, nothing shows the reply was complete.
            raise ProbeFailure(
                Verdict.ERROR,
                f"the stream ended early, without finish_reason, answer or [DONE], after {trace.n_chunks} chunks",
            )
        if trace.n_chunks == 0:
            raise ProbeFailure(Verdict.ERROR, "the stream held no JSON chunks")
        problem = trace.impossible()
        if problem is not None:
            raise MeasurementError(problem)
        return trace


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
    send_headers = stream_headers(headers)
    trace = RequestTrace(kind=kind)
    reading = Reading(trace, url, max_bytes)
    ticks = time.perf_counter_ns
    started = False
    with _Watchdog(timeout) as dog:
        t0 = ticks()
        trace.started = t0 / 1e9
        arrival = ArrivalClock(t0)
        try:
            with client.stream(
                "POST",
                url,
                content=content,
                headers=send_headers,
                timeout=httpx.Timeout(timeout),
                extensions={"trace": dog.trace},
            ) as resp:
                arrival.attach(resp)
                try:
                    trace.first_byte = arrival.now(count=False)
                    started = True
                    trace.status = resp.status_code
                    failure = _status_failure(resp.status_code, resp, url)
                    if failure is not None:
                        raise failure
                    reading.check_headers(resp.headers.get("content-type", ""), resp.headers.get("content-encoding"))
                    for chunk in resp.iter_raw():
                        reading.feed(chunk, arrival.now())
                        if dog.fired:
                            break
                    reading.close(arrival.end())
                finally:
                    arrival.release()  # before the connection goes back to httpx's pool
        except ProbeFailure:
            raise
        except SSEError as exc:
            raise ProbeFailure(Verdict.ERROR, str(exc)) from None
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise transport_failure(exc, url, timeout, started, dog.fired, trace.n_chunks) from None
    for name, key in (
        ("connected", "connection.connect_tcp.complete"),
        ("written", "http11.send_request_body.complete"),
    ):
        if key in dog.events:
            setattr(trace, name, (dog.events[key] - t0) / 1e9)
    arrival.finish(trace)
    if dog.fired:
        raise ProbeFailure(
            Verdict.ERROR, f"the stream stalled: not finished within --timeout {timeout:g} s ({trace.n_chunks} chunks received)"
        )
    return reading.finish()


def transport_failure(
    exc: Exception, url: str, timeout: float, started: bool, deadline: bool, n_chunks: int
) -> ProbeFailure:
    """The failure a transport error (httpx's or the lean client's, `measure/wire.py`) means: unreachable before the
    reply began, an error after."""
    import httpx

    from factreg.measure import wire

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


def stream_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers of a streamed POST: the caller's, then JSON in, an event stream out, no compression."""
    return {
        **headers,
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Accept-Encoding": "identity",
    }


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
