"""The JSONL import: parsed lines written in one transaction (fact lines in batches, merged with the versions
and verifications the registry holds), all or nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Table, insert, select

from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import BadInput, UsageError
from factreg.registry.facts import (
    VERIFICATION,
    VERSION,
    build_rows,
    bulk_insert,
    current_metrics,
    current_versions,
    insert_rows,
    same_metric,
    settle_current,
    write_versions,
)
from factreg.registry.jsonl.lines import FactRows, correction_line, decision_line, fact_rows, record_line, required
from factreg.registry.jsonl.parse import read_lines
from factreg.registry.models import CITE, CORRECTION, DECISION
from factreg.registry.provenance import IMPORTED, ensure_keys, tag
from factreg.registry.store import Registry, in_list, tuples
from factreg.registry.types import Prepared, VersionRow
from factreg.textfile import read_text


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
        full: list[FactRows] = []
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
                    rows_ = fact_rows(obj)
                    full.append(rows_)
                    held += len(rows_["verifs"]) + len(rows_["samples"]) + 1
                elif kind == "decision":
                    decisions.append(decision_line(required(obj, DECISION, "decision")))
                elif kind == "correction":
                    corrections.append(correction_line(required(obj, CORRECTION, "correction")))
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


def _import_full(conn: Connection, full: list[FactRows], counts: dict[str, int], name: str, trust: bool) -> None:
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
