"""`factreg status`: every fact with status and reason, a summary line, and exit codes by --fail-on."""

from __future__ import annotations

from factreg.registry import facts
from factreg.registry import status as st
from tests.conftest import ago
from tests.docs_support import record, verify


def seed(registry) -> None:  # type: ignore[no-untyped-def]
    record(registry, "s/fresh", 10.0)
    record(registry, "s/aging", 10.0, measured_at=ago(60))
    record(registry, "s/refuted", 28.0)
    verify(registry, "s/refuted", "refuted", 11.9, 7.2, "11.9 ± 7.2 tok/s")
    record(registry, "s/changed", 10.0)
    verify(registry, "s/changed", "conditions_changed", message="build_commit b5000 → b6012")
    record(registry, "s/down", 0.5, metric="ttft")
    verify(registry, "s/down", "unreachable")
    record(registry, "s/old", 10.0)
    record(registry, "s/new", 12.0)
    facts.supersede(registry, "s/old", "s/new")


def test_every_status_with_reason_and_summary(registry, cli, monkeypatch) -> None:
    seed(registry)
    run = cli("status", "--fail-on", "refuted")
    assert run.exit_code == 1
    lines = dict((line.split()[1], line.split()[0]) for line in run.stdout.splitlines())
    assert lines == {
        "s/aging": "aging",
        "s/changed": "conditions_changed",
        "s/down": "unverifiable",
        "s/fresh": "fresh",
        "s/new": "fresh",
        "s/old": "superseded",
        "s/refuted": "refuted",
    }
    assert "refuted by verification 1 on" in run.stdout and "superseded by s/new" in run.stdout
    assert run.stderr.strip().splitlines()[-1] == (
        "7 fact(s): 2 fresh, 1 superseded, 1 aging, 1 unverifiable, 1 conditions_changed, 1 refuted; "
        "1 at or above refuted → exit 1"
    )


def test_fail_on_levels(registry, cli) -> None:
    record(registry, "s/fresh", 10.0)
    record(registry, "s/aging", 10.0, measured_at=ago(60))
    assert cli("status").exit_code == 0  # default: stale
    assert cli("status", "--fail-on", "aging").exit_code == 1
    record(registry, "s/old", 10.0)
    record(registry, "s/new", 10.0)
    facts.supersede(registry, "s/old", "s/new")
    assert cli("status").exit_code == 0  # superseded is history, not a failure
    record(registry, "s/stale", 10.0, measured_at="2020-01-01T00:00:00Z")
    assert cli("status").exit_code == 1
    assert cli("status", "--fail-on", "refuted").exit_code == 0
    bad = cli("status", "--fail-on", "never")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: --fail-on takes one of aging, stale, refuted")


def test_json_is_pure_and_matches_list_facts(registry, cli) -> None:
    seed(registry)
    record(registry, "m/before", 10.0, machine="m", build_commit="b1", measured_at=ago(5))
    record(registry, "m/after", 10.0, machine="m", build_commit="b2")
    run = cli("status", "--json")
    data = run.json()
    assert data["summary"]["facts"] == 9 and data["summary"]["fail_on"] == "stale"
    assert data["summary"]["failing"] == 4  # refuted, changed, unverifiable, m/before
    by_id = {f["id"]: f for f in data["facts"]}
    assert by_id["m/before"]["status"] == "stale" and "m now runs build_commit b2" in by_id["m/before"]["status_reason"]
    reference = {f["id"]: (f["status"], f["status_reason"]) for f in facts.list_facts(registry)}
    assert {f["id"]: (f["status"], f["status_reason"]) for f in st.statuses(registry)} == reference
    assert "fact(s)" in run.stderr and "fact(s)" not in run.stdout


def test_empty_registry_and_missing_registry(registry, cli, monkeypatch, tmp_path) -> None:
    run = cli("status")
    assert run.exit_code == 0 and run.stdout == ""
    assert run.stderr.strip() == "0 fact(s): none; 0 at or above stale"
    monkeypatch.setenv("FACTREG_DB", str(tmp_path / "none.db"))
    missing = cli("status")
    assert missing.exit_code == 2 and missing.stderr.startswith("Error: no registry")
