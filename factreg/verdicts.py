"""The verdicts a verification can reach: the one list of their names, and the default practical tolerance.

A verdict is stored with each verification and read by freshness, status, docs check, decisions and correction
notes; the statistics that reach one live in `factreg.stats.verdict`.

| verdict | meaning |
|---|---|
| `confirmed` | no significant difference, or a difference inside the tolerance |
| `refuted` | significant and outside the tolerance, same identity conditions |
| `inconclusive` | too few samples or too noisy to tell (with the n needed) |
| `conditions_changed` | observed identity conditions differ: the fact is about another situation |
| `auth_failed`, `unreachable`, `error` | the measurement could not be made; never a performance value |
| `no_answer` | the endpoint answered, but a measured reply held no answer token (only reasoning, or nothing): no ttft or e2e |
"""

from __future__ import annotations

from enum import Enum


class Verdict(str, Enum):
    """A verification's verdict; a `str`, so it is stored, compared and printed as its name."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    CONDITIONS_CHANGED = "conditions_changed"
    AUTH_FAILED = "auth_failed"
    UNREACHABLE = "unreachable"
    ERROR = "error"
    NO_ANSWER = "no_answer"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


# The measurement could not be made: `verify` exits 3, the fact becomes `unverifiable`.
FAILURES = frozenset({Verdict.AUTH_FAILED, Verdict.UNREACHABLE, Verdict.ERROR, Verdict.NO_ANSWER})
# A finding about the fact: `verify` exits 1.
FINDINGS = frozenset({Verdict.REFUTED, Verdict.CONDITIONS_CHANGED})

# A significant difference refutes a fact only outside this relative tolerance (per fact, metric or registry).
DEFAULT_TOLERANCE = 0.10
