"""A throwaway PostgreSQL server for the tests: one cluster per test session, one database per test.

`initdb` refuses to run as root, and CI runs as root: the cluster then belongs to an unprivileged system user
(`factreg-pg`, created when absent; `nobody` when it cannot be) and every server command runs through `runuser`.
The cluster lives in a temp dir, listens only on a Unix socket in that dir (on a free port number, which names the
socket), trusts local connections and is stopped and removed at the end of the session.

It is initialised with the ICU `en-US` collation, as a typical production server is, so that anything relying on
SQLite's byte order for text shows up as a difference between the backends.

Without server binaries the PostgreSQL tests are skipped on a developer machine and FAIL in CI (`CI=true`).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_USER = "factreg-pg"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _missing(why: str) -> None:
    if _in_ci():
        pytest.fail(f"PostgreSQL is required in CI: {why}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {why}")


def find_bindir() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres (resolving /usr/local/bin symlinks)."""
    candidates = []
    if os.environ.get("FACTREG_PG_BINDIR"):
        candidates.append(os.environ["FACTREG_PG_BINDIR"])
    found = shutil.which("initdb")
    if found:
        candidates.append(str(Path(os.path.realpath(found)).parent))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for c in candidates:
        if all((Path(c) / exe).exists() for exe in ("initdb", "pg_ctl", "postgres")):
            return Path(c)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_user() -> str | None:
    """None when we are not root (run directly), else the unprivileged user that owns the cluster."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pwd.getpwnam(PG_USER)
        return PG_USER
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    r = subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
        capture_output=True,
        text=True,
    )
    if r.returncode == 0:
        return PG_USER
    try:  # a concurrent session may have created it
        pwd.getpwnam(PG_USER)
        return PG_USER
    except KeyError:
        return "nobody"


class PgServer:
    """A running throwaway cluster; `new_database()` gives a fresh, empty database's SQLAlchemy URL."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.user = _server_user()
        self.root = Path(tempfile.mkdtemp(prefix="factreg-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.log = self.root / "server.log"
        self._names = itertools.count(1)
        if self.user:
            import pwd

            pw = pwd.getpwnam(self.user)
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        os.chmod(self.root, 0o755)

    def _run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        full = [str(self.bindir / cmd[0]), *cmd[1:]]
        if self.user:
            full = ["runuser", "-u", self.user, "--", *full]
        r = subprocess.run(full, capture_output=True, text=True, cwd=self.root)
        if check and r.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
        return r

    def start(self) -> None:
        base = ["initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]
        r = self._run(*base, "--locale=C.UTF-8", "--locale-provider=icu", "--icu-locale=en-US", check=False)
        if r.returncode != 0:  # no ICU: libc's C.UTF-8
            shutil.rmtree(self.data, ignore_errors=True)
            self._run(*base, "--locale=C.UTF-8")
        opts = (
            f"-p {self.port} -k {self.root} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
            "-c full_page_writes=off -c max_connections=60"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "-t", "60", "start")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str) -> str:
        return f"postgresql+psycopg://postgres@/{dbname}?host={self.root}&port={self.port}"

    def _admin(self):  # type: ignore[no-untyped-def]
        import psycopg

        return psycopg.connect(host=str(self.root), port=self.port, user="postgres", dbname="postgres", autocommit=True)

    def new_database(self) -> str:
        name = f"t{os.getpid()}_{next(self._names)}"
        with self._admin() as con:
            con.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)

    def collation(self) -> str:
        with self._admin() as con:
            row = con.execute(
                "SELECT datlocprovider, daticulocale, datcollate FROM pg_database WHERE datname = 'postgres'"
            ).fetchone()
        return f"provider={row[0]} icu={row[1]} collate={row[2]}"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One throwaway PostgreSQL cluster for the whole session."""
    bindir = find_bindir()
    if bindir is None:
        _missing("initdb/pg_ctl/postgres not found (set FACTREG_PG_BINDIR)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("the psycopg driver is not installed (pip install 'factreg[postgres]')")
    assert bindir is not None
    server = PgServer(bindir)
    try:
        server.start()
    except Exception as exc:  # noqa: BLE001 - reported as a failure (CI) or skip (elsewhere)
        log = server.log.read_text(errors="replace")[-1500:] if server.log.exists() else ""
        server.stop()
        _missing(f"cannot start a throwaway cluster: {exc} {log}")
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh empty PostgreSQL database for one test."""
    return pg_server.new_database()


@pytest.fixture(params=["sqlite", "postgres"])
def any_url(request: pytest.FixtureRequest, db_url: str) -> str:
    """The registry URL of each backend in turn: a SQLite file, then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return db_url
    return str(request.getfixturevalue("pg_url"))


def wait_for(predicate, timeout: float = 30.0, step: float = 0.05) -> bool:  # type: ignore[no-untyped-def]
    """Poll `predicate()` until it is true or `timeout` seconds have passed."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())
