"""`docs sync`: rewrite every citation's text from the registry, in place, atomically, only where it changes.

A marker citing a superseded fact follows the `superseded_by` chain to the live fact: its text is rendered from
that fact **and its id is rewritten to the successor's**, so the document cites the fact that holds now (the
old fact stays in the registry, linked to its successor). The marker's `format` and `asof` options are kept.

Each changed file is written to a temp file beside it, fsynced and renamed over it (factreg.atomic): a reader,
or a crash or kill mid-run, sees every file either as it was or as it should be, never half-written. Bytes
outside the marker texts (front matter, line endings, the rest of the document) are kept as they are, and the file
keeps its encoding (UTF-8, or UTF-16 with its byte-order mark).

Edits made while sync runs are kept: just before a file is replaced, it is read again and compared with the text
the plan was made from, and once more (size, mtime_ns, inode, sha256) after the new content is on disk beside it.
A file changed in between is planned again from its new content and written (said in `notes`); one that keeps
changing is left alone after `ATTEMPTS` tries (a `changed_during_sync` problem).

Symbolic links: a document is written where it really is (a link stays a link), and only when that place is
inside the docs root it was found under (the folder given, or the folder of a file given); a link, or a link to a
folder, leading out of the root is reported (`outside_root`) and not written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.atomic import replace_if_unchanged
from factreg.docs import check as chk
from factreg.docs import markers as mk
from factreg.docs import walk
from factreg.docs.markers import Citation, find_citations

if TYPE_CHECKING:
    from factreg.registry.types import FactData

__all__ = ["Citation", "SyncResult", "find_citations", "sync", "sync_scanned", "sync_report"]


@dataclass
class SyncResult:
    """Files rewritten, and the problems that kept markers from being rewritten (unknown fact, bad format…)."""

    changed: list[Path] = field(default_factory=list)
    problems: list[chk.Problem] = field(default_factory=list)
    markers: int = 0
    notes: list[str] = field(default_factory=list)  # files planned again because they changed while sync ran


# Problems that sync cannot fix by rewriting; reported so a sync run does not look clean when it is not.
UNFIXABLE = (
    "unknown_fact",
    "bad_marker",
    "bad_format",
    "supersede_chain",
    "binary",
    "encoding",
    "too_big",
    "unreadable",
    "symlink_loop",
    "outside_root",
    "changed_during_sync",
)

ATTEMPTS = 3  # plans per file when it keeps changing under sync


def sync_scanned(
    docs: list[chk.Scanned],
    index: Mapping[str, FactData],
    dry_run: bool = False,
    roots: Iterable[Path | str] | None = None,
    max_bytes: int = walk.MAX_FILE_BYTES,
) -> SyncResult:
    """Apply the check plan of already scanned documents; return what changed and what could not be fixed.

    `roots` are the paths the documents were found under (each document's own folder when not given).
    """
    result = SyncResult()
    given = [Path(r) for r in roots] if roots is not None else None
    for doc in docs:
        result.markers += len(doc.markers)
        p = chk.plan(doc, index)
        if p.edits and doc.text is not None and mk.replace_spans(doc.text, p.edits) != doc.text:
            target = _target(doc.path, given)
            if isinstance(target, chk.Problem):
                p.problems.append(target)
            elif dry_run:
                result.changed.append(doc.path)
            else:
                p = _write(doc, target, p, index, max_bytes, result)
        result.problems.extend(x for x in p.problems if x.kind in UNFIXABLE)
    return result


def _target(path: Path, roots: list[Path] | None) -> Path | chk.Problem:
    """Where `path` really is, when that is inside its docs root; else the problem that keeps it from being written."""
    root = next((r for r in roots or () if r == path or r in path.parents), None)
    if root is None or root == path:
        root = path.parent
    real = Path(os.path.realpath(path))
    real_root = Path(os.path.realpath(root))
    if real == real_root or real_root in real.parents:
        return real
    how = "is a symbolic link to" if path.is_symlink() else "is reached through a symbolic link to a folder, at"
    return chk.Problem(str(path), 0, 0, "outside_root", f"{how} {real}, outside the docs root {root}: not written")


def _write(
    doc: chk.Scanned, target: Path, plan: chk.Plan, index: Mapping[str, FactData], max_bytes: int, result: SyncResult
) -> chk.Plan:
    """Write `doc`'s plan to `target` unless the file changed since it was read; then plan again from what it holds
    now (the edit is kept) and retry, up to ATTEMPTS times. Returns the plan that was applied (or the last one)."""
    text = doc.text or ""
    new = mk.replace_spans(text, plan.edits)
    for _ in range(ATTEMPTS):
        data = walk.read_bytes(target, max_bytes)
        now = data if isinstance(data, walk.Problem) else walk.decode(target, data)
        if isinstance(now, walk.Problem):
            return chk.Plan([], [chk.Problem(str(doc.path), now.line, 0, now.kind, now.message)])
        assert isinstance(data, bytes)
        if now != text:  # edited since it was read: plan again from its content
            text = now
            found, bad = mk.parse(text)
            problems = [chk.Problem(str(doc.path), b.line, b.col, "bad_marker", b.message, b.fact_id) for b in bad]
            plan = chk.plan(chk.Scanned(doc.path, text, found, problems), index)
            new = mk.replace_spans(text, plan.edits)
            result.notes.append(f"{doc.path}: changed while docs sync ran; synced again from its new content")
            if new == text:
                return plan
        if replace_if_unchanged(target, new.encode(walk.encoding_of(data)), data):
            result.changed.append(doc.path)
            return plan
    problem = chk.Problem(
        str(doc.path), 0, 0, "changed_during_sync", f"changed {ATTEMPTS} times while docs sync ran: not written"
    )
    return chk.Plan([], [*plan.problems, problem])


def sync_report(
    registry: Any, paths: Iterable[Path | str], config: Mapping[str, Any] | None = None, dry_run: bool = False
) -> SyncResult:
    """Sync the citations under `paths`; `registry` may be a callable that opens it (only called when needed)."""
    paths = list(paths)
    docs = chk.scan(paths, config)
    index: dict[str, FactData] = {}
    if chk.needs_registry(docs):
        reg = registry() if callable(registry) else registry
        index = chk.load_index(reg, config)
    return sync_scanned(docs, index, dry_run, paths, walk.max_bytes(config))


def sync(registry: Any, paths: Iterable[Path | str], config: Mapping[str, Any] | None = None) -> list[Path]:
    """Rewrite the citations under `paths` from the registry; return the files that changed."""
    return sync_report(registry, paths, config).changed
