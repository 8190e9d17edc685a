"""JSONL export and import: lossless backups and git-based sync of a registry.

Each line is one JSON object with a `kind`:
- `fact`: a fact with every version (samples, conditions, raw output) and every verification, as exported;
- `decision`, `correction`: decision records and corrections, as exported;
- `record` (or no kind): one new measurement in the shape of `factreg record`'s options — the
  reviewable format of hand-written data such as the case study in `facts/`.
Export → import into an empty registry → export gives identical bytes. A version's provenance travels with it
(`recorded_by`, `origin`, `source`, `registry_id`, `trust`); an imported method runs only once this registry trusts
it (registry/provenance.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, TypedDict, cast

from sqlalchemy import Connection, Table, insert, select

from factreg import clock
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import BadInput, UsageError
from factreg.registry import drivers as drv
from factreg.registry.facts import (
    CONDITION,
    FACT,
    SAMPLE,
    VERIFICATION,
    VERSION,
    NewFact,
    build_rows,
    bulk_insert,
    current_metrics,
    current_versions,
    in_range,
    insert_rows,
    same_metric,
    settle_current,
    unreadable,
    write_versions,
)
from factreg.registry.ids import check_id, check_slug
from factreg.registry.models import Correction, Decision, DecisionCite, table
from factreg.registry.provenance import IMPORTED, ensure_keys, tag
from factreg.registry.store import Registry, in_list, note_unreadable, tuples
from factreg.registry.types import VERSION_COLUMNS, Prepared, VersionRow
from factreg.secrets import redact
from factreg.textfile import read_text
from factreg.verdicts import Verdict

DECISION = table(Decision)
CITE = table(DecisionCite)
CORRECTION = table(Correction)

MAX_LINE = 50 * 1024 * 1024


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# ---------------------------------------------------------------- export


def export_lines(registry: Registry) -> Iterator[str]:
    """Every fact, decision and correction as JSONL lines, in a stable order."""
    with registry.read() as conn:
        # Sorted in Python as well: byte order whatever the server's collation, so exports are identical.
        facts = sorted(conn.execute(select(FACT).order_by(FACT.c.id)).mappings().all(), key=lambda r: r["id"])
        versions: dict[str, list[dict[str, Any]]] = {}
        for row in conn.execute(select(VERSION).order_by(VERSION.c.fact_id, VERSION.c.version)).mappings():
            versions.setdefault(row["fact_id"], []).append(dict(row))
        samples: dict[tuple[str, int], list[float]] = {}
        for fid, ver, value in conn.execute(select(SAMPLE.c.fact_id, SAMPLE.c.version, SAMPLE.c.value)
                                            .order_by(SAMPLE.c.fact_id, SAMPLE.c.version, SAMPLE.c.idx)):
            samples.setdefault((fid, ver), []).append(value)
        conds: dict[tuple[str, int], dict[str, dict[str, str]]] = {}
        for fid, ver, key, value, kind in conn.execute(select(CONDITION.c.fact_id, CONDITION.c.version,
                                                              CONDITION.c.key, CONDITION.c.value, CONDITION.c.kind)):
            conds.setdefault((fid, ver), {"identity": {}, "info": {}})[kind][key] = value
        verifs: dict[str, list[dict[str, Any]]] = {}
        for row in conn.execute(select(VERIFICATION).order_by(VERIFICATION.c.pk)).mappings():
            verifs.setdefault(row["fact_id"], []).append(dict(row))
        decisions = conn.execute(select(DECISION).order_by(DECISION.c.number)).mappings().all()
        cites: dict[int, list[dict[str, Any]]] = {}
        for row in conn.execute(select(CITE).order_by(CITE.c.decision, CITE.c.fact_id)).mappings():
            cites.setdefault(row["decision"], []).append({k: v for k, v in row.items() if k != "decision"})
        for cited in cites.values():
            cited.sort(key=lambda c: c["fact_id"])
        corrections = conn.execute(select(CORRECTION).order_by(CORRECTION.c.pk)).mappings().all()

    for fact in facts:
        out_versions = []
        bad: tuple[str, str] | None = None
        for v in versions.get(fact["id"], []):
            key = (v["fact_id"], v["version"])
            why = unreadable(v, samples.get(key, []))
            if why is not None:
                bad = bad or (f"{fact['id']}@{v['version']}", why)
            out: dict[str, Any] = {k: val for k, val in v.items() if k != "fact_id"}
            out["samples"] = samples.get(key, [])
            kinds = conds.get(key, {"identity": {}, "info": {}})
            out["conditions"] = {"identity": dict(sorted(kinds["identity"].items())),
                                 "info": dict(sorted(kinds["info"].items()))}
            out_versions.append(out)
        if fact["current_version"] not in {v["version"] for v in out_versions}:
            bad = bad or (f"{fact['id']}@{fact['current_version']}",
                          f"current_version {fact['current_version']} points past the stored versions")
        line = None if bad else _dumps_or_none({
            "kind": "fact", **dict(fact), "versions": out_versions,
            "verifications": [{k: v for k, v in r.items() if k != "fact_id"} for r in verifs.get(fact["id"], [])]})
        if line is None:
            # One bad row never breaks the export (the backup) of the rest; the command names it.
            note_unreadable(*(bad or (fact["id"], "a value that JSON cannot hold (not a finite number)")))
            continue
        yield line
    for dec in decisions:
        line = _dumps_or_none({"kind": "decision", **dict(dec), "cites": cites.get(dec["number"], [])})
        if line is None:
            note_unreadable(f"decision {dec['number']}", "a value that JSON cannot hold")
            continue
        yield line
    for cor in corrections:
        line = _dumps_or_none({"kind": "correction", **dict(cor)})
        if line is None:
            note_unreadable(f"correction {cor['pk']}", "a value that JSON cannot hold")
            continue
        yield line


def _dumps_or_none(obj: Any) -> str | None:
    """The JSON line of `obj`, or None when it holds a value JSON cannot (inf, NaN, a lone surrogate)."""
    try:
        line = dumps(obj)
        line.encode("utf-8")
    except (ValueError, TypeError):
        return None
    return line


def export(registry: Registry, out: IO[str]) -> int:
    """Write the JSONL export to `out`; return the number of lines."""
    n = 0
    for line in export_lines(registry):
        out.write(line + "\n")
        n += 1
    return n


# ---------------------------------------------------------------- import


def read_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Parse a JSONL file strictly: every non-blank line must be a JSON object."""
    return parse_text(read_text(path), str(path))


