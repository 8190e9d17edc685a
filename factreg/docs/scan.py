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
from typing import Any

from factreg.docs import check as chk
from factreg.docs import lint as ln
from factreg.docs import markers as mk
from factreg.docs import walk

PARALLEL_MIN_BYTES = 4 * 1024 * 1024  # below this much Markdown, one process
CHUNKS_PER_JOB = 8  # smaller chunks even out the work between processes

# A finding as sent back by a worker: (line, col, text, value, unit, kind); the path is the chunk's.
_Row = tuple[int, int, str, str, str, str, str]


@dataclass
class Scan:
    """What one pass found: the documents with markers or problems (for the check), every finding (for the lint,
    in file order) and the files the lint could not read."""

    docs: list[chk.Scanned] = field(default_factory=list)
    findings: list[ln.Finding] = field(default_factory=list)
    unreadable: list[walk.Problem] = field(default_factory=list)


@dataclass(frozen=True)
class _Options:
    check: bool
    lint: bool
    include_code: bool
    targets: bool
    max_bytes: int


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
) -> Scan:
    """Walk `paths` once; parse the markers of every document (`check`) and find its unsourced claims (`lint`).
    `jobs`: processes for a large tree (None: default_jobs(); 1: this process only). `progress(n, path)` after
    each file (one process) or each chunk (several)."""
    opts = _Options(check, lint, include_code, targets, chk.max_bytes(config))
    files, walk_problems = walk.markdown_files(paths)
    out = Scan()
    for problem in walk_problems:
        if check:
            out.docs.append(_problem_doc(problem))
        out.unreadable.append(problem)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        from factreg.errors import UsageError

        raise UsageError(f"--jobs must be 1 or more, got {jobs}")
    chunks = _chunks(files, jobs) if jobs > 1 and _large(files, jobs) else [files]
    results = _parallel(chunks, opts, jobs) if len(chunks) > 1 else [_scan_chunk(chunks[0], opts, progress)]
    done = 0
    for chunk, (docs, rows, unreadable) in zip(chunks, results, strict=True):
        done += len(chunk)
        if progress and len(chunks) > 1 and chunk:
            progress(done, str(chunk[-1]))
        out.docs.extend(docs)
        out.unreadable.extend(unreadable)
        for i, file_rows in rows:
            path = str(chunk[i])
            out.findings.extend(ln.Finding(path, *row) for row in file_rows)
    return out


def _problem_doc(problem: walk.Problem) -> chk.Scanned:
    return chk.Scanned(
        problem.path, None, [], [chk.Problem(str(problem.path), problem.line, 0, problem.kind, problem.message)]
    )


def _large(files: list[Path], jobs: int) -> bool:
    """Whether the files are many and big enough to be worth several processes."""
    if len(files) < 2 * jobs:
        return False
    total = 0
    for path in files:
        try:
            total += os.stat(path).st_size
        except OSError:
            continue  # reported when it is read
        if total >= PARALLEL_MIN_BYTES:
            return True
    return False


def _chunks(files: list[Path], jobs: int) -> list[list[Path]]:
    n = min(len(files), jobs * CHUNKS_PER_JOB)
    size, extra = divmod(len(files), n)
    out, start = [], 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        out.append(files[start:end])
        start = end
    return out


_ChunkResult = tuple[list[chk.Scanned], list[tuple[int, list[_Row]]], list[walk.Problem]]


def _scan_chunk(files: list[Path], opts: _Options,
                progress: Callable[[int, str], None] | None = None) -> _ChunkResult:
    """The documents with markers or problems, the findings by file index, and the unreadable files of a chunk."""
    docs: list[chk.Scanned] = []
    rows: list[tuple[int, list[_Row]]] = []
    unreadable: list[walk.Problem] = []
    for i, path in enumerate(files):
        if progress:
            progress(i + 1, str(path))
        text = walk.read_text(path, opts.max_bytes)
        if isinstance(text, walk.Problem):
            if opts.check:
                docs.append(_problem_doc(text))
            unreadable.append(text)
            continue
        if opts.check:
            found, bad = mk.parse(text)
            problems = [chk.Problem(str(path), b.line, b.col, "bad_marker", b.message, b.fact_id) for b in bad]
            if found or problems:
                docs.append(chk.Scanned(path, text, found, problems))
        if opts.lint:
            findings = ln.lint_text(text, "", opts.include_code, opts.targets)
            if findings:
                rows.append((i, [(f.line, f.col, f.text, f.value, f.unit, f.kind, f.by) for f in findings]))
    return docs, rows, unreadable


def _run(args: tuple[list[Path], _Options]) -> _ChunkResult:
    return _scan_chunk(*args)


def _parallel(chunks: list[list[Path]], opts: _Options, jobs: int) -> list[_ChunkResult]:
    """Every chunk's result, in the order of the chunks, from `jobs` processes (this process when they cannot
    be started)."""
    import multiprocessing

    try:
        pool = multiprocessing.get_context().Pool(min(jobs, len(chunks)))
    except OSError:  # pragma: no cover - no processes allowed here
        return [_scan_chunk(c, opts) for c in chunks]
    with pool:
        return list(pool.imap(_run, [(c, opts) for c in chunks]))
