"""`retract ID --because "…"`: withdraw a wrong fact that nothing replaces — a correction row without a successor,
its note listing what relied on the fact, in the same transaction as a correction (`transaction.run`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, insert, select

from factreg import clock
from factreg.docs.markers import Citation
from factreg.errors import NotFound, UsageError
from factreg.publish.corrections import transaction
from factreg.publish.corrections.listing import (
    CORRECTION,
    CorrectionData,
    _note_is_for,
    _rel,
    _today,
    _with_marker,
    list_corrections,
    note_location,
)
from factreg.publish.corrections.note import NOTE_FIELDS, _decision_links, _documents, status_once_superseded
from factreg.publish.corrections.workflow import affected
from factreg.registry import display
from factreg.registry import facts as factmod
from factreg.registry.ids import check_id, ref
from factreg.registry.store import Registry
from factreg.registry.types import FactData
from factreg.secrets import redact

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.publish.decisions import DecisionData


def retraction_data(date: str, fact: FactData, because: str, citations: Sequence[Citation],
                    decisions: Sequence[DecisionData], out: Path, note_path: Path, lang: str = "en") -> dict[str, Any]:
    """What a retraction note shows, as plain data (`decisions` with their status after it)."""
    return {
        "date": date,
        "lang": lang,
        "fact": display.fields(fact, NOTE_FIELDS),
        "because": because,
        "documents": _documents(citations, out, note_path.parent),
        "decisions": _decision_links(decisions, out, note_path.parent),
    }


def render_retraction(data: Mapping[str, Any], fact_id: str, version: int, templates: Path | str | None = None) -> str:
    """The retraction note's text (with the marker that ties the file to `fact_id` v`version`)."""
    from factreg.publish import render as rendering

    return _with_marker(rendering.render("retraction.md.j2", {"r": data}, templates, data.get("lang")), fact_id,
                        version, "retraction")


def _retraction_row(registry: Registry, fact_id: str, version: int) -> CorrectionData | None:
    """The retraction of `fact_id` v`version`, if one is recorded."""
    for row in reversed(list_corrections(registry)):
        if (row["old_id"], row["old_version"], row["new_id"], row["verification"]) == (fact_id, version, None, None):
            return row
    return None


def _apply_retraction(registry: Registry, fact: FactData, because: str, note_rel: str) -> int:
    """One transaction: record the retraction of `fact`'s current version, while it is still current, not
    superseded and not retracted."""
    fid, version = fact["id"], fact["version"]

    def work(conn: Connection) -> int:
        found = factmod.FACT
        row = conn.execute(select(found.c.current_version, found.c.superseded_by).where(found.c.id == fid)).first()
        if row is None:
            raise NotFound(f"no fact {fid!r} in the registry")
        if row[0] != version or row[1]:
            raise UsageError(f"{fid} changed meanwhile (a new version or a successor); run the retraction again")
        taken = conn.execute(select(CORRECTION.c.pk).where(
            CORRECTION.c.old_fact_id == fid, CORRECTION.c.old_version == version,
            CORRECTION.c.new_fact_id.is_(None), CORRECTION.c.verification.is_(None))).first()
        if taken is not None:
            raise UsageError(f"{ref(fid, version)} was retracted meanwhile")
        result = conn.execute(insert(CORRECTION).values(
            old_fact_id=fid, old_version=version, new_fact_id=None, new_version=None, verification=None,
            cause=because, created_at=clock.iso(), note_path=note_rel))
        key = result.inserted_primary_key
        assert key is not None  # an INSERT of one row knows its primary key
        return int(key[0])

    return int(registry.write_retrying(work))


def _undo_retraction(registry: Registry, pk: int) -> None:
    from sqlalchemy import delete

    registry.write_retrying(lambda conn: conn.execute(delete(CORRECTION).where(CORRECTION.c.pk == pk)))


