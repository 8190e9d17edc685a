"""Tidy-up: `factreg rm ID` and `factreg mv OLD NEW`, with the documents and decisions that cite the fact.

`rm` is refused while anything still cites the fact — a marker in a document under the configured docs roots, a
decision (a cite, its revert reason, a driver), another fact superseded by it or derived from it — unless `--force`;
what it removes is listed (versions, samples, conditions, verifications, corrections) and so is what still cites it.

`mv` renames the fact in the registry (every row that names it, registry/removal.py) and rewrites what cites it:
each marker's id in the documents under the docs roots (nothing else of the file changes: the id's span is replaced,
byte for byte), and the id in the files of the decisions that cite it. All or nothing, as a correction: the new
bytes of every file are made first, the registry changes in one transaction, then the files are written
atomically; a failure puts the files back and renames the fact back.

Whether something still cites a fact is also what decides if a retracted fact fails `status` (`cited`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.errors import Findings, NotFound, UsageError
from factreg.registry import removal
from factreg.registry.ids import check_id

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.docs.markers import Citation
    from factreg.registry.store import Registry


@dataclass
class Cited:
    """What cites a fact: documents under the docs roots, decisions, and other facts that depend on it."""

    citations: list[Citation] = field(default_factory=list)
    refs: removal.References = field(default_factory=removal.References)

    def places(self, root: Path) -> list[str]:
        """`docs/a.md:3`, `decision 2`, `superseded by it: x/y`, `derived from it: x/z`, one per place."""
        out = [f"{_rel(c.path, root)}:{c.line}" for c in self.citations]
        out += [f"decision {n}" for n in self.refs.decisions]
        out += [f"{fid} (superseded by it)" for fid in self.refs.successors_of]
        out += [f"{fid} (derived from it)" for fid in self.refs.derived]
        return out

    def __bool__(self) -> bool:
        r = self.refs
        return bool(self.citations or r.decisions or r.successors_of or r.derived)


def _rel(path: Path, root: Path) -> str:
    import os

    try:
        return Path(os.path.relpath(Path(path).resolve(), Path(root).resolve())).as_posix()
    except ValueError:
        return str(path)


def _roots(settings: Settings) -> list[Path]:
    from factreg.publish.corrections import doc_roots

    return [r for r in doc_roots(settings) if r.exists()]


def citations_of(settings: Settings, ids: Iterable[str]) -> dict[str, list[Citation]]:
    """The markers citing each of `ids` in the documents under the configured docs roots."""
    from factreg.docs.markers import find_citations

    wanted = set(ids)
    out: dict[str, list[Citation]] = {i: [] for i in wanted}
    roots = _roots(settings)
    if wanted and roots:
        for c in find_citations(roots):
            if c.fact_id in wanted:
                out[c.fact_id].append(c)
    return out


def cited(registry: Registry, settings: Settings, ids: Sequence[str]) -> dict[str, Cited]:
    """What cites each of `ids` now."""
    docs = citations_of(settings, ids)
    with registry.reader() as conn:
        return {i: Cited(docs.get(i, []), removal.references(conn, i)) for i in ids}


# ---------------------------------------------------------------- rm


def rm(registry: Registry, settings: Settings, ids: Sequence[str], *, force: bool = False) -> dict[str, Any]:
    """Remove facts (every version, its verifications and corrections) in one transaction; refused while anything
    cites one, unless `force`. Return what was removed and what still cites it."""
    wanted = [check_id(i) for i in dict.fromkeys(ids)]
    if not wanted:
        raise UsageError("name the facts to remove")
    with registry.reader() as conn:
        missing = [i for i in wanted if not removal.exists(conn, i)]
    if missing:
        raise NotFound(f"no fact {missing[0]!r} in the registry")
    found = cited(registry, settings, wanted)
    root = Path(settings.root)
    blocking = {i: c for i, c in found.items() if c}
    if blocking and not force:
        fid, c = next(iter(blocking.items()))
        places = c.places(root)
        raise Findings(f"{fid} is still cited: {', '.join(places[:5])}{' …' if len(places) > 5 else ''}; cite "
                       f"another fact there first (`factreg mv {fid} NEW_ID` renames it everywhere), or `factreg rm "
                       f"--force {fid}` to remove it anyway (they then cite a fact that is gone)")

    def work(conn: Any) -> dict[str, dict[str, int]]:
        return {i: removal.remove(conn, i) for i in wanted}

    gone = registry.write_retrying(work)
    return {"removed": [{"id": i, "rows": gone[i], "still_cited_by": found[i].places(root)} for i in wanted]}


# ---------------------------------------------------------------- mv


def _boundary(fact_id: str) -> re.Pattern[str]:
    """`fact_id` as a whole id in text: not part of a longer id (ids hold a-z 0-9 . _ / -)."""
    return re.compile(r"(?<![a-z0-9._/-])" + re.escape(fact_id) + r"(?![a-z0-9_/-]|\.[a-z0-9])")


def _renamed_documents(citations: Sequence[Citation], old: str, new: str) -> dict[Path, bytes]:
    """Each document citing `old`, with every marker's id replaced by `new` (only those spans)."""
    from factreg.docs import markers as mk
    from factreg.docs import walk

    out: dict[Path, bytes] = {}
    for path in dict.fromkeys(c.path for c in citations):
        data = Path(path).read_bytes()
        text = walk.decode(Path(path), data)
        if not isinstance(text, str):
            continue
        found, _bad = mk.parse(text)
        edits = [(m.id_start, m.id_end, new) for m in found if m.fact_id == old]
        if edits:
            out[Path(path)] = mk.replace_spans(text, edits).encode("utf-8")
    return out


