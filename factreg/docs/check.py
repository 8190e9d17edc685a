"""`docs check`: render every citation from the registry in memory and report what no longer holds.

A marker is a problem when its fact is unknown, stale, refuted, retracted, whose conditions changed, superseded, or when
its text differs from the current rendering. Unreadable files and broken markers are problems too. Nothing is
written: `docs sync` (factreg.docs.sync) applies the same plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.docs import markers as mk
from factreg.docs import walk
from factreg.errors import UsageError
from factreg.registry.freshness import NO_METHOD
from factreg.registry.ids import check_id

if TYPE_CHECKING:
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData

# Statuses of a cited (live) fact that make `docs check` fail. `aging` is reported by `factreg status`, not
# here: the value still holds. `unverifiable` fails: its last re-measurement could not be made (the endpoint
# answered 401, or is gone), so the doc points readers at something that no longer answers.
FAILING = ("stale", "refuted", "retracted", "conditions_changed", "unverifiable", "shifted")

FIX = {
    "unknown_fact": "record the fact (`factreg record ID …`) or correct the id in the marker",
    "stale": "re-measure it: `factreg verify ID`",
    "refuted": "`factreg correct ID --verification N` (records what verification N measured as a new version of ID "
    "and rewrites the markers citing it)",
    "retracted": "the fact was withdrawn as wrong (its correction note in facts/corrections/ says why): remove the "
    "claim, or measure it again and cite the new fact",
    "conditions_changed": "`factreg correct ID --verification N` (records what verification N measured under "
    "today's conditions as a new version of ID and rewrites the markers citing it)",
    "superseded": "run `factreg docs sync PATH`: it rewrites the marker to cite the successor",
    "unverifiable": "`factreg verify ID` says why verification N could not measure; re-measure it where it answers, "
    "or correct the doc",
    "no_method": "give it a method, then verify it: `factreg method ID --probe URL --body FILE` (or `--bench -- "
    "ARGS`), then `factreg verify ID`",
    "shifted": "its measured level has moved since its value was recorded (`factreg changes ID` shows when and "
    "why): record the new level, or correct ID, then run `factreg docs sync`",
    "text_differs": "run `factreg docs sync PATH` to rewrite the marker text from the registry",
    "bad_marker": 'fix the marker: <!-- fact: ID -->text<!-- /fact --> (options: format="…", asof)',
    "bad_format": 'fix the marker\'s format="…" to use fields the fact has',
    "supersede_chain": "fix the registry's superseded_by links for ID",
    "binary": "give only text files, or move it out of the documents folder",
    "encoding": "save the file as UTF-8",
    "too_big": "split the file, or raise [docs] max_file_mb in .factreg/config.toml",
    "unreadable": "make the file readable, or leave it out of the paths given",
    "symlink_loop": "remove the symbolic link loop, or leave it out of the paths given",
    "outside_root": "sync the document from the folder it really is in, or replace the link by the file",
    "changed_during_sync": "run `factreg docs sync PATH` again when the file is no longer being edited",
}


@dataclass
class Problem:
    """One thing `docs check` found: where, which fact, what is wrong, and how to fix it."""

    path: str
    line: int
    col: int
    kind: str
    message: str
    fact_id: str | None = None
    expected: str | None = None
    actual: str | None = None
    diff: list[str] = field(default_factory=list)
    verification: int | None = None  # the verification the fact's status comes from (refuted, …)
    how: str | None = None  # the FIX entry when it is not the kind's own (`no_method`)

    @property
    def fix(self) -> str:
        values = {"PATH": self.path, "ID": self.fact_id or "the fact",
                  "N": str(self.verification) if self.verification is not None else "latest"}
        return re.sub(r"\b(PATH|ID|N)\b", lambda m: values[m.group(1)], FIX.get(self.how or self.kind, ""))

    def as_json(self) -> dict[str, Any]:
        out = {**asdict(self), "fix": self.fix}
        for key in ("verification", "how"):  # only when they say something
            if out[key] is None:
                del out[key]
        return out


@dataclass
class Scanned:
    """A document read and parsed: its text (None when unreadable), markers and problems so far."""

    path: Path
    text: str | None
    markers: list[mk.Marker]
    problems: list[Problem]


def scan(paths: Iterable[Path | str], config: Mapping[str, Any] | None = None,
         progress: Callable[[int, str], None] | None = None) -> list[Scanned]:
    """Walk and parse the documents under `paths` (no registry needed); `progress(n, path)` after each one."""
    out: list[Scanned] = []
    for n, (path, text) in enumerate(walk.documents(paths, walk.max_bytes(config)), 1):
        if progress:
            progress(n, str(path))
        if isinstance(text, walk.Problem):
            out.append(Scanned(path, None, [], [Problem(str(path), text.line, 0, text.kind, text.message)]))
            continue
        found, bad = mk.parse(text)
        problems = [Problem(str(path), b.line, b.col, "bad_marker", b.message, b.fact_id) for b in bad]
        if found or problems:
            out.append(Scanned(path, text, found, problems))
    return out


# Up to this many cited ids, `load_index` reads only them (and their successors); more, every fact at once.
FEW_IDS = 200


def load_index(registry: Registry, config: Mapping[str, Any] | None = None,
               ids: Iterable[str] | None = None) -> dict[str, FactData]:
    """Every current fact with its status, by id; given `ids`, only what `plan` and `live_fact` look up for them
    (those facts and every fact that supersedes one of them), each as the whole index has it."""
    from factreg.registry import facts

    wanted = None if ids is None else set(ids)
    if wanted is None or len(wanted) > FEW_IDS:
        return {f["id"]: f for f in facts.list_facts(registry, config)}
    index: dict[str, FactData] = {}
    asked: set[str] = set()
    while wanted := wanted - asked:
        asked |= wanted
        index.update((f["id"], f) for f in facts.list_facts(registry, config, ids=sorted(wanted)))
        wanted = {str(f["superseded_by"]) for f in index.values() if f.get("superseded_by")}
    return index


def cited_ids(docs: Iterable[Scanned]) -> set[str]:
    """The fact ids the markers of `docs` cite."""
    return {m.fact_id for d in docs for m in d.markers}


def live_fact(fact: FactData, index: Mapping[str, FactData]) -> FactData:
    """Follow `superseded_by` to the fact that replaces `fact` now; UsageError on a loop or a missing successor."""
    seen = [fact["id"]]
    while nxt := fact.get("superseded_by"):
        if nxt in seen:
            raise UsageError(f"superseded_by links loop: {' → '.join([*seen, nxt])}")
        if nxt not in index:
            raise UsageError(f"{fact['id']} is superseded by {nxt}, which is not in the registry")
        seen.append(nxt)
        fact = index[nxt]
    return fact


@dataclass
class Plan:
    """What a document's markers should become: span edits, and the problems found on the way."""

    edits: list[tuple[int, int, str]]
    problems: list[Problem]


