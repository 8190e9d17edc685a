"""Helpers for the docs, status and freshness tests: facts, verifications and documents in temp dirs."""

from __future__ import annotations

import json
from typing import Any

from factreg import clock
from factreg.registry import facts
from factreg.registry.store import Registry


def record(
    reg: Registry,
    fact_id: str,
    value: float,
    spread: float | None = None,
    *,
    metric: str = "tg_rate",
    measured_at: str | None = None,
    n: int | None = 5,
    **identity: str,
) -> dict[str, Any]:
    """Record a fact with the identity conditions given (machine=..., build_commit=...)."""
    return facts.record(
        reg,
        facts.NewFact(
            id=fact_id,
            metric=metric,
            value=value,
            spread=spread,
            n=n,
            identity=identity or {"machine": "gamebox"},
            measured_at=measured_at,
        ),
    )


def verify(
    reg: Registry,
    fact_id: str,
    verdict: str,
    value: float | None = None,
    spread: float | None = None,
    message: str | None = None,
    verified_at: str | None = None,
) -> None:
    """Insert a verification row of the fact's current version, as the verify engine would."""
    version = facts.get(reg, fact_id)["version"]
    with reg.write() as conn:
        conn.execute(
            facts.VERIFICATION.insert().values(
                fact_id=fact_id,
                fact_version=version,
                verified_at=verified_at or clock.iso(),
                verdict=verdict,
                method_kind="llama-bench",
                hostname="testhost",
                value=value,
                spread=spread,
                n=5,
                samples=json.dumps([]),
                observed=json.dumps({}),
                diff=json.dumps({}),
                message=message,
            )
        )
