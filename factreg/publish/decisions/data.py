"""A decision as data: the shapes of a decision, its cites and the facts a review reads, its statuses, and the
name of its file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from factreg.registry import display
from factreg.registry import drivers as drv
from factreg.registry.ids import slugify
from factreg.registry.types import FactStatus, IdentityOnly

if TYPE_CHECKING:

    pass


class CiteRow(TypedDict):
    """A `decision_cite` row: a fact version a decision relied on, with the value it relied on."""

    decision: int
    fact_id: str
    fact_version: int
    value: float
    spread: float | None
    unit: str


class Cite(TypedDict):
    """A fact a decision cites, as JSON data: the version and value relied on, the fact now, and why to review."""

    id: str
    version: int
    value: float
    spread: float | None
    unit: str
    relied_on: str  # the value relied on, as people read it
    current: display.Shown | None  # CURRENT_FIELDS of the fact now; None when it left the registry
    successor: display.Shown | None  # SUCCESSOR_FIELDS of the fact at the end of its supersede chain, if any
    review: list[str]


class Reverted(TypedDict):
    date: str | None
    because_fact: str | None
    because: str | None


class DecisionLink(TypedDict):
    number: int
    path: str


class DecisionData(TypedDict):
    """A decision as JSON data (`list_decisions`, `get`): its effective status and its cites, as its file shows it."""

    number: int
    title: str
    slug: str
    status: str  # effective: `needs review` when an open decision's cited fact changed
    recorded_status: str
    date: str
    decision_makers: list[str]
    context: str | None
    outcome: str | None
    cites: list[Cite]
    drivers: list[drv.Judged]  # each driver with its truth now
    review_by: str | None
    review_reasons: list[str]
    reverted: Reverted | None
    superseded_by: DecisionLink | None
    supersedes: list[DecisionLink]
    path: str


class Center(TypedDict):
    """The median and 95% interval a driver is judged on (`drivers.center`)."""

    median: float | None
    ci95: list[float] | None


class CitedFact(FactStatus):
    """A cited fact's status row (`status.statuses`) with the tolerance, identity conditions and median a review
    reads."""

    tolerance: float | None
    stats: Center


class PastVersion(TypedDict):
    tolerance: float | None
    conditions: IdentityOnly
    stats: Center


# What a cite shows of the fact it cites now, and of that fact's successor (registry.display fields).
CURRENT_FIELDS = ("version", "value", "spread", "unit", "text", "status", "status_reason", "superseded_by", "metric")
SUCCESSOR_FIELDS = ("id", "version", "status", "text")

STATUSES = ("proposed", "accepted")
OPEN = ("proposed", "accepted")
NEEDS_REVIEW = "needs review"
REVIEW_STATUSES = ("refuted", "retracted", "superseded", "stale", "conditions_changed", "unverifiable", "shifted")
FOLDER = "decisions"
MAX_SLUG = 200


def file_name(row: Mapping[str, Any]) -> str:
    """`0001-voice-front-end-35b-a3b.md`. The slug is made a slug again: a slug `add` made stays the same, one
    edited into the database cannot name another folder."""
    return f"{int(row['number']):04d}-{slugify(str(row['slug']), MAX_SLUG)}.md"
