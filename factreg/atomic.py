"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from factreg.errors import UsageError


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to a temp file beside `path`, fsync it, then rename it over `path`.

    A file that cannot be written (a folder in its place, no permission, a full disk) is one UsageError naming
    it; the old file stays as it was and no temp file is left behind."""
    path = Path(path)
    try:
        _write(path, data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _write(path: Path, data: bytes) -> None:
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    tmp = _temp_beside(path, data, mode)
    with _removed_on_failure(tmp):
        os.replace(tmp, path)


def _temp_beside(path: Path, data: bytes, mode: int) -> str:
    """`data` in a new temp file beside `path`, fsynced, with `mode`; its name. Nothing is left on failure."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with _removed_on_failure(tmp):
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    return tmp


@contextlib.contextmanager
def _removed_on_failure(tmp: str) -> Iterator[None]:
    """Remove the temp file `tmp` when the block raises (anything, re-raised)."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_if_changed(path: Path, text: str) -> bool:
    """Write atomically only when the content differs; return whether the file changed."""
    data = text.encode("utf-8")
    try:
        if Path(path).read_bytes() == data:
            return False
    except OSError:  # missing, or not readable: the write says why when it cannot write either
        pass
    atomic_write_bytes(Path(path), data)
    return True


def _stamp(path: Path) -> tuple[int, int, int, int, str] | None:
    """(size, mtime_ns, inode, device, sha256) of the file at `path` now, or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            digest = hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, digest


def replace_if_unchanged(path: Path, data: bytes, expected: bytes) -> bool:
    """Replace `path` by `data` atomically, but only if it still holds `expected`; return whether it did.

    The file is checked when the call starts (its bytes are `expected`) and again after `data` is written and
    fsynced to the temp file, just before the rename (the same size, mtime_ns, inode and sha256): an edit made in
    between by someone else is kept, and the temp file is removed. What is left open is the rename itself.
    A file that cannot be written (a full disk, no permission) is one UsageError naming it, as in
    `atomic_write_bytes`.
    """
    path = Path(path)
    try:
        return _replace_if_unchanged(path, data, expected)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _replace_if_unchanged(path: Path, data: bytes, expected: bytes) -> bool:
    before = _stamp(path)
    if before is None or before[4] != hashlib.sha256(expected).hexdigest():
        return False
    tmp = _temp_beside(path, data, os.stat(path).st_mode & 0o777)
    with _removed_on_failure(tmp):
        if _stamp(path) != before:
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
    return True
