"""`correct`: what replaces the corrected version (a new version of the same id, or another fact with `--as`), the
one registry transaction that records it, and the workflow around it (docs/corrections in the module docstring of
the package)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, insert, select

from factreg import clock
from factreg.docs.markers import Citation
from factreg.errors import NotFound, UsageError
from factreg.publish.corrections import transaction
from factreg.publish.corrections.causes import comparison_facts
from factreg.publish.corrections.listing import (
    CORRECTION,
    CorrectionData,
    _note_is_for,
    _rel,
    _today,
    doc_roots,
    list_corrections,
    load_verification,
    note_location,
)
from factreg.publish.corrections.note import last_verdict, note_data, render_note, status_once_superseded
from factreg.registry import facts as factmod
from factreg.registry.ids import check_id, ref
from factreg.registry.store import Registry
from factreg.registry.types import FactData, VerificationData
from factreg.secrets import redact
from factreg.verdicts import FAILURES

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.publish.decisions import DecisionData


def fact_from_verification(old: FactData, ver: VerificationData, new_id: str, trusted: bool = True
                           ) -> factmod.NewFact:
    """The verification's measurement as a new fact (or a new version of the old one, `new_id` being its id) about
    the old fact's subject, under the observed conditions; `trusted`: whether this registry vouches for its method."""
    identity = {**old["conditions"]["identity"], **{k: str(v) for k, v in (ver.get("observed") or {}).items()}}
    samples = list(ver.get("samples") or [])
    return factmod.NewFact(
        trusted=trusted,
        id=new_id,
        metric=old["metric"],
        unit=old["unit"],
        direction=old["direction"],
        samples=samples or None,
        value=ver["value"],  # the verifier's own value (a probe's median, llama-bench's average), as it records
        spread=ver.get("spread") if ver.get("spread") is not None or not samples else None,
        n=None if samples else ver.get("n"),
        identity=identity,
        info={k: v for k, v in old["conditions"]["info"].items() if k not in identity},
        subject=old.get("subject"),
        measured_at=ver["verified_at"],
        method=old["method"],
        warn_after=old.get("warn_after"),
        error_after=old.get("error_after"),
        tolerance=old.get("tolerance"),
        note=f"re-measured by verification {ver['pk']} of {old['id']} v{old['version']}",
    )


def fact_from_fact(old: FactData, other: FactData, trusted: bool) -> factmod.NewFact:
    """Fact `other`'s measurement as a new version of `old` (`correct ID --by OTHER`): its numbers, conditions and
    date, `old`'s method (tagged only when `trusted`)."""
    samples = list(other.get("samples") or [])
    return factmod.NewFact(
        id=old["id"], metric=old["metric"], unit=old["unit"], direction=old["direction"], samples=samples or None,
        value=other["value"], spread=other.get("spread"),
        n=None if samples else other.get("n"), identity=other["conditions"]["identity"],
        info=other["conditions"]["info"], subject=old.get("subject"), measured_at=other["measured_at"],
        method=old["method"], warn_after=old.get("warn_after"), error_after=old.get("error_after"),
        tolerance=old.get("tolerance"), note=f"corrected by {ref(other['id'], other['version'])}", trusted=trusted,
    )


def _trusted(registry: Registry, fact: FactData) -> bool:
    """Whether this registry vouches for `fact`'s method (the corrected version passes its trust on, no more)."""
    from factreg.registry import provenance

    return (fact["id"], fact["version"]) in provenance.trusted(registry, [fact])


def _next_version(registry: Registry, fact_id: str) -> int:
    with registry.read() as conn:
        return factmod.last_versions(conn, [fact_id]).get(fact_id, 0) + 1


@dataclass(frozen=True)
class Replacement:
    """What replaces the old version: a new version of the same id (the default), or another fact (`--as`)."""

    old: FactData  # the fact being corrected, as `facts.get` shows it
    new: FactData  # the replacing fact or version: as recorded (`--by X --as X`), or as it will be once `pending` is
    pending: factmod.NewFact | None  # the version or fact to record; None with `--by X --as X`
    verification: VerificationData | None  # the verification it comes from
    same_id: bool = True  # a new version of the old id (nothing superseded); False: superseded by another fact


