"""Re-running a method: which verifier provides its kind, and one batch of a group of facts that share it, run
inside the control's brackets (`control.bracket`) with what the control needs from the method — the llama-bench
binary, a probe's identity request time, its requests' spans and headers for the server's /metrics.

A verifier is `remeasure(method: dict, facts: list[FactData], settings: Settings) -> dict[str, Measurement]`,
where `facts` share `method` apart from its "select" key (`method_key`); the kinds the loaded plugins register,
factreg's own `llama-bench`, `probe` and `sweep` among them (`factreg/plugins/`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from factreg.errors import FactregError, UsageError
from factreg.measure import control
from factreg.measure.measurement import Measurement

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.types import FactData

NOT_RERUNNABLE = ("manual", "derived", "imported")


def method_key(method: Mapping[str, Any]) -> str:
    """Facts whose methods are equal apart from "select" share one re-run."""
    return json.dumps({k: v for k, v in method.items() if k != "select"}, sort_keys=True, default=str)


def load_verifier(kind: str) -> Callable[..., dict[str, Measurement]]:
    """The `remeasure` function of the plugin (factreg's own included) that provides a method kind; UsageError
    for a kind that no installed plugin provides (never guessed, nothing run)."""
    from factreg import plugins

    found = plugins.verifier(kind)
    if found is None:
        raise UsageError(no_verifier(kind))
    return plugins.load(found.remeasure)


def no_verifier(kind: Any) -> str:
    """Why a method kind is not run: no installed plugin provides it."""
    return f"no verifier for method kind {str(kind)[:40]!r}: no installed plugin provides it (`factreg plugins`)"


def rerunnable(fact: Mapping[str, Any]) -> bool:
    """Whether a fact's method is of a kind some loaded plugin can re-run (its trust is checked apart)."""
    from factreg import plugins

    method = fact.get("method")
    kind = method.get("kind") if isinstance(method, dict) else None
    return isinstance(kind, str) and kind not in NOT_RERUNNABLE and plugins.verifier(kind) is not None


def _llama_bench(kind: str, method: Mapping[str, Any], settings: Settings | None) -> Any:
    """The llama-bench a llama-bench method's control runs with: None for other kinds, or unless the method
    passes every check its own run would (`llamabench.prepare`): nothing of a refused method is run."""
    if kind != "llama-bench":
        return None
    from factreg.measure import llamabench

    try:
        return llamabench.prepare(method, settings)[1]
    except FactregError:
        return None


@functools.lru_cache(maxsize=4)
def _requests_of(raw: str) -> Any:
    """The `requests` of a probe's raw run, parsed once for the callbacks that read it (None when unreadable)."""
    try:
        return json.loads(raw).get("requests")
    except (ValueError, AttributeError):
        return None


def _identity_ms(measured: Mapping[str, Measurement]) -> float | None:
    """A probe's identity request time (ms), read from a measurement's raw run (the control sends nothing)."""
    for m in measured.values():
        if m.raw and not m.failure:
            return control.identity_ms(_requests_of(m.raw))
    return None


def _spans(measured: Mapping[str, Measurement]) -> list[tuple[float, float]]:
    """A probe's requests as (start, end) spans, read from a measurement's raw run (for the server's /metrics)."""
    from factreg.measure import endpoint

    for m in measured.values():
        if m.raw:
            return endpoint.spans_of_requests(_requests_of(m.raw))
    return []


def _probe_headers(kind: str, method: Mapping[str, Any], settings: Settings | None) -> dict[str, str] | None:
    """The stored probe's headers as its own run sends them (only the `${VAR}`s it may expand), for reading the
    same server's /metrics; None when the method will be refused (a field out of bounds, a variable it may not
    expand): then nothing is watched and no request is sent, and the probe itself says why."""
    from factreg import secrets
    from factreg.measure import probe

    if kind != "probe":
        return {}
    headers = method.get("headers")
    allowed = settings.allowed_env() if settings is not None and hasattr(settings, "allowed_env") else frozenset()
    try:
        probe.spec_from_method(method)
        if not isinstance(headers, Mapping):
            return {}
        return secrets.expand_headers({str(k): str(v) for k, v in headers.items()}, allowed=allowed)
    except FactregError:
        return None


def measure_group(
    kind: str, method: Mapping[str, Any], group: Sequence[FactData], settings: Settings | None
) -> dict[str, Measurement]:
    """One batch of a group: its method's verifier run once inside the control's brackets (`control.bracket`), each
    measurement with the conditions the brackets saw; a failure of the verifier is every fact's `error`."""
    try:
        remeasure = load_verifier(kind)
        headers = _probe_headers(kind, method, settings)
        run_s = control.of_fact(group[0]).get("run_s") if group else None
        result, seen = control.bracket(method, settings, lambda: remeasure(dict(method), list(group), settings),
                                       run_s if isinstance(run_s, (int, float)) else None,
                                       _llama_bench(kind, method, settings), server_ms=_identity_ms,
                                       spans=_spans, headers=headers, watch_server=headers is not None)
        for measured in result.values():
            if isinstance(measured, Measurement):
                measured.observed.update(seen.conditions())
    except FactregError as exc:
        return {f["id"]: Measurement(failure="error", message=exc.message) for f in group}
    except Exception as exc:  # a verifier bug must not lose the other groups' verdicts
        return {f["id"]: Measurement(failure="error", message=f"{type(exc).__name__}: {exc}") for f in group}
    out = {}
    for f in group:
        m = result.get(f["id"])
        if not isinstance(m, Measurement):
            m = Measurement(failure="error", message="the verifier returned nothing for this fact")
        out[f["id"]] = m
    return out
