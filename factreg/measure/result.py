"""What judging a re-measurement of one fact gives: `VerifyResult`, what `verify` returns and `factreg verify
--json` prints per fact, and its two sides (`Values`)."""

from __future__ import annotations

import sys
from typing import Any, TypedDict

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - exercised on 3.10 only
    from typing_extensions import NotRequired


class Values(TypedDict):
    """One side of a verification: value ± spread and n (all None when nothing was measured)."""

    value: float | None
    spread: float | None
    n: int | None


class _Compared(TypedDict):  # the fields every result has (a skipped fact too)
    id: str
    version: int
    metric: str
    unit: str
    old: Values
    new: Values
    p_value: float | None
    rel_diff: float | None
    needed_n: int | None
    diff: dict[str, list[Any]]  # condition key → [old, new], when conditions changed
    observed: dict[str, str]
    flags: list[str]


class VerifyResult(_Compared):
    """The result of verifying one fact: what `verify` returns and `factreg verify --json` prints per fact."""

    verdict: str  # a Verdict, or SKIPPED for a method that cannot be re-run
    message: str
    tolerance: NotRequired[float]  # when the statistics decided
    recorded: NotRequired[bool]  # whether a verification was written to the registry
    verification: NotRequired[int]  # the number of the verification written (`correct ID --verification N`)
    # The machine's side (`measure/control.py`): speed factor (control now / then, None when not comparable),
    # the measurement scaled by it (when the control moved), both sides' machine state and control.
    speed_factor: NotRequired[float | None]
    cpu_share_factor: NotRequired[float | None]  # the measured run's CPU share now / then (llama-bench)
    as_measured: NotRequired[str]  # the statistics' verdict, when the machine's speed changed it
    relative: NotRequired[dict[str, Any]]  # relative to the interleaved control (measure/interleave.py)
    decided_by: NotRequired[str]  # "control-relative" when that comparison set the verdict
    scaled: NotRequired[dict[str, Any]]
    machine: NotRequired[dict[str, Any]]
    control: NotRequired[dict[str, Any]]
    # The endpoint's own evidence (`measure/endpoint.py`, probes): both sides' `server_state`, and what excused a
    # difference (`server_busy`, `server_cpu_wait`) with the share of the run the server was kept from a CPU.
    server: NotRequired[dict[str, Any]]
    excused_by: NotRequired[str]
    denied: NotRequired[dict[str, Any]]
    resolve: NotRequired[str]  # for an inconclusive verdict: what would resolve it (`resolution`)
    sequential: NotRequired[dict[str, Any]]  # the looks: batches, each look's level, the budget and time spent