@dataclass(frozen=True)
class Affected:
    """What cites the old fact, as it is before the correction."""

    roots: list[Path]  # the configured docs roots that exist
    citations: list[Citation]  # the citations of the old fact under those roots
    decisions: list[DecisionData]  # the decisions citing the old fact (as `decisions.list_decisions` shows them)


@dataclass(frozen=True)
class Applied:
    """What the registry holds once the correction is applied."""

    correction: int  # the correction row's number
    new: FactData  # the replacing fact as recorded
    created: bool = False  # whether the correction recorded that fact (from a verification)


def replacement(
    registry: Registry,
    config: Mapping[str, Any],
    old_id: str,
    *,
    by: str | None = None,
    verification: int | None = None,
    new_id: str | None = None,
) -> Replacement:
    """Step 1: check the request and decide what replaces the old version: by default a new version of the same id
    (from the verification, or from fact `by`); with `--as`, another fact that supersedes it.

    Reads only; every refusal (UsageError, NotFound) happens here, before anything is written."""
    check_id(old_id)
    if (by is None) == (verification is None):
        raise UsageError("give exactly one of --by and --verification")
    old = factmod.get(registry, old_id, config=config)
    if old.get("superseded_by"):
        raise UsageError(f"{old_id} is already superseded by {old['superseded_by']}")
    if new_id is not None:
        check_id(new_id)
        if new_id == old_id:
            new_id = None  # `--as ID`: the same id, the default
    trusted = _trusted(registry, old)
    if by is not None:
        check_id(by)
        if new_id is not None and new_id != by:
            raise UsageError(f"with --by, --as names that fact: `--by {by} --as {by}` supersedes {old_id} by {by}; "
                             f"without --as, {by}'s value becomes a new version of {old_id}")
        other = factmod.get(registry, by, config=config)
        if by == old_id:
            raise UsageError(f"{old_id} cannot correct itself")
        if other.get("superseded_by"):
            raise UsageError(f"{by} is itself superseded by {other['superseded_by']}")
        if (other["metric"], other["unit"]) != (old["metric"], old["unit"]):
            raise UsageError(
                f"{old_id} is {old['metric']} ({old['unit']}) but {other['id']} is "
                f"{other['metric']} ({other['unit']}): a correction replaces a value of the same metric"
            )
        if new_id is not None:  # the claim changes: superseded by the other fact
            return Replacement(old=old, new=other, pending=None, verification=None, same_id=False)
        pending = fact_from_fact(old, other, trusted)
        preview = factmod.preview(pending, version=_next_version(registry, old_id))
        return Replacement(old=old, new=preview, pending=pending, verification=None)
    assert verification is not None
    ver_data = load_verification(registry, verification)
    if ver_data["fact_id"] != old_id:
        raise UsageError(f"verification {verification} is of {ver_data['fact_id']}, not {old_id}")
    if ver_data["verdict"] in FAILURES or ver_data["value"] is None:
        raise UsageError(
            f"verification {verification} could not measure ({ver_data['verdict']}): there is no value to correct with"
        )
    if new_id is None:  # the default: what the verification measured is the fact's new version
        pending = fact_from_verification(old, ver_data, old_id, trusted)
        preview = factmod.preview(pending, version=_next_version(registry, old_id))
        return Replacement(old=old, new=preview, pending=pending, verification=ver_data)
    try:
        factmod.get(registry, new_id)
        raise UsageError(f"--as {new_id}: that fact already exists; use --by {new_id} --as {new_id}")
    except NotFound:
        pass
    pending = fact_from_verification(old, ver_data, new_id, trusted)
    preview = factmod.preview(pending)  # validates before anything is written; a new id is recorded as v1
    return Replacement(old=old, new=preview, pending=pending, verification=ver_data, same_id=False)


