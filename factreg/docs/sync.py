"""`docs sync`: rewrite every citation's text from the registry, in place, atomically, only where it changes.

A marker citing a superseded fact follows the `superseded_by` chain to the live fact: its text is rendered from
that fact **and its id is rewritten to the successor's**, so the document cites the fact that holds now (the
old fact stays in the registry, linked to its successor). The marker's `format` and `asof` options are kept.

Each changed file is written to a temp file beside it, fsynced and renamed over it (factreg.atomic): a reader,
or a crash or kill mid-run, sees every file either as it was or as it should be, never half-written. Bytes
outside the marker texts (front matter, line endings, the rest of the document) are kept as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.atomic import atomic_write_bytes
from factreg.docs import check as chk
from factreg.docs import markers as mk
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
)


def sync_scanned(docs: list[chk.Scanned], index: Mapping[str, FactData], dry_run: bool = False) -> SyncResult:
    """Apply the check plan of already scanned documents; return what changed and what could not be fixed."""
    result = SyncResult()
    for doc in docs:
        result.markers += len(doc.markers)
        p = chk.plan(doc, index)
        result.problems.extend(x for x in p.problems if x.kind in UNFIXABLE)
        if not p.edits or doc.text is None:
            continue
        new = mk.replace_spans(doc.text, p.edits)
        if new == doc.text:
            continue
        if not dry_run:
            atomic_write_bytes(doc.path, new.encode("utf-8"))
        result.changed.append(doc.path)
    return result


def sync_report(
    registry: Any, paths: Iterable[Path | str], config: Mapping[str, Any] | None = None, dry_run: bool = False
) -> SyncResult:
    """Sync the citations under `paths`; `registry` may be a callable that opens it (only called when needed)."""
    docs = chk.scan(paths, config)
    index: dict[str, FactData] = {}
    if chk.needs_registry(docs):
        reg = registry() if callable(registry) else registry
        index = chk.load_index(reg, config)
    return sync_scanned(docs, index, dry_run)


def sync(registry: Any, paths: Iterable[Path | str], config: Mapping[str, Any] | None = None) -> list[Path]:
    """Rewrite the citations under `paths` from the registry; return the files that changed."""
    return sync_report(registry, paths, config).changed
