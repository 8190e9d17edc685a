"""The document cache: what reading each document found, kept so that `docs check` and `docs lint` read and lint
again only what changed (`--no-cache` turns it off for a run; FACTREG_CACHE_DIR moves it, or turns it off when
empty).

What it keeps, in one SQLite file (`docs.sqlite` in `config.user_cache_dir()`):

- per file (its absolute path): the stat signature the walk saw before reading it — device, inode, size,
  modification and change times in nanoseconds — and the BLAKE2b digest of its bytes;
- per digest: whether the text may hold citation markers (`markers.may_hold`: the check parses only those);
- per digest and set of lint options (`--include-code`, `--targets`): the lint's findings.

When a file is taken as unchanged without being read:

- its whole signature is the one recorded, and
- it had *settled* when it was read: both its times were more than RACY_NS older than the read. A file changed
  within one tick of its file system's clock after being read could keep its signature, so a file that had not
  settled is read again, and its digest compared, on the next run (git treats its index the same way). Any write
  to a file moves its change time, which no program can set back, and a file put in another's place has another
  inode or change time.

A file whose signature changed is read and its digest computed; when its bytes are ones the cache knows (a
`git checkout`, a `touch`, a fresh clone of the same tree), their findings are taken by digest, not linted again.

What is never trusted:

- results of other rules: every result is keyed by a fingerprint of factreg.docs's source code, factreg's version
  and Python's, and a new fingerprint drops them all;
- a cache someone else could write, since it could hide claims: the folder and the file must belong to this user
  and not be writable by group or others, or the cache is not used;
- a damaged, locked or unwritable cache: any error of its own turns it off for the run, which goes on without it
  and finds the same.

Size: paths not seen for PRUNE_DAYS days are forgotten, and results no remembered path has, at most once a day.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import astuple, dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from factreg.docs.markers import Marker, MarkerProblem

SCHEMA = 3  # PRAGMA user_version: a cache of another schema is emptied
FILE_NAME = "docs.sqlite"
RACY_NS = 2_000_000_000  # 2 s: coarser than any file system's clock factreg may meet (FAT keeps 2 s)
PRUNE_DAYS = 30
_BATCH = 500  # values per `IN (…)`: well under SQLite's limit of bound parameters

# A finding as stored and as the scan passes it around: (line, col, text, value, unit, kind, by).
Row = tuple[int, int, str, str, str, str, str, str]

_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, sig TEXT NOT NULL, digest BLOB NOT NULL, settled INTEGER NOT NULL, seen TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS texts (digest BLOB PRIMARY KEY, may_hold INTEGER NOT NULL, markers TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lints (
    digest BLOB NOT NULL, variant TEXT NOT NULL, rows TEXT NOT NULL, PRIMARY KEY (digest, variant)
) WITHOUT ROWID;
"""


class CacheError(Exception):
    """The cache cannot be used (the reason is the message); the run goes on without it."""


def digest(data: bytes) -> bytes:
    """The key of a document's bytes."""
    return hashlib.blake2b(data, digest_size=16).digest()


def signature(st: os.stat_result) -> str:
    """What must stay the same for a file to be taken as unchanged without reading it."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def settled(st: os.stat_result, read_ns: int) -> bool:
    """Whether both of the file's times were more than RACY_NS older than `read_ns` (when it was read)."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < read_ns - RACY_NS


def variant(include_code: bool, targets: bool) -> str:
    """The lint options a stored result depends on."""
    return f"lint:code={int(include_code)}:targets={int(targets)}"


_FINGERPRINT: list[str] = []


def fingerprint() -> str:
    """The rules' fingerprint: factreg.docs's source code, factreg's version, Python's version, the schema."""
    if not _FINGERPRINT:
        from factreg import __version__

        h = hashlib.blake2b(digest_size=16)
        h.update(f"{SCHEMA}|{__version__}|{sys.version}".encode())
        here = Path(__file__).parent
        for path in sorted(here.rglob("*.py")):  # the lint's package too (factreg/docs/lint/)
            h.update(path.relative_to(here).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


def _batches(items: Sequence[bytes | str]) -> Iterator[Sequence[bytes | str]]:
    for k in range(0, len(items), _BATCH):
        yield items[k : k + _BATCH]


def _own(path: Path, what: str) -> None:
    """Refuse a folder or file another user owns or others may write (it could hold planted results)."""
    st = os.stat(path)
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise CacheError(f"the cache {what} {path} belongs to another user")
    if os.name == "posix" and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):  # Windows keeps no such bits
        raise CacheError(f"the cache {what} {path} is writable by others")