def affected(registry: Registry, settings: Settings, old_id: str) -> Affected:
    """The documents (under the configured docs roots) and the decisions that cite `old_id`, as they are now."""
    from factreg.publish import decisions as decmod

    roots = [r for r in doc_roots(settings) if r.exists()]
    citations: list[Citation] = []
    if roots:
        from factreg.docs.sync import find_citations

        citations = [c for c in find_citations(roots) if c.fact_id == old_id]
    before = decmod.citing(decmod.list_decisions(registry, settings.file_config), old_id)
    return Affected(roots=roots, citations=citations, decisions=list(before))


def _supersede_in(conn: Connection, old_id: str, new_id: str, reason: str) -> None:
    """Link `old_id` to its successor `new_id` inside the caller's transaction (the checks of `facts.supersede`)."""
    from sqlalchemy import update

    fact = factmod.FACT
    links = {fid: link for fid, link in conn.execute(
        select(fact.c.id, fact.c.superseded_by).where(fact.c.id.in_([old_id, new_id])))}
    for fid in (old_id, new_id):
        if fid not in links:
            raise NotFound(f"no fact {fid!r} in the registry")
    if links[old_id]:
        raise UsageError(f"{old_id} is already superseded by {links[old_id]}")
    nxt: str | None = new_id
    seen = {old_id}
    while nxt:
        if nxt in seen:
            raise UsageError(f"{new_id} is (transitively) superseded by {old_id}: that would make a loop")
        seen.add(nxt)
        nxt = conn.execute(select(fact.c.superseded_by).where(fact.c.id == nxt)).scalar()
    conn.execute(update(fact).where(fact.c.id == old_id).values(
        superseded_by=new_id, superseded_at=clock.iso(), supersede_reason=reason))


def apply(
    registry: Registry,
    rep: Replacement,
    *,
    verification: int | None,
    cause: str | None,
    note_rel: str,
) -> Applied:
    """Step 2, one transaction: record the corrected version of the same id (or the replacing fact, and supersede the
    old one by it), and the correction. All of it lands or none of it does."""
    old = rep.old
    rows = factmod.build_rows(rep.pending) if rep.pending is not None else None
    new_id = rep.new["id"]
    reason = (
        " ".join(cause.split())
        if cause
        else (f"corrected by verification {verification}" if verification is not None else f"corrected by {new_id}")
    )

    def work(conn: Connection) -> int:
        new_version = rep.new["version"]
        if rows is not None:
            if rep.same_id:
                now = factmod.current_versions(conn, [old["id"]], lock=True).get(old["id"])
                if now != old["version"]:
                    raise UsageError(f"{old['id']} has a new version meanwhile (v{now}); run the correction again")
            elif factmod.current_versions(conn, [new_id], lock=True):
                raise UsageError(f"{new_id} was recorded meanwhile; run the correction again")
            new_version = factmod.write_versions(conn, [rows])[0]
        if not rep.same_id:
            _supersede_in(conn, old["id"], new_id, redact(reason))
        result = conn.execute(
            insert(CORRECTION).values(
                old_fact_id=old["id"],
                old_version=old["version"],
                new_fact_id=new_id,
                new_version=new_version,
                verification=verification,
                cause=cause,
                created_at=clock.iso(),
                note_path=note_rel,
            )
        )
        if rep.same_id:  # the corrected version is never current again, whatever its date
            factmod.settle_current(conn, [old["id"]])
        key = result.inserted_primary_key
        assert key is not None  # an INSERT of one row knows its primary key
        return int(key[0])

    pk = int(registry.write_retrying(work))
    return Applied(correction=pk, new=factmod.get(registry, new_id), created=rows is not None)


