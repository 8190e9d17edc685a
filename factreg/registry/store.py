"""The registry's storage: the one place that opens database connections and runs migrations.

SQLAlchemy is imported only when a write, a migration or a non-SQLite database needs it: reading a SQLite
registry (`show`, `list`, `history`, `status`) goes through `Registry.query`, which uses the standard
library's sqlite3 with the same settings, so read commands start fast."""

from __future__ import annotations

import os
import sqlite3
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from factreg import clock
from factreg.config import redact_url
from factreg.errors import ConfigError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

BUSY_TIMEOUT_MS = 30_000

def sqlite_file(url: str) -> str:
    """The file path of a `sqlite:///PATH` URL (percent-decoded, the query left out), as SQLAlchemy reads it."""
    path = url.split("sqlite:///", 1)[-1] if url.startswith("sqlite:///") else ""
    return unquote(path.split("?", 1)[0])


def applied_count(url: str) -> int | None:
    """How many migrations a registry has applied (read with sqlite3 for a SQLite file); None when there is no
    registry there yet or it cannot be read."""
    try:
        if url.startswith("sqlite:///"):
            path = sqlite_file(url)
            if not Path(path).is_file():
                return None
            conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
            try:
                return int(conn.execute("SELECT count(*) FROM factreg_migration").fetchone()[0])
            finally:
                conn.close()
        return len(Registry(url, create=False).applied_migrations())
    except Exception:  # noqa: BLE001 - a version line must print whatever the registry's state
        return None


def version_line(url: str) -> tuple[str, int | None]:
    """`factreg X, schema N (registry: M applied)` and M (None: no registry at `url` yet)."""
    import factreg
    from factreg.registry.migrations import NAMES

    applied = applied_count(url)
    schema = f"schema {len(NAMES)}" + (f" (registry: {applied} applied)" if applied is not None else "")
    return f"factreg {factreg.__version__}, {schema}", applied


def schema_stamp() -> int:
    """This factreg's schema as a number for SQLite's `PRAGMA user_version` (31 bits of a digest of its migrations'
    names): a registry stamped with it needs no migration check; any other value (0: never stamped, another
    factreg's) means the migrations table is read."""
    import zlib

    from factreg.registry.migrations import NAMES

    return zlib.crc32("\n".join(NAMES).encode()) & 0x7FFFFFFF or 1


def newer_schema(applied: Sequence[str]) -> None:
    """ConfigError when the registry holds migrations this factreg does not know (written by a newer factreg)."""
    from factreg.registry.migrations import NAMES

    if set(applied) - set(NAMES):
        raise ConfigError(f"registry schema {len(set(applied))} is newer than this factreg ({len(NAMES)}); "
                          "upgrade factreg")