def plan(doc: Scanned, index: Mapping[str, FactData]) -> Plan:
    """The edits that make every marker of `doc` cite the live fact with its current rendering."""
    edits: list[tuple[int, int, str]] = []
    problems = list(doc.problems)
    path = str(doc.path)
    assert doc.text is not None or not doc.markers
    for m in doc.markers:
        here: dict[str, Any] = {"path": path, "line": m.line, "col": m.col, "fact_id": m.fact_id}
        fact = index.get(m.fact_id)
        if fact is None:
            problems.append(
                Problem(
                    **here,
                    kind="unknown_fact",
                    message=f"cites {m.fact_id}, which is not in the registry",
                    actual=m.text,
                )
            )
            continue
        try:
            live = live_fact(fact, index)
            if live["id"] != m.fact_id:  # written into the marker: a tampered registry cannot put `-->` there
                check_id(str(live["id"]))
        except UsageError as exc:
            problems.append(Problem(**here, kind="supersede_chain", message=exc.message, actual=m.text))
            continue
        try:
            expected = mk.render(live, m.format, m.asof, m.flags)
        except UsageError as exc:
            problems.append(Problem(**here, kind="bad_format", message=exc.message, actual=m.text))
            continue
        mine: list[tuple[int, int, str]] = []
        if live["id"] != m.fact_id:
            mine.append((m.id_start, m.id_end, str(live["id"])))
        if m.text != expected:
            mine.append((m.text_start, m.text_end, expected))
        diff = _diff(doc.text or "", m, mine) if mine else []
        if live["id"] != m.fact_id:
            problems.append(
                Problem(
                    **here,
                    kind="superseded",
                    message=f"cites {m.fact_id}, superseded by {live['id']} "
                    f"({fact.get('status_reason') or 'superseded'})",
                    expected=expected,
                    actual=m.text,
                    diff=diff,
                )
            )
        elif m.text != expected:
            problems.append(
                Problem(
                    **here,
                    kind="text_differs",
                    message=f"text differs from {m.fact_id}'s current rendering {expected!r}",
                    expected=expected,
                    actual=m.text,
                    diff=diff,
                )
            )
        if live.get("status") in FAILING:
            problems.append(
                Problem(
                    **{**here, "fact_id": str(live["id"])},
                    kind=str(live["status"]),
                    message=f"cites {live['id']}, which is {live['status']}: {live.get('status_reason')}",
                    expected=expected,
                    actual=m.text,
                    verification=live.get("verification"),
                    how="no_method" if str(live.get("status_reason") or "").startswith(NO_METHOD) else None,
                )
            )
        edits.extend(mine)
    return Plan(edits, problems)