def undo(registry: Registry, applied: Applied, old_id: str) -> None:
    """Take back what `apply` recorded, in one transaction: the correction row, the supersede link, and the version
    or fact it recorded (while nothing else refers to it)."""
    from sqlalchemy import delete, func, update

    new_id, new_version = applied.new["id"], applied.new["version"]

    def work(conn: Connection) -> None:
        conn.execute(delete(CORRECTION).where(CORRECTION.c.pk == applied.correction))
        fact = factmod.FACT
        conn.execute(update(fact).where(fact.c.id == old_id, fact.c.superseded_by == new_id).values(
            superseded_by=None, superseded_at=None, supersede_reason=None))
        if not applied.created:
            return
        if new_id == old_id:  # the version it added, unless someone verified it meanwhile
            checks = conn.execute(select(func.count()).select_from(factmod.VERIFICATION).where(
                factmod.VERIFICATION.c.fact_id == new_id, factmod.VERIFICATION.c.fact_version == new_version)).scalar()
            if checks:
                return
            for table in (factmod.SAMPLE, factmod.CONDITION, factmod.VERSION):
                conn.execute(delete(table).where(table.c.fact_id == new_id, table.c.version == new_version))
            factmod.settle_current(conn, [new_id])
            return
        versions = conn.execute(select(func.count()).select_from(factmod.VERSION)
                                .where(factmod.VERSION.c.fact_id == new_id)).scalar()
        checks = conn.execute(select(func.count()).select_from(factmod.VERIFICATION)
                              .where(factmod.VERIFICATION.c.fact_id == new_id)).scalar()
        if versions != 1 or checks:
            return  # someone recorded or verified it meanwhile: it stays
        for table in (factmod.SAMPLE, factmod.CONDITION, factmod.VERSION):
            conn.execute(delete(table).where(table.c.fact_id == new_id))
        conn.execute(delete(fact).where(fact.c.id == new_id))

    registry.write_retrying(work)


def _interrupted(
    registry: Registry, config: Mapping[str, Any], old_id: str, by: str | None, verification: int | None,
    new_id: str | None,
) -> tuple[Replacement, Applied, CorrectionData] | None:
    """The same correction, recorded by a run that stopped before it finished (killed, or its commit failed): a
    correction row of `old_id` whose new version (of the same id) is current, or whose new fact is `old_id`'s
    successor, made as this request asks. None otherwise."""
    check_id(old_id)
    old = factmod.get(registry, old_id, config=config)
    successor = old.get("superseded_by")
    for row in reversed(list_corrections(registry)):
        if row["old_id"] != old_id or row["new_id"] is None:
            continue
        if row["new_id"] == old_id and not successor:  # a new version of the same id, current now
            if row["new_version"] != old["version"] or new_id not in (None, old_id):
                continue
            same = (verification is not None and row["verification"] == verification) or (
                by is not None and row["verification"] is None
                and str(old.get("note") or "").startswith(f"corrected by {by}@"))
            if not same:
                return None
            ver = load_verification(registry, verification) if verification is not None else None
            corrected = factmod.get(registry, old_id, row["old_version"], config=config)
            rep = Replacement(old=corrected, new=old, pending=None, verification=ver)
            return rep, Applied(correction=row["pk"], new=old, created=False), row
        if successor and (row["old_version"], row["new_id"]) == (old["version"], successor):
            same = (by is not None and by == successor and row["verification"] is None) or (
                verification is not None and row["verification"] == verification and new_id in (None, successor))
            if not same:
                return None
            new = factmod.get(registry, successor, config=config)
            ver = load_verification(registry, verification) if verification is not None else None
            rep = Replacement(old=old, new=new, pending=None, verification=ver, same_id=False)
            return rep, Applied(correction=row["pk"], new=new, created=False), row
    return None