def retract(
    registry: Registry,
    settings: Settings,
    fact_id: str,
    *,
    because: str,
    out: Path | None = None,
    templates: Path | str | None = None,
    date: str | None = None,
    sync_docs: bool = True,
    commit: bool = False,
    lang: str | None = None,
) -> dict[str, Any]:
    """Withdraw `fact_id` (its current version) as wrong, with nothing to replace it: record the retraction, write
    its note, re-render the decisions citing it (they now need review), sync the docs and, with `commit`, commit
    those files. Documents citing it fail `docs check` from then on.

    All or nothing, as `correct`: every refusal comes first; the registry changes in one transaction; files are
    rendered in memory, written, and committed last; a failure after the transaction puts the files back and
    takes the retraction back. Running the same command again after a run was killed finishes it."""
    from factreg.publish import decisions as decmod
    from factreg.publish import render as rendering

    config = settings.file_config
    lang = rendering.check_lang(lang or settings.get("report.lang"))
    out = Path(out) if out is not None else Path(settings.root)
    because = redact(" ".join((because or "").split()))
    if not because:
        raise UsageError("--because needs the reason the fact is wrong")
    check_id(fact_id)
    if date is not None:
        clock.check_date(date, "--date")
    if commit:
        from factreg.publish import writer as publish

        publish.check_repo(out)  # fail before anything is recorded
    fact = factmod.get(registry, fact_id, config=config)
    version = fact["version"]
    resumed = _retraction_row(registry, fact_id, version)
    if resumed is not None and resumed["cause"] != because:
        raise UsageError(f"{ref(fact_id, version)} is already retracted ({resumed['date']}: {resumed['cause']})")
    if resumed is None and fact.get("superseded_by"):
        raise UsageError(f"{fact_id} is superseded by {fact['superseded_by']}: retract that fact if it is wrong too")
    note_date = resumed["date"] if resumed is not None else (date or _today())
    note_path = (out / resumed["note_path"] if resumed is not None and resumed["note_path"]
                 else note_location(out, note_date, fact_id, version, "retraction"))
    found = affected(registry, settings, fact_id)
    planned: list[DecisionData] = [{**d, "status": status_once_superseded(d)} for d in found.decisions]
    data = retraction_data(note_date, fact, because, found.citations, planned, out, note_path, lang)
    note_text: str | None = render_retraction(data, fact_id, version, templates)  # a template error: nothing done
    if resumed is not None and _note_is_for(note_path, fact_id, version, "retraction"):
        note_text = None  # written by the interrupted run: kept as it is

    state: dict[str, Any] = {"pk": resumed["pk"] if resumed is not None else None, "decisions": []}

    def record() -> Callable[[], None]:
        pk = state["pk"] = _apply_retraction(registry, fact, because, _rel(note_path, out))
        return lambda: _undo_retraction(registry, pk)

    def render() -> transaction.Written:
        nonlocal data, note_text
        after = {d["number"]: d for d in decmod.list_decisions(registry, config)}
        decisions = state["decisions"] = [after[d["number"]] for d in found.decisions]
        recorded = retraction_data(note_date, fact, because, found.citations, decisions, out, note_path, lang)
        if note_text is not None and recorded != data:
            data, note_text = recorded, render_retraction(recorded, fact_id, version, templates)
        return transaction.Written(note_path, note_text,
                                   {out / d["path"]: decmod.render(d, templates, lang) for d in decisions},
                                   f"factreg retract {ref(fact_id, version)}: {because[:100]}")

    done = transaction.run(registry, settings, out, record=record if resumed is None else None, render=render,
                           roots=found.roots, sync_docs=sync_docs, resumed=resumed is not None, commit=commit)
    pk, decisions = state["pk"], state["decisions"]
    return {
        "correction": pk,
        "retracted": ref(fact_id, version),
        "because": because,
        "note": str(note_path),
        "written": [str(p) for p in done.written],
        "synced": [str(p) for p in done.synced],
        "changed": [str(p) for p in done.changed],
        "documents": data["documents"],
        "decisions": [d["number"] for d in decisions],
        "commit": done.commit,
        "resumed": resumed is not None,
    }
