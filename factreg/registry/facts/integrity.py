"""Whether a stored version can be read: the checks that let readers skip a row written by another tool or by
hand (and name it) instead of failing on it, and facts whose current version is missing."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from factreg import clock
from factreg.errors import UsageError
from factreg.registry import freshness
from factreg.registry.store import in_list, rows
from factreg.registry.types import STAT_COLUMNS
from factreg.registry.unreadable import note_unreadable

_OPTIONAL_NUMBERS = ("spread", *STAT_COLUMNS, "tolerance")


def json_as(text: Any, kind: type) -> Any:
    """`text` parsed as JSON of type `kind`, or ValueError."""
    value = json.loads(text) if isinstance(text, str) else None
    if not isinstance(value, kind):
        raise ValueError
    return value


def unreadable(row: Mapping[str, Any], samples: Sequence[Any] = ()) -> str | None:
    """Why a stored version row cannot be read, or None: a row written by another tool or by hand straight into
    the database (a time that is no time, flags or method that are not JSON, a number that is not finite).

    Readers skip such a row and name it (`unreadable.note_unreadable`): one bad row never breaks reading the rest.
    Only the columns present in `row` are checked."""
    for col in ("measured_at", "recorded_at"):
        if col in row and not _is_time(row[col]):
            return f"{col} {str(row[col])[:40]!r} is not a time"
    for col in ("metric", "unit"):
        if col in row and not isinstance(row[col], str):
            return f"{col} is missing"
    if "value" in row and not _is_finite(row["value"]):
        return f"value {str(row['value'])[:40]!r} is not a finite number"
    for col in _OPTIONAL_NUMBERS:
        if row.get(col) is not None and not _is_finite(row[col]):
            return f"{col} {str(row[col])[:40]!r} is not a finite number"
    if row.get("n") is not None and (not isinstance(row["n"], int) or row["n"] < 1):
        return f"n {str(row['n'])[:40]!r} is not a whole number of at least 1"
    if not all(_is_finite(x) for x in samples):
        return "a sample is not a finite number"
    for col, kind in (("flags", list), ("method", dict)):
        if col in row:
            try:
                json_as(row[col], kind)
            except ValueError:
                return f"{col} {str(row[col])[:40]!r} is not a JSON {'list' if kind is list else 'object'}"
    if row.get("derived_from") is not None:
        try:
            refs = json_as(row["derived_from"], list)
            if not all(isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(r.get("version"), int)
                       for r in refs):
                raise ValueError
        except ValueError:
            return f"derived_from {str(row['derived_from'])[:40]!r} is not a list of fact versions"
    for col in ("warn_after", "error_after"):
        if row.get(col) is not None:
            try:
                freshness.parse_duration(row[col] if isinstance(row[col], str) else "")
            except UsageError:
                return f"{col} {str(row[col])[:40]!r} is not a duration"
    return None


def _is_time(text: Any) -> bool:
    """Whether `clock.parse` takes `text` (its common case checked without building the UTC time: status reads
    100,000 rows)."""
    if not isinstance(text, str) or len(text) < 10 or not text[:4].isdigit() or text[4] != "-":
        return False
    try:
        year = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text).year
    except ValueError:
        return False
    if clock.FIRST_YEAR < year < clock.LAST_YEAR:
        return True
    try:
        clock.parse(text)  # a year at the edge, where the zone decides
    except UsageError:
        return False
    return True


def _is_finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def readable(found: Iterable[Mapping[str, Any]], samples: Mapping[Any, Sequence[Any]] | None = None,
             key: Callable[[Mapping[str, Any]], Any] = lambda r: r["fact_id"]) -> list[Any]:
    """The rows of `found` that can be read; each other one is named with `unreadable.note_unreadable`."""
    out = []
    for row in found:
        why = unreadable(row, (samples or {}).get(key(row), ()))
        if why is None:
            out.append(row)
        else:
            note_unreadable(f"{row.get('fact_id', row.get('id'))}@{row.get('version')}", why)
    return out


def dangling(conn: Any, ids: Sequence[str] | None = None) -> list[str]:
    """Facts whose `current_version` names no stored version (each named with `unreadable.note_unreadable`)."""
    sql = ("SELECT f.id, f.current_version, (SELECT max(v.version) FROM fact_version v WHERE v.fact_id = f.id) "
           "AS newest FROM fact f WHERE NOT EXISTS (SELECT 1 FROM fact_version v WHERE v.fact_id = f.id AND "
           "v.version = f.current_version)")
    params: dict[str, Any] = {}
    if ids is not None:
        clause, params = in_list("id", list(ids) or [""])
        sql += f" AND f.id IN {clause}"
    found = rows(conn, sql, params)
    for r in found:
        note_unreadable(f"{r['id']}@{r['current_version']}", f"current_version {r['current_version']} points past "
                        f"the stored versions (newest: {r['newest'] if r['newest'] is not None else 'none'})")
    return [r["id"] for r in found]
