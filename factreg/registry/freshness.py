"""Freshness: how old a fact may get before it is `aging` or `stale`, and a fact's status with its reason."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from factreg import clock
from factreg.errors import UsageError
from factreg.verdicts import FAILURES, Verdict

if TYPE_CHECKING:
    from factreg.registry.types import CurrentFact, LastVerification

DEFAULT_WARN = "30d"
DEFAULT_ERROR = "90d"


# Severity of each status, the order `factreg status --fail-on` compares against (0 is nothing to do):
#   0 fresh, superseded   — holds, or is history with a live successor (docs citing it are `docs check`'s job)
#   1 aging               — past warn_after: re-measure soon
#   2 stale, unverifiable, conditions_changed, shifted — not known to hold now (too old, could not be measured,
#                           measured under conditions that no longer exist, or its history's latest level
#                           began after it and differs from it: registry/series.py)
#   3 refuted, retracted  — a re-measurement contradicts it, or it was withdrawn as wrong with nothing to replace
#                           it (`factreg retract`: a correction without a successor)
SEVERITY = {"fresh": 0, "superseded": 0, "aging": 1, "stale": 2, "unverifiable": 2, "conditions_changed": 2,
            "shifted": 2, "refuted": 3, "retracted": 3}
# Status order, from best to worst (by severity).
ORDER = ["fresh", "superseded", "aging", "stale", "unverifiable", "conditions_changed", "shifted", "refuted",
         "retracted"]
FAIL_LEVELS = {"aging": 1, "stale": 2, "refuted": 3}


def severity(status: str) -> int:
    """How bad a status is (see SEVERITY); unknown statuses count as the worst."""
    return SEVERITY.get(status, max(SEVERITY.values()))


def fails(status: str, fail_on: str = "stale") -> bool:
    """Whether a fact with `status` is at or above the `--fail-on` level (aging, stale or refuted)."""
    if fail_on not in FAIL_LEVELS:
        raise UsageError(f"--fail-on takes one of {', '.join(FAIL_LEVELS)}, got {fail_on!r}")
    return severity(status) >= FAIL_LEVELS[fail_on]


parse_duration = clock.parse_duration  # `30d` → seconds (the one syntax of durations lives with the clock)


parse_time = clock.parse  # an ISO-8601 time; a time without zone is taken as UTC


@dataclass(frozen=True)
class Thresholds:
    warn_after: str
    error_after: str
    source: str


def thresholds(fact: CurrentFact, config: Mapping[str, Any] | None) -> Thresholds:
    """A fact's own thresholds, else its metric's default, else the registry default."""
    section = (config or {}).get("freshness", {}) or {}
    per_metric = (section.get("metrics", {}) or {}).get(fact.get("metric", ""), {}) or {}
    warn, error, source = DEFAULT_WARN, DEFAULT_ERROR, "default"
    if section.get("warn_after") or section.get("error_after"):
        warn = section.get("warn_after", warn)
        error = section.get("error_after", error)
        source = "registry"
    if per_metric:
        warn = per_metric.get("warn_after", warn)
        error = per_metric.get("error_after", error)
        source = "metric"
    if fact.get("warn_after") or fact.get("error_after"):
        warn = fact.get("warn_after") or warn
        error = fact.get("error_after") or error
        source = "fact"
    return Thresholds(warn, error, source)


def human_age(seconds: float) -> str:
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400 * 2:
        return f"{int(seconds // 3600)}h"
    return f"{int(seconds // 86400)}d"


def status_of(
    fact: CurrentFact,
    last_verification: LastVerification | None,
    config: Mapping[str, Any] | None,
    now: datetime | None = None,
    invalidated_by: str | None = None,
    limits: Thresholds | None = None,
    shifted_by: str | None = None,
    retracted: str | None = None,
) -> tuple[str, str]:
    """(status, reason) of a fact's current version.

    `last_verification` is the newest verification of that version; `invalidated_by` says why a
    newer observation on the same machine (another build or driver) makes it stale regardless of age.
    `limits` saves looking the thresholds up again when the caller has them (`thresholds(fact, config)`).
    `shifted_by` says how its history's latest level differs from it (`series.shifts`): only a refutation
    outranks that, as a level found over many points says more than one verification's changed conditions.
    `retracted` says when and why its current version was withdrawn (`facts.retractions`): a person's finding
    that it was wrong, outranked only by a successor.
    """
    now = now or clock.now()
    if fact.get("superseded_by"):
        return "superseded", f"superseded by {fact['superseded_by']}"
    if retracted:
        return "retracted", retracted
    if last_verification is not None and last_verification["verdict"] == Verdict.REFUTED:
        when = last_verification["verified_at"][:10]
        return "refuted", (f"refuted by {_numbered(last_verification)} on {when}: "
                           f"{last_verification.get('message') or ''}").rstrip(": ")
    if shifted_by:
        return "shifted", shifted_by
    if last_verification is not None:
        verdict = last_verification["verdict"]
        when = last_verification["verified_at"][:10]
        number = _numbered(last_verification)
        if verdict == Verdict.CONDITIONS_CHANGED:
            return "conditions_changed", (f"conditions changed ({number}, {when}): "
                                          f"{last_verification.get('message') or ''}").rstrip(": ")
        if verdict in FAILURES:
            return "unverifiable", f"{number} ({when}) could not measure: {verdict}"
    if fact.get("ended_at"):
        return "stale", f"ended at {fact['ended_at']}"
    if invalidated_by:
        return "stale", invalidated_by
    limits = limits or thresholds(fact, config)
    base = parse_time(fact["measured_at"])
    if last_verification is not None and last_verification["verdict"] == Verdict.CONFIRMED:
        base = max(base, parse_time(last_verification["verified_at"]))
    age = (now - base).total_seconds()
    if age > parse_duration(limits.error_after):
        why = f"last measured or confirmed {human_age(age)} ago (error_after {limits.error_after})"
        if not has_method(fact):  # stale, and nothing can re-measure it: say so, and how to give it a method
            return "unverifiable", (f"{NO_METHOD}: {why}; give it one: `factreg method {fact.get('id')} --probe URL "
                                    "--body FILE` (or `--bench -- ARGS`)")
        return "stale", why
    if age > parse_duration(limits.warn_after):
        return "aging", f"last measured or confirmed {human_age(age)} ago (warn_after {limits.warn_after})"
    return "fresh", f"measured or confirmed {human_age(max(age, 0))} ago"


# A stale fact that nothing can re-measure (typed by hand, or imported without a method) is `unverifiable`, its reason
# starting with this; `label` shows it as `unverifiable (no method)`.
NO_METHOD = "no method to re-run it"
WITHOUT_METHOD = ("manual", "imported")  # the method kinds that are no method: nothing factreg can re-run


def has_method(fact: CurrentFact | Mapping[str, Any]) -> bool:
    """Whether a fact has a method `verify` can re-run (or follows other facts: derived); a method that cannot be
    read counts as one (its own error says so)."""
    method: Any = fact.get("method")
    if method is None:
        return True
    if isinstance(method, str):
        try:
            method = json.loads(method)
        except ValueError:
            return True
    return not isinstance(method, Mapping) or method.get("kind") not in WITHOUT_METHOD


def label(fact: Mapping[str, Any]) -> str:
    """A fact's status as a table shows it: `unverifiable (no method)` for a stale fact without a method."""
    status = str(fact.get("status") or "")
    return f"{status} (no method)" if str(fact.get("status_reason") or "").startswith(NO_METHOD) else status


