"""Inter-token latency and time per output token from a request's answer-chunk arrival times (vLLM's definitions).

ITL is every gap between consecutive *answer chunks* of a request, pooled over requests (a chunk carrying several
tokens is one gap, not divided); TPOT = (e2e − ttft) / (tokens − 1), None for fewer than 2 answer tokens.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TypedDict

from factreg.errors import BadInput
from factreg.stats.quantiles import clean


def gaps(arrivals: Sequence[float]) -> list[float]:
    """Gaps between consecutive answer-chunk arrival times (seconds after send) of one request."""
    if not arrivals:
        return []
    xs = clean(arrivals, "chunk arrival times")
    if xs[0] < 0:
        raise BadInput(f"chunk arrival times are seconds after send: {xs[0]} is negative")
    out = []
    for a, b in zip(xs, xs[1:], strict=False):
        if b < a:
            raise BadInput(f"chunk arrival times must not decrease: {b} after {a}")
        out.append(b - a)
    return out


def itl(requests: Iterable[Sequence[float]]) -> list[float]:
    """Inter-token latency: every gap between consecutive answer chunks, pooled over requests."""
    return [g for arrivals in requests for g in gaps(arrivals)]


def tpot(e2e: float, ttft: float, answer_tokens: int) -> float | None:
    """Time per output token after the first, (e2e − ttft) / (tokens − 1); None for fewer than 2 tokens."""
    if answer_tokens < 2:
        return None
    if not (math.isfinite(e2e) and math.isfinite(ttft)) or ttft < 0 or e2e < ttft:
        raise BadInput(f"tpot needs 0 ≤ ttft ≤ e2e (got ttft={ttft}, e2e={e2e})")
    return (e2e - ttft) / (answer_tokens - 1)


class RequestLatency(TypedDict):
    """Latency metrics of one request, derived from its answer-chunk arrival times."""

    ttft: float | None
    e2e: float | None
    itl: list[float]
    itl_max: float | None
    tpot: float | None


def per_request(arrivals: Sequence[float], answer_tokens: int | None = None) -> RequestLatency:
    """ttft, e2e, ITL gaps, the largest gap and TPOT (tokens default to the number of chunks)."""
    gs = gaps(arrivals)
    if not arrivals:
        return RequestLatency(ttft=None, e2e=None, itl=[], itl_max=None, tpot=None)
    first, last = float(arrivals[0]), float(arrivals[-1])
    tokens = len(arrivals) if answer_tokens is None else answer_tokens
    return RequestLatency(ttft=first, e2e=last, itl=gs, itl_max=max(gs) if gs else None, tpot=tpot(last, first, tokens))
