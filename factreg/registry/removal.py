"""Removing and renaming a fact in the registry: every row that names it, in the caller's transaction.

A fact's id is in its `fact` row, its versions, samples, conditions and verifications, in the corrections that
corrected it or were made from it, in the decisions that cite it (`decision_cite`, `revert_fact`, the drivers' text),
in other facts' `superseded_by` links and `derived_from` lists, and in the trust tag of each version (an HMAC over
the id, registry/provenance.py). `rename` moves all of them; a tag that was valid under the old id is made again
under the new one (a tag that was not stays invalid: a rename never makes a method trusted). `remove` deletes the
fact's own rows and its corrections; what still names it elsewhere is the caller's to refuse or report
(publish/tidy.py).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from factreg.errors import NotFound, UsageError
from factreg.registry.store import rows

# The tables whose `fact_id` column holds a fact's own rows (children of `fact` first, then the rest).
OWN = ("sample", "condition", "verification", "fact_version")


@dataclass
class References:
    """Where a fact's id is named outside its own rows."""

    successors_of: list[str] = field(default_factory=list)  # facts superseded by it
    derived: list[str] = field(default_factory=list)  # facts derived from it (`compare --record`)
    decisions: list[int] = field(default_factory=list)  # decisions citing it, reverted because of it, or driven by it
    corrections: list[int] = field(default_factory=list)  # corrections that name it (old or new)


def counts(conn: Any, fact_id: str) -> dict[str, int]:
    """How many rows of each of its own tables the fact has."""
    return {t: int(rows(conn, f"SELECT count(*) AS n FROM {t} WHERE fact_id = :id", {"id": fact_id})[0]["n"])
            for t in OWN}


def exists(conn: Any, fact_id: str) -> bool:
    return bool(rows(conn, "SELECT 1 AS one FROM fact WHERE id = :id", {"id": fact_id}))


def _drivers(text: Any) -> list[Any]:
    from factreg.registry import drivers as drv

    try:
        return drv.loads(text)
    except UsageError:
        return []


def references(conn: Any, fact_id: str) -> References:
    """Where `fact_id` is named outside its own rows."""
    p = {"id": fact_id}
    out = References()
    out.successors_of = [r["id"] for r in rows(conn, "SELECT id FROM fact WHERE superseded_by = :id ORDER BY id", p)]
    for r in rows(conn, "SELECT fact_id, derived_from FROM fact_version WHERE derived_from LIKE :like "
                        "ORDER BY fact_id", {"like": f'%"{fact_id}"%'}):
        try:
            refs = json.loads(r["derived_from"])
        except ValueError:
            continue
        if any(isinstance(x, Mapping) and x.get("id") == fact_id for x in refs) and r["fact_id"] != fact_id:
            out.derived.append(r["fact_id"])
    out.derived = sorted(set(out.derived))
    numbers = {r["decision"] for r in rows(conn, "SELECT decision FROM decision_cite WHERE fact_id = :id", p)}
    for r in rows(conn, "SELECT number, revert_fact, drivers FROM decision"):
        if r["revert_fact"] == fact_id or any(fact_id in d.facts for d in _drivers(r["drivers"])):
            numbers.add(r["number"])
    out.decisions = sorted(numbers)
    out.corrections = [r["pk"] for r in rows(conn, "SELECT pk FROM correction WHERE old_fact_id = :id OR "
                                                   "new_fact_id = :id ORDER BY pk", p)]
    return out


def remove(conn: Any, fact_id: str) -> dict[str, int]:
    """Delete the fact's own rows and the corrections that corrected it; return how many rows of each went.

    Links to it from other facts (`superseded_by`) are cleared; decisions keep their cite (the value relied on),
    which then shows the fact as missing."""
    from sqlalchemy import text

    if not exists(conn, fact_id):
        raise NotFound(f"no fact {fact_id!r} in the registry")
    gone = counts(conn, fact_id)
    p = {"id": fact_id}
    gone["correction"] = int(rows(conn, "SELECT count(*) AS n FROM correction WHERE old_fact_id = :id", p)[0]["n"])
    for table in OWN:
        conn.execute(text(f"DELETE FROM {table} WHERE fact_id = :id"), p)
    conn.execute(text("DELETE FROM correction WHERE old_fact_id = :id"), p)
    conn.execute(text("UPDATE correction SET new_fact_id = NULL, new_version = NULL WHERE new_fact_id = :id"), p)
    conn.execute(text("UPDATE fact SET superseded_by = NULL, superseded_at = NULL, supersede_reason = NULL "
                      "WHERE superseded_by = :id"), p)
    conn.execute(text("DELETE FROM fact WHERE id = :id"), p)
    conn.execute(text("DELETE FROM notified WHERE subject = :s"), {"s": f"fact:{fact_id}"})  # what alerts reported
    return gone