# How much of the marker's line a diff shows on each side of the marker: a paragraph written as one long line
# with thousands of markers gives each problem a short diff, not the whole line (which made `docs check`
# quadratic in the markers of a paragraph, in time, memory and output).
DIFF_CONTEXT = 60


def _diff(text: str, m: mk.Marker, edits: list[tuple[int, int, str]]) -> list[str]:
    """The marker's line(s) before and after the edits, as `- old` / `+ new`: at most DIFF_CONTEXT characters of
    the line on either side of the marker, `…` where the line is cut."""
    floor = max(0, m.start - DIFF_CONTEXT)
    nl = text.rfind("\n", floor, m.start)
    lo = nl + 1 if nl >= 0 else floor
    ceil = min(len(text), m.end + DIFF_CONTEXT)
    nl = text.find("\n", m.end, ceil)
    hi = nl if nl >= 0 else ceil
    before = "…" if lo > 0 and text[lo - 1] != "\n" else ""
    after = "…" if hi < len(text) and text[hi] not in "\r\n" else ""
    old = before + text[lo:hi].rstrip("\r") + after
    new = before + mk.replace_spans(text[lo:hi], [(a - lo, b - lo, s) for a, b, s in edits]).rstrip("\r") + after
    return [f"- {line}" for line in old.split("\n")] + [f"+ {line}" for line in new.split("\n")]


def check_scanned(docs: list[Scanned], index: Mapping[str, FactData]) -> list[Problem]:
    """Every problem of already scanned documents against a loaded index."""
    out: list[Problem] = []
    for doc in docs:
        out.extend(plan(doc, index).problems)
    out.sort(key=lambda p: (p.path, p.line, p.col))
    return out


def needs_registry(docs: list[Scanned]) -> bool:
    return any(d.markers for d in docs)


def check(registry: Any, paths: Iterable[Path | str], config: Mapping[str, Any] | None = None) -> list[Problem]:
    """Check the citations under `paths`; `registry` may be a callable that opens it (only called when needed)."""
    docs = scan(paths, config)
    index: dict[str, FactData] = {}
    if needs_registry(docs):
        reg = registry() if callable(registry) else registry
        index = load_index(reg, config, cited_ids(docs))
    return check_scanned(docs, index)
