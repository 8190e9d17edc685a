"""What one streamed request of the probe saw, and what its times mean: `RequestTrace` keeps the raw event times
(seconds after the request was sent, on a monotonic clock) and defines every metric from them (ttfb, ttft, e2e,
decode rate, tpot, itl); `impossible` names a time no request can have. `ProbeFailure` is a measurement that could
not be made, with its verdict; `MeasurementError` one whose own times are impossible.

How the times are taken is `measure/stream.py` (the one exchange) and `measure/arrival.py` (the arrival clock);
how chunks are read into a trace is `measure/chunks.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeGuard

from factreg import secrets
from factreg.verdicts import Verdict


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
