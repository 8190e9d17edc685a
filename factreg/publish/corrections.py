"""Corrections: fact A was wrong or outdated and B replaces it — supersede A, write a correction note, sync docs.

`correct ID --by NEW_ID` uses an existing fact; `correct ID --verification V` first records the verification's
samples as a new fact. That new fact gets its own id, `<old-id>-<YYYYMMDD of the verification>` (then `-2`, `-3`
… if taken), because a correction is a supersede between two facts, not a new version of the same one; `--as`
names it explicitly. The old fact is kept, linked to its successor (rank deprecated).

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

from factreg import clock, fmt
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


def fact_from_verification(old: FactData, ver: VerificationData, new_id: str) -> factmod.NewFact:
    """The verification's measurement as a new fact about the old fact's subject, under the observed conditions."""
    identity = {**old["conditions"]["identity"], **{k: str(v) for k, v in (ver.get("observed") or {}).items()}}
    samples = list(ver.get("samples") or [])
    return factmod.NewFact(
        id=new_id,
        metric=old["metric"],
        unit=old["unit"],
        direction=old["direction"],
        samples=samples or None,
        value=None if samples else ver["value"],
        spread=None if samples else ver.get("spread"),
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


def _free_id(registry: Registry, base: str) -> str:
    candidate, k = base, 1
    while True:
        try:
            factmod.get(registry, candidate)
        except NotFound:
            return candidate
        k += 1
        candidate = f"{base}-{k}"


def probable_causes(old: FactData, new: FactData, cause: str | None = None) -> list[str]:
    """Why the old value probably differed, from its integrity flags and the condition diff."""
    out: list[str] = []
    if cause:
        out.append(" ".join(cause.split()))
    flags = old.get("flags") or []
    info = {**old["conditions"]["info"], **old["conditions"]["identity"]}
    if "cold" in flags:
        uptime = info.get("uptime_s")
        when = (
            f"{fmt.num(float(str(uptime)), 2)} s after a server restart"
            if _is_number(uptime)
            else "cold (right after a restart or without warm-up)"
        )
        out.append(f"old value measured {when}")
    if "few_samples" in flags:
        n = old.get("n")
        out.append(f"old value rests on few samples (n={n if n else 'unknown'})")
    if "high_variance" in flags and (old.get("stats") or {}).get("cv") is not None:
        out.append(f"old value had high variance (CV {old['stats']['cv']:.0%})")
    elif "high_variance" in flags:
        out.append("old value had high variance")
    if "cache_hit" in flags:
        out.append("old value may have hit a prompt cache")
    diff = cond.diff(old["conditions"]["identity"], new["conditions"]["identity"])
    for key, (a, b) in diff.items():
        shown = f"{a if a is not None else '(not recorded)'} → {b if b is not None else '(not recorded)'}"
        if key == "body_sha256":
            out.append(f"another request body (sha256 {_short(a)} → {_short(b)})")
        elif key == "thinking":
            out.append(f"thinking {shown}" + (" (old value measured with thinking on)" if _on(a) else ""))
        elif key in BUILD_KEYS:
            out.append(f"another build ({shown})")
        else:
            out.append(f"{key} differs ({shown})")
    if "thinking_on" in flags and "thinking" not in diff:
        out.append("old value measured with thinking on")
    if "cold" not in flags and "cold" in (new.get("flags") or []):
        out.append("the new value was measured cold")
    return out


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
    """What replaces the old fact: an existing fact (`--by`) or one to record from a verification."""

    old: FactData  # the fact being corrected, as `facts.get` shows it
    new: FactData  # the replacing fact: as recorded (`--by`), or as it will be once `pending` is recorded
    pending: factmod.NewFact | None  # the fact to record (`--verification`); None with `--by`
    verification: VerificationData | None  # the verification it comes from


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
    """Step 1: check the request and decide the replacing fact (`--by`, or a verification made a new fact).

    Reads only; every refusal (UsageError, NotFound) happens here, before anything is written."""
    check_id(old_id)
    if (by is None) == (verification is None):
        raise UsageError("give exactly one of --by and --verification")
    old = factmod.get(registry, old_id, config=config)
    if old.get("superseded_by"):
        raise UsageError(f"{old_id} is already superseded by {old['superseded_by']}")
    if by is not None:
        check_id(by)
        if new_id is not None:
            raise UsageError("--as names the fact made from --verification; with --by it is not used")
        new = factmod.get(registry, by, config=config)
        if by == old_id:
            raise UsageError(f"{old_id} cannot correct itself")
        if new.get("superseded_by"):
            raise UsageError(f"{by} is itself superseded by {new['superseded_by']}")
        if (new["metric"], new["unit"]) != (old["metric"], old["unit"]):
            raise UsageError(
                f"{old_id} is {old['metric']} ({old['unit']}) but {new['id']} is "
                f"{new['metric']} ({new['unit']}): a correction replaces a value of the same metric"
            )
        return Replacement(old=old, new=new, pending=None, verification=None)
    assert verification is not None
    ver_data = load_verification(registry, verification)
    if ver_data["fact_id"] != old_id:
        raise UsageError(f"verification {verification} is of {ver_data['fact_id']}, not {old_id}")
    if ver_data["verdict"] in FAILURES or ver_data["value"] is None:
        raise UsageError(
            f"verification {verification} could not measure ({ver_data['verdict']}): there is no value to correct with"
        )
    target = (
        check_id(new_id) if new_id else _free_id(registry, f"{old_id}-{ver_data['verified_at'][:10].replace('-', '')}")
    )
    if new_id:
        try:
            factmod.get(registry, new_id)
            raise UsageError(f"--as {new_id}: that fact already exists; use --by {new_id}")
        except NotFound:
            pass
    pending = fact_from_verification(old, ver_data, target)
    preview = factmod.preview(pending)  # validates before anything is written; a new id is recorded as v1
    return Replacement(old=old, new=preview, pending=pending, verification=ver_data)


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
) -> dict[str, Any]:
    """Step 3a: what the correction note shows, as plain data (`decisions` with their status after it)."""
    folder = note_path.parent
    return {
        "date": date,
        "old": display.fields(old, NOTE_FIELDS),
        "new": display.fields(new, NOTE_FIELDS),
        "verification": None
        if verification is None
        else {
            "pk": verification["pk"],
            "verdict": verification["verdict"],
            "verified_at": verification["verified_at"],
            "message": verification["message"],
        },
        "change": _change(old, new),
        "conditions": [
            {"key": k, "kind": kind, "old": a, "new": b}
            for kind in ("identity", "info")
            for k, (a, b) in cond.diff(old["conditions"][kind], new["conditions"][kind]).items()
        ],
        "causes": probable_causes(old, new, cause),
        "documents": _documents(citations, out, folder),
        "decisions": _decision_links(decisions, out, folder),
    }


def render_note(data: Mapping[str, Any], old_id: str, version: int, templates: Path | str | None = None) -> str:
    """Step 3b: the correction note's text (with the marker that ties the file to `old_id` v`version`)."""
    from factreg.publish import render as rendering

    return _with_marker(rendering.render("correction.md.j2", {"c": data}, templates), old_id, version)


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
    """Step 2, one transaction: record the replacing fact (from a verification), supersede the old fact, record
    the correction. All of it lands or none of it does."""
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
            if factmod.current_versions(conn, [new_id], lock=True):
                raise UsageError(f"{new_id} was recorded meanwhile; run the correction again")
            new_version = factmod.write_versions(conn, [rows])[0]
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
        return int(result.inserted_primary_key[0])  # type: ignore[index]

    pk = int(registry.write_retrying(work))
    return Applied(correction=pk, new=factmod.get(registry, new_id), created=rows is not None)


