"""Import lines checked, field by field, as the command that writes such a row checks it: a `record` line as a
NewFact, a `fact` line as the rows it becomes (versions, samples, conditions, verifications), decision and
correction lines."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TypedDict, cast

from factreg import clock
from factreg.errors import UsageError
from factreg.registry import drivers as drv
from factreg.registry.facts import (
    VERIFICATION,
    NewFact,
    in_range,
    unreadable,
)
from factreg.registry.ids import check_id, check_slug
from factreg.registry.types import VERSION_COLUMNS, VersionRow
from factreg.secrets import redact
from factreg.verdicts import Verdict


def record_line(obj: Mapping[str, Any]) -> NewFact:
    """A `record` line → NewFact (the same fields as `factreg record`'s options)."""
    allowed = {"kind", "id", "metric", "value", "samples", "unit", "spread", "n", "cond", "identity", "info",
               "conditions", "subject", "measured_at", "warn_after", "error_after", "tolerance", "note", "method",
               "raw", "direction"}
    unknown = set(obj) - allowed
    if unknown:
        raise UsageError(f"unknown field {sorted(unknown)[0]!r}")
    if not isinstance(obj.get("id"), str) or not isinstance(obj.get("metric"), str):
        raise UsageError("a record needs string fields 'id' and 'metric'")
    conditions = obj.get("conditions") or {}
    identity = {**(conditions.get("identity") or {}), **(obj.get("cond") or {}), **(obj.get("identity") or {})}
    info = {**(conditions.get("info") or {}), **(obj.get("info") or {})}
    samples = obj.get("samples")
    if samples is not None and not isinstance(samples, list):
        raise UsageError("'samples' must be a list of numbers")
    for name in ("n",):
        if obj.get(name) is not None and (not isinstance(obj[name], int) or isinstance(obj[name], bool)):
            raise UsageError(f"'{name}' must be a whole number")
    for name in ("value", "spread", "tolerance"):
        if obj.get(name) is not None and (isinstance(obj[name], bool) or not isinstance(obj[name], (int, float))):
            raise UsageError(f"'{name}' must be a number")
    method = obj.get("method")
    if method is not None and not isinstance(method, dict):
        raise UsageError("'method' must be an object")
    return NewFact(
        id=obj["id"], metric=obj["metric"], value=obj.get("value"), samples=samples, unit=obj.get("unit"),
        spread=obj.get("spread"), n=obj.get("n"), identity=identity, info=info, subject=obj.get("subject"),
        measured_at=obj.get("measured_at"), warn_after=obj.get("warn_after"), error_after=obj.get("error_after"),
        tolerance=obj.get("tolerance"), note=obj.get("note"), method=method, raw=obj.get("raw"),
        direction=obj.get("direction"),
    )


_VERIF_COLS = [c.name for c in VERIFICATION.c]


class FactRows(TypedDict):
    """A `fact` line as the rows it becomes."""

    fact: dict[str, Any]
    versions: list[VersionRow]
    samples: list[dict[str, Any]]
    conds: list[dict[str, Any]]
    verifs: list[dict[str, Any]]


def fact_rows(obj: Mapping[str, Any]) -> FactRows:
    fid = check_id(obj["id"])
    versions: list[VersionRow] = []
    samples: list[dict[str, Any]] = []
    conds: list[dict[str, Any]] = []
    for v in obj["versions"]:
        got = {c: v.get(c) for c in VERSION_COLUMNS if c != "fact_id"}
        got["fact_id"] = fid
        row = cast(VersionRow, got)
        if not isinstance(row["version"], int) or row["version"] < 1:
            raise UsageError(f"fact {fid}: bad version {row['version']!r}")
        for c in ("metric", "unit", "measured_at", "recorded_at"):
            if not isinstance(row[c], str):
                raise UsageError(f"fact {fid}: version {row['version']} has no {c}")
        if isinstance(row["value"], bool) or not isinstance(row["value"], (int, float)):
            raise UsageError(f"fact {fid}: version {row['version']} value must be a number")
        for c in ("method", "recorded_by", "origin", "source", "registry_id", "trust"):
            if got.get(c) is not None and not isinstance(got[c], str):
                raise UsageError(f"fact {fid}: version {row['version']} {c} must be text")
        given_samples = v.get("samples") or []
        if not isinstance(given_samples, list):
            raise UsageError(f"fact {fid}: version {row['version']} samples must be a list of numbers")
        # What a reader would skip as unreadable is refused here: a time that is no time, flags or method that
        # are not JSON, a number that is not finite.
        why = unreadable(row, given_samples)
        if why is not None:
            raise UsageError(f"fact {fid}: version {row['version']}: {why}")
        in_range(row["metric"], row["value"], given_samples, f"fact {fid}: version {row['version']}")
        if versions and (versions[0]["metric"], versions[0]["unit"]) != (row["metric"], row["unit"]):
            raise UsageError(f"fact {fid}: version {row['version']} measures {row['metric']} ({row['unit']}), "
                             f"version {versions[0]['version']} {versions[0]['metric']} ({versions[0]['unit']})")
        versions.append(row)
        samples.extend({"fact_id": fid, "version": row["version"], "idx": i, "value": float(x)}
                       for i, x in enumerate(given_samples))
        given = v.get("conditions") or {}
        for kind in ("identity", "info"):
            conds.extend({"fact_id": fid, "version": row["version"], "key": k, "value": str(val), "kind": kind}
                         for k, val in (given.get(kind) or {}).items())
    fact = {k: obj.get(k) for k in ("id", "current_version", "created_at", "superseded_by", "superseded_at",
                                    "supersede_reason", "ended_at")}
    if fact["current_version"] not in {v["version"] for v in versions}:
        raise UsageError(f"fact {fid}: current_version {fact['current_version']!r} is not one of its versions")
    verifs = []
    for r in obj.get("verifications") or []:
        if not isinstance(r, dict):
            raise UsageError(f"fact {fid}: a verification must be an object")
        when = r.get("verified_at")
        try:
            clock.parse(when if isinstance(when, str) else "")
        except UsageError:
            raise UsageError(f"fact {fid}: verification verified_at {r.get('verified_at')!r} is not a time") from None
        verif = {c: r.get(c) for c in _VERIF_COLS}
        verif["fact_id"] = fid
        why = _verification_problem(verif, {v["version"]: v for v in versions})
        if why is not None:
            which = f"verification {str(r['pk'])[:20]}" if r.get("pk") is not None else "a verification"
            raise UsageError(f"fact {fid}: {which} {why}")
        verifs.append(verif)
    return {"fact": fact, "versions": versions, "samples": samples, "conds": conds, "verifs": verifs}


_VERDICTS = frozenset({*(v.value for v in Verdict), "skipped"})
_EMPTY: dict[Any, Any] = {"{}": {}, "[]": []}  # what most verifications hold, read without the JSON parser


def _verification_problem(verif: Mapping[str, Any], versions: Mapping[int, VersionRow]) -> str | None:
    """Why an imported verification row cannot be stored as a verification of this fact, or None: what `verify`
    writes, checked field by field (a value that is no number, samples that are no JSON list, an unknown verdict,
    a version the fact does not have)."""
    pk = verif.get("pk")
    if pk is not None and (isinstance(pk, bool) or not isinstance(pk, int) or not 1 <= pk < 2**63):
        return f"has pk {str(pk)[:40]!r}: not a whole number of at least 1"
    version = verif.get("fact_version")
    if isinstance(version, bool) or not isinstance(version, int) or version not in versions:
        return f"names version {str(version)[:20]!r}, which the fact does not have"
    if verif.get("verdict") not in _VERDICTS:
        return f"has verdict {str(verif.get('verdict'))[:40]!r}: not one of {', '.join(sorted(_VERDICTS))}"
    for col in ("method_kind", "hostname", "message", "raw"):
        if verif.get(col) is not None and not isinstance(verif[col], str):
            return f"{col} must be text"
    if not isinstance(verif.get("method_kind"), str):
        return "has no method_kind"
    for col in ("value", "spread", "p_value", "rel_diff"):
        x = verif.get(col)
        if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x)):
            return f"{col} {str(x)[:40]!r} is not a finite number"
    for col in ("n", "needed_n"):
        x = verif.get(col)
        if x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < 1):
            return f"{col} {str(x)[:40]!r} is not a whole number of at least 1"
    samples: Any = []
    for col, kind in (("samples", list), ("observed", dict), ("diff", dict)):
        text = verif.get(col)
        if text is None:
            continue
        try:
            value = (_EMPTY[text] if text in _EMPTY else json.loads(text)) if isinstance(text, str) else None
        except ValueError:
            value = None
        if not isinstance(value, kind):
            return f"{col} {str(text)[:40]!r} is not a JSON {'list' if kind is list else 'object'}"
        if col == "samples":
            samples = value
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in samples):
        return "has a sample that is not a finite number"
    row = versions[version]
    try:
        in_range(row["metric"], verif["value"] if verif.get("value") is not None else 0.0, samples, "it")
    except UsageError as exc:
        return exc.message.removeprefix("it: ")
    return None


