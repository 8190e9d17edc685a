"""What a verifier hands back: one re-measurement of one fact.

Its own module so that the verifiers (llama-bench, probe) and the engine that calls them (`verify`) import it
from below, with no cycle between them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Measurement:
    """One re-measurement of one fact (what a verifier observed)."""

    samples: list[float] = field(default_factory=list)  # samples in the fact's metric/unit
    value: float | None = None  # summary value (median of samples, or llama-bench avg_ts)
    spread: float | None = None  # standard deviation
    n: int | None = None
    observed: dict[str, str] = field(default_factory=dict)  # identity conditions as observed now
    failure: str | None = None  # "auth_failed" | "unreachable" | "error": could not measure
    message: str | None = None  # one line, no secrets
    raw: str | None = None  # raw tool output (secrets redacted)
    flags: list[str] = field(default_factory=list)  # e.g. "cold", "cache_hit", "thinking_on"
    # A capacity's re-run (method kind `sweep`): load level → (good, total) requests, what `verify` judges it by.
    levels: dict[float, tuple[int, int]] = field(default_factory=dict)
