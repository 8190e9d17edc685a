"""The transaction a correction and a retraction share: record in the registry, render every file in memory,
write the files, commit last — and on any failure put the files back and take the record back (`run`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.errors import UsageError
from factreg.registry.store import Registry
from factreg.registry.types import FactData

if TYPE_CHECKING:
    from factreg.config import Settings


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


@dataclass(frozen=True)
class Published:
    """The files a correction wrote, and the commit that holds them."""

    written: list[Path]  # every file rendered (the note, the decision files)
    changed: list[Path]  # the files whose content changed (rendered ones and synced documents)
    synced: list[Path]  # the documents `docs sync` rewrote
    commit: str | None  # the commit's sha: None without --commit, or when nothing changed


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


def _text_copy(registry: Registry, settings: Settings) -> dict[Path, bytes]:
    from factreg.registry import snapshot

    return snapshot.for_commit(registry, settings)


def _save_text_copy(copies: Mapping[Path, bytes]) -> None:
    from factreg.registry import snapshot

    snapshot.save(dict(copies))


@dataclass(frozen=True)
class Written:
    """What a correction or a retraction writes once its record is in the registry, rendered in memory."""

    note_path: Path
    note_text: str | None  # None: keep the note an interrupted run wrote
    decision_texts: dict[Path, str]  # the decision files citing the fact, re-rendered (they now need review)
    message: str  # the commit message


def run(
    registry: Registry,
    settings: Settings,
    out: Path,
    *,
    record: Callable[[], Callable[[], None]] | None,
    render: Callable[[], Written],
    roots: Sequence[Path],
    sync_docs: bool,
    resumed: bool,
    commit: bool,
) -> Published:
    """The steps after every refusal, all or nothing: `record` changes the registry in one transaction and returns
    how to take that back (None: an interrupted run recorded it already); `render` renders the note and the
    decision files in memory; the documents citing the fact are synced in memory (every one of them when
    `resumed`: the interrupted run may have synced some); then the files are written and, with `commit`, committed
    last with the registry's text copy. Any failure puts the files back, takes the record back and raises."""
    files = Files()
    take_back: Callable[[], None] | None = None
    try:
        if record is not None:
            take_back = record()
        written = render()
        synced, transforms = (planned_sync(registry, settings.file_config, roots, every=resumed)
                              if sync_docs and roots else ({}, {}))  # fmt: skip
        copies = _text_copy(registry, settings) if commit else {}
        done = publish_files(out, Path(settings.root), written.note_path, written.note_text, written.decision_texts,
                             synced, transforms, files, commit_message=written.message if commit else None,
                             also=copies)  # fmt: skip
        _save_text_copy(copies)
    except BaseException:
        files.restore()
        if take_back is not None:
            with contextlib.suppress(Exception):
                take_back()
        raise
    return done