def correct(
    registry: Registry,
    settings: Settings,
    old_id: str,
    *,
    by: str | None = None,
    verification: int | None = None,
    new_id: str | None = None,
    cause: str | None = None,
    out: Path | None = None,
    templates: Path | str | None = None,
    date: str | None = None,
    sync_docs: bool = True,
    commit: bool = False,
    lang: str | None = None,
) -> dict[str, Any]:
    """Supersede `old_id` by a fact (or by a verification recorded as a new fact), write the correction note,
    re-render the decisions citing it, sync the docs and, with `commit`, commit those files. Return what was
    done, with every file written.

    All or nothing: every refusal comes before anything is written; the registry changes in one transaction;
    then the decision files and documents are rendered in memory, the files written, and the commit made last. When
    a step after the transaction fails (a template, a write, git refusing the commit), the files are put back and
    the registry change is taken back, and the error is raised. A run killed after the transaction is finished by
    running the same command again: it finds its correction recorded and writes and commits what is missing
    (it changes nothing once everything is there)."""
    from factreg.publish import decisions as decmod
    from factreg.publish import render as rendering
    from factreg.secrets import redact

    config = settings.file_config
    lang = rendering.check_lang(lang or settings.get("report.lang"))  # English unless `[report] lang` says
    out = Path(out) if out is not None else Path(settings.root)
    cause = None if cause is None else redact(cause)
    if commit:
        from factreg.publish import writer as publish

        publish.check_repo(out)  # no repository, a detached HEAD: fail before anything is recorded
    resumed = _interrupted(registry, config, old_id, by, verification, new_id)
    if resumed is not None:
        rep, applied, row = resumed
        note_date = row["date"]
        note_path = out / row["note_path"] if row["note_path"] else note_location(out, note_date, old_id,
                                                                                   rep.old["version"])
        cause = row["cause"]
    else:
        rep = replacement(registry, config, old_id, by=by, verification=verification, new_id=new_id)
        note_date = date or _today()
        note_path = note_location(out, note_date, old_id, rep.old["version"])
    old = rep.old
    found = affected(registry, settings, old_id)
    planned: list[DecisionData] = [{**d, "status": status_once_superseded(d)} for d in found.decisions]
    compared = comparison_facts(registry, config, old, rep.new)
    decided_by = last_verdict(registry, old)
    data = note_data(note_date, old, rep.new, rep.verification, cause, found.citations, planned, out, note_path,
                     compared, lang, decided_by)
    note_text: str | None = render_note(data, old_id, old["version"], templates)
    if resumed is not None and _note_is_for(note_path, old_id, old["version"]):
        note_text = None  # written by the interrupted run, with the documents it cited then: kept as it is

    state: dict[str, Any] = {"applied": resumed[1] if resumed is not None else None, "decisions": []}

    def record() -> Callable[[], None]:
        applied = state["applied"] = apply(registry, rep, verification=verification, cause=cause,
                                           note_rel=_rel(note_path, out))  # fmt: skip
        return lambda: undo(registry, applied, old_id)

    def render() -> transaction.Written:
        nonlocal data, note_text
        new = state["applied"].new
        after = {d["number"]: d for d in decmod.list_decisions(registry, config)}
        decisions = state["decisions"] = [after[d["number"]] for d in found.decisions]
        recorded = note_data(note_date, old, new, rep.verification, cause, found.citations, decisions, out, note_path,
                             compared, lang, decided_by)  # fmt: skip
        if note_text is not None and recorded != data:
            data, note_text = recorded, render_note(recorded, old_id, old["version"], templates)
        # Decisions citing the old fact now say `needs review`: their files are rendered before any file is written.
        message = (f"factreg correct {old_id}: {ref(old_id, old['version'])} corrected, {ref(new['id'], new['version'])}"
                   " holds" if rep.same_id else f"factreg correct {old_id}: superseded by {ref(new['id'], new['version'])}")
        return transaction.Written(note_path, note_text,
                                   {out / d["path"]: decmod.render(d, templates, lang) for d in decisions}, message)

    done = transaction.run(registry, settings, out, record=record if resumed is None else None, render=render,
                           roots=found.roots, sync_docs=sync_docs, resumed=resumed is not None, commit=commit)
    applied, decisions = state["applied"], state["decisions"]
    new = applied.new
    return {
        "correction": applied.correction,
        "old": ref(old_id, old["version"]),
        "new": ref(new["id"], new["version"]),
        "same_id": rep.same_id,
        "note": str(note_path),
        "written": [str(p) for p in done.written],
        "synced": [str(p) for p in done.synced],
        "changed": [str(p) for p in done.changed],
        "causes": data["causes"],
        "documents": data["documents"],
        "decisions": [d["number"] for d in decisions],
        "commit": done.commit,
        "resumed": resumed is not None,
    }