def parse_text(text: str, name: str = "<input>") -> list[tuple[int, dict[str, Any]]]:
    out = []
    # Lines end at \n only: str.splitlines() would also split inside a value holding U+0085, U+2028 or U+2029,
    # which the export writes unescaped.
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            raise BadInput(f"{name}:{lineno}: line longer than {MAX_LINE} bytes")
        try:
            obj = json.loads(line, parse_constant=_no_constant, parse_float=_finite_float, parse_int=_bounded_int)
        except (json.JSONDecodeError, ValueError) as exc:
            raise BadInput(f"{name}:{lineno}: not valid JSON ({exc})") from None
        except RecursionError:
            raise BadInput(f"{name}:{lineno}: nested more than {MAX_DEPTH} levels deep") from None
        if not isinstance(obj, dict):
            raise BadInput(f"{name}:{lineno}: expected a JSON object, got {type(obj).__name__}")
        problem = None
        if _may_hold_surrogate(line):
            problem = _unstorable(obj)
        elif line.count("[") + line.count("{") > MAX_DEPTH and _too_deep(obj):
            problem = f"nested more than {MAX_DEPTH} levels deep"
        if problem:
            raise BadInput(f"{name}:{lineno}: {problem}")
        out.append((lineno, obj))
    return out


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _may_hold_surrogate(line: str) -> bool:
    """Whether a line's parsed value may hold a lone surrogate (and needs `_unstorable`'s walk of every string): only
    from a `\\uD800`-`\\uDFFF` escape or a surrogate in the text itself (a fact line of an export has neither)."""
    if "\\u" in line and _SURROGATE_ESCAPE.search(line):
        return True
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _too_deep(obj: Any) -> bool:
    """Whether a parsed value nests more than MAX_DEPTH levels: a walk of its containers only (a fact line holds
    thousands of brackets, inside its verifications' JSON text too, but nests a few levels)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node)
                     if isinstance(v, (dict, list)))
    return False


# What an import line may hold: numbers a float or a 64-bit integer holds, text that is UTF-8, bounded nesting.
MAX_INT = 2**63 - 1
MAX_DEPTH = 32


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number factreg accepts")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(int(text)) > MAX_INT:
        raise ValueError(f"integer {text[:40]}{'…' if len(text) > 40 else ''} is out of range")
    return int(text)


def _unstorable(obj: Any) -> str | None:
    """Why a parsed line cannot be stored: too deeply nested, or a string with a lone surrogate (not UTF-8)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep"
        if isinstance(node, dict):
            stack.extend((k, depth) for k in node)
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
        elif isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return f"text {node.encode('utf-8', 'replace')[:40]!r} holds a lone surrogate (not UTF-8)"
    return None


