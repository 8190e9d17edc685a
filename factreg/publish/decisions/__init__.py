"""Decisions: MADR-compatible decision records that cite facts as data, with the value each relied on.

A decision is `needs review` when a fact it cites has since been refuted, retracted, superseded, gone stale,
become unverifiable, changed conditions, or moved outside its tolerance in a newer version; when one of its
drivers (`registry/drivers.py`: `day/35b-a3b/e2e < 1.0 s`) no longer holds for the facts as they are now; or
when its review date (`--review-by`) has passed. Nothing of that is stored: it is worked out whenever the
decision is read. Revert and supersede links are stored as data and rendered into the front matter of
`decisions/NNNN-<slug>.md`.

The package, one module per job: `data` (a decision's shapes, statuses and file name), `recording` (`add`,
`revert`, `supersede`), `review` (decisions read back with their review reasons) and `files` (rendered and
written). Callers use the names below, `from factreg.publish import decisions`.
"""

from __future__ import annotations

from factreg.publish.decisions.data import (
    CURRENT_FIELDS,
    FOLDER,
    MAX_SLUG,
    NEEDS_REVIEW,
    OPEN,
    REVIEW_STATUSES,
    STATUSES,
    SUCCESSOR_FIELDS,
    Cite,
    CitedFact,
    CiteRow,
    DecisionData,
    DecisionLink,
    Reverted,
    file_name,
)
from factreg.publish.decisions.files import render, write_files
from factreg.publish.decisions.recording import add, parse_cites, revert, supersede
from factreg.publish.decisions.review import (
    cite_review,
    cited_facts,
    citing,
    get,
    list_decisions,
    needing_review,
    stable_reason,
)

__all__ = [
    "CURRENT_FIELDS", "FOLDER", "MAX_SLUG", "NEEDS_REVIEW", "OPEN", "REVIEW_STATUSES", "STATUSES", "SUCCESSOR_FIELDS",
    "Cite", "CiteRow", "CitedFact", "DecisionData", "DecisionLink", "Reverted", "add", "cite_review", "cited_facts",
    "citing", "file_name", "get", "list_decisions", "needing_review", "parse_cites", "render", "revert",
    "stable_reason", "supersede", "write_files",
]
