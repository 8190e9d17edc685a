"""The one clock: every "now" comes from `factreg.clock`, honours FACTREG_NOW and --as-of, and nothing else in the
package reads the wall clock; the demo and the date-sensitive tests pass years from now."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from factreg import clock
from factreg.demo.story import MISTAKES
from factreg.errors import UsageError
from tests.conftest import TEST_NOW, ago
from tests.docs_support import record
from tests.llamabench_support import tiny_model  # noqa: F401

PACKAGE = Path(__file__).resolve().parents[1] / "factreg"
ROOT = PACKAGE.parent

# Calls that read the wall clock for a date. time.perf_counter/monotonic measure durations and are fine.
FORBIDDEN = {
    ("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"), ("date", "today"),
    ("time", "time"), ("time", "time_ns"), ("time", "localtime"), ("time", "gmtime"), ("time", "ctime"),
}


def wall_clock_reads(source: str) -> list[tuple[int, str]]:
    """(line, call) for every read of the wall clock in `source`."""
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in FORBIDDEN:
                found.append((node.lineno, f"{node.value.id}.{node.attr}"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            if (node.value.attr, node.attr) in FORBIDDEN:
                found.append((node.lineno, f"{node.value.attr}.{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module == "time":
            found += [(node.lineno, f"from time import {a.name}") for a in node.names if ("time", a.name) in FORBIDDEN]
    return found


def test_the_scanner_finds_every_form_of_a_wall_clock_read() -> None:
    code = (
        "import time, datetime\nfrom datetime import datetime as dt, date\nfrom time import time as t\n"
        "a = datetime.datetime.now()\nb = dt.now()\nc = date.today()\nd = time.time()\ne = datetime.datetime.utcnow()\n"
        "f = time.perf_counter()\ng = time.monotonic()\n"
    )
    calls = {call for _, call in wall_clock_reads(code)}
    assert calls == {"from time import time", "datetime.now", "date.today", "time.time", "datetime.utcnow"}


def test_nothing_outside_the_clock_module_reads_the_wall_clock() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "clock.py":
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(ROOT)}:{line}: {call}" for line, call in wall_clock_reads(text)]
        # an aliased datetime class (`from datetime import datetime as dt`) would hide `dt.now()` from the scan
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("datetime", "time"):
                offenders += [f"{path.relative_to(ROOT)}:{node.lineno}: aliased {a.name}" for a in node.names
                              if a.asname and a.name in ("datetime", "date", "time")]
    assert offenders == [], "read the time through factreg.clock:\n" + "\n".join(offenders)


def test_now_honours_the_environment_override_and_nested_as_of(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTREG_NOW", "2031-01-01T08:30:00Z")
    assert clock.now() == datetime(2031, 1, 1, 8, 30, tzinfo=timezone.utc)
    assert clock.today() == "2031-01-01"
    with clock.as_of("2027-06-01"):
        assert clock.iso() == "2027-06-01T00:00:00Z"
        with clock.as_of(datetime(2028, 2, 29, 12, tzinfo=timezone.utc)):
            assert clock.today() == "2028-02-29"
        assert clock.today() == "2027-06-01"
    with clock.as_of(None):
        assert clock.today() == "2031-01-01"
    monkeypatch.delenv("FACTREG_NOW")
    real = datetime.now(timezone.utc)  # the one place a test compares with the real clock
    assert abs((clock.now() - real).total_seconds()) < 60


@pytest.mark.parametrize("bad", ["yesterday", "0001-01-01", "999-01-01", "2026-99-99", "", "26-10-26"])
def test_a_bad_override_is_a_usage_error(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTREG_NOW", bad)
    if bad == "":
        assert clock.now().year >= 2026  # empty means no override
        return
    with pytest.raises(UsageError, match="FACTREG_NOW"):
        clock.now()


def test_record_dates_a_fact_by_the_clock(cli) -> None:  # type: ignore[no-untyped-def]
    run = cli("record", "c/tg", "--metric", "tg_rate", "--samples", "10,11,12,10,11", "--cond", "machine=m",
              "--cond", "model=x", "--json")
    assert run.exit_code == 0, run.stderr
    shown = cli("show", "c/tg", "--json").json()
    assert shown["measured_at"] == clock.iso(clock.parse(TEST_NOW))
    assert shown["recorded_at"] == shown["measured_at"]


def test_as_of_judges_freshness_at_another_date(registry, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    record(registry, "c/old", 10.0, measured_at=ago(10))
    now = cli("status", "--json").json()["facts"][0]
    assert now["status"] == "fresh"
    later = (clock.parse(TEST_NOW) + timedelta(days=40)).strftime("%Y-%m-%d")
    aging = cli("status", "--as-of", later, "--json")
    assert aging.exit_code == 0
    assert aging.json()["facts"][0]["status"] == "aging"
    stale = cli("status", "--as-of", (clock.parse(TEST_NOW) + timedelta(days=200)).strftime("%Y-%m-%d"))
    # past error_after; typed by hand, so nothing can re-measure it: `unverifiable (no method)`
    assert stale.exit_code == 1 and "unverifiable (no method)" in stale.stdout and "error_after 90d" in stale.stdout
    doc = tmp_path / "doc.md"
    doc.write_text("Decode: <!-- fact: c/old -->10.0 tok/s<!-- /fact -->.\n", encoding="utf-8")
    assert cli("docs", "check", str(doc)).exit_code == 0
    late = cli("docs", "check", str(doc), "--as-of", "2099-01-01")
    assert late.exit_code == 1 and "c/old: unverifiable: " in late.stdout and "no method to re-run it" in late.stdout
    bad = cli("status", "--as-of", "next tuesday")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: invalid --as-of date 'next tuesday'")


# The tests whose outcome depends on the date: freshness, status, citations, corrections, decisions, reports.
DATE_SENSITIVE = ["tests/test_freshness.py", "tests/test_status.py", "tests/test_docs_sync.py",
                  "tests/test_docs_check.py", "tests/test_corrections.py", "tests/test_decisions.py",
                  "tests/test_status_decisions.py", "tests/test_report.py", "tests/test_clock.py",
                  "tests/test_decisions_drivers.py", "tests/test_retract.py"]
LATER = ["2027-06-01T09:00:00Z", "2031-01-01T09:00:00Z"]


def _shifted_env(when: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTREG_")}
    env.update(FACTREG_TEST_NOW=when, FACTREG_TEST_TRAVEL=when, FACTREG_TEST_SHIFTED="1")
    return env


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("FACTREG_TEST_SHIFTED")), reason="already running at a shifted date")
def test_date_sensitive_tests_pass_years_from_now(tmp_path: Path) -> None:
    """The same tests, with the tests' now and the wall clock itself moved to each later date, in one test (so in
    one process and in order, whatever the test runner's scheduling): the first date runs every test of the
    date-sensitive modules and notes which asked the date (tests/conftest.py); the next runs only those, once."""
    asked: list[str] = []
    for when in LATER:
        env = _shifted_env(when)
        if not asked:
            env["FACTREG_TEST_DATES_USED"] = str(tmp_path / "asked.txt")
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p",
                              "no:randomly", *(asked or DATE_SENSITIVE)], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=900)
        assert run.returncode == 0, when + "\n" + run.stdout[-4000:] + run.stderr[-2000:]
        last = run.stdout.splitlines()[-1]
        assert " passed" in last, last
        if not asked:
            asked = sorted(set((tmp_path / "asked.txt").read_text(encoding="utf-8").splitlines()))
            ran = int(last.split(" passed")[0].split()[-1])
            assert any("test_freshness.py" in t for t in asked) and len(asked) <= ran, (len(asked), ran)
        else:
            assert int(last.split(" passed")[0].split()[-1]) <= len(asked), (last, len(asked))  # those only


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("FACTREG_TEST_SHIFTED")), reason="moves its own clock: the same at any date")
@pytest.mark.parametrize("when", LATER)
def test_the_demo_tells_the_same_story_years_from_now(when: str, tmp_path: Path) -> None:
    """`factreg demo` with the wall clock moved: every mistake still caught, the same dates written."""
    script = ("import sys, time_machine\n"
              f"with time_machine.travel({when!r}, tick=True):\n"
              "    from factreg.cli import main\n"
              "    sys.argv = ['factreg', 'demo', '--dir', sys.argv[1], '--no-live']\n"
              "    main()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTREG_")}
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path / "demo")], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "NOT AS EXPECTED" not in run.stdout
    assert run.stdout.count("[caught]") == len(MISTAKES)
    notes = sorted(p.name for p in (tmp_path / "demo" / "facts" / "corrections").iterdir())
    assert notes and all(n.startswith("2026-10-26-") for n in notes), notes
    log = subprocess.run(["git", "log", "--format=%aI %cI"], cwd=tmp_path / "demo", capture_output=True,
                         text=True, check=True).stdout.split()
    assert log and all(stamp.startswith("2026-10-26T18:00:00") for stamp in log), log


def test_bench_dates_its_facts_by_the_clock_and_keeps_llama_benchs_own_time(cli, tiny_model) -> None:  # noqa: F811
    """A run factreg makes now is dated by factreg's clock; llama-bench's test_time (its real clock) stays info."""
    run = cli("bench", "--json", "--", "-m", str(tiny_model), "-p", "0", "-n", "4", "-r", "2", "-t", "1")
    assert run.exit_code == 0, run.stderr
    [fact] = run.json()
    assert fact["measured_at"] == clock.iso(clock.parse(TEST_NOW))
    assert clock.parse(fact["conditions"]["info"]["test_time"]).year >= 2024