def rename(conn: Any, old: str, new: str) -> dict[str, int]:
    """Move every row that names `old` to `new` (which must not exist); return how many rows of each table moved."""
    from sqlalchemy import text

    from factreg.registry import drivers as drv
    from factreg.registry import provenance

    if not exists(conn, old):
        raise NotFound(f"no fact {old!r} in the registry")
    if exists(conn, new):
        raise UsageError(f"{new} is already a fact: `factreg mv` does not merge two facts (remove one first)")
    moved = counts(conn, old)
    p = {"old": old, "new": new}
    _, key = provenance.read_keys_in(conn)
    valid: set[int] = set()
    for r in rows(conn, "SELECT version, method, trust FROM fact_version WHERE fact_id = :old", p):
        if key is not None and r["trust"] and hmac.compare_digest(
                r["trust"], provenance.tag(key, old, r["version"], r["method"])):
            valid.add(int(r["version"]))
    conn.execute(text("INSERT INTO fact (id, current_version, created_at, superseded_by, superseded_at, "
                      "supersede_reason, ended_at) SELECT :new, current_version, created_at, superseded_by, "
                      "superseded_at, supersede_reason, ended_at FROM fact WHERE id = :old"), p)
    for table in OWN:
        conn.execute(text(f"UPDATE {table} SET fact_id = :new WHERE fact_id = :old"), p)
    conn.execute(text("DELETE FROM fact WHERE id = :old"), p)
    for r in rows(conn, "SELECT version, method FROM fact_version WHERE fact_id = :new", p):
        retag = provenance.tag(key, new, r["version"], r["method"]) if key is not None and r["version"] in valid \
            else None
        conn.execute(text("UPDATE fact_version SET trust = :t WHERE fact_id = :new AND version = :v"),
                     {"t": retag, "new": new, "v": r["version"]})
    moved["superseded_by"] = conn.execute(text("UPDATE fact SET superseded_by = :new WHERE superseded_by = :old"),
                                          p).rowcount
    moved["derived_from"] = 0
    for r in rows(conn, "SELECT fact_id, version, derived_from FROM fact_version WHERE derived_from LIKE :like",
                  {"like": f'%"{old}"%'}):
        try:
            refs = json.loads(r["derived_from"])
        except ValueError:
            continue
        if not any(isinstance(x, Mapping) and x.get("id") == old for x in refs):
            continue
        refs = [{**x, "id": new} if isinstance(x, Mapping) and x.get("id") == old else x for x in refs]
        conn.execute(text("UPDATE fact_version SET derived_from = :d WHERE fact_id = :f AND version = :v"),
                     {"d": json.dumps(refs), "f": r["fact_id"], "v": r["version"]})
        moved["derived_from"] += 1
    moved["decision_cite"] = conn.execute(text("UPDATE decision_cite SET fact_id = :new WHERE fact_id = :old"),
                                          p).rowcount
    moved["decision"] = conn.execute(text("UPDATE decision SET revert_fact = :new WHERE revert_fact = :old"),
                                     p).rowcount
    for r in rows(conn, "SELECT number, drivers FROM decision WHERE drivers IS NOT NULL"):
        found = _drivers(r["drivers"])
        if not any(old in d.facts for d in found):
            continue
        renamed = [replace(d, fact=new if d.fact == old else d.fact, other=new if d.other == old else d.other)
                   for d in found]
        conn.execute(text("UPDATE decision SET drivers = :d WHERE number = :n"),
                     {"d": drv.dumps(renamed), "n": r["number"]})
        moved["decision"] += 1
    moved["correction"] = conn.execute(text("UPDATE correction SET old_fact_id = :new WHERE old_fact_id = :old"),
                                       p).rowcount
    moved["correction"] += conn.execute(text("UPDATE correction SET new_fact_id = :new WHERE new_fact_id = :old"),
                                        p).rowcount
    conn.execute(text("DELETE FROM notified WHERE subject = :new"), {"new": f"fact:{new}"})  # what alerts reported
    conn.execute(text("UPDATE notified SET subject = :new WHERE subject = :old"),
                 {"new": f"fact:{new}", "old": f"fact:{old}"})
    return moved
