"""The run's lock (tests/conftest.py, `pytest_runtest_protocol`): on several workers, a test marked `alone` never
shares the machine with another test, nor with a fixture of any scope that another test sets up or tears down."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = "from tests.conftest import pytest_collection_modifyitems, pytest_runtest_protocol  # noqa: F401\n"
NOTE = """
import os, time
def note(what):
    with open(os.environ["LOCK_LOG"], "a") as fh:
        fh.write(f"{time.monotonic():.4f} {what} {os.environ['PYTEST_XDIST_WORKER']}\\n")
"""
# one worker sets up and tears down a module's slow fixture for three ordinary tests (`--dist loadfile`: a file to a
# worker); the other runs four tests marked alone, from the start
SHARED = NOTE + """
import pytest
@pytest.fixture(scope="module")
def slow():
    note("setup+"); time.sleep(0.8); note("setup-")
    yield
    note("teardown+"); time.sleep(0.8); note("teardown-")
@pytest.mark.parametrize("k", range(3))
def test_shared(slow, k):
    note("shared+"); time.sleep(0.2); note("shared-")
def test_last():  # the fixture is torn down in its protocol (no test follows it on its worker)
    note("last+"); note("last-")
"""
ALONE = NOTE + """
import pytest
@pytest.mark.alone
@pytest.mark.parametrize("k", range(4))
def test_alone(k):
    note("alone+"); time.sleep(0.3); note("alone-")
"""


def test_an_alone_test_never_overlaps_another_tests_fixtures_or_run(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_a_alone.py").write_text(ALONE)
    (tmp_path / "test_b_shared.py").write_text(SHARED)
    log = tmp_path / "log"
    env = {**os.environ, "LOCK_LOG": str(log), "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile", "-p", "no:randomly",
                          "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tmp_path), str(tmp_path)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    spans: list[tuple[str, str, float, float]] = []  # (what, worker, start, end)
    started: dict[tuple[str, str], float] = {}
    for line in log.read_text().splitlines():
        at, what, worker = line.split()
        if what.endswith("+"):
            started[(what[:-1], worker)] = float(at)
        else:
            spans.append((what[:-1], worker, started.pop((what[:-1], worker)), float(at)))
    kinds = {what for what, *_ in spans}
    assert kinds == {"setup", "teardown", "shared", "last", "alone"}, kinds
    alone = [s for s in spans if s[0] == "alone"]
    others = [s for s in spans if s[0] != "alone"]
    assert len(alone) == 4 and len({s[1] for s in spans}) == 2  # each file on its own worker
    overlaps = [(a, o) for a in alone for o in others if a[2] < o[3] and o[2] < a[3]]
    assert overlaps == [], overlaps


class _Item:
    """What `pytest_collection_modifyitems` reads of a test: its id, its fixtures and its marks."""

    def __init__(self, nodeid: str, fixtures: tuple[str, ...] = (), marks: tuple[str, ...] = ()) -> None:
        self.nodeid, self.fixturenames, self.marks = nodeid, fixtures, set(marks)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.marks else None

    def add_marker(self, mark: object) -> None:
        self.marks.add(mark.name)  # type: ignore[attr-defined]


def test_alone_tests_run_first_then_a_few_short_ones_then_the_long_shared_ones() -> None:
    """The order the run hands tests out in (one at a time): no `alone` test can be left waiting on a long shared
    one; a test marked `shares` runs beside others though it uses a measuring fixture."""
    from tests.conftest import SHARED_FIRST, pytest_collection_modifyitems

    short = [_Item(f"tests/test_a.py::test_{k}") for k in range(SHARED_FIRST + 5)]
    long_ = _Item("tests/test_b.py::test_long", marks=("slow",))
    probe = _Item("tests/test_probe.py::test_times")  # alone by its module
    bench = _Item("tests/test_c.py::test_bench", fixtures=("tiny_model",))  # alone by its fixture
    plumbing = _Item("tests/test_c.py::test_plumbing", fixtures=("server",), marks=("shares",))
    items = [*short[:3], long_, probe, plumbing, bench, *short[3:]]
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert items[:2] == [probe, bench] and {"alone"} <= probe.marks and {"alone"} <= bench.marks
    assert "alone" not in plumbing.marks
    shared = items[2:]
    assert shared.index(long_) == SHARED_FIRST and not any({"slow", "alone"} & i.marks for i in shared[:SHARED_FIRST])
    assert shared[:5] == [*short[:3], plumbing, short[3]] and len(items) == len(short) + 4  # otherwise as collected