def _sqlite_hooks(engine: Engine) -> None:
    """WAL, busy timeout and transactional DDL for pysqlite (SQLAlchemy's documented recipe)."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN itself, so DDL is transactional too.
        dbapi_connection.isolation_level = None
        cur = dbapi_connection.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys = ON")
        mode = cur.execute("PRAGMA journal_mode").fetchone()[0]
        if mode != "wal":
            cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # Writers take the lock up front: a deferred transaction that upgrades later can fail with
        # "database is locked" regardless of the busy timeout.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")


class Registry:
    """An open registry: a database whose schema is migrated to the newest version."""

    def __init__(self, url: str, *, migrate: bool = True, create: bool = True, raw_runs: int | None = None):
        self.url = url
        # Runs of each fact whose raw output a write keeps (`[retention] raw_runs`; None: the default), see
        # registry/retention.py.
        self.raw_runs = raw_runs
        self.is_sqlite = url.startswith("sqlite")
        self.sqlite_path: str | None = None
        if self.is_sqlite:
            path = sqlite_file(url)
            self.sqlite_path = path or ":memory:"
            if path and path != ":memory:":
                db_path = Path(path)
                if not db_path.exists() and not create:
                    raise ConfigError(f"no registry at {db_path}: run `factreg init` or pass --db")
                try:
                    db_path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise ConfigError(f"cannot create the registry folder {db_path.parent}: {exc.strerror}") from None
        else:
            self.engine  # noqa: B018 - a bad URL or a missing driver fails here, as a ConfigError
        if migrate and not self._up_to_date():
            self.migrate()

    @cached_property
    def engine(self) -> Engine:
        from sqlalchemy import create_engine

        if self.is_sqlite:
            engine = create_engine(self.url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
            _sqlite_hooks(engine)
            return engine
        try:
            engine = create_engine(self.url, pool_pre_ping=True)
        except Exception as exc:  # bad URL, missing driver
            raise ConfigError(f"cannot use database {redact_url(self.url)}: {exc}") from None
        # Pooled server connections are closed when the registry goes away, not left to the garbage collector.
        weakref.finalize(self, engine.dispose)
        return engine

    def _up_to_date(self) -> bool:
        """Whether every migration is applied (checked without SQLAlchemy for SQLite): once per schema, the
        registry's `PRAGMA user_version` holds this factreg's `schema_stamp()` and nothing else is read."""
        if not self.is_sqlite or self.sqlite_path == ":memory:":
            return False
        from factreg.registry.migrations import NAMES

        stamp = schema_stamp()
        try:
            with self.reader() as conn:
                if conn.execute("PRAGMA user_version").fetchone()[0] == stamp:
                    return True
                applied = [r["name"] for r in rows(conn, "SELECT name FROM factreg_migration")]
        except (ConfigError, sqlite3.Error):
            return False  # no bookkeeping table yet (or unusable: migrate() will say why)
        newer_schema(applied)
        if not set(NAMES) <= set(applied):
            return False
        self._stamp(stamp)  # a registry migrated before the stamp was kept
        return True

    def _stamp(self, stamp: int) -> None:
        """Note in the SQLite file that its schema is this factreg's: never waits for a lock, never fails a read."""
        if self.read_only_folder:
            return
        try:
            con = sqlite3.connect(self.sqlite_path or "", timeout=0, isolation_level=None)
            try:
                con.execute(f"PRAGMA user_version = {int(stamp)}")
            finally:
                con.close()
        except sqlite3.Error:
            pass

    @property
    def read_only_folder(self) -> bool:
        """Whether the SQLite file's folder cannot be written: SQLite then cannot create its `-shm` file, so the
        registry is opened read-only (`mode=ro`, or `immutable=1` when no write-ahead log is pending)."""
        if not self.is_sqlite or self.sqlite_path in (None, ":memory:"):
            return False
        folder = Path(self.sqlite_path).parent
        return folder.is_dir() and not os.access(folder, os.W_OK)

    def _read_only_uri(self) -> str:
        assert self.sqlite_path is not None
        pending = Path(self.sqlite_path + "-wal").exists()
        return f"file:{quote(str(Path(self.sqlite_path).resolve()))}?{'mode=ro' if pending else 'immutable=1'}"

    def _sqlite_connect(self) -> sqlite3.Connection:
        assert self.sqlite_path is not None
        if self.read_only_folder:
            con = sqlite3.connect(self._read_only_uri(), uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                                  isolation_level=None)
        else:
            con = sqlite3.connect(self.sqlite_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        con.row_factory = sqlite3.Row
        con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return con

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run one read-only SQL statement (named `:params`) and return its rows as dicts."""
        with self.reader() as conn:
            return rows(conn, sql, params)

    @contextmanager
    def reader(self) -> Iterator[Any]:
        """A read connection for `rows()`: sqlite3 for SQLite files, SQLAlchemy elsewhere. One snapshot."""
        if not self.is_sqlite or self.sqlite_path == ":memory:":
            with self.read() as conn:
                yield conn
            return
        try:
            con = self._sqlite_connect()
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot use the registry at {self.url}: {exc}") from None
        try:
            con.execute("BEGIN")
            yield con
            con.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise ConfigError(f"cannot use the registry at {self.url}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"the registry at {self.url} is not usable: {exc}") from None
        finally:
            con.close()

    @cached_property
    def _read_only_engine(self) -> Engine:
        from sqlalchemy import create_engine

        return create_engine("sqlite://", creator=self._sqlite_connect)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection in a read transaction (read-only when the registry's folder cannot be written)."""
        engine = self._read_only_engine if self.read_only_folder else self.engine
        with self._guard(), engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A connection in a write transaction: all of it lands, or none of it."""
        with self._guard(), self.engine.connect() as conn:
            conn = conn.execution_options(write=True)
            with conn.begin():
                yield conn

    def write_retrying(self, work: Callable[[Connection], Any], attempts: int = 8) -> Any:
        """Run `work(conn)` in a write transaction, retrying on a lost race for the same key."""
        from sqlalchemy.exc import IntegrityError

        for attempt in range(attempts):
            try:
                with self.write() as conn:
                    return work(conn)
            except IntegrityError:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.01 * (attempt + 1))
        return None

    def write_lean(self, work: Callable[[Any], Any], attempts: int = 8) -> Any:
        """`write_retrying` on a SQLite file through sqlite3 (`SqliteWriter`): the same transaction (BEGIN IMMEDIATE,
        foreign keys, WAL) without importing SQLAlchemy, for the writes whose SQL is their own (`factreg record`).
        Elsewhere (PostgreSQL, memory, a read-only folder) it is `write_retrying`."""
        if not self.is_sqlite or self.sqlite_path in (None, ":memory:") or self.read_only_folder:
            return self.write_retrying(work, attempts)
        for attempt in range(attempts):
            try:
                con = self._sqlite_connect()
                try:
                    con.execute("PRAGMA foreign_keys = ON")
                    if con.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                        con.execute("PRAGMA journal_mode = WAL")
                    con.execute("PRAGMA synchronous = NORMAL")
                    con.execute("BEGIN IMMEDIATE")
                    try:
                        out = work(SqliteWriter(con))
                    except BaseException:
                        if con.in_transaction:
                            con.execute("ROLLBACK")
                        raise
                    con.execute("COMMIT")
                    return out
                finally:
                    con.close()
            except sqlite3.IntegrityError:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.01 * (attempt + 1))
            except sqlite3.OperationalError as exc:
                raise ConfigError(f"cannot use the registry at {redact_url(self.url)}: {exc}") from None
            except sqlite3.DatabaseError as exc:
                raise ConfigError(f"the registry at {redact_url(self.url)} is not usable: {exc}") from None
        return None

    @contextmanager
    def _guard(self) -> Iterator[None]:
        from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError

        try:
            yield
        except OperationalError as exc:
            if self.read_only_folder:
                raise ConfigError(f"the registry folder {Path(self.sqlite_path or '').parent} is read-only: "
                                  "this command writes to the registry (read commands still work)") from None
            raise ConfigError(f"cannot use the registry at {redact_url(self.url)}: {_short(exc)}") from None
        except DatabaseError as exc:
            if isinstance(exc, IntegrityError):
                raise
            raise ConfigError(f"the registry at {redact_url(self.url)} is not usable: {_short(exc)}") from None

    def applied_migrations(self) -> list[str]:
        with self.read() as conn:
            if not self._has_table(conn, "factreg_migration"):
                return []
            return sorted(r[0] for r in conn.exec_driver_sql("SELECT name FROM factreg_migration"))

    @staticmethod
    def _has_table(conn: Connection, name: str) -> bool:
        from sqlalchemy import inspect

        return inspect(conn).has_table(name)

    def migrate(self, migrations: list[tuple[str, Callable[[Connection], None]]] | None = None) -> list[str]:
        """Apply the migrations not yet applied, each in its own transaction; return their names."""
        from sqlalchemy import text

        from factreg.registry.migrations import MIGRATIONS, create_bookkeeping

        todo = MIGRATIONS if migrations is None else migrations
        applied: list[str] = []
        with self.write() as conn:
            if not self._has_table(conn, "factreg_migration"):
                create_bookkeeping(conn)
        done = set(self.applied_migrations())
        newer_schema(sorted(done))
        for name, step in todo:
            if name in done:
                continue
            with self.write() as conn:
                # Another process may have applied it while we waited for the lock.
                if conn.execute(text("SELECT 1 FROM factreg_migration WHERE name = :n"), {"n": name}).first():
                    continue
                step(conn)
                conn.execute(text("INSERT INTO factreg_migration (name, applied_at) VALUES (:n, :t)"),
                             {"n": name, "t": clock.iso()})
            applied.append(name)
        if self.is_sqlite and self.sqlite_path != ":memory:" and migrations is None:
            with self.write() as conn:
                conn.exec_driver_sql(f"PRAGMA user_version = {schema_stamp()}")
        return applied

    def integrity_check(self) -> str:
        """SQLite's `PRAGMA integrity_check` ("ok" when sound); a trivial query elsewhere."""
        with self.read() as conn:
            if self.is_sqlite:
                return str(conn.exec_driver_sql("PRAGMA integrity_check").scalar())
            conn.exec_driver_sql("SELECT count(*) FROM fact")
            return "ok"

    def close(self) -> None:
        self.engine.dispose()


class _SqliteDialect:
    name = "sqlite"
    paramstyle = "qmark"


class SqliteWriter:
    """A sqlite3 connection in a write transaction (`Registry.write_lean`) answering the part of SQLAlchemy's
    `Connection` that the lean writes use: `exec_driver_sql`, `execute` of a `text()` clause (its SQL's `:name`
    parameters are sqlite3's own), `dialect.name` and `dialect.paramstyle`; `rows` and `tuples` read through it."""

    dialect = _SqliteDialect()

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    def exec_driver_sql(self, sql: str, params: Any = None) -> sqlite3.Cursor:
        if isinstance(params, list):
            return self.con.executemany(sql, params)
        return self.con.execute(sql, params or ())

    def execute(self, clause: Any, params: Any = None) -> sqlite3.Cursor:
        if isinstance(params, list):
            return self.con.executemany(str(clause), params)
        return self.con.execute(str(clause), params or {})


def rows(conn: Any, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows of a read query as dicts, on a sqlite3 connection or a SQLAlchemy one alike."""
    if isinstance(conn, SqliteWriter):
        conn = conn.con
    if isinstance(conn, sqlite3.Connection):
        return [dict(r) for r in conn.execute(sql, dict(params or {}))]
    from sqlalchemy import text

    return [dict(r) for r in conn.execute(text(sql), dict(params or {})).mappings()]


def tuples(conn: Any, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """Rows of a read query as tuples, in the order of its columns: `rows` without building a dict per row, for
    the queries that read a million rows."""
    if isinstance(conn, SqliteWriter):
        conn = conn.con
    if isinstance(conn, sqlite3.Connection):
        cur = conn.cursor()
        cur.row_factory = None
        return cur.execute(sql, dict(params or {})).fetchall()
    from sqlalchemy import text

    return [tuple(r) for r in conn.execute(text(sql), dict(params or {}))]


def in_list(name: str, values: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """`(:name0, :name1, …)` and its parameters, for an IN clause that works on every driver."""
    keys = [f"{name}{i}" for i in range(len(values))]
    return "(" + ", ".join(f":{k}" for k in keys) + ")", dict(zip(keys, values, strict=True))


def _short(exc: Exception) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig if orig is not None else exc).splitlines()[0]
