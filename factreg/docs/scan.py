"""One pass over the documents for `docs check`, `docs lint` and both at once (`docs check --lint`): each file is
read and decoded once, its citation markers parsed (for the check) and its unsourced claims found (for the lint).

A large tree is split into chunks of files, run on several processes (`jobs`, default: the cores this process may
use); the chunks are taken in the order of the files and their results put back in that order, so the output is the
same, in the same order, as with one process. Small trees (under PARALLEL_MIN_BYTES, or fewer files than
2 × jobs) stay in this process: starting workers would cost more than it saves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg import terminal
from factreg.docs import walk

if TYPE_CHECKING:
    from factreg.docs import cache as dc
    from factreg.docs import check as chk
    from factreg.docs.findings import Finding

PARALLEL_MIN_BYTES = 4 * 1024 * 1024  # below this much Markdown, one process
CHUNKS_PER_JOB = 8  # smaller chunks even out the work between processes


@dataclass
class Scan:
    """What one pass found: the files walked, the documents with markers or problems (for the check), every finding
    (for the lint, in file order) and the files the lint could not read; with a cache, how many files it answered
    for and, when it could not be used, why."""

    paths: list[Path] = field(default_factory=list)  # every Markdown file walked, in the order of the output
    docs: list[chk.Scanned] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unreadable: list[walk.Problem] = field(default_factory=list)
    from_cache: int = 0
    cache_problem: str | None = None
    odd_names: list[Path] = field(default_factory=list)  # files read whose names are not UTF-8 (shown escaped)


@dataclass(frozen=True)
class _Options:
    check: bool
    lint: bool
    include_code: bool
    targets: bool
    max_bytes: int


# One file to read: (its index among the files, its path, whether to lint it, the digest the cache knows for it:
# read only for its markers, it is linted after all when its bytes are no longer those).
_Item = tuple[int, Path, bool, bytes | None]
# What a worker tells the cache of a file it read: (index, digest, may hold markers, the markers it parsed as the
# cache keeps them or None, the findings it made or None).
_Stored = tuple[int, bytes, bool, "str | None", "list[dc.Row] | None"]


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def scan(
    paths: Iterable[Path | str],
    config: Mapping[str, Any] | None = None,
    *,
    check: bool = True,
    lint: bool = False,
    include_code: bool = False,
    targets: bool = False,
    jobs: int | None = None,
    progress: Callable[[int, str], None] | None = None,
    cache: dc.DocCache | None = None,
) -> Scan:
    """Walk `paths` once; parse the markers of every document (`check`) and find its unsourced claims (`lint`).
    `jobs`: processes for a large tree (None: default_jobs(); 1: this process only). `progress(n, path)` after
    each file read (one process) or each chunk (several). With a `cache` (factreg.docs.cache), files it knows
    unchanged are not read, or read only for their markers, and their findings are taken from it; what is read
    is recorded in it. The result is the same with a cache and without."""
    opts = _Options(check, lint, include_code, targets, walk.max_bytes(config))
    entries, walk_problems = walk.markdown_entries(paths)
    out = Scan(paths=[path for path, _ in entries])
    out.odd_names = [path for path in out.paths if not terminal.is_utf8_name(path)]
    for problem in walk_problems:
        if check:
            out.docs.append(_problem_doc(problem))
        out.unreadable.append(problem)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        from factreg.errors import UsageError

        raise UsageError(f"--jobs must be 1 or more, got {jobs}")
    lint_variant: str | None = None
    known: dict[int, dc.Known] = {}
    absolute: list[str] = []
    sigs: list[str] = []
    if cache is not None:  # the cache's module is imported only with a cache: a lint alone needs just the rules
        from factreg.docs import cache as dc

        lint_variant = dc.variant(include_code, targets) if lint else None
        absolute = [os.path.abspath(path) for path, _ in entries]
        sigs = [dc.signature(st) for _, st in entries]
        # A name that is not UTF-8 cannot be a key of the cache (SQLite text): such a file is read every run.
        named = [i for i, path in enumerate(absolute) if terminal.is_utf8_name(path)]
        try:
            found = cache.lookup([(absolute[i], sigs[i]) for i in named], lint_variant)
            known = {named[k]: got for k, got in found.items()}
        except dc.CacheError as exc:
            out.cache_problem, cache = str(exc), None
    out.from_cache = len(known)
    items: list[_Item] = []
    for i, (path, _) in enumerate(entries):
        got = known.get(i)
        if got is None:
            items.append((i, path, lint, None))
        elif check and got.may_hold:
            items.append((i, path, False, got.digest))  # its findings are known; its markers are read
    read_ns = 0  # when the reading began: what the cache records a file as settled against
    reader = None
    if cache is not None:
        from factreg import clock

        read_ns = int(clock.wall() * 1e9)
        reader = cache.reader(lint_variant)
    # Several processes pay off for linting; reading alone, only for a check without the lint (a run whose
    # findings all come from the cache re-reads just the files with markers, in this process).
    heavy = [it for it in items if it[2]] if lint else items
    chunks = _chunks(items, jobs) if jobs > 1 and _large(heavy, jobs) else [items]
    results = (
        _parallel(chunks, opts, reader, jobs)
        if len(chunks) > 1
        else [_scan_chunk(chunks[0], opts, reader, progress)]
    )
    if reader is not None:
        reader.close()
    rows: dict[int, list[dc.Row]] = {i: k.rows for i, k in known.items() if k.rows}
    stored: list[_Stored] = []
    done = 0
    for chunk, (docs, chunk_rows, unreadable, chunk_stored) in zip(chunks, results, strict=True):
        done += len(chunk)
        if progress and len(chunks) > 1 and chunk:
            progress(done, str(chunk[-1][1]))
        out.docs.extend(docs)
        out.unreadable.extend(unreadable)
        rows.update(chunk_rows)
        stored.extend(chunk_stored)
    if rows:
        from factreg.docs.findings import Finding

        for i in sorted(rows):
            name = str(entries[i][0])
            out.findings.extend(Finding(name, *row) for row in rows[i])
    if cache is not None:
        _record(cache, out, entries, absolute, sigs, known, stored, lint_variant, read_ns)
    return out


def _record(
    cache: dc.DocCache,
    out: Scan,
    entries: list[tuple[Path, os.stat_result]],
    absolute: list[str],
    sigs: list[str],
    known: dict[int, dc.Known],
    stored: list[_Stored],
    lint_variant: str | None,
    read_ns: int,
) -> None:
    """Write what this run read to the cache (read_ns: when the reading began)."""
    from factreg.docs import cache as dc

    files = [(absolute[i], sigs[i], dig, dc.settled(entries[i][1], read_ns)) for i, dig, *_ in stored
             if i not in known and terminal.is_utf8_name(absolute[i])]
    texts = [(dig, hold, parsed) for _, dig, hold, parsed, _ in stored]
    lints = [(dig, lint_variant, made) for _, dig, _, _, made in stored if made is not None and lint_variant is not None]
    try:
        cache.store(files, texts, lints)
    except dc.CacheError as exc:
        out.cache_problem = str(exc)


def _problem_doc(problem: walk.Problem) -> chk.Scanned:
    from factreg.docs import check as chk

    return chk.Scanned(
        problem.path, None, [], [chk.Problem(str(problem.path), problem.line, 0, problem.kind, problem.message)]
    )


def _large(items: list[_Item], jobs: int) -> bool:
    """Whether the files are many and big enough to be worth several processes."""
    if len(items) < 2 * jobs:
        return False
    total = 0
    for _, path, _, _ in items:
        try:
            total += os.stat(path).st_size
        except OSError:
            continue  # reported when it is read
        if total >= PARALLEL_MIN_BYTES:
            return True
    return False


def _chunks(items: list[_Item], jobs: int) -> list[list[_Item]]:
    n = min(len(items), jobs * CHUNKS_PER_JOB)
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        out.append(items[start:end])
        start = end
    return out


_ChunkResult = tuple["list[chk.Scanned]", "dict[int, list[dc.Row]]", list[walk.Problem], list[_Stored]]


def _scan_chunk(
    items: list[_Item],
    opts: _Options,
    reader: dc.Reader | None = None,
    progress: Callable[[int, str], None] | None = None,
) -> _ChunkResult:
    """The documents with markers or problems, the findings by file index, the unreadable files of a chunk, and
    (with a cache's `reader`) what to record of each file read."""
    markers = opts.check or reader is not None  # a lint alone, without the cache, reads no marker
    if markers:
        from factreg.docs import cache as dc
        from factreg.docs import check as chk
        from factreg.docs import markers as mk
    docs: list[chk.Scanned] = []
    rows: dict[int, list[dc.Row]] = {}
    unreadable: list[walk.Problem] = []
    stored: list[_Stored] = []
    lint_text: Callable[..., list[Finding]] | None = None
    for n, (i, path, to_lint, expected) in enumerate(items):
        if progress:
            progress(n + 1, str(path))
        data = walk.read_bytes(path, opts.max_bytes)
        text = data if isinstance(data, walk.Problem) else walk.decode(path, data)
        if isinstance(text, walk.Problem):
            if opts.check:
                docs.append(_problem_doc(text))
            unreadable.append(text)
            if expected is not None:
                rows[i] = []  # what the cache knew of it no longer holds
            continue
        dig = dc.digest(data) if reader is not None and isinstance(data, bytes) else b""
        if expected is not None and dig != expected:  # changed since the walk: the known findings are not its
            to_lint = opts.lint
        hold = markers and mk.may_hold(text)
        parsed_text: str | None = None
        if opts.check and hold:
            parsed = reader.markers(dig) if reader is not None else None
            if parsed is None:
                parsed = mk.parse(text)
                parsed_text = dc.markers_text(parsed) if reader is not None else None
            found, bad = parsed
            problems = [chk.Problem(str(path), b.line, b.col, "bad_marker", b.message, b.fact_id) for b in bad]
            if found or problems:
                docs.append(chk.Scanned(path, text, found, problems))
        made: list[dc.Row] | None = None
        if to_lint:
            file_rows = reader.rows(dig) if reader is not None else None
            if file_rows is None:
                if lint_text is None:
                    from factreg.docs import lint  # its rules take a tenth of a second to compile: only if used

                    lint_text = lint.lint_text
                findings = lint_text(text, "", opts.include_code, opts.targets)
                file_rows = made = [(f.line, f.col, f.text, f.value, f.unit, f.kind, f.by, f.rule) for f in findings]
            if file_rows or expected is not None:
                rows[i] = file_rows
        if reader is not None:
            stored.append((i, dig, hold, parsed_text, made))
    return docs, rows, unreadable, stored


def _run(args: tuple[list[_Item], _Options, dc.Reader | None]) -> _ChunkResult:
    return _scan_chunk(*args)


def _parallel(chunks: list[list[_Item]], opts: _Options, reader: dc.Reader | None, jobs: int) -> list[_ChunkResult]:
    """Every chunk's result, in the order of the chunks, from `jobs` processes (this process when they cannot
    be started)."""
    import multiprocessing

    try:
        pool = multiprocessing.get_context().Pool(min(jobs, len(chunks)))
    except OSError:  # pragma: no cover - no processes allowed here
        return [_scan_chunk(c, opts, reader) for c in chunks]
    with pool:
        return list(pool.imap(_run, [(c, opts, reader) for c in chunks]))
