"""Corrections: a fact's value was wrong or outdated — record what holds, write a correction note, sync the docs.

By default a correction keeps the id documents cite: `correct ID --verification N|latest` records what verification N
measured, and `correct ID --by OTHER` the value of fact OTHER, as a **new version of ID**. The wrong version stays in
ID's history, marked corrected (the correction row names both versions and the note), and is never its current
version again; the next `probe --record`/`bench` of ID feeds the same id. The new version keeps ID's method, and
gets this registry's trust tag only when the corrected version's method had a valid one (registry/provenance.py).
Nothing is superseded: `superseded_by` stays empty, the markers keep their id and `docs sync` rewrites their text;
decisions that relied on the corrected version need review ("vN was corrected").

A new id only when the claim itself changes (the case study's 28× ratio, replaced by a different comparison): `--as
NEW_ID` records the verification as fact NEW_ID (`--by OTHER --as OTHER`: OTHER itself) and supersedes ID by it —
ID is kept, linked to its successor, and `docs sync` rewrites the markers to the successor.

Registries written before keep their corrections as they were: an old correction superseded the fact by a new one
(`<id>-<YYYYMMDD>`), and its `superseded_by` link, its note and the decisions it flagged stay; `docs sync` still
follows the link, and correcting the successor now adds versions to the successor's id. No schema change was needed:
a same-id correction is a correction row whose old and new id are the same.

`retract ID --because "…"` withdraws a wrong fact that nothing replaces: a correction without a successor (no new
fact, no verification), which makes the fact's current version `retracted` (ranked with `refuted`); its note
(`…-retraction.md`) lists the documents and decisions that relied on it. It is all or nothing in the same steps
as a correction.

The package, one module per job: `workflow` (`correct`: what replaces the version, the registry transaction),
`retraction` (`retract`), `transaction` (the steps both share: record, render, write, commit — and undo on any failure), `causes`
(why the value probably differed), `note` (what a note says), `listing` (the correction rows, note names and
markers) and `wording` (the note's own sentences in its language, from a catalogue beside the templates).
"""

from __future__ import annotations

from factreg.publish.corrections.causes import interval_of, probable_causes
from factreg.publish.corrections.listing import (
    FOLDER,
    LATEST,
    CorrectionData,
    doc_roots,
    list_corrections,
    note_name,
    pick_verification,
)
from factreg.publish.corrections.note import NOTE_FIELDS
from factreg.publish.corrections.retraction import retract
from factreg.publish.corrections.transaction import Files, publish_files
from factreg.publish.corrections.workflow import correct

__all__ = [
    "FOLDER", "LATEST", "NOTE_FIELDS", "CorrectionData", "Files", "correct", "doc_roots", "interval_of",
    "list_corrections", "note_name", "pick_verification", "probable_causes", "publish_files", "retract",
]
