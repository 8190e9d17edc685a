"""Corrections: fact A was wrong or outdated and B replaces it — supersede A, write a correction note, sync docs.

`correct ID --by NEW_ID` uses an existing fact; `correct ID --verification V` first records the verification's
samples as a new fact. That new fact gets its own id, `<old-id>-<YYYYMMDD of the verification>` (then `-2`, `-3`
… if taken), because a correction is a supersede between two facts, not a new version of the same one; `--as`
names it explicitly. The old fact is kept, linked to its successor (rank deprecated).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, insert, select

from factreg import clock, fmt
from factreg.errors import NotFound, UsageError
from factreg.registry import conditions as cond
from factreg.registry import facts as factmod
from factreg.registry.ids import check_id, ref
from factreg.registry.models import Correction
from factreg.registry.store import Registry
from factreg.registry.verdicts import FAILURES

CORRECTION = Correction.__table__  # type: ignore[attr-defined]
FOLDER = "facts/corrections"
BUILD_KEYS = ("build", "build_commit", "llama_build", "server_build")


def note_name(date: str, fact_id: str) -> str:
    """`2026-10-26-voice-35b-a3b-e2e.md`: slashes in the id become dashes."""
    return f"{date}-{fact_id.replace('/', '-')}.md"


def load_verification(registry: Registry, pk: int) -> dict[str, Any]:
    """One verification as JSON data; NotFound when there is none with that number."""
    with registry.read() as conn:
        row = conn.execute(select(factmod.VERIFICATION).where(factmod.VERIFICATION.c.pk == pk)).mappings().first()
    if row is None:
        raise NotFound(f"no verification {pk}")
    return factmod.verification_json(row)


def fact_from_verification(old: Mapping[str, Any], ver: Mapping[str, Any], new_id: str) -> factmod.NewFact:
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


def probable_causes(old: Mapping[str, Any], new: Mapping[str, Any], cause: str | None = None) -> list[str]:
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


def doc_roots(settings: Any) -> list[Path]:
    """The configured `[docs] roots`, relative to the project root."""
    roots = settings.get("docs.roots", ["."])
    if isinstance(roots, str):
        roots = [roots]
    return [Path(settings.root) / r for r in roots]


def _rel(path: Path, base: Path) -> str:
    import os

    return Path(os.path.relpath(Path(path).resolve(), Path(base).resolve())).as_posix()


def fact_summary(f: Mapping[str, Any]) -> dict[str, Any]:
    """What a note shows of a fact: value with spread, interval, n, flags, conditions."""
    return {
        "id": f["id"],
        "version": f["version"],
        "metric": f["metric"],
        "unit": f["unit"],
        "text": fmt.value(f["value"], f["spread"], f["unit"]),
        "value": f["value"],
        "n": f.get("n"),
        "ci95": (f.get("stats") or {}).get("ci95"),
        "flags": list(f.get("flags") or []),
        "measured_at": f["measured_at"],
        "samples": list(f.get("samples") or []),
        "identity": dict(f["conditions"]["identity"]),
        "info": dict(f["conditions"]["info"]),
    }


def correct(
    registry: Registry,
    settings: Any,
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
) -> dict[str, Any]:
    """Supersede `old_id` by a fact (or by a verification recorded as a new fact), write the correction note,
    re-render the decisions citing it and sync the docs. Return what was done, with every file written."""
    from factreg.atomic import write_if_changed
    from factreg.publish import decisions as decmod
    from factreg.publish import render as rendering

    config = settings.file_config
    out = Path(out) if out is not None else Path(settings.root)
    check_id(old_id)
    if (by is None) == (verification is None):
        raise UsageError("give exactly one of --by and --verification")
    old = factmod.get(registry, old_id, config=config)
    if old.get("superseded_by"):
        raise UsageError(f"{old_id} is already superseded by {old['superseded_by']}")
    pending: factmod.NewFact | None = None
    if by is not None:
        check_id(by)
        if new_id is not None:
            raise UsageError("--as names the fact made from --verification; with --by it is not used")
        new = factmod.get(registry, by, config=config)
        if by == old_id:
            raise UsageError(f"{old_id} cannot correct itself")
        if new.get("superseded_by"):
            raise UsageError(f"{by} is itself superseded by {new['superseded_by']}")
        ver_data = None
    else:
        assert verification is not None
        ver_data = load_verification(registry, verification)
        if ver_data["fact_id"] != old_id:
            raise UsageError(f"verification {verification} is of {ver_data['fact_id']}, not {old_id}")
        if ver_data["verdict"] in FAILURES or ver_data["value"] is None:
            raise UsageError(
                f"verification {verification} could not measure ({ver_data['verdict']}): "
                "there is no value to correct with"
            )
        target = (
            check_id(new_id)
            if new_id
            else _free_id(registry, f"{old_id}-{ver_data['verified_at'][:10].replace('-', '')}")
        )
        if new_id:
            try:
                factmod.get(registry, new_id)
                raise UsageError(f"--as {new_id}: that fact already exists; use --by {new_id}")
            except NotFound:
                pass
        pending = fact_from_verification(old, ver_data, target)
        factmod.build_rows(pending)  # validate before writing anything
        new = None
    if new is not None and (new["metric"], new["unit"]) != (old["metric"], old["unit"]):
        raise UsageError(
            f"{old_id} is {old['metric']} ({old['unit']}) but {new['id']} is "
            f"{new['metric']} ({new['unit']}): a correction replaces a value of the same metric"
        )

    # Affected documents and decisions, as they are before the correction.
    roots = [r for r in doc_roots(settings) if r.exists()]
    citations = []
    if roots:
        from factreg.docs.sync import find_citations

        citations = [c for c in find_citations(roots) if c.fact_id == old_id]
    before = [d for d in decmod.list_decisions(registry, config) if any(c["id"] == old_id for c in d["cites"])]

    if pending is not None:
        new = factmod.record(registry, pending)
    assert new is not None
    reason = (
        " ".join(cause.split())
        if cause
        else (f"corrected by verification {verification}" if verification is not None else f"corrected by {new['id']}")
    )
    factmod.supersede(registry, old_id, new["id"], reason)
    note_date = date or _today()
    folder = out / FOLDER
    name = note_name(note_date, old_id)
    k = 1
    while (folder / name).exists() and not _note_is_for(folder / name, old_id, old["version"]):
        k += 1
        name = note_name(note_date, f"{old_id}-{k}")
    note_path = folder / name

    def work(conn: Connection) -> int:
        result = conn.execute(
            insert(CORRECTION).values(
                old_fact_id=old_id,
                old_version=old["version"],
                new_fact_id=new["id"],
                new_version=new["version"],
                verification=verification,
                cause=cause,
                created_at=clock.iso(),
                note_path=_rel(note_path, out),
            )
        )
        return int(result.inserted_primary_key[0])  # type: ignore[index]

    pk = int(registry.write_retrying(work))
    after = {d["number"]: d for d in decmod.list_decisions(registry, config)}
    affected_decisions = [after[d["number"]] for d in before]
    data = {
        "date": note_date,
        "old": fact_summary(old),
        "new": fact_summary(new),
        "verification": None
        if ver_data is None
        else {
            "pk": ver_data["pk"],
            "verdict": ver_data["verdict"],
            "verified_at": ver_data["verified_at"],
            "message": ver_data["message"],
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
            for d in affected_decisions
        ],
    }
    text = rendering.render("correction.md.j2", {"c": data}, templates)
    written: list[Path] = []
    changed: list[Path] = []
    if write_if_changed(note_path, _with_marker(text, old_id, old["version"])):
        changed.append(note_path)
    written.append(note_path)
    # Decisions citing the old fact now say `needs review`: re-render their files.
    if affected_decisions:
        dec_written, dec_changed = decmod.write_files(registry, config, out, templates, decisions=affected_decisions)
        written.extend(dec_written)
        changed.extend(dec_changed)
    synced: list[Path] = []
    if sync_docs and roots:
        from factreg.docs.sync import sync

        synced = sync(registry, roots, config)
        changed.extend(p for p in synced if p not in changed)
    return {
        "correction": pk,
        "old": ref(old_id, old["version"]),
        "new": ref(new["id"], new["version"]),
        "note": str(note_path),
        "written": [str(p) for p in written],
        "synced": [str(p) for p in synced],
        "changed": [str(p) for p in changed],
        "causes": data["causes"],
        "documents": data["documents"],
        "decisions": [d["number"] for d in affected_decisions],
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


def _change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    if not old["value"]:
        return "—"
    rel = (new["value"] - old["value"]) / abs(old["value"])
    ratio = new["value"] / old["value"] if old["value"] else None
    text = f"{rel:+.0%}"
    if ratio and ratio > 0:
        text += f" (× {fmt.num(ratio, 2)})"
    return text


def list_corrections(registry: Registry) -> list[dict[str, Any]]:
    """Every correction, oldest first, with the old and new values."""
    with registry.read() as conn:
        rows = [dict(r) for r in conn.execute(select(CORRECTION).order_by(CORRECTION.c.pk)).mappings()]
    out = []
    cache: dict[str, dict[int, dict[str, Any]]] = {}

    def version(fid: str | None, ver: int | None) -> dict[str, Any] | None:
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
                "old_text": fmt.value(old["value"], old["spread"], old["unit"]) if old else "—",
                "new_text": fmt.value(new["value"], new["spread"], new["unit"]) if new else "—",
            }
        )
    return out