def undo(registry: Registry, applied: Applied, old_id: str) -> None:
    """Take back what `apply` recorded, in one transaction: the correction row, the supersede link, and the fact it
    recorded from a verification (while nothing else refers to it)."""
    from sqlalchemy import delete, func, update

    new_id = applied.new["id"]

    def work(conn: Connection) -> None:
        conn.execute(delete(CORRECTION).where(CORRECTION.c.pk == applied.correction))
        fact = factmod.FACT
        conn.execute(update(fact).where(fact.c.id == old_id, fact.c.superseded_by == new_id).values(
            superseded_by=None, superseded_at=None, supersede_reason=None))
        if not applied.created:
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
class _Files:
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
    files: _Files,
    *,
    commit_message: str | None = None,
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
        sha = publish.commit(contents, commit_message, out)
    return Published(written=[note_path, *decision_texts], changed=changed, synced=list(synced), commit=sha)


def _interrupted(
    registry: Registry, config: Mapping[str, Any], old_id: str, by: str | None, verification: int | None,
    new_id: str | None,
) -> tuple[Replacement, Applied, CorrectionData] | None:
    """The same correction, recorded by a run that stopped before it finished (killed, or its commit failed):
    `old_id` is superseded by the fact this request names, and a correction row says so. None otherwise."""
    check_id(old_id)
    old = factmod.get(registry, old_id, config=config)
    successor = old.get("superseded_by")
    if not successor:
        return None
    for row in reversed(list_corrections(registry)):
        if (row["old_id"], row["old_version"], row["new_id"]) != (old_id, old["version"], successor):
            continue
        same = (by is not None and by == successor and row["verification"] is None) or (
            verification is not None and row["verification"] == verification and new_id in (None, successor))
        if not same:
            return None
        new = factmod.get(registry, successor, config=config)
        ver = load_verification(registry, verification) if verification is not None else None
        rep = Replacement(old=old, new=new, pending=None, verification=ver)
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
    from factreg.secrets import redact

    config = settings.file_config
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
    data = note_data(note_date, old, rep.new, rep.verification, cause, found.citations, planned, out, note_path)
    note_text: str | None = render_note(data, old_id, old["version"], templates)
    if resumed is not None and _note_is_for(note_path, old_id, old["version"]):
        note_text = None  # written by the interrupted run, with the documents it cited then: kept as it is

    files = _Files()
    recorded_now: Applied | None = None  # what this run recorded, taken back when a later step fails
    try:
        if resumed is None:
            applied = recorded_now = apply(registry, rep, verification=verification, cause=cause,
                                           note_rel=_rel(note_path, out))
        new = applied.new
        after = {d["number"]: d for d in decmod.list_decisions(registry, config)}
        decisions = [after[d["number"]] for d in found.decisions]
        recorded = note_data(note_date, old, new, rep.verification, cause, found.citations, decisions, out, note_path)
        if note_text is not None and recorded != data:
            data, note_text = recorded, render_note(recorded, old_id, old["version"], templates)
        # Decisions citing the old fact now say `needs review`: render their files, and the synced documents, in
        # memory before writing any file.
        decision_texts = {out / d["path"]: decmod.render(d, templates) for d in decisions}
        synced, transforms = (planned_sync(registry, config, found.roots, every=resumed is not None)
                              if sync_docs and found.roots else ({}, {}))
        message = f"factreg correct {old_id}: superseded by {ref(new['id'], new['version'])}" if commit else None
        done = publish_files(out, Path(settings.root), note_path, note_text, decision_texts, synced, transforms,
                             files, commit_message=message)
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
    return [{"path": _rel(c.path, out), "link": _rel(c.path, folder), "line": c.line, "text": c.text}
            for c in citations]


