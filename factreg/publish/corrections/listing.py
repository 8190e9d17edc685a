"""Where corrections live: the correction table read back, note names and places, the markers that tie a note to
the version it corrects, and picking the verification a correction is made from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import select

from factreg import clock
from factreg.errors import NotFound, UsageError
from factreg.registry import display
from factreg.registry import facts as factmod
from factreg.registry.ids import check_id, ref
from factreg.registry.models import Correction, table
from factreg.registry.store import Registry
from factreg.registry.types import FactData, VerificationData
from factreg.verdicts import FAILURES

if TYPE_CHECKING:
    from factreg.config import Settings


CORRECTION = table(Correction)


FOLDER = "facts/corrections"


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


def doc_roots(settings: Settings) -> list[Path]:
    """The configured `[docs] roots`, relative to the project root."""
    roots = settings.get("docs.roots", ["."])
    if isinstance(roots, str):
        roots = [roots]
    return [Path(settings.root) / r for r in roots]


def _rel(path: Path, base: Path) -> str:
    import os

    return Path(os.path.relpath(Path(path).resolve(), Path(base).resolve())).as_posix()


def _today() -> str:
    return clock.today()


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


def _marker(old_id: str, version: int, kind: str = "correction") -> str:
    return f"<!-- factreg {kind}: {ref(old_id, version)} -->"


def _with_marker(text: str, old_id: str, version: int, kind: str = "correction") -> str:
    return f"{_marker(old_id, version, kind)}\n{text}"


def _note_is_for(path: Path, old_id: str, version: int, kind: str = "correction") -> bool:
    try:
        return path.read_text(encoding="utf-8").startswith(_marker(old_id, version, kind))
    except OSError:
        return False


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
