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
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from sqlalchemy import Connection, insert, select

from factreg import clock, fmt, terminal
from factreg.docs.markers import Citation
from factreg.errors import NotFound, UsageError
from factreg.registry import conditions as cond
from factreg.registry import display
from factreg.registry import facts as factmod
from factreg.registry.ids import check_id, ref
from factreg.registry.models import Correction
from factreg.registry.store import Registry
from factreg.registry.types import FactData, VerificationData
from factreg.registry.verdicts import FAILURES
from factreg.secrets import redact

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.publish.decisions import DecisionData

CORRECTION = Correction.__table__  # type: ignore[attr-defined]
FOLDER = "facts/corrections"
BUILD_KEYS = ("build", "build_commit", "llama_build", "server_build")


def note_name(date: str, fact_id: str) -> str:
    """`2026-10-26-voice-35b-a3b-e2e.md`: slashes in the id become dashes."""
    return f"{date}-{fact_id.replace('/', '-')}.md"


def load_verification(registry: Registry, pk: int) -> VerificationData:
    """One verification as JSON data; NotFound when there is none with that number."""
    with registry.read() as conn:
        row = conn.execute(select(factmod.VERIFICATION).where(factmod.VERIFICATION.c.pk == pk)).mappings().first()
    if row is None:
        raise NotFound(f"no verification {pk}")
    return factmod.verification_json(dict(row))


LATEST = "latest"


def pick_verification(registry: Registry, fact_id: str, spec: int | str) -> int:
    """`--verification N` or `--verification latest`: the newest verification of `fact_id` that measured a value
    (NotFound when none did)."""
    if not isinstance(spec, str):
        return int(spec)
    text = spec.strip()
    if text.isdigit() and text.isascii():
        return int(text)
    if text != LATEST:
        raise UsageError(f"--verification takes a verification number (as `verify`, `status` and `history` print "
                         f"it) or `latest`, got {spec[:40]!r}")
    check_id(fact_id)
    with registry.read() as conn:
        ver = factmod.VERIFICATION
        found = conn.execute(select(ver.c.pk).where(ver.c.fact_id == fact_id, ver.c.value.is_not(None),
                                                    ver.c.verdict.not_in(list(FAILURES)))
                             .order_by(ver.c.pk.desc()).limit(1)).scalar()
    if found is None:
        raise NotFound(f"no verification of {fact_id} has measured a value: run `factreg verify {fact_id}` first")
    return int(found)


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


def probable_causes(old: FactData, new: FactData, cause: str | None = None,
                    facts: Mapping[str, FactData] | None = None) -> list[str]:
    """Why the old value probably differed, most likely first, each with its evidence (`ranked_causes`)."""
    return cause_lines(ranked_causes(old, new, cause, facts))


def _is_number(text: Any) -> bool:
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


def _on(value: Any) -> bool:
    return str(value or "").lower() in ("on", "true", "1", "yes")


def _short(h: Any) -> str:
    return "(none)" if h is None else str(h)[:12]


def _today() -> str:
    return clock.today()


def doc_roots(settings: Settings) -> list[Path]:
    """The configured `[docs] roots`, relative to the project root."""
    roots = settings.get("docs.roots", ["."])
    if isinstance(roots, str):
        roots = [roots]
    return [Path(settings.root) / r for r in roots]


def _rel(path: Path, base: Path) -> str:
    import os

    return Path(os.path.relpath(Path(path).resolve(), Path(base).resolve())).as_posix()


# What a note shows of the old and the new fact (registry.display fields): value with spread, interval, n, flags,
# conditions.
NOTE_FIELDS = ("id", "version", "metric", "unit", "text", "value", "n", "ci95", "flags", "measured_at", "samples",
               "identity", "info")


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


@dataclass(frozen=True)
class Published:
    """The files a correction wrote, and the commit that holds them."""

    written: list[Path]  # every file rendered (the note, the decision files)
    changed: list[Path]  # the files whose content changed (rendered ones and synced documents)
    synced: list[Path]  # the documents `docs sync` rewrote
    commit: str | None  # the commit's sha: None without --commit, or when nothing changed


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


def note_location(out: Path, date: str, old_id: str, version: int, kind: str = "correction") -> Path:
    """Where the correction (or retraction) note of `old_id` v`version` goes: a name not yet taken by another
    note."""
    folder = out / FOLDER
    base = old_id if kind == "correction" else f"{old_id}-{kind}"
    name = note_name(date, base)
    k = 1
    while (folder / name).exists() and not _note_is_for(folder / name, old_id, version, kind):
        k += 1
        name = note_name(date, f"{base}-{k}")
    return folder / name


def status_once_superseded(decision: DecisionData) -> str:
    """A decision's status once a fact it cites is superseded: an open decision then needs review."""
    from factreg.publish import decisions as decmod

    recorded = decision["recorded_status"]
    return decmod.NEEDS_REVIEW if recorded in decmod.OPEN else str(recorded)