def _decision_links(decisions: Sequence[DecisionData], out: Path, folder: Path) -> list[dict[str, Any]]:
    return [{"number": d["number"], "title": d["title"], "status": d["status"], "link": _rel(out / d["path"], folder)}
            for d in decisions]


def retraction_data(date: str, fact: FactData, because: str, citations: Sequence[Citation],
                    decisions: Sequence[DecisionData], out: Path, note_path: Path) -> dict[str, Any]:
    """What a retraction note shows, as plain data (`decisions` with their status after it)."""
    return {
        "date": date,
        "fact": display.fields(fact, NOTE_FIELDS),
        "because": because,
        "documents": _documents(citations, out, note_path.parent),
        "decisions": _decision_links(decisions, out, note_path.parent),
    }


def render_retraction(data: Mapping[str, Any], fact_id: str, version: int, templates: Path | str | None = None) -> str:
    """The retraction note's text (with the marker that ties the file to `fact_id` v`version`)."""
    from factreg.publish import render as rendering

    return _with_marker(rendering.render("retraction.md.j2", {"r": data}, templates), fact_id, version, "retraction")


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
) -> dict[str, Any]:
    """Withdraw `fact_id` (its current version) as wrong, with nothing to replace it: record the retraction, write
    its note, re-render the decisions citing it (they now need review), sync the docs and, with `commit`, commit
    those files. Documents citing it fail `docs check` from then on.

    All or nothing, as `correct`: every refusal comes first; the registry changes in one transaction; files are
    rendered in memory, written, and committed last; a failure after the transaction puts the files back and
    takes the retraction back. Running the same command again after a run was killed finishes it."""
    from factreg.publish import decisions as decmod

    config = settings.file_config
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
    data = retraction_data(note_date, fact, because, found.citations, planned, out, note_path)
    note_text: str | None = render_retraction(data, fact_id, version, templates)  # a template error: nothing done
    if resumed is not None and _note_is_for(note_path, fact_id, version, "retraction"):
        note_text = None  # written by the interrupted run: kept as it is

    files = _Files()
    recorded_now: int | None = None
    try:
        pk = resumed["pk"] if resumed is not None else None
        if pk is None:
            pk = recorded_now = _apply_retraction(registry, fact, because, _rel(note_path, out))
        after = {d["number"]: d for d in decmod.list_decisions(registry, config)}
        decisions = [after[d["number"]] for d in found.decisions]
        recorded = retraction_data(note_date, fact, because, found.citations, decisions, out, note_path)
        if note_text is not None and recorded != data:
            data, note_text = recorded, render_retraction(recorded, fact_id, version, templates)
        decision_texts = {out / d["path"]: decmod.render(d, templates) for d in decisions}
        synced, transforms = (planned_sync(registry, config, found.roots, every=resumed is not None)
                              if sync_docs and found.roots else ({}, {}))
        message = f"factreg retract {ref(fact_id, version)}: {because[:100]}" if commit else None
        done = publish_files(out, Path(settings.root), note_path, note_text, decision_texts, synced, transforms,
                             files, commit_message=message)
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