def _renamed_decision_files(registry: Registry, settings: Settings, numbers: Sequence[int], old: str,
                            new: str) -> dict[Path, bytes]:
    """The files of the decisions `numbers`, with `old` replaced by `new` wherever it stands as a whole id."""
    from factreg.publish import decisions as decmod

    if not numbers:
        return {}
    pattern = _boundary(old)
    out: dict[Path, bytes] = {}
    for d in decmod.list_decisions(registry, settings.file_config):
        if d["number"] not in numbers:
            continue
        path = Path(settings.root) / d["path"]
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        renamed = pattern.sub(new, text)
        if renamed != text:
            out[path] = renamed.encode("utf-8")
    return out


def mv(registry: Registry, settings: Settings, old: str, new: str) -> dict[str, Any]:
    """Rename fact `old` to `new`: every version and verification, and every marker and decision that cites it.
    All or nothing (see the module's docstring). Return what moved and the files rewritten."""
    from factreg.publish.corrections import Files

    check_id(old)
    check_id(new)
    if old == new:
        raise UsageError(f"{old} is already named {new}")
    with registry.reader() as conn:
        if not removal.exists(conn, old):
            raise NotFound(f"no fact {old!r} in the registry")
        if removal.exists(conn, new):
            raise UsageError(f"{new} is already a fact: `factreg mv` does not merge two facts (remove one first)")
        refs = removal.references(conn, old)
    citations = citations_of(settings, [old])[old]
    documents = _renamed_documents(citations, old, new)  # every file's new bytes before anything is changed
    decision_files = _renamed_decision_files(registry, settings, refs.decisions, old, new)

    moved = registry.write_retrying(lambda conn: removal.rename(conn, old, new))
    files = Files()
    root = Path(settings.root)
    try:
        changed = [p for p, data in {**documents, **decision_files}.items() if files.write(p, data, root)]
    except BaseException:
        files.restore()
        registry.write_retrying(lambda conn: removal.rename(conn, new, old))
        raise
    return {"old": old, "new": new, "rows": moved, "documents": [str(p) for p in documents],
            "decisions": refs.decisions, "changed": [str(p) for p in changed]}


def retracted_uncited(registry: Registry, settings: Settings, facts: Sequence[Mapping[str, Any]]) -> set[str]:
    """The retracted facts among `facts` that nothing cites any more: no document under the docs roots, no
    decision, no fact superseded by or derived from it (those no longer fail `status`)."""
    ids = [str(f["id"]) for f in facts if f.get("status") == "retracted"]
    if not ids:
        return set()
    return {i for i, c in cited(registry, settings, ids).items() if not c}
