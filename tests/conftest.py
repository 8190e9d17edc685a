"""Shared fixtures: every test runs in its own temp dir with a clean FACTREG_* environment."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factreg.cli import app
from factreg.registry.store import Registry

pytest_plugins = ["tests.pg_support", "tests.real_model_support"]  # PostgreSQL (pg_url); the real model

# The tests' "now": fixed, so no test depends on the day it runs. `FACTREG_TEST_NOW` moves it (the time-shift
# test runs the date-sensitive tests at other dates this way); facts in tests are dated relative to it (`ago`).
TEST_NOW = os.environ.get("FACTREG_TEST_NOW") or "2026-11-30T12:00:00Z"

# Tests that replay the case study tell it at the story's own time (like `factreg demo`), not the tests' now.
STORY_NOW = "2026-10-28T12:00:00Z"

def pinned_env(**extra: str) -> dict[str, str]:
    """The environment for a factreg subprocess that must not inherit a test's FACTREG_* settings, at the tests'
    now: a subprocess that read the wall clock would judge facts recorded at TEST_NOW by the day the tests run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTREG_")}
    env["FACTREG_NOW"] = TEST_NOW
    env.update(extra)
    return env


PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "no_proxy",
              "NO_PROXY")


# On several processes (pytest-xdist: the README's `-n auto`), a test that measures or times something runs with
# the machine to itself: it takes the run's lock alone, and every other test shares it (`pytest_runtest_protocol`). These are the
# tests that run llama.cpp, serve or probe streams, start busy processes, or compare CPU times; a test elsewhere
# that times something is marked `alone` by hand. A test that uses such a fixture only as plumbing, asserting nothing a
# busy machine could change (no verdict, no time), is marked `shares` and runs beside others.
ALONE_MODULES = frozenset({
    "test_arrival_clock", "test_capacity", "test_control", "test_endpoint", "test_interleave", "test_latency",
    "test_load", "test_one_stream", "test_plugin_hyperfine", "test_precision", "test_probe",
    "test_probe_llamaserver", "test_real_model", "test_sequential", "test_verify",
    "test_verify_control", "test_verify_endpoint", "test_voice_line", "test_wire",
})
ALONE_FIXTURES = frozenset({"tiny_model", "llama_bench", "real_model", "server", "standin", "standin_process",
                            "two_busy_processes", "three_busy_processes"})