LINE_KINDS = ("fact", "decision", "correction", "record")


def is_line(obj: Any) -> bool:
    """Whether a JSON object is a line of factreg's JSONL: a `kind` factreg writes, or a record's `id` and `metric`."""
    return isinstance(obj, dict) and (obj.get("kind") in LINE_KINDS or (
        "kind" not in obj and isinstance(obj.get("id"), str) and isinstance(obj.get("metric"), str)))


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


class _FactRows(TypedDict):
    """A `fact` line as the rows it becomes."""

    fact: dict[str, Any]
    versions: list[VersionRow]
    samples: list[dict[str, Any]]
    conds: list[dict[str, Any]]
    verifs: list[dict[str, Any]]


def _fact_rows(obj: Mapping[str, Any]) -> _FactRows:
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


def import_lines(registry: Registry, lines: Iterable[tuple[Any, ...]] | Callable[[], Iterable[tuple[Any, ...]]],
                 name: str = "<input>", min_uptime_s: float = DEFAULT_MIN_UPTIME_S, *,
                 trust: bool = False) -> dict[str, int]:
    """Import parsed lines (`(lineno, obj)`, or `(lineno, obj, source file)`) in one transaction; nothing is
    written when any line is bad.

    Fact lines are written as they come, _BATCH points at a time, in that transaction: a million verification points
    are never held at once. `lines` may be a function returning them afresh (read again if the write is retried).

    Imported methods are data: a record line's version is marked imported from its file and untrusted; a fact
    line keeps the provenance and tag it carries (valid only in the registry that exported it). With `trust`,
    this registry tags every imported method as trusted."""

    def work(conn: Connection) -> dict[str, int]:
        counts = {"facts": 0, "versions": 0, "skipped": 0, "verifications": 0, "decisions": 0, "corrections": 0}
        records: list[Prepared] = []
        full: list[_FactRows] = []
        decisions: list[Mapping[str, Any]] = []
        corrections: list[Mapping[str, Any]] = []
        held = 0
        for item in lines() if callable(lines) else lines:
            lineno, obj = item[0], item[1]
            source = item[2] if len(item) > 2 else Path(name).name
            kind = obj.get("kind", "record")
            try:
                if kind == "record":
                    new = record_line(obj)
                    new.origin, new.source, new.trusted = IMPORTED, source, trust
                    records.append(build_rows(new, min_uptime_s))
                elif kind == "fact":
                    if not isinstance(obj.get("versions"), list) or not isinstance(obj.get("id"), str):
                        raise UsageError("a fact line needs 'id' and a list of 'versions'")
                    rows_ = _fact_rows(obj)
                    full.append(rows_)
                    held += len(rows_["verifs"]) + len(rows_["samples"]) + 1
                elif kind == "decision":
                    decisions.append(_decision_line(_required(obj, DECISION, "decision")))
                elif kind == "correction":
                    corrections.append(_correction_line(_required(obj, CORRECTION, "correction")))
                else:
                    raise UsageError(f"unknown kind {kind!r}")
            except UsageError as exc:
                raise BadInput(f"{name}:{lineno}: {exc.message}") from None
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise BadInput(f"{name}:{lineno}: malformed {kind} line ({type(exc).__name__}: {exc})") from None
            if held >= _BATCH:
                _import_full(conn, full, counts, name, trust)
                full, held = [], 0
        _import_full(conn, full, counts, name, trust)
        if records:
            write_versions(conn, records)
            counts["versions"] += len(records)
        _import_simple(conn, DECISION, "number", decisions, counts, "decisions", extra=_decision_cites)
        _check_links(conn, decisions)
        _import_simple(conn, CORRECTION, "pk", corrections, counts, "corrections")
        return counts

    from sqlalchemy.exc import DBAPIError

    try:
        return dict(registry.write_retrying(work))
    except DBAPIError as exc:  # a value the database refuses (wrong type, a constraint): the whole batch is refused
        raise BadInput(f"{name}: the registry refused a line ({str(exc.orig or exc).splitlines()[0]}); "
                       "nothing imported") from None


