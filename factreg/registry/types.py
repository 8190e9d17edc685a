"""The shapes of the registry's data as it crosses modules: rows as stored, facts and verifications as JSON data.

TypedDicts only (plain dicts at run time, so JSON output is what it was) and the column lists read from them:
`VERSION_COLUMNS` is the one list of `fact_version`'s columns (tests/test_types.py holds it to `models.FactVersion`,
which this module does not import: reading a registry must not load SQLAlchemy).
"""

from __future__ import annotations

import sys
from typing import Any, TypedDict

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - exercised on 3.10 only
    from typing_extensions import NotRequired

# A method is structured data chosen by its `kind` ("manual", "llama-bench", "probe", "sweep", "derived",
# "imported"); each kind has its own keys, so it stays a JSON object.
Method = dict[str, Any]


# ---------------------------------------------------------------- rows as stored


class _VersionKey(TypedDict):
    fact_id: str
    version: NotRequired[int]  # given when the version is written; `facts.build_rows` leaves it out


class _VersionValue(TypedDict):
    subject: str | None
    metric: str
    unit: str
    direction: str | None
    value: float
    spread: float | None
    n: int | None


class _Summary(TypedDict):
    mean: float | None
    median: float | None
    stdev: float | None
    min: float | None
    max: float | None
    iqr: float | None
    cv: float | None


class StatColumns(_Summary):
    """The statistics columns of a version (of its samples, or from value ± spread and n)."""

    ci_lo: float | None
    ci_hi: float | None


class _VersionRest(TypedDict):
    flags: str  # JSON list
    measured_at: str
    recorded_at: str
    method: str  # JSON object
    warn_after: str | None
    error_after: str | None
    tolerance: float | None
    note: str | None
    raw: str | None
    derived_from: str | None  # JSON list of VersionRef
    recorded_by: str | None
    origin: str | None  # "recorded" | "imported"; None before provenance was kept
    source: str | None  # the imported file's name
    registry_id: str | None  # the registry that wrote the version
    trust: str | None  # this registry's tag on the method (registry/provenance.py)


class VersionRow(_VersionKey, _VersionValue, StatColumns, _VersionRest):
    """A `fact_version` row, its columns in table order."""


VERSION_COLUMNS: tuple[str, ...] = tuple(VersionRow.__annotations__)
STAT_COLUMNS: tuple[str, ...] = tuple(StatColumns.__annotations__)
# The stat columns JSON data shows as they are (`Stats`: the interval's two columns become `ci95`).
SUMMARY_COLUMNS: tuple[str, ...] = tuple(_Summary.__annotations__)


class _Verified(TypedDict):
    fact_id: str
    fact_version: int
    verified_at: str
    verdict: str
    method_kind: str
    hostname: str | None
    value: float | None
    spread: float | None
    n: int | None
    p_value: float | None
    rel_diff: float | None
    needed_n: int | None
    message: str | None


class VerificationRow(_Verified):
    """A `verification` row as written (`pk` is given by the database)."""

    samples: str  # JSON list
    observed: str  # JSON object of observed conditions
    diff: str  # JSON object key -> [old, new]
    raw: str | None


class Prepared(TypedDict):
    """One measurement checked and computed, ready to be written (`facts.build_rows`)."""

    version: VersionRow
    samples: list[float]
    conditions: list[tuple[str, str, str]]  # (key, value, kind)
    trusted: bool  # whether this registry vouches for its method (tagged when written)


# ---------------------------------------------------------------- JSON data


class VersionRef(TypedDict):
    """A version of a fact: what a derived fact depends on (`derived_from`), and how a version names itself."""

    id: str
    version: int


class Stats(_Summary):
    """A version's statistics as JSON data: the stat columns, with the interval as `ci95` ([lo, hi] or None)."""

    ci95: list[float] | None


class Conditions(TypedDict):
    """Identity conditions decide comparability; info conditions are kept alongside."""

    identity: dict[str, str]
    info: dict[str, str]


class VerificationData(_Verified):
    """One verification as JSON data (`facts.verification_json`; its raw output left out)."""

    pk: int
    samples: list[float]
    observed: dict[str, Any]
    diff: dict[str, list[Any]]


class LastVerification(TypedDict):
    """The newest verification of a fact's current version, as status needs it (`facts.last_verifications`)."""

    fact_id: str
    verdict: str
    verified_at: str
    message: str | None
    pk: int


class Provenance(TypedDict):
    """Where a version came from: recorded (by whom, in which registry) or imported (from which file)."""

    origin: str | None
    recorded_by: str | None
    source: str | None
    registry_id: str | None


class VersionData(VersionRef, _VersionValue):
    """One version of a fact as JSON data: value, statistics, conditions, flags, method (`facts.preview`)."""

    samples: list[float]
    stats: Stats
    conditions: Conditions
    flags: list[str]
    measured_at: str
    recorded_at: str
    method: Method
    warn_after: str | None
    error_after: str | None
    tolerance: float | None
    note: str | None
    derived_from: list[VersionRef] | None
    provenance: Provenance


class FactData(VersionData):
    """A fact as read from the registry: a version with what only the registry knows.

    `facts.list_facts` and `facts.get` give the current version with `superseded_by`, `ended_at`, `status` and
    `status_reason`; `facts.history` gives every version with `current`, `superseded_by` and `verifications`."""

    superseded_by: NotRequired[str | None]
    ended_at: NotRequired[str | None]
    status: NotRequired[str]
    status_reason: NotRequired[str]
    verification: NotRequired[int]  # the verification the status comes from (refuted, conditions_changed, …)
    current: NotRequired[bool]
    verifications: NotRequired[list[VerificationData]]
    corrected: NotRequired[dict[str, Any]]  # in `history`: corrected by a later version (by_version, note, …)


class IdentityOnly(TypedDict):
    """The conditions status reads: the machine and its build/driver keys."""

    identity: dict[str, str]


class StatusRow(TypedDict):
    """A current fact reduced to what its status needs (`status.load` selects these columns, in this order)."""

    id: str
    superseded_by: str | None
    ended_at: str | None
    version: int
    subject: str | None
    metric: str
    unit: str
    value: float
    spread: float | None
    n: int | None
    median: float | None  # of the samples: which estimator the value is (`display.headline`)
    mean: float | None
    measured_at: str
    warn_after: str | None
    error_after: str | None
    derived_from: list[VersionRef] | None
    method: NotRequired[str]  # read to tell a fact without a method (`freshness.has_method`); removed when returned


class FactStatus(StatusRow):
    """A current fact with its status (`status.statuses`): what `factreg status --json` lists per fact."""

    conditions: NotRequired[IdentityOnly]  # while the status is worked out; removed before it is returned
    status: str
    status_reason: str
    severity: int
    verification: NotRequired[int]  # the verification the status comes from (refuted, conditions_changed, …)
    inconclusive_since_confirmed: NotRequired[int]  # unresolved verdicts of its current version, when any


# What freshness reads of a current fact: the JSON data (`facts.list_facts`) or the status row (`status.load`).
CurrentFact = FactData | FactStatus
