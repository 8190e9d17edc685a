"""Facts: recording a measurement with its conditions and statistics, and reading facts back as data.

The package, one module per job: `measurement` (a `NewFact` checked, its statistics and flags computed: the rows of
one version), `recording` (writing versions, the current version, supersede links), `reading` (facts, history and
verifications as data, with their status) and `integrity` (which stored rows a reader can read). Callers use the
names below, `from factreg.registry import facts`.
"""

from __future__ import annotations

from typing import Any

from factreg.registry.facts.integrity import dangling, readable, unreadable
from factreg.registry.facts.measurement import (
    MAX_MAGNITUDE,
    MAX_N,
    METHOD_KINDS,
    NewFact,
    build_rows,
    in_range,
    parse_number,
    parse_samples,
)
from factreg.registry.facts.reading import (
    Corrected,
    corrected_versions,
    count,
    get,
    history,
    last_verifications,
    list_facts,
    list_first,
    load_current,
    newest_environment,
    observed_environment,
    retractions,
    verification_json,
)
from factreg.registry.facts.recording import (
    bulk_insert,
    current_metrics,
    current_versions,
    insert_rows,
    last_versions,
    preview,
    prune_raw,
    record,
    record_many,
    same_metric,
    settle_current,
    supersede,
    write_versions,
)

__all__ = [
    "MAX_MAGNITUDE", "MAX_N", "METHOD_KINDS", "Corrected", "NewFact", "build_rows", "bulk_insert", "corrected_versions",
    "count", "current_metrics", "current_versions", "dangling", "get", "history", "in_range", "insert_rows",
    "last_verifications", "last_versions", "list_facts", "list_first",
    "load_current", "newest_environment", "observed_environment",
    "parse_number", "parse_samples", "preview", "prune_raw", "readable", "record", "record_many", "retractions",
    "same_metric", "settle_current", "supersede", "unreadable", "verification_json", "write_versions",
]

_TABLES = {"FACT": "Fact", "VERSION": "FactVersion", "SAMPLE": "Sample", "CONDITION": "Condition",
           "VERIFICATION": "Verification"}


def __getattr__(name: str) -> Any:
    """The SQLAlchemy tables (FACT, VERSION, …), imported on first use so that read commands start fast."""
    if name in _TABLES:
        from factreg.registry import models

        return getattr(models, _TABLES[name]).__table__
    raise AttributeError(name)