def note_data(
    date: str,
    old: FactData,
    new: FactData,
    verification: VerificationData | None,
    cause: str | None,
    citations: Sequence[Citation],
    decisions: Sequence[DecisionData],
    out: Path,
    note_path: Path,
    compared: Mapping[str, FactData] | None = None,
    lang: str = "en",
    decided_by: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Step 3a: what the correction note shows, as plain data (`decisions` with their status after it).

    `compared`: the facts that ratio facts among old and new compare (`comparison_facts`), by id."""
    folder = note_path.parent
    ranked = ranked_causes(old, new, cause, compared, lang)
    opening = summary(old, new, ranked, compared, lang)
    shown_old, shown_new = display.fields(old, NOTE_FIELDS), display.fields(new, NOTE_FIELDS)
    shown_old["ci95"], shown_new["ci95"] = interval_of(old), interval_of(new)
    return {
        "date": date,
        "lang": lang,
        "same_id": old["id"] == new["id"],  # corrected by a new version of the same id, not superseded
        "summary": opening["text"],
        "comparisons": {"old": opening["old"], "new": opening["new"]},
        "old": shown_old,
        "new": shown_new,
        "verification": None
        if verification is None
        else {
            "pk": verification["pk"],
            "verdict": verification["verdict"],
            "verified_at": verification["verified_at"],
            "message": verification["message"],
        },
        "change": _change(old, new) if opening["comparable"] else None,
        "evidence": say_evidence(lang, deciding_evidence(old, new, verification or decided_by)),
        "conditions": [
            {"key": k, "kind": kind, "old": a, "new": b}
            for kind in ("identity", "info")
            for k, (a, b) in cond.diff(old["conditions"][kind], new["conditions"][kind]).items()
        ],
        "causes": cause_lines(ranked),
        "ranked": ranked,
        "documents": _documents(citations, out, folder),
        "decisions": _decision_links(decisions, out, folder),
    }


def render_note(data: Mapping[str, Any], old_id: str, version: int, templates: Path | str | None = None) -> str:
    """Step 3b: the correction note's text (with the marker that ties the file to `old_id` v`version`)."""
    from factreg.publish import render as rendering

    return _with_marker(rendering.render("correction.md.j2", {"c": data}, templates, data.get("lang")), old_id,
                        version)


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
        return int(result.inserted_primary_key[0])  # type: ignore[index]

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


def _doc_transform(path: Path, index: Mapping[str, FactData]) -> Callable[[bytes], bytes | None]:
    """`docs sync`'s edit of the document at `path`, applicable to any version of it (HEAD's, the index's)."""
    from factreg.docs import check as chk
    from factreg.docs import markers as mk
    from factreg.docs import walk

    def transform(data: bytes) -> bytes | None:
        text = walk.decode(path, data)
        if not isinstance(text, str):
            return None
        found, bad = mk.parse(text)
        try:
            edits = chk.plan(chk.Scanned(path, text, found, []), index).edits
        except UsageError:
            return None
        return mk.replace_spans(text, edits).encode("utf-8") if edits else None

    return transform


def planned_sync(registry: Registry, config: Mapping[str, Any], roots: Sequence[Path], every: bool = False) -> tuple[
        dict[Path, bytes], dict[Path, Callable[[bytes], bytes | None]]]:
    """What `docs sync` would write under `roots` now, without writing it: {document: its new bytes}, and for each
    such document the same edit as a transform of another version of it (for the commit). With `every`, a transform
    for every document with citations, changed now or not (an interrupted run may have synced it already)."""
    from factreg.docs import check as chk

    docs = chk.scan(roots, config)
    if not docs or not chk.needs_registry(docs):
        return {}, {}
    index = chk.load_index(registry, config)
    texts: dict[Path, bytes] = {}
    transforms: dict[Path, Callable[[bytes], bytes | None]] = {}
    for doc in docs:
        if doc.text is None:
            continue
        transform = _doc_transform(doc.path, index)
        new = transform(doc.text.encode("utf-8"))
        if new is not None and new != doc.text.encode("utf-8"):
            texts[doc.path] = new
        if doc.path in texts or every:
            transforms[doc.path] = transform
    return texts, transforms


@dataclass
class Files:
    """Files written during a correction, with what each held before, to put back when a later step fails."""

    before: dict[Path, bytes | None] = field(default_factory=dict)

    def write(self, path: Path, data: bytes, root: Path) -> bool:
        from factreg.atomic import atomic_write_bytes
        from factreg.publish import writer

        writer.check_path(path, root)
        try:
            old: bytes | None = path.read_bytes()
        except FileNotFoundError:
            old = None
        if old == data:
            return False
        self.before.setdefault(path, old)
        atomic_write_bytes(path, data)
        return True

    def restore(self) -> None:
        from factreg.atomic import atomic_write_bytes

        for path, old in reversed(list(self.before.items())):
            with contextlib.suppress(OSError):
                if old is None:
                    path.unlink()
                else:
                    atomic_write_bytes(path, old)


def publish_files(
    out: Path,
    project: Path,
    note_path: Path,
    note_text: str | None,
    decision_texts: Mapping[Path, str],
    synced: Mapping[Path, bytes],
    transforms: Mapping[Path, Callable[[bytes], bytes | None]],
    files: Files,
    *,
    commit_message: str | None = None,
    also: Mapping[Path, bytes] | None = None,
) -> Published:
    """Step 4: write the note (None: keep the one an interrupted run wrote), the decision files and the synced
    documents, then commit last: the generated files as written, each document as its HEAD version with the same
    edit (the user's own changes of it are not committed)."""
    from factreg.publish import writer as publish

    generated = {**({note_path: note_text} if note_text is not None else {}), **decision_texts}
    for path in generated:
        publish.check_path(path, out)  # every path checked before any file is written
    for path in synced:
        publish.check_path(path, project)
    changed = [p for p, text in generated.items() if files.write(p, text.encode("utf-8"), out)]
    changed += [p for p, data in synced.items() if files.write(p, data, project)]
    sha = None
    if commit_message is not None:
        contents: dict[Path, publish.Content] = {p: t.encode("utf-8") for p, t in generated.items()}
        if note_text is None and note_path.is_file():
            contents[note_path] = note_path.read_bytes()
        contents.update(transforms)
        contents.update(also or {})  # the registry's text copy (registry/snapshot.py), committed with them
        sha = publish.commit(contents, commit_message, out)
    return Published(written=[note_path, *decision_texts], changed=changed, synced=list(synced), commit=sha)


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

    files = Files()
    recorded_now: Applied | None = None  # what this run recorded, taken back when a later step fails
    try:
        if resumed is None:
            applied = recorded_now = apply(registry, rep, verification=verification, cause=cause,
                                           note_rel=_rel(note_path, out))
        new = applied.new
        after = {d["number"]: d for d in decmod.list_decisions(registry, config)}
        decisions = [after[d["number"]] for d in found.decisions]
        recorded = note_data(note_date, old, new, rep.verification, cause, found.citations, decisions, out, note_path,
                             compared, lang, decided_by)
        if note_text is not None and recorded != data:
            data, note_text = recorded, render_note(recorded, old_id, old["version"], templates)
        # Decisions citing the old fact now say `needs review`: render their files, and the synced documents, in
        # memory before writing any file.
        decision_texts = {out / d["path"]: decmod.render(d, templates, lang) for d in decisions}
        synced, transforms = (planned_sync(registry, config, found.roots, every=resumed is not None)
                              if sync_docs and found.roots else ({}, {}))
        message = (f"factreg correct {old_id}: {ref(old_id, old['version'])} corrected, {ref(new['id'], new['version'])}"
                   " holds" if rep.same_id else
                   f"factreg correct {old_id}: superseded by {ref(new['id'], new['version'])}") if commit else None
        copies = _text_copy(registry, settings) if commit else {}
        done = publish_files(out, Path(settings.root), note_path, note_text, decision_texts, synced, transforms,
                             files, commit_message=message, also=copies)
        _save_text_copy(copies)
    except BaseException:
        files.restore()
        if recorded_now is not None:
            with contextlib.suppress(Exception):
                undo(registry, recorded_now, old_id)
        raise
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


def _text_copy(registry: Registry, settings: Settings) -> dict[Path, bytes]:
    from factreg.registry import snapshot

    return snapshot.for_commit(registry, settings)


def _save_text_copy(copies: Mapping[Path, bytes]) -> None:
    from factreg.registry import snapshot

    snapshot.save(dict(copies))


def _marker(old_id: str, version: int, kind: str = "correction") -> str:
    return f"<!-- factreg {kind}: {ref(old_id, version)} -->"


def _with_marker(text: str, old_id: str, version: int, kind: str = "correction") -> str:
    return f"{_marker(old_id, version, kind)}\n{text}"


def _note_is_for(path: Path, old_id: str, version: int, kind: str = "correction") -> bool:
    try:
        return path.read_text(encoding="utf-8").startswith(_marker(old_id, version, kind))
    except OSError:
        return False


def _change(old: FactData, new: FactData) -> str:
    if not old["value"]:
        return "—"
    rel = (new["value"] - old["value"]) / abs(old["value"])
    ratio = new["value"] / old["value"] if old["value"] else None
    text = f"{rel:+.0%}"
    if ratio and ratio > 0:
        text += f" (× {fmt.num(ratio, 2)})"
    return text


# ---------------------------------------------------------------- what a note says first

# Condition keys by how much they are known to move a latency or throughput metric: lower ranks come first.
CAUSE_RANKS: dict[str, int] = {
    "metric": 0, "of_metric": 0, "thinking": 1, "reasoning": 1, "warm": 2, "cold": 2, "uptime_s": 2,
    "body_sha256": 3, "body": 3, "stream": 3, "cache_hit": 3, "prompt_cache": 3,
    "model": 4, "model_type": 4, "quant": 4, "model_file": 4,
    "build": 5, "build_commit": 5, "build_number": 5, "llama_build": 5, "server_build": 5,
    "n_cpu_moe": 6, "n_gpu_layers": 6, "threads": 6, "n_threads": 6, "offload": 6, "flash_attn": 6,
    "gpu_info": 7, "cpu_info": 7, "machine": 7, "backends": 7, "hardware": 7, "gpu": 7,
}
OTHER_RANK, STATS_RANK = 8, 9
# How the collapsed line of conditions one value never recorded names them.
CONDITION_NAMES: dict[str, str] = {
    "build_commit": "build", "build_number": "build", "llama_build": "build", "server_build": "build",
    "gpu_info": "GPU", "cpu_info": "CPU", "model_type": "model type", "n_cpu_moe": "offload", "n_gpu_layers": "offload",
    "n_threads": "threads", "backends": "backend", "n_gen": "test size", "n_prompt": "test size",
    "body_sha256": "request body",
}
TIME_UNITS = ("s", "ms", "us", "µs", "min")


# The Korean of every sentence a note writes itself (`say`): English format string → Korean format string.
KO: dict[str, str] = {
    "faster": "빠름", "slower": "느림", "higher": "높음", "lower": "낮음", "different": "다름",
    "{subject} is {factor}× {word} than {other}": "{subject}: {other}보다 {factor}배 {word}",
    "95% interval {lo}–{hi}{unit}": "95% 구간 {lo}–{hi}{unit}",
    "95% interval {lo}–{hi}× {word}": "95% 구간 {lo}–{hi}배 {word}",
    "95% interval {lo}–{hi}× (either way)": "95% 구간 {lo}–{hi}× (방향 불확실)",
    "no interval recorded": "구간 기록 없음",
    "not in the registry": "레지스트리에 없음",
    "Claimed{said}: {sentence} — {metric} of {subject} ({subject_setting}) against {other} ({other_setting}); "
    "{interval}.": "주장{said}: {sentence} — {metric}, {subject} ({subject_setting}) 대 {other} ({other_setting}); "
    "{interval}.",
    "Holds now: {sentence} — {metric} of {subject} ({subject_setting}) against {other} ({other_setting}); "
    "{interval}{n}.": "현재 사실: {sentence} — {metric}, {subject} ({subject_setting}) 대 {other} ({other_setting}); "
    "{interval}{n}.",
    "From {a} to {b}{turn}; the two ratios compare different things, so no percent change between them is given.":
    "{a}에서 {b}(으)로{turn}; 두 비율은 서로 다른 것을 비교하므로 둘 사이의 변화율(%)은 제시하지 않습니다.",
    " — the direction is reversed": " — 방향이 반대로 바뀌었습니다",
    "`{old}` said {metric} = {old_text}; measured now (`{new}`) it is {new_text} ({interval}, n={n}).":
    "`{old}`는 {metric} = {old_text}라고 했지만, 지금 측정(`{new}`)으로는 {new_text}입니다 ({interval}, n={n}).",
    "That is {pct} {how} ({factor}× {word}).": "{pct} {how} ({factor}배 {word}).",
    "That is {pct} {how} ({factor}× {word}), and the old value lies outside the new interval.":
    "{pct} {how} ({factor}배 {word})이며, 이전 값은 새 구간 밖에 있습니다.",
    "Best supported cause: {causes}.": "가장 근거가 있는 원인: {causes}.",
    "Best supported causes: {causes}.": "가장 근거가 있는 원인: {causes}.",
    "stated when the fact was corrected": "정정할 때 밝힌 원인",
    "another request body": "다른 요청 본문",
    "thinking {a} → {b} (old value measured with thinking on)": "thinking {a} → {b} (이전 값은 thinking 켠 상태에서 측정)",
    "thinking {a} → {b}": "thinking {a} → {b}",
    "cold vs warm server": "콜드 대 웜 서버",
    "warm vs cold server": "웜 대 콜드 서버",
    "another build ({a} → {b})": "다른 빌드 ({a} → {b})",
    "{key} differs ({a} → {b})": "{key} 다름 ({a} → {b})",
    "cold server": "콜드 서버",
    "old value measured with thinking on": "이전 값은 thinking 켠 상태에서 측정",
    "old value may have hit a prompt cache": "이전 값은 프롬프트 캐시를 탔을 수 있음",
    "the new value was measured cold": "새 값은 콜드 상태에서 측정됨",
    "the old value recorded no conditions for {names}: cannot be compared":
    "이전 값은 {names} 조건을 기록하지 않아 비교할 수 없음",
    "the new value does not record {names}: not compared": "새 값은 {names}을(를) 기록하지 않아 비교하지 않음",
    "old value rests on few samples": "이전 값은 표본이 적음",
    "old value had high variance": "이전 값은 분산이 큼",
    "another metric: the old comparison used {a}, the new one {b}": "다른 지표: 이전 비교는 {a}, 새 비교는 {b}",
    "the old comparison mixed thinking on and off": "이전 비교는 thinking 켬과 끔을 섞음",
    "the old comparison set a cold server against a warm one": "이전 비교는 콜드 서버를 웜 서버와 비교함",
    "the old comparison used two request bodies": "이전 비교는 서로 다른 요청 본문을 사용함",
    "the old comparison rests on few samples": "이전 비교는 표본이 적음",
    "the old ratio recorded no conditions: its two sides cannot be checked":
    "이전 비율은 조건을 기록하지 않아 양쪽을 확인할 수 없음",
    "other models compared": "다른 모델을 비교함",
}


# The glue words of the evidence a note quotes (ids, numbers and messages stay as they are), for Korean notes.
KO_EVIDENCE = (
    ("recorded in both facts' conditions", "두 사실의 조건에 기록됨"),
    ("old value measured ", "이전 값 측정: "), (" s after a server restart", " s, 서버 재시작 직후"),
    ("cold (right after a restart or without warm-up)", "콜드 (재시작 직후 또는 워밍업 없이)"),
    ("flag cold on the new fact", "새 사실의 플래그 cold"), ("(flag cold", "(플래그 cold"), ("flag ", "플래그 "),
    (" records only ", "의 기록된 조건: "), ("the old value lies outside the new interval", "이전 값은 새 구간 밖에 있음"),
    ("the old value lies inside the new interval", "이전 값은 새 구간 안에 있음"), ("verification ", "검증 "),
    ("95% interval", "95% 구간"), ("no interval recorded", "구간 기록 없음"), ("n=unknown", "n=알 수 없음"),
    (" measured cold", " 콜드 상태에서 측정"), (" thinking on ", " thinking 켬 "), (" thinking off ", " thinking 끔 "),
    (" against ", " 대 "), ("; new: ", "; 새 비교: "), ("old: ", "이전 비교: "),
)


def say_evidence(lang: str, text: str) -> str:
    """Evidence in `lang`: its glue words in Korean for a Korean note."""
    if lang != "ko":
        return text
    for en, ko in KO_EVIDENCE:
        text = text.replace(en, ko)
    return text


def say(lang: str, text: str, **kw: Any) -> str:
    """`text` (a format string) in `lang`, filled with `kw`."""
    chosen = KO.get(text, text) if lang == "ko" else text
    return chosen.format(**kw) if kw else chosen


def _rank(key: str) -> int:
    return CAUSE_RANKS.get(key, OTHER_RANK)


def interval_of(fact: Mapping[str, Any]) -> list[float] | None:
    """A fact's 95% interval: its statistics', or one a derived fact stores in its info (`ci95 = "lo..hi"`)."""
    ci = (fact.get("stats") or {}).get("ci95")
    if ci and ci[0] is not None and ci[1] is not None:
        return [float(ci[0]), float(ci[1])]
    raw = str(((fact.get("conditions") or {}).get("info") or {}).get("ci95") or "")
    parts = raw.split("..")
    if len(parts) == 2 and _is_number(parts[0]) and _is_number(parts[1]):
        return [float(parts[0]), float(parts[1])]
    return None


def sides_of(fact: Mapping[str, Any]) -> tuple[str, str] | None:
    """The two facts a ratio fact compares (numerator, denominator), from its conditions or its method."""
    conds = fact.get("conditions") or {}
    merged = {**(conds.get("info") or {}), **(conds.get("identity") or {})}
    if merged.get("numerator") and merged.get("denominator"):
        return str(merged["numerator"]), str(merged["denominator"])
    method = fact.get("method") or {}
    if method.get("kind") == "derived" and method.get("a") and method.get("b"):
        return str(method["a"]), str(method["b"])
    return None


def comparison_facts(registry: Registry, config: Mapping[str, Any], *facts: Mapping[str, Any]) -> dict[str, FactData]:
    """The facts that ratio facts among `facts` compare, by id (those the registry holds)."""
    out: dict[str, FactData] = {}
    for f in facts:
        for fid in sides_of(f) or ():
            if fid not in out:
                with contextlib.suppress(NotFound, UsageError):
                    out[fid] = factmod.get(registry, fid, config=config)
    return out


def _lower_is_better(fact: Mapping[str, Any]) -> bool | None:
    direction = fact.get("direction")
    if direction in ("lower", "higher"):
        return direction == "lower"
    unit = str(fact.get("unit") or "")
    if unit in TIME_UNITS:
        return True
    if unit.endswith("/s"):
        return False
    return None


def _factor(q: float) -> str:
    """`3.1`, `28.8`, `150`: one decimal below 100."""
    return f"{q:.1f}" if q < 100 else f"{q:.0f}"


def relation(q: float, lower_better: bool | None) -> tuple[str, str]:
    """`q` (subject ÷ other) as a factor ≥ 1 and a direction word: (`3.1`, `slower`)."""
    if q <= 0 or q != q:
        return "?", "different"
    big = q >= 1
    factor = _factor(q if big else 1 / q)
    if lower_better is None:
        return factor, "higher" if big else "lower"
    return factor, ("slower" if big else "faster") if lower_better else ("faster" if big else "slower")


def _who(fact: Mapping[str, Any] | None, fid: str) -> str:
    if fact is None:
        return f"`{fid}`"
    ident = fact["conditions"]["identity"]
    return str(ident.get("model") or ident.get("machine") or f"`{fid}`")


def _setting(fact: Mapping[str, Any]) -> str:
    """`thinking off, cold, n=1: 0.130 s`: the conditions that move a latency most, and the value."""
    ident = {**fact["conditions"]["info"], **fact["conditions"]["identity"]}
    flags = fact.get("flags") or []
    bits = []
    if "thinking" in ident:
        bits.append(f"thinking {'on' if _on(ident['thinking']) else 'off'}")
    elif "thinking_on" in flags:
        bits.append("thinking on")
    if "cold" in flags or str(ident.get("warm", "")).lower() in ("false", "0", "no", "off"):
        bits.append("cold")
    elif "warm" in ident:
        bits.append("warm")
    if fact.get("n"):
        bits.append(f"n={fact['n']}")
    return (", ".join(bits) + ": " if bits else "") + display.text(fact)


def _interval_text(ci: Sequence[float] | None, unit: str, lang: str = "en") -> str:
    if not ci:
        return say(lang, "no interval recorded")
    u = unit if unit in ("×", "%") else f" {unit}" if unit and unit != "bool" else ""
    return say(lang, "95% interval {lo}–{hi}{unit}", lo=fmt.num(ci[0]), hi=fmt.num(ci[1]), unit=u)


def comparison(fact: Mapping[str, Any], facts: Mapping[str, FactData], subject_model: str | None,
               lang: str = "en") -> dict[str, Any] | None:
    """A ratio fact read as a comparison: both sides (metric, model, conditions, values), the ratio said from the
    side of `subject_model` when it is one of them, with a direction word and the interval turned the same way."""
    pair = sides_of(fact)
    if pair is None or not fact.get("value"):
        return None
    num_id, den_id = pair
    num, den = facts.get(num_id), facts.get(den_id)
    flip = den is not None and subject_model is not None and _who(den, den_id) == subject_model \
        and _who(num, num_id) != subject_model
    subj_id, other_id = (den_id, num_id) if flip else (num_id, den_id)
    subj, other = (den, num) if flip else (num, den)
    q = 1 / fact["value"] if flip else float(fact["value"])
    ci = interval_of(fact)
    if ci and flip:
        ci = [1 / ci[1], 1 / ci[0]] if ci[0] > 0 else None
    probe: Mapping[str, Any] = subj or other or {}
    metric = str(probe.get("metric") or fact["conditions"]["identity"].get("of_metric") or "value")
    factor, word = relation(q, _lower_is_better(probe) if probe else None)
    shown_ci = None
    if ci and ci[0] > 0:
        if (ci[0] >= 1) == (ci[1] >= 1):
            ends = sorted(x if x >= 1 else 1 / x for x in ci)
            shown_ci = say(lang, "95% interval {lo}–{hi}× {word}", lo=fmt.num(ends[0]), hi=fmt.num(ends[1]),
                           word=say(lang, word))
        else:
            shown_ci = say(lang, "95% interval {lo}–{hi}× (either way)", lo=fmt.num(ci[0]), hi=fmt.num(ci[1]))
    return {
        "metric": metric,
        "subject": _who(subj, subj_id),
        "other": _who(other, other_id),
        "subject_id": subj_id,
        "other_id": other_id,
        "subject_setting": _setting(subj) if subj else say(lang, "not in the registry"),
        "other_setting": _setting(other) if other else say(lang, "not in the registry"),
        "factor": factor,
        "word": word,
        "interval": shown_ci or say(lang, "no interval recorded"),
        "n": fact.get("n"),
        "sentence": say(lang, "{subject} is {factor}× {word} than {other}", subject=_who(subj, subj_id),
                        factor=factor, word=say(lang, word), other=_who(other, other_id)),
        "facts": (subj, other),
    }


def _common_model(old: Mapping[str, Any], new: Mapping[str, Any], facts: Mapping[str, FactData]) -> str | None:
    def models(f: Mapping[str, Any]) -> list[str]:
        return [_who(facts.get(fid), fid) for fid in sides_of(f) or ()]

    shared = [m for m in models(new) if m in models(old)]
    return shared[0] if shared else None


def _unrecorded(diff: Mapping[str, Sequence[Any]], side: int) -> list[str]:
    """The condition names one side (0 old, 1 new) did not record while the other did, named once each."""
    names: list[str] = []
    for key, pair in sorted(diff.items(), key=lambda kv: (_rank(kv[0]), kv[0])):
        if pair[side] is None and pair[1 - side] is not None:
            name = CONDITION_NAMES.get(key, key)
            if name not in names:
                names.append(name)
    return names


def ranked_causes(old: Mapping[str, Any], new: Mapping[str, Any], cause: str | None = None,
                  facts: Mapping[str, FactData] | None = None, lang: str = "en") -> list[dict[str, Any]]:
    """Why the old value probably differed, most likely first: each {text, evidence, rank}. Conditions known to
    move the metric most come first (thinking, cold/warm, request body, model, build, offload/threads, hardware),
    then the others, then the statistics; the conditions one side never recorded make a single line."""
    out: list[dict[str, Any]] = []
    facts = facts or {}

    def add(rank: int, text: str, evidence: str = "", **kw: Any) -> None:
        out.append({"rank": rank, "text": say(lang, text, **kw), "evidence": say_evidence(lang, evidence)})

    old_pair, new_pair = sides_of(old), sides_of(new)
    if old_pair and new_pair:
        _comparison_causes(old, new, old_pair, new_pair, facts, add)
    else:
        _value_causes(old, new, add)
    out.sort(key=lambda c: c["rank"])
    if cause:
        out.insert(0, {"rank": -1, "text": " ".join(cause.split()),
                       "evidence": say(lang, "stated when the fact was corrected")})
    return out


def _value_causes(old: Mapping[str, Any], new: Mapping[str, Any], add: Callable[..., None]) -> None:
    flags = old.get("flags") or []
    info = {**old["conditions"]["info"], **old["conditions"]["identity"]}
    diff = cond.diff(old["conditions"]["identity"], new["conditions"]["identity"])
    for key, (a, b) in diff.items():
        if a is None or b is None:
            continue
        if key == "body_sha256":
            add(_rank(key), "another request body", f"sha256 {_short(a)} → {_short(b)}")
        elif key == "thinking":
            add(_rank(key), "thinking {a} → {b} (old value measured with thinking on)" if _on(a)
                else "thinking {a} → {b}", "recorded in both facts' conditions", a=a, b=b)
        elif key == "warm":
            uptime = info.get("uptime_s")
            after = f"; old value {fmt.num(float(str(uptime)), 2)} s after a server restart" if _is_number(uptime) else ""
            add(_rank(key), "cold vs warm server" if not _on(a) else "warm vs cold server", f"warm {a} → {b}{after}")
        elif key in BUILD_KEYS:
            add(_rank(key), "another build ({a} → {b})", "recorded in both facts' conditions", a=a, b=b)
        else:
            add(_rank(key), "{key} differs ({a} → {b})", "recorded in both facts' conditions", key=key, a=a, b=b)
    if "cold" in flags and "warm" not in diff:
        uptime = info.get("uptime_s")
        when = (f"{fmt.num(float(str(uptime)), 2)} s after a server restart" if _is_number(uptime)
                else "cold (right after a restart or without warm-up)")
        add(_rank("cold"), "cold server", f"old value measured {when} (flag cold)")
    if "thinking_on" in flags and "thinking" not in diff:
        add(_rank("thinking"), "old value measured with thinking on", "flag thinking_on")
    if "cache_hit" in flags:
        add(_rank("cache_hit"), "old value may have hit a prompt cache", "flag cache_hit")
    if "cold" not in flags and "cold" in (new.get("flags") or []):
        add(_rank("cold"), "the new value was measured cold", "flag cold on the new fact")
    missing = _unrecorded(diff, 0)
    if missing:
        recorded = ", ".join(sorted(old["conditions"]["identity"])) or "nothing"
        add(OTHER_RANK, "the old value recorded no conditions for {names}: cannot be compared",
            f"`{old['id']}` records only {recorded}", names=", ".join(missing))
    gone = _unrecorded(diff, 1)
    if gone:
        add(OTHER_RANK, "the new value does not record {names}: not compared", "", names=", ".join(gone))
    if "few_samples" in flags:
        n = old.get("n")
        add(STATS_RANK, "old value rests on few samples", f"n={n if n else 'unknown'}")
    if "high_variance" in flags:
        cv = (old.get("stats") or {}).get("cv")
        add(STATS_RANK, "old value had high variance", f"CV {cv:.0%}" if cv is not None else "flag high_variance")


def _comparison_causes(old: Mapping[str, Any], new: Mapping[str, Any], old_pair: tuple[str, str],
                       new_pair: tuple[str, str], facts: Mapping[str, FactData], add: Callable[..., None]) -> None:
    """A ratio against a ratio: what the old comparison mixed up (its two sides under different conditions), and
    what differs between the two comparisons (metric, the facts compared)."""
    o_num, o_den = facts.get(old_pair[0]), facts.get(old_pair[1])
    n_num, n_den = facts.get(new_pair[0]), facts.get(new_pair[1])
    old_side: Mapping[str, Any] = o_num or o_den or {}
    new_side: Mapping[str, Any] = n_num or n_den or {}
    old_metric = old_side.get("metric")
    new_metric = new_side.get("metric") or new["conditions"]["identity"].get("of_metric")
    if old_metric and new_metric and old_metric != new_metric:
        add(_rank("metric"), "another metric: the old comparison used {a}, the new one {b}",
            f"`{old_pair[0]}`, `{old_pair[1]}` are {old_metric}; `{new_pair[0]}`, `{new_pair[1]}` are {new_metric}",
            a=old_metric, b=new_metric)
    if o_num is not None and o_den is not None:
        a_cond = {**o_num["conditions"]["info"], **o_num["conditions"]["identity"]}
        b_cond = {**o_den["conditions"]["info"], **o_den["conditions"]["identity"]}
        a_name, b_name = _who(o_num, old_pair[0]), _who(o_den, old_pair[1])
        ta, tb = _on(a_cond.get("thinking")), _on(b_cond.get("thinking"))
        if ("thinking" in a_cond or "thinking" in b_cond) and ta != tb:
            add(_rank("thinking"), "the old comparison mixed thinking on and off",
                f"{a_name} thinking {'on' if ta else 'off'} (`{old_pair[0]}`) against {b_name} thinking "
                f"{'on' if tb else 'off'} (`{old_pair[1]}`)")
        ca, cb = ("cold" in (o_num.get("flags") or [])), ("cold" in (o_den.get("flags") or []))
        if ca != cb:
            cold_f, cold_id = (o_num, old_pair[0]) if ca else (o_den, old_pair[1])
            uptime = {**cold_f["conditions"]["info"]}.get("uptime_s")
            when = f", {fmt.num(float(str(uptime)), 2)} s after a server restart" if _is_number(uptime) else ""
            add(_rank("warm"), "the old comparison set a cold server against a warm one",
                f"{_who(cold_f, cold_id)} measured cold (`{cold_id}`, flag cold{when})")
        if a_cond.get("body_sha256") != b_cond.get("body_sha256"):
            add(_rank("body_sha256"), "the old comparison used two request bodies",
                f"sha256 {_short(a_cond.get('body_sha256'))} vs {_short(b_cond.get('body_sha256'))}")
        small = [f"`{fid}` n={f.get('n') or '?'}" for fid, f in zip(old_pair, (o_num, o_den), strict=True)
                 if "few_samples" in (f.get("flags") or [])]
        if small:
            add(STATS_RANK, "the old comparison rests on few samples", ", ".join(small))
    elif not old["conditions"]["identity"]:
        add(OTHER_RANK, "the old ratio recorded no conditions: its two sides cannot be checked",
            f"`{old['id']}` names {old_pair[0]} over {old_pair[1]}, which the registry does not hold")
    old_models = {_who(f, fid) for fid, f in zip(old_pair, (o_num, o_den), strict=True)}
    new_models = {_who(f, fid) for fid, f in zip(new_pair, (n_num, n_den), strict=True)}
    if old_models != new_models:
        add(_rank("model"), "other models compared",
            f"old: {' vs '.join(sorted(old_models))}; new: {' vs '.join(sorted(new_models))}")


def cause_lines(causes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Ranked causes as plain lines (the `correct --json` output)."""
    return [c["text"] + (f" ({c['evidence']})" if c["evidence"] else "") for c in causes]


def last_verdict(registry: Registry, old: Mapping[str, Any]) -> dict[str, Any] | None:
    """The newest verification of `old`'s version that measured something (the one that refuted it, as a rule)."""
    try:
        versions = factmod.history(registry, old["id"])
    except NotFound:
        return None
    found = [dict(r) for v in versions if v["version"] == old["version"] for r in v.get("verifications") or []
             if r.get("value") is not None and r.get("verdict") not in FAILURES]
    return max(found, key=lambda r: (r["verified_at"], r["pk"])) if found else None


def _named(fact: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    """How a note names one side of a correction: its id, or `ID@vN` when both sides are versions of one id."""
    if fact.get("id") == other.get("id") and fact.get("version") is not None:
        return ref(str(fact["id"]), int(fact["version"]))
    return str(fact.get("id"))


def deciding_evidence(old: Mapping[str, Any], new: Mapping[str, Any],
                      verification: Mapping[str, Any] | None) -> str:
    """The measurement that decided the correction, quoted: the verification's verdict and p-value, or the new
    fact's interval and n, and whether the old value lies inside that interval."""
    parts: list[str] = []
    if verification is not None:
        bits = [verification["verdict"]]
        if verification.get("p_value") is not None:
            bits.append(f"p = {fmt.num(verification['p_value'], 2)}")
        if verification.get("n"):
            bits.append(f"n={verification['n']}")
        parts.append(f"verification {verification['pk']} ({', '.join(bits)}, {verification['verified_at'][:10]})"
                     + (f": {' '.join(str(verification['message']).split())}" if verification.get("message") else ""))
    ci = interval_of(new)
    unit = str(new.get("unit") or "")
    parts.append(f"`{_named(new, old)}` {display.text(new)}, {_interval_text(ci, unit)}, "
                 f"n={new.get('n') or 'unknown'}")
    old_ci = interval_of(old)
    parts.append(f"`{_named(old, new)}` {display.text(old)}, {_interval_text(old_ci, unit)}, "
                 f"n={old.get('n') or 'unknown'}")
    if ci and old.get("value") is not None and not sides_of(new):
        inside = ci[0] <= old["value"] <= ci[1]
        parts.append("the old value lies inside the new interval" if inside
                     else "the old value lies outside the new interval")
    return "; ".join(parts)


def summary(old: Mapping[str, Any], new: Mapping[str, Any], causes: Sequence[Mapping[str, Any]],
            facts: Mapping[str, FactData] | None = None, lang: str = "en") -> dict[str, Any]:
    """The note's opening: what was claimed, what holds now, by how much and which way, and the one or two best
    supported causes; `comparable` is False when the two values compare different things (no percent change)."""
    facts = facts or {}
    sentences: list[str] = []
    shared = _common_model(old, new, facts)
    old_cmp, new_cmp = comparison(old, facts, shared, lang), comparison(new, facts, shared, lang)
    comparable = True
    if old_cmp and new_cmp:
        claim = str(old["conditions"]["info"].get("claim") or "")
        sides = {"metric", "subject", "subject_setting", "other", "other_setting", "interval", "sentence"}
        sentences.append(say(
            lang, "Claimed{said}: {sentence} — {metric} of {subject} ({subject_setting}) against {other} "
            "({other_setting}); {interval}.", said=f" (“{claim}”)" if claim else "",
            **{k: v for k, v in old_cmp.items() if k in sides}))
        sentences.append(say(
            lang, "Holds now: {sentence} — {metric} of {subject} ({subject_setting}) against {other} "
            "({other_setting}); {interval}{n}.", n=f", n={new_cmp['n']}" if new_cmp["n"] else "",
            **{k: v for k, v in new_cmp.items() if k in sides}))
        same = (old_cmp["metric"], old_cmp["subject"], old_cmp["other"]) == \
            (new_cmp["metric"], new_cmp["subject"], new_cmp["other"])
        comparable = same
        turn = say(lang, " — the direction is reversed") if old_cmp["word"] != new_cmp["word"] else ""
        if not same:
            times = "배 " if lang == "ko" else "× "
            sentences.append(say(
                lang, "From {a} to {b}{turn}; the two ratios compare different things, so no percent change between "
                "them is given.", a=old_cmp["factor"] + times + say(lang, old_cmp["word"]),
                b=new_cmp["factor"] + times + say(lang, new_cmp["word"]), turn=turn))
    else:
        ci = interval_of(new)
        unit = str(new.get("unit") or "")
        sentences.append(say(
            lang, "`{old}` said {metric} = {old_text}; measured now (`{new}`) it is {new_text} ({interval}, n={n}).",
            old=_named(old, new), metric=old["metric"], old_text=display.text(old), new=_named(new, old),
            new_text=display.text(new), interval=_interval_text(ci, unit, lang), n=new.get("n") or "unknown"))
        if old.get("value") and new.get("value") is not None:
            rel = (new["value"] - old["value"]) / abs(old["value"])
            factor, word = relation(new["value"] / old["value"], _lower_is_better(new)) \
                if new["value"] / old["value"] > 0 else ("?", "different")
            outside = ci is not None and not ci[0] <= old["value"] <= ci[1]
            sentences.append(say(
                lang, "That is {pct} {how} ({factor}× {word}), and the old value lies outside the new interval."
                if outside else "That is {pct} {how} ({factor}× {word}).", pct=f"{abs(rel):.0%}",
                how=say(lang, "higher" if rel > 0 else "lower"), factor=factor, word=say(lang, word)))
    best = [c for c in causes if c["rank"] >= 0][:2]
    if best:
        sentences.append(say(lang, "Best supported causes: {causes}." if len(best) > 1
                             else "Best supported cause: {causes}.", causes="; ".join(c["text"] for c in best)))
    return {"text": " ".join(sentences), "comparable": comparable,
            "old": _strip(old_cmp), "new": _strip(new_cmp)}


def _strip(c: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if c is None else {k: v for k, v in c.items() if k != "facts"}


class CorrectionData(TypedDict):
    """A correction as JSON data (`list_corrections`): which version replaced which, why, and both values."""

    pk: int
    date: str
    old_id: str
    old_version: int
    new_id: str | None
    new_version: int | None
    verification: int | None
    cause: str | None
    note_path: str | None
    old_text: str  # the old value as people read it, "—" when that version is gone
    new_text: str


def list_corrections(registry: Registry) -> list[CorrectionData]:
    """Every correction, oldest first, with the old and new values."""
    with registry.read() as conn:
        rows = [dict(r) for r in conn.execute(select(CORRECTION).order_by(CORRECTION.c.pk)).mappings()]
    out: list[CorrectionData] = []
    cache: dict[str, dict[int, FactData]] = {}

    def version(fid: str | None, ver: int | None) -> FactData | None:
        if fid is None or ver is None:
            return None
        if fid not in cache:
            try:
                cache[fid] = {v["version"]: v for v in factmod.history(registry, fid)}
            except NotFound:
                cache[fid] = {}
        return cache[fid].get(ver)

    for r in rows:
        old = version(r["old_fact_id"], r["old_version"])
        new = version(r["new_fact_id"], r["new_version"])
        out.append(
            {
                "pk": r["pk"],
                "date": r["created_at"][:10],
                "old_id": r["old_fact_id"],
                "old_version": r["old_version"],
                "new_id": r["new_fact_id"],
                "new_version": r["new_version"],
                "verification": r["verification"],
                "cause": r["cause"],
                "note_path": r["note_path"],
                "old_text": display.text(old) if old else "—",
                "new_text": display.text(new) if new else "—",
            }
        )
    return out


# ---------------------------------------------------------------- retraction


def _documents(citations: Sequence[Citation], out: Path, folder: Path) -> list[dict[str, Any]]:
    return [{"path": _rel(c.path, out), "link": terminal.link(_rel(c.path, folder)), "line": c.line, "text": c.text}
            for c in citations]


def _decision_links(decisions: Sequence[DecisionData], out: Path, folder: Path) -> list[dict[str, Any]]:
    return [{"number": d["number"], "title": d["title"], "status": d["status"], "link": _rel(out / d["path"], folder)}
            for d in decisions]


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
        return int(result.inserted_primary_key[0])  # type: ignore[index]

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

    files = Files()
    recorded_now: int | None = None
    try:
        pk = resumed["pk"] if resumed is not None else None
        if pk is None:
            pk = recorded_now = _apply_retraction(registry, fact, because, _rel(note_path, out))
        after = {d["number"]: d for d in decmod.list_decisions(registry, config)}
        decisions = [after[d["number"]] for d in found.decisions]
        recorded = retraction_data(note_date, fact, because, found.citations, decisions, out, note_path, lang)
        if note_text is not None and recorded != data:
            data, note_text = recorded, render_retraction(recorded, fact_id, version, templates)
        decision_texts = {out / d["path"]: decmod.render(d, templates, lang) for d in decisions}
        synced, transforms = (planned_sync(registry, config, found.roots, every=resumed is not None)
                              if sync_docs and found.roots else ({}, {}))
        message = f"factreg retract {ref(fact_id, version)}: {because[:100]}" if commit else None
        copies = _text_copy(registry, settings) if commit else {}
        done = publish_files(out, Path(settings.root), note_path, note_text, decision_texts, synced, transforms,
                             files, commit_message=message, also=copies)
        _save_text_copy(copies)
    except BaseException:
        files.restore()
        if recorded_now is not None:
            with contextlib.suppress(Exception):
                _undo_retraction(registry, recorded_now)
        raise
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