def _numbered(last_verification: LastVerification) -> str:
    """`verification 7`: how a status reason names the verification it comes from (`a verification` unnumbered)."""
    pk = last_verification.get("pk")
    return f"verification {pk}" if pk is not None else "a verification"


def verification_behind(status: str, last_verification: LastVerification | None) -> int | None:
    """The number of the verification a status comes from (refuted, conditions_changed, unverifiable by a failed
    re-measurement), or None: what `correct ID --verification N` and `docs check`'s fix line name."""
    if last_verification is None or status not in ("refuted", "conditions_changed", "unverifiable"):
        return None
    verdict = last_verification["verdict"]
    if verdict == status or (status == "conditions_changed" and verdict == Verdict.CONDITIONS_CHANGED) or (
            status == "unverifiable" and verdict in FAILURES):
        pk = last_verification.get("pk")
        return None if pk is None else int(pk)
    return None


# Conditions that describe a machine's state: a newer measurement that sees another value makes the older
# facts of that machine which depend on it stale.
ENVIRONMENT_KEYS = ("build_commit", "build", "gpu_driver", "driver_version")


def newest_observations(facts: Sequence[CurrentFact]) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(machine, key) → (measured_at, value, fact id) of the newest fact that observed that build/driver key."""
    newest: dict[tuple[str, str], tuple[str, str, str]] = {}
    for fact in facts:
        ident = fact["conditions"]["identity"]
        machine = ident.get("machine")
        if not machine or fact.get("superseded_by"):
            continue
        for key in ENVIRONMENT_KEYS:
            if key in ident:
                seen = newest.get((machine, key))
                if seen is None or fact["measured_at"] > seen[0]:
                    newest[(machine, key)] = (fact["measured_at"], ident[key], fact["id"])
    return newest


def merge_newest(*maps: Mapping[tuple[str, str], tuple[str, str, str]]) -> dict[tuple[str, str], tuple[str, str, str]]:
    """The newest observation per (machine, key) across several sources (facts, verifications)."""
    out: dict[tuple[str, str], tuple[str, str, str]] = {}
    for m in maps:
        for key, seen in m.items():
            if key not in out or seen[0] > out[key][0]:
                out[key] = seen
    return out


def invalidations(facts: Sequence[CurrentFact], verifications: Mapping[str, LastVerification] | None = None,
                  newest: Mapping[tuple[str, str], tuple[str, str, str]] | None = None) -> dict[str, str]:
    """fact id → reason, for facts whose machine was seen since on another build or driver.

    `newest` is what `newest_observations` computes; give it when `facts` are not the whole registry."""
    if newest is None:
        newest = newest_observations(facts)
    out: dict[str, str] = {}
    for fact in facts:
        ident = fact["conditions"]["identity"]
        machine = ident.get("machine")
        if not machine:
            continue
        for key in ENVIRONMENT_KEYS:
            seen = newest.get((machine, key))
            if key in ident and seen and seen[1] != ident[key] and seen[0] > fact["measured_at"]:
                out[fact["id"]] = (f"{machine} now runs {key} {seen[1]} (seen in {seen[2]} on {seen[0][:10]}); "
                                   f"this was measured with {ident[key]}")
                break
    return out


def derived_invalidation(fact: CurrentFact, sources: Mapping[str, CurrentFact],
                         verifications: Mapping[str, LastVerification] | None = None) -> str | None:
    """Why a derived fact no longer holds — a source has a newer version, was superseded or refuted — or None.

    `sources` maps fact id → that fact's current version (JSON data); `verifications` maps fact id → the
    newest verification of its current version.
    """
    for ref in fact.get("derived_from") or []:
        src = sources.get(ref["id"])
        if src is None:
            return f"derived from {ref['id']}, which is not in the registry"
        if src.get("superseded_by"):
            return f"derived from {ref['id']}, since superseded by {src['superseded_by']}"
        if src["version"] != ref["version"]:
            return f"derived from {ref['id']} v{ref['version']}; it is now at v{src['version']}"
        last = (verifications or {}).get(ref["id"])
        if last is not None and last.get("verdict") == Verdict.REFUTED:
            return f"derived from {ref['id']}, since refuted by a verification"
    return None


def derived_invalidations(facts: Sequence[CurrentFact],
                          verifications: Mapping[str, LastVerification] | None = None) -> dict[str, str]:
    """fact id → reason, for derived facts whose sources changed (see `derived_invalidation`)."""
    by_id = {f["id"]: f for f in facts}
    out: dict[str, str] = {}
    for fact in facts:
        if fact.get("derived_from"):
            why = derived_invalidation(fact, by_id, verifications)
            if why:
                out[fact["id"]] = why
    return out
