"""Finding and reading the Markdown documents under some paths: shared by `docs check`, `sync`, `cites`, `lint`.

Folders are walked to any depth, following symbolic links to folders at most once each (a link loop is
reported, never followed forever); `.git` and other hidden folders are skipped. A file given explicitly is read
whatever its name; inside folders only Markdown files (`.md`, `.markdown`, `.mdx`, e.g. SKILL.md, README.md)
are taken. A document is UTF-8, or UTF-16 with its byte-order mark (read, and written back by `docs sync`, in the
same encoding). A file that cannot be used — binary, not UTF-8, UTF-32, larger than the size cap, unreadable —
becomes a `Problem`, never an exception.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factreg.errors import UsageError

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
MAX_FILE_BYTES = 50 * 1024 * 1024
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"})


def max_bytes(config: Mapping[str, Any] | None) -> int:
    """The size cap per document: `[docs] max_file_mb` in the config file, default 50 MB."""
    raw = ((config or {}).get("docs") or {}).get("max_file_mb", MAX_FILE_BYTES / 1048576)
    try:
        mb = float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"[docs] max_file_mb must be a number, got {raw!r}") from None
    if mb <= 0:
        raise UsageError("[docs] max_file_mb must be positive")
    return int(mb * 1048576)


@dataclass(frozen=True)
class Problem:
    """A path that could not be read as a document, and why."""

    path: Path
    kind: str  # "binary" | "encoding" | "too_big" | "unreadable" | "symlink_loop"
    message: str
    line: int = 0


def is_markdown(name: str) -> bool:
    return name.lower().endswith(MARKDOWN_SUFFIXES)


def markdown_files(paths: Iterable[Path | str]) -> tuple[list[Path], list[Problem]]:
    """Every Markdown file under `paths` (files given directly are kept as they are), sorted, each once."""
    entries, problems = markdown_entries(paths)
    return [path for path, _ in entries], problems


def markdown_entries(paths: Iterable[Path | str]) -> tuple[list[tuple[Path, os.stat_result]], list[Problem]]:
    """markdown_files, each file with what `stat` said of it (following links) when the walk found it."""
    files: list[tuple[Path, os.stat_result]] = []
    problems: list[Problem] = []
    seen_files: set[tuple[int, int]] = set()
    seen_dirs: set[tuple[int, int]] = set()

    def add_file(path: Path, st: os.stat_result) -> None:
        key = (st.st_dev, st.st_ino)
        if key not in seen_files:
            seen_files.add(key)
            files.append((path, st))

    for given in paths:
        root = Path(given)
        try:
            st = root.stat()
        except FileNotFoundError:
            if root.is_symlink():
                problems.append(Problem(root, "unreadable", "broken symbolic link"))
                continue
            raise UsageError(f"no such file or folder: {root}") from None
        except OSError as exc:
            problems.append(Problem(root, _kind(exc), _why(exc)))
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk_dir(root, st, seen_dirs, add_file, problems)
        else:
            add_file(root, st)
    files.sort(key=lambda entry: entry[0])
    return files, problems


def _walk_dir(
    root: Path,
    root_st: os.stat_result,
    seen_dirs: set[tuple[int, int]],
    add_file: Callable[[Path, os.stat_result], None],
    problems: list[Problem],
) -> None:
    seen_dirs.add((root_st.st_dev, root_st.st_ino))
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            problems.append(Problem(folder, _kind(exc), _why(exc)))
            continue
        # Real folders before links to them, so a link to a folder walked anyway is the one passed over.
        entries.sort(key=lambda e: (e.is_symlink(), e.name))
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError as exc:
                problems.append(Problem(Path(entry.path), _kind(exc), _why(exc)))
                continue
            if not is_dir and not is_markdown(entry.name):
                continue
            path = Path(entry.path)
            if is_dir:
                if entry.name in SKIP_DIRS or entry.name.startswith("."):
                    continue
                try:
                    st = entry.stat(follow_symlinks=True)
                except OSError as exc:
                    problems.append(Problem(path, _kind(exc), _why(exc)))
                    continue
                key = (st.st_dev, st.st_ino)
                if key in seen_dirs:
                    if entry.is_symlink() and _is_loop(folder, path):
                        problems.append(
                            Problem(
                                path, "symlink_loop", "symbolic link loop (links to a folder containing it): skipped"
                            )
                        )
                    continue
                seen_dirs.add(key)
                stack.append(path)
            else:
                try:
                    st = entry.stat(follow_symlinks=True)
                except OSError as exc:  # broken link, link loop
                    problems.append(Problem(path, _kind(exc), _why(exc)))
                    continue
                if stat.S_ISREG(st.st_mode):
                    add_file(path, st)


def _is_loop(folder: Path, link: Path) -> bool:
    """Whether `link` (in `folder`) points at `folder` itself or one of its ancestors."""
    target = os.path.realpath(link)
    here = os.path.realpath(folder)
    return here == target or here.startswith(target.rstrip(os.sep) + os.sep)


def _kind(exc: OSError) -> str:
    import errno

    return "symlink_loop" if exc.errno == errno.ELOOP else "unreadable"


def _why(exc: OSError) -> str:
    import errno

    if exc.errno == errno.ELOOP:
        return "symbolic link loop: skipped"
    if exc.errno == errno.ENOENT:
        return "broken symbolic link: skipped"
    return f"cannot read: {exc.strerror or exc}"


def read_bytes(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes | Problem:
    """A file's bytes, or the Problem that keeps it from being a document."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                return Problem(
                    path,
                    "too_big",
                    f"{size / 1048576:.0f} MB is over the {max_bytes / 1048576:.0f} MB limit per document: skipped",
                )
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        return Problem(path, _kind(exc), _why(exc))
    if len(data) > max_bytes:  # grew while we read it
        return Problem(path, "too_big", f"over the {max_bytes / 1048576:.0f} MB limit per document: skipped")
    return data