@dataclass(frozen=True)
class Known:
    """What the cache knows of a file's bytes: their digest, whether they may hold markers, and the lint's
    findings for the run's options (None when it has none for them)."""

    digest: bytes
    may_hold: bool
    rows: list[Row] | None


def _rows(text: str) -> list[Row] | None:
    """Stored findings, or None when they are not what the cache writes."""
    try:
        rows = json.loads(text)
        if type(rows) is list and all(len(r) == 8 for r in rows):
            return rows  # lists, used as the tuples they were: Finding(path, *row)
    except (ValueError, TypeError):
        pass
    return None


def _today() -> str:
    from factreg import clock

    return clock.today()


class DocCache:
    """One open cache file; used by the process that opened it (a worker opens its own `Reader`)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._stale_seen: list[str] = []  # paths the last lookup answered that were last seen another day

    @classmethod
    def open(cls, folder: Path | None = None) -> DocCache:
        """The cache in `folder` (default: config.user_cache_dir()); CacheError when it cannot or must not be
        used."""
        from factreg import config

        folder = config.user_cache_dir() if folder is None else folder
        if folder is None:
            raise CacheError("turned off by FACTREG_CACHE_DIR")
        path = folder / FILE_NAME
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            _own(folder, "folder")
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            os.close(fd)
            _own(path, "file")
            conn = sqlite3.connect(path, timeout=2.0, isolation_level=None, check_same_thread=False)
        except OSError as exc:
            raise CacheError(f"cannot open {path}: {exc.strerror or exc}") from None
        except sqlite3.Error as exc:
            raise CacheError(f"cannot open {path}: {exc}") from None
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                with _transaction(conn):
                    for table in ("meta", "files", "texts", "lints"):
                        conn.execute(f"DROP TABLE IF EXISTS {table}")
                    for statement in _SCHEMA_SQL.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {SCHEMA}")
            stored = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            if stored is None or stored[0] != fingerprint():
                with _transaction(conn):
                    conn.execute("DELETE FROM texts")
                    conn.execute("DELETE FROM lints")
                    conn.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint(),))
        except (sqlite3.Error, OSError) as exc:
            conn.close()
            raise CacheError(f"cannot use {path}: {exc}") from None
        return cls(path, conn)

    def close(self) -> None:
        self._conn.close()

    def lookup(self, files: Sequence[tuple[str, str]], lint_variant: str | None) -> dict[int, Known]:
        """For each (absolute path, signature) whose signature is the settled one recorded, what the cache knows
        of its bytes (by index in `files`) — only when it knows all the run needs: the marker hint, and the
        findings for `lint_variant` unless that is None."""
        try:
            return self._lookup(files, lint_variant)
        except sqlite3.Error as exc:
            raise CacheError(f"cannot read {self.path}: {exc}") from None

    def _lookup(self, files: Sequence[tuple[str, str]], lint_variant: str | None) -> dict[int, Known]:
        index = {path: i for i, (path, _) in enumerate(files)}
        out: dict[int, Known] = {}
        self._stale_seen = []
        today = _today()
        paths = list(index)
        for chunk in _batches(paths):
            marks = ",".join("?" * len(chunk))
            for path, sig, dig, seen, hold, rows_text in self._conn.execute(
                "SELECT f.path, f.sig, f.digest, f.seen, t.may_hold, l.rows FROM files f"
                " JOIN texts t ON t.digest = f.digest"
                " LEFT JOIN lints l ON l.digest = f.digest AND l.variant = ?"
                f" WHERE f.settled AND f.path IN ({marks})",
                (lint_variant or "", *chunk),
            ):
                i = index[path]
                if sig != files[i][1]:
                    continue
                rows = None
                if lint_variant is not None:
                    rows = None if rows_text is None else _rows(rows_text)
                    if rows is None:
                        continue
                out[i] = Known(dig, bool(hold), rows)
                if seen != today:
                    self._stale_seen.append(path)
        return out

    def store(
        self,
        files: Iterable[tuple[str, str, bytes, bool]],
        texts: Iterable[tuple[bytes, bool, str | None]],
        lints: Iterable[tuple[bytes, str, list[Row]]],
    ) -> None:
        """Record files read — (absolute path, signature, digest, settled) —, what their texts hold — (digest, may
        hold markers, the markers as `markers_text` wrote them or None) —, new lint results, and that the files
        the last lookup answered were seen today (kept from pruning); then prune, once a day."""
        from factreg import clock

        today = _today()
        try:
            with _transaction(self._conn):
                c = self._conn
                c.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                    ((p, s, d, int(ok), today) for p, s, d, ok in files),
                )
                c.executemany(
                    "INSERT INTO texts VALUES (?, ?, ?) ON CONFLICT (digest) DO UPDATE SET markers = excluded.markers"
                    " WHERE excluded.markers IS NOT NULL",
                    ((d, int(h), m) for d, h, m in texts),
                )
                c.executemany(
                    "INSERT OR REPLACE INTO lints VALUES (?, ?, ?)",
                    ((d, v, json.dumps(rows, ensure_ascii=False, separators=(",", ":"))) for d, v, rows in lints),
                )
                c.executemany("UPDATE files SET seen = ? WHERE path = ?", ((today, p) for p in self._stale_seen))
                self._stale_seen = []
                pruned = c.execute("SELECT value FROM meta WHERE key = 'pruned'").fetchone()
                if pruned is None or pruned[0] != today:
                    cutoff = (clock.now() - timedelta(days=PRUNE_DAYS)).strftime("%Y-%m-%d")
                    c.execute("DELETE FROM files WHERE seen < ?", (cutoff,))
                    c.execute("DELETE FROM texts WHERE digest NOT IN (SELECT digest FROM files)")
                    c.execute("DELETE FROM lints WHERE digest NOT IN (SELECT digest FROM files)")
                    c.execute("INSERT OR REPLACE INTO meta VALUES ('pruned', ?)", (today,))
        except sqlite3.Error as exc:
            raise CacheError(f"cannot write {self.path}: {exc}") from None

    def reader(self, lint_variant: str | None) -> Reader:
        """A handle a worker process can open on its own, to look up findings by digest."""
        return Reader(str(self.path), lint_variant)


class _transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


class Reader:
    """Read-only look-ups by digest, opened lazily in the process that uses it (a connection never crosses a
    fork). Any error makes it answer nothing: the file is then linted."""

    def __init__(self, path: str, lint_variant: str | None) -> None:
        self.path = path
        self.lint_variant = lint_variant
        self._conn: sqlite3.Connection | None = None
        self._broken = False

    def __getstate__(self) -> dict[str, object]:
        return {"path": self.path, "lint_variant": self.lint_variant, "_conn": None, "_broken": False}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _one(self, sql: str, args: tuple[object, ...]) -> object | None:
        if self._broken:
            return None
        try:
            if self._conn is None:
                from urllib.parse import quote

                self._conn = sqlite3.connect(f"file:{quote(self.path)}?mode=ro", uri=True, timeout=2.0)
            got = self._conn.execute(sql, args).fetchone()
        except sqlite3.Error:
            self._broken = True
            return None
        return None if got is None else got[0]

    def markers(self, dig: bytes) -> tuple[list[Marker], list[MarkerProblem]] | None:
        """The stored reading of these bytes' markers (`markers.parse`), or None."""
        text = self._one("SELECT markers FROM texts WHERE digest = ?", (dig,))
        return None if not isinstance(text, str) else markers_from_text(text)

    def rows(self, dig: bytes) -> list[Row] | None:
        """The stored findings of these bytes for this run's options, or None."""
        if self.lint_variant is None:
            return None
        text = self._one("SELECT rows FROM lints WHERE digest = ? AND variant = ?", (dig, self.lint_variant))
        return None if not isinstance(text, str) else _rows(text)


def markers_text(parsed: tuple[list[Marker], list[MarkerProblem]]) -> str:
    """A reading of a document's markers as the cache keeps it."""
    found, problems = parsed
    return json.dumps(
        [[astuple(m) for m in found], [astuple(p) for p in problems]], ensure_ascii=False, separators=(",", ":")
    )


def markers_from_text(text: str) -> tuple[list[Marker], list[MarkerProblem]] | None:
    """The reading `markers_text` wrote, or None when the text is not one."""
    from factreg.docs.markers import Marker, MarkerProblem

    try:
        found, problems = json.loads(text)
        return [Marker(*m) for m in found], [MarkerProblem(*p) for p in problems]
    except (ValueError, TypeError):
        return None
