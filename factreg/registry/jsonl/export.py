"""The JSONL export: every fact (its versions, samples, conditions and verifications), decision and correction as
one line each, in a stable order; a row that cannot be read is named and left out, never breaking the rest."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from sqlalchemy import select

from factreg.registry.facts import (
    CONDITION,
    FACT,
    SAMPLE,
    VERIFICATION,
    VERSION,
    unreadable,
)
from factreg.registry.models import CITE, CORRECTION, DECISION
from factreg.registry.store import Registry
from factreg.registry.unreadable import note_unreadable


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


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