# Byte-order marks of the encodings a document may have besides UTF-8 (longest first: UTF-32-LE starts like UTF-16-LE).
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def encoding_of(data: bytes) -> str:
    """The encoding a document's bytes are read (and written back) in: UTF-16 when they start with its byte-order
    mark, UTF-32 likewise (refused by `decode`), else UTF-8."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    return "utf-8"


def decode(path: Path, data: bytes) -> str | Problem:
    """The text (line endings and a byte-order mark kept as they are, so encoding it gives the same bytes), or a
    Problem for binary content or bytes that are not UTF-8, or UTF-16 after its byte-order mark."""
    encoding = encoding_of(data)
    if encoding.startswith("utf-32"):
        return Problem(path, "encoding", "UTF-32 is not supported (save it as UTF-8 or UTF-16): skipped")
    if encoding != "utf-8":
        try:
            text = data.decode(encoding)  # the byte-order mark stays, as U+FEFF
        except UnicodeDecodeError as exc:
            return Problem(path, "encoding", f"not valid {encoding[:6].upper()} (byte {exc.start}): skipped")
        if "\x00" in text:
            return Problem(path, "binary", "binary file (contains NUL characters): skipped")
        return text
    if b"\x00" in data:
        return Problem(path, "binary", "binary file (contains NUL bytes): skipped")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return Problem(path, "encoding", f"not UTF-8 (byte {exc.start}, line {line}): skipped", line)


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str | Problem:
    """A document's text, or the Problem that keeps it from being one."""
    data = read_bytes(path, max_bytes)
    if isinstance(data, Problem):
        return data
    return decode(path, data)


def documents(paths: Iterable[Path | str], max_bytes: int = MAX_FILE_BYTES) -> Iterator[tuple[Path, str | Problem]]:
    """(path, text or Problem) for every Markdown file under `paths`: walk problems first, then files in order."""
    files, problems = markdown_files(paths)
    for problem in problems:
        yield problem.path, problem
    for path in files:
        yield path, read_text(path, max_bytes)