# Rows of fact lines (verifications, samples, a fact) held before they are written, in the import's transaction.
_BATCH = 50_000


def _required(obj: Mapping[str, Any], table: Any, kind: str) -> Mapping[str, Any]:
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


def _decision_line(obj: Mapping[str, Any]) -> dict[str, Any]:
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


def _correction_line(obj: Mapping[str, Any]) -> dict[str, Any]:
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


def _check_links(conn: Connection, decisions: list[Mapping[str, Any]]) -> None:
    """Every imported `superseded_by` names a decision the registry holds (the batch included)."""
    wanted = {d["superseded_by"] for d in decisions if d.get("superseded_by") is not None}
    if not wanted:
        return
    have = {n for (n,) in conn.execute(select(DECISION.c.number).where(DECISION.c.number.in_(sorted(wanted))))}
    missing = sorted(wanted - have)
    if missing:
        raise BadInput(f"a decision is superseded by decision {missing[0]}, which is not there; nothing imported")


def _same(a: Mapping[str, Any], b: Mapping[str, Any], keys: Iterable[str]) -> bool:
    return all(a.get(k) == b.get(k) for k in keys)


def _import_full(conn: Connection, full: list[_FactRows], counts: dict[str, int], name: str, trust: bool) -> None:
    if not full:
        return
    existing = current_versions(conn, [f["fact"]["id"] for f in full], lock=True)
    known = current_metrics(conn, list(existing)) if existing else {}
    new_facts: list[dict[str, Any]] = []
    versions: list[VersionRow] = []
    samples: list[dict[str, Any]] = []
    conds: list[dict[str, Any]] = []
    bumps: list[dict[str, Any]] = []
    verifs: list[dict[str, Any]] = []
    for f in full:
        fid = f["fact"]["id"]
        if fid not in existing:
            new_facts.append(f["fact"])
            versions.extend(f["versions"])
            samples.extend(f["samples"])
            conds.extend(f["conds"])
            counts["facts"] += 1
            counts["versions"] += len(f["versions"])
            verifs.extend(f["verifs"])
            continue
        have = {r["version"]: dict(r) for r in conn.execute(select(VERSION).where(VERSION.c.fact_id == fid)).mappings()}
        top = existing[fid]
        for v in f["versions"]:
            if v["version"] not in have:
                same_metric(known, fid, v["metric"], v["unit"])
            old = have.get(v["version"])
            if old is not None:
                if not _same(old, v, ("metric", "value", "measured_at", "unit")):
                    raise BadInput(f"{name}: fact {fid} version {v['version']} differs from the registry's; "
                                   "nothing imported")
                counts["skipped"] += 1
                continue
            versions.append(v)
            samples.extend(s for s in f["samples"] if s["version"] == v["version"])
            conds.extend(c for c in f["conds"] if c["version"] == v["version"])
            top = max(top, v["version"])
            counts["versions"] += 1
        if top != existing[fid]:
            bumps.append({"fid": fid, "cv": top})
        seen = {(r["fact_version"], r["verified_at"], r["verdict"]) for r in conn.execute(
            select(VERIFICATION.c.fact_version, VERIFICATION.c.verified_at, VERIFICATION.c.verdict)
            .where(VERIFICATION.c.fact_id == fid)).mappings()}
        verifs.extend(r for r in f["verifs"] if (r["fact_version"], r["verified_at"], r["verdict"]) not in seen)
    if trust and versions:
        _, key = ensure_keys(conn)
        for v in versions:
            v["trust"] = tag(key, v["fact_id"], v["version"], v["method"])
    insert_rows(conn, new_facts, versions, samples, conds, bumps)
    # The latest measured is current, as for any write; a new fact of one version can only be at that version.
    settle_current(conn, [f["fact"]["id"] for f in full if f["fact"]["id"] in existing or len(f["versions"]) > 1])
    if verifs:
        given = sorted({r["pk"] for r in verifs if isinstance(r.get("pk"), int)})
        taken: set[Any] = set()
        for i in range(0, len(given), 500):  # the numbers this batch names that are taken, not every number
            clause, params = in_list("pk", given[i:i + 500])
            taken.update(pk for (pk,) in tuples(conn, f"SELECT pk FROM verification WHERE pk IN {clause}", params))
        numbered, unnumbered = [], []
        for r in verifs:
            if r.get("pk") is None or r["pk"] in taken:  # no number: the database gives one (NULL fails on PostgreSQL)
                unnumbered.append({k: v for k, v in r.items() if k != "pk"})
            else:
                taken.add(r["pk"])
                numbered.append(r)
        for batch in (numbered, unnumbered):  # in order within each, one executemany each
            if batch:
                bulk_insert(conn, "verification", batch)
        counts["verifications"] += len(verifs)