def required(obj: Mapping[str, Any], table: Any, kind: str) -> Mapping[str, Any]:
    """A decision or correction line must give every column the table requires."""
    for col in table.c:
        if col.nullable or col.default is not None or (col.primary_key and col.autoincrement is True):
            continue
        if col.name == "pk":
            continue
        if obj.get(col.name) is None:
            raise UsageError(f"a {kind} line needs {col.name!r}")
    return obj


# Every status a decision can have: `add` makes proposed or accepted, `revert` and `supersede` the last two.
DECISION_STATUSES = ("proposed", "accepted", "rejected", "deprecated", "superseded", "reverted")
CITE_FIELDS = {"fact_id", "fact_version", "value", "spread", "unit"}


def _whole(value: Any, name: str, optional: bool = False) -> int | None:
    """A whole number ≥ 1 (a decision number, a version, a row number)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name!r} must be a whole number ≥ 1, got {value!r}")
    return value


def _text(value: Any, name: str, optional: bool = True) -> str | None:
    """Free text: a string (redacted, as the command that stores it would), or None where allowed."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{name!r} must be a string")
    return redact(value)


def _number(value: Any, name: str, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError(f"{name!r} must be a finite number, got {value!r}")
    return value


def decision_line(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A decision line, each field checked as the command that records it checks it (`decision add`, `revert`,
    `supersede`): its slug and dates end up in a file name and in front matter."""
    out = dict(obj)
    number = _whole(obj["number"], "number")
    title = _text(obj["title"], "title", optional=False)
    if not (title or "").strip():
        raise UsageError("a decision needs a title")
    out["title"] = title
    check_slug(obj["slug"])
    if obj["status"] not in DECISION_STATUSES:
        raise UsageError(f"'status' must be one of {', '.join(DECISION_STATUSES)}, got {obj['status']!r}")
    clock.check_date(obj["date"], "'date'")
    clock.parse(_text(obj["created_at"], "created_at", optional=False) or "", "'created_at'")
    if obj.get("reverted_at") is not None:
        clock.check_date(obj["reverted_at"], "'reverted_at'")
    if obj.get("revert_fact") is not None:
        check_id(obj["revert_fact"])
    # Drivers and the review date, checked as `decision add --driver/--review-by` checks them; stored canonical.
    out["drivers"] = drv.dumps(drv.loads(obj.get("drivers")))
    if obj.get("review_by") is not None:
        clock.check_date(obj["review_by"], "'review_by'")
    for name in ("context", "outcome", "revert_reason"):
        out[name] = _text(obj.get(name), name)
    makers = obj.get("decided_by", "[]")
    try:
        names = json.loads(makers) if isinstance(makers, str) else None
    except ValueError:
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise UsageError("'decided_by' must be a JSON list of names, as the export writes it")
    out["decided_by"] = json.dumps([redact(n) for n in names], ensure_ascii=False)
    if _whole(obj.get("superseded_by"), "superseded_by", optional=True) == number:
        raise UsageError("a decision cannot supersede itself")
    cites = obj.get("cites") or []
    if not isinstance(cites, list):
        raise UsageError("'cites' must be a list")
    for cite in cites:
        if not isinstance(cite, dict) or set(cite) - CITE_FIELDS or not {"fact_id", "fact_version", "value",
                                                                         "unit"} <= set(cite):
            raise UsageError(f"a cite has the fields {', '.join(sorted(CITE_FIELDS))} (spread may be null)")
        check_id(cite["fact_id"])
        _whole(cite["fact_version"], "fact_version")
        _number(cite["value"], "value")
        _number(cite.get("spread"), "spread", optional=True)
        if not isinstance(cite["unit"], str):
            raise UsageError("a cite's 'unit' must be a string")
    return out


def correction_line(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A correction line, each field checked as `correct` makes it."""
    out = dict(obj)
    _whole(obj.get("pk"), "pk", optional=True)
    check_id(obj["old_fact_id"])
    _whole(obj["old_version"], "old_version")
    if obj.get("new_fact_id") is not None:
        check_id(obj["new_fact_id"])
    _whole(obj.get("new_version"), "new_version", optional=True)
    _whole(obj.get("verification"), "verification", optional=True)
    out["cause"] = _text(obj.get("cause"), "cause")
    clock.parse(_text(obj["created_at"], "created_at", optional=False) or "", "'created_at'")
    note = obj.get("note_path")
    if note is not None:
        parts = note.split("/") if isinstance(note, str) else []
        if (parts[:2] != ["facts", "corrections"] or len(parts) != 3 or not parts[2].endswith(".md")
                or parts[2].startswith(".") or "\\" in note or not note.isprintable()):
            raise UsageError(f"'note_path' must be facts/corrections/NAME.md, got {note!r}")
    return out