SHARED_FIRST = 40  # short shared tests between the last `alone` test and the first long shared one


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
        if item.get_closest_marker("shares") is None and (
                module in ALONE_MODULES or item.get_closest_marker("llama") is not None
                or ALONE_FIXTURES.intersection(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.alone)
    # On several workers (xdist hands tests out one at a time, in this order: `--maxschedchunk=1` in pyproject.toml),
    # an `alone` test waits for the test beside it to end. So the `alone` tests run first, one after the other with
    # nothing to wait for; then a few short shared tests, while the last `alone` ones end; then the long shared ones
    # (`slow`), which would have kept an `alone` test waiting, and end before the rest, which fill in at the end.
    alone = [item for item in items if item.get_closest_marker("alone")]
    slow = [item for item in items if not item.get_closest_marker("alone") and item.get_closest_marker("slow")]
    rest = [item for item in items if not item.get_closest_marker("alone") and not item.get_closest_marker("slow")]
    items[:] = alone + rest[:SHARED_FIRST] + slow + rest[SHARED_FIRST:]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """Under pytest-xdist, the run's lock (a file all its workers open): taken exclusively by an `alone` test, shared
    by every other, around the test's whole protocol. That holds the fixtures a test sets up or tears down of every
    scope: a session's PostgreSQL or browser started by the first test that needs it, a module's server stopped
    after its last test (during the next test's protocol), so none of them runs beside a measurement. Without
    workers, nothing."""
    worker = getattr(item.config, "workerinput", None)
    if worker is None:
        return (yield)
    import fcntl
    import tempfile

    # In the run's own temporary directory (each worker's basetemp is `<run>/popen-gwN`), which pytest's retention
    # removes with the run: a file per run left in /tmp would pile up.
    base = getattr(item.config.option, "basetemp", None)
    path = (Path(base).parent / "factreg-tests.lock" if base
            else Path(tempfile.gettempdir()) / f"factreg-tests-{worker['testrunuid']}.lock")
    alone = item.get_closest_marker("alone") is not None
    log = os.environ.get("FACTREG_TEST_LOCK_LOG")  # "worker alone wait held nodeid" a line: where a run idles
    with open(path, "a") as fh:
        asked = time.monotonic()
        fcntl.flock(fh, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        got = time.monotonic()
        try:
            return (yield)
        finally:
            if log:
                with open(log, "a", encoding="utf-8") as out:
                    out.write(f"{worker['workerid']} {int(alone)} {got - asked:.3f} {time.monotonic() - got:.3f} "
                              f"{item.nodeid}\n")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every path at a temp dir, clear FACTREG_* and proxy variables, give git an identity."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for key in list(os.environ):
        if key.startswith("FACTREG_") or key in PROXY_VARS:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("FACTREG_NOW", TEST_NOW)
    monkeypatch.setenv("FACTREG_USER_DIR", str(tmp_path / "userdata"))
    monkeypatch.setenv("FACTREG_CACHE_DIR", str(tmp_path / "cache"))  # the document cache: each test its own
    monkeypatch.setenv("FACTREG_HOSTNAME", "testhost")
    for var, value in (("GIT_AUTHOR_NAME", "factreg test"), ("GIT_AUTHOR_EMAIL", "test@example.invalid"),
                       ("GIT_COMMITTER_NAME", "factreg test"), ("GIT_COMMITTER_EMAIL", "test@example.invalid")):
        monkeypatch.setenv(var, value)
    return work


def ago(days: float = 0, seconds: float = 0, date_only: bool = False) -> str:
    """The tests' now minus `days` and `seconds`, as the registry writes times (or `2026-10-26` with `date_only`)."""
    from datetime import timedelta

    from factreg import clock

    moment = clock.parse(TEST_NOW) - timedelta(days=days, seconds=seconds)
    return moment.strftime("%Y-%m-%d") if date_only else clock.iso(moment)


def pytest_configure(config: pytest.Config) -> None:
    """`FACTREG_TEST_TRAVEL=DATE` moves the wall clock itself to DATE (ticking) for the whole run."""
    travel = os.environ.get("FACTREG_TEST_TRAVEL")
    if travel:
        import time_machine

        traveller = time_machine.travel(travel, tick=True)
        traveller.start()
        config.add_cleanup(traveller.stop)


@pytest.fixture(autouse=True)
def _note_what_asks_the_date(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """With `FACTREG_TEST_DATES_USED=FILE`, the tests that judge by factreg's clock (`now()` for an age, `today()`,
    `since()`: anything but the stamp `iso()` writes), or start a program (which reads FACTREG_NOW), are named in
    FILE, one a line: what the date re-runs of tests/test_clock.py run at the second later date. A test that does
    neither cannot see the date."""
    path = os.environ.get("FACTREG_TEST_DATES_USED")
    if not path:
        yield
        return
    import subprocess

    from factreg import clock

    asked: list[bool] = []
    real_now, real_init = clock.now, subprocess.Popen.__init__

    def now():  # type: ignore[no-untyped-def]
        if sys._getframe(1).f_code.co_name != "iso":  # a time stamped on what is written judges nothing
            asked.append(True)
        return real_now()

    def started(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(True)
        return real_init(self, *args, **kwargs)

    monkeypatch.setattr(clock, "now", now)
    monkeypatch.setattr(subprocess.Popen, "__init__", started)
    yield
    if asked:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(request.node.nodeid + "\n")


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    """The stand-in server (factreg/demo/standin.py) on 127.0.0.1, for one test; modules that share one across
    their tests define their own, module-scoped."""
    from factreg.demo import standin

    with standin.running() as srv:
        yield srv


@pytest.fixture
def story_clock(monkeypatch: pytest.MonkeyPatch) -> str:
    """The clock at the case study's time: facts dated 2026-10-26 are a day or two old, whatever the date."""
    monkeypatch.setenv("FACTREG_NOW", STORY_NOW)
    return STORY_NOW


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "registry.db"


@pytest.fixture
def db_url(db_path: Path) -> str:
    return f"sqlite:///{db_path}"


@pytest.fixture
def registry(db_url: str) -> Iterator[Registry]:
    reg = Registry(db_url)
    yield reg
    reg.close()


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self):  # type: ignore[no-untyped-def]
        import json

        return json.loads(self.stdout)


def _built_once() -> None:
    """typer's CliRunner turns the Typer app into Click commands on every `invoke` (0.15 s of CPU for factreg's 38
    commands, most of an in-process command's cost); the command line's tree does not change between runs
    (`GuardedGroup.make_context` resets what a run sets), so the tests build it once per app."""
    import typer.testing

    build = typer.testing._get_command  # noqa: SLF001 - typer's own step, wrapped: the same commands, built once
    built: dict[int, tuple[object, object]] = {}

    def once(typer_app):  # type: ignore[no-untyped-def]
        hit = built.get(id(typer_app))
        if hit is None or hit[0] is not typer_app:
            hit = built[id(typer_app)] = (typer_app, build(typer_app))
        return hit[1]

    typer.testing._get_command = once  # noqa: SLF001


_built_once()


@pytest.fixture
def cli(db_url: str, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run `factreg ARGS...` in-process against the test registry; stdout and stderr kept apart."""
    monkeypatch.setenv("FACTREG_DB", db_url)
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Run:
        result = runner.invoke(app, list(args), input=input, catch_exceptions=False)
        return Run(result.exit_code, result.stdout, result.stderr)

    return run
