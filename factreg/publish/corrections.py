"""Corrections: fact A was wrong or outdated and B replaces it — supersede A, write a correction note, sync docs.

`correct ID --by NEW_ID` uses an existing fact; `correct ID --verification V` first records the verification's
samples as a new fact. That new fact gets its own id, `<old-id>-<YYYYMMDD of the verification>` (then `-2`, `-3`
… if taken), because a correction is a supersede between two facts, not a new version of the same one; `--as`
names it explicitly. The old fact is kept, linked to its successor (rank deprecated).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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


def note_location(out: Path, date: str, old_id: str, version: int) -> Path:
    """Where the correction note of `old_id` v`version` goes: a name not yet taken by another fact's note."""
    folder = out / FOLDER
    name = note_name(date, old_id)
    k = 1
    while (folder / name).exists() and not _note_is_for(folder / name, old_id, version):
        k += 1
        name = note_name(date, f"{old_id}-{k}")
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
        "documents": [
            {"path": _rel(c.path, out), "link": _rel(c.path, folder), "line": c.line, "text": c.text} for c in citations
        ],
        "decisions": [
            {"number": d["number"], "title": d["title"], "status": d["status"], "link": _rel(out / d["path"], folder)}
            for d in decisions
        ],
    }


def render_note(data: Mapping[str, Any], old_id: str, version: int, templates: Path | str | None = None) -> str:
    """Step 3b: the correction note's text (with the marker that ties the file to `old_id` v`version`)."""
    from factreg.publish import render as rendering

    return _with_marker(rendering.render("correction.md.j2", {"c": data}, templates), old_id, version)


def apply(
    registry: Registry,
    rep: Replacement,
    *,
    verification: int | None,
    cause: str | None,
    note_rel: str,
) -> Applied:
    """Step 2: record the replacing fact (from a verification), supersede the old fact, record the correction."""
    old = rep.old
    new = factmod.record(registry, rep.pending) if rep.pending is not None else rep.new
    reason = (
        " ".join(cause.split())
        if cause
        else (f"corrected by verification {verification}" if verification is not None else f"corrected by {new['id']}")
    )
    factmod.supersede(registry, old["id"], new["id"], reason)

    def work(conn: Connection) -> int:
        result = conn.execute(
            insert(CORRECTION).values(
                old_fact_id=old["id"],
                old_version=old["version"],
                new_fact_id=new["id"],
                new_version=new["version"],
                verification=verification,
                cause=cause,
                created_at=clock.iso(),
                note_path=note_rel,
            )
        )
        return int(result.inserted_primary_key[0])  # type: ignore[index]

    return Applied(correction=int(registry.write_retrying(work)), new=new)


def publish_files(
    registry: Registry,
    config: Mapping[str, Any],
    out: Path,
    note_path: Path,
    note_text: str,
    decision_texts: Mapping[Path, str],
    roots: Sequence[Path],
    *,
    sync_docs: bool = True,
    commit_message: str | None = None,
) -> Published:
    """Step 4: write the note and the decision files, sync the documents, and commit them (with a message)."""
    from factreg.atomic import write_if_changed
    from factreg.publish import writer as publish

    written = [note_path, *decision_texts]
    changed = [p for p, text in ((note_path, note_text), *decision_texts.items()) if write_if_changed(p, text)]
    synced: list[Path] = []
    if sync_docs and roots:
        from factreg.docs.sync import sync

        synced = sync(registry, list(roots), config)
        changed.extend(p for p in synced if p not in changed)
    sha = (publish.commit(publish.contents_of({}, [*written, *synced]), commit_message, out)
           if commit_message is not None else None)
    return Published(written=written, changed=changed, synced=synced, commit=sha)


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

    The steps: check and decide the replacement, find what cites the old fact, render the note, apply the
    correction to the registry, render the decision files, write everything, commit last. The note is rendered
    before the registry changes, from the replacement as it will be recorded; it is rendered again in the rare
    case that the recorded state differs (another process took the new id meanwhile)."""
    from factreg.publish import decisions as decmod
    from factreg.secrets import redact

    config = settings.file_config
    out = Path(out) if out is not None else Path(settings.root)
    cause = None if cause is None else redact(cause)
    if commit:
        from factreg.publish import writer as publish

        publish.check_repo(out)  # no repository: fail before anything is recorded
    rep = replacement(registry, config, old_id, by=by, verification=verification, new_id=new_id)
    old = rep.old
    found = affected(registry, settings, old_id)
    note_date = date or _today()
    note_path = note_location(out, note_date, old_id, old["version"])
    planned: list[DecisionData] = [{**d, "status": status_once_superseded(d)} for d in found.decisions]
    data = note_data(note_date, old, rep.new, rep.verification, cause, found.citations, planned, out, note_path)
    note_text = render_note(data, old_id, old["version"], templates)

    applied = apply(registry, rep, verification=verification, cause=cause, note_rel=_rel(note_path, out))
    new = applied.new
    after = {d["number"]: d for d in decmod.list_decisions(registry, config)}
    decisions = [after[d["number"]] for d in found.decisions]
    recorded = note_data(note_date, old, new, rep.verification, cause, found.citations, decisions, out, note_path)
    if recorded != data:
        data, note_text = recorded, render_note(recorded, old_id, old["version"], templates)
    # Decisions citing the old fact now say `needs review`: re-render their files (all before writing any).
    decision_texts = {out / d["path"]: decmod.render(d, templates) for d in decisions}

    message = f"factreg correct {old_id}: superseded by {ref(new['id'], new['version'])}" if commit else None
    done = publish_files(
        registry,
        config,
        out,
        note_path,
        note_text,
        decision_texts,
        found.roots,
        sync_docs=sync_docs,
        commit_message=message,
    )
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
    }


def _marker(old_id: str, version: int) -> str:
    return f"<!-- factreg correction: {ref(old_id, version)} -->"


def _with_marker(text: str, old_id: str, version: int) -> str:
    return f"{_marker(old_id, version)}\n{text}"


def _note_is_for(path: Path, old_id: str, version: int) -> bool:
    try:
        return path.read_text(encoding="utf-8").startswith(_marker(old_id, version))
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