def _decision_cites(conn: Connection, obj: Mapping[str, Any]) -> None:
    rows = [{**c, "decision": obj["number"]} for c in obj.get("cites") or []]
    if rows:
        conn.execute(insert(CITE), rows)


def _import_simple(conn: Connection, table: Table, key: str, objs: list[Mapping[str, Any]], counts: dict[str, int],
                   label: str, extra: Callable[[Connection, Mapping[str, Any]], None] | None = None) -> None:
    cols = [c.name for c in table.c]
    for obj in objs:
        row = {c: obj.get(c) for c in cols}
        found = conn.execute(select(table).where(table.c[key] == row[key])).mappings().first()
        if found is not None:
            if dict(found) != row:
                raise BadInput(f"{label[:-1]} {row[key]} differs from the registry's; nothing imported")
            continue
        conn.execute(insert(table), [row])
        if extra:
            extra(conn, obj)
        counts[label] += 1


def import_files(registry: Registry, paths: list[Path], min_uptime_s: float = DEFAULT_MIN_UPTIME_S, *,
                 trust: bool = False,
                 progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None) -> dict[str, int]:
    """Import JSONL files, all in one transaction (`trust`: this registry trusts their methods). `progress`, when
    given, wraps the parsed lines (and their count) in an iterable that reports how far the import is."""
    name = ", ".join(str(p) for p in paths)

    def lines() -> Iterator[tuple[int, Mapping[str, Any], str]]:
        for path in paths:  # one file's parsed lines held at a time
            yield from ((n, o, Path(path).name) for n, o in read_lines(path))

    if progress is None:
        return import_lines(registry, lines, name, min_uptime_s, trust=trust)
    total = sum(sum(1 for line in read_text(p).split("\n") if line.strip()) for p in paths)
    return import_lines(registry, lambda: progress(lines(), total), name, min_uptime_s, trust=trust)
