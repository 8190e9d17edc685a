"""Decision drivers and review dates: judged on the facts as they are whenever a decision is read.

Every date is relative to the tests' pinned now (conftest.TEST_NOW, `ago`): no outcome depends on the day it runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from factreg.errors import UsageError
from factreg.publish import decisions
from factreg.registry import drivers, jsonl
from factreg.registry.store import Registry
from tests.conftest import ago

E2E = "daytime/35b-a3b/e2e"
OTHER = "daytime/27b/e2e"
TTFT = "daytime/35b-a3b/ttft"


def record(cli, fid: str, samples: str, days: float, metric: str = "e2e") -> None:  # type: ignore[no-untyped-def]
    r = cli("record", fid, "--metric", metric, "--samples", samples, "--measured-at", ago(days))
    assert r.exit_code == 0, r.stderr


@pytest.fixture
def facts_now(cli):  # type: ignore[no-untyped-def]
    """Two e2e facts and a ttft fact, measured two days before the tests' now."""
    record(cli, E2E, "0.80,0.85,0.90,0.82", 2)  # median 0.835 s, 95% interval ≈ 0.77–0.91 s
    record(cli, OTHER, "0.40,0.45,0.50", 2)  # median 0.45 s
    record(cli, TTFT, "0.10,0.12,0.11", 2, metric="ttft")
    return cli


def add(cli, *args: str):  # type: ignore[no-untyped-def]
    return cli("decision", "add", "Voice front end on 35B-A3B", "--json", *args)


def front_matter(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])


def test_a_new_version_that_breaks_a_driver_flips_the_decision(facts_now, isolated, registry):
    cli = facts_now
    r = add(cli, "--driver", f"{E2E} < 1.0")
    assert r.exit_code == 0, r.stderr
    d = r.json()
    assert d["status"] == "accepted" and d["review_reasons"] == []
    assert [c["id"] for c in d["cites"]] == [E2E]  # a driver's fact is cited
    [driver] = d["drivers"]
    assert driver["text"] == f"{E2E} < 1.0 s" and driver["verdict"] == "holds" and driver["clearly"] is True
    assert "median 0.835 s" in driver["detail"] and "95% interval" in driver["detail"]
    path = isolated / d["path"]
    assert front_matter(path)["factreg-drivers"] == [{"driver": f"{E2E} < 1.0 s", "now": "holds"}]
    assert "## Decision Drivers" in path.read_text(encoding="utf-8")

    # A newer measurement (measured yesterday) is slower: the driver no longer holds, read from the new version.
    record(cli, E2E, "1.20,1.30,1.30,1.40", 1)
    shown = cli("decision", "show", "1", "--json").json()
    assert shown["status"] == "needs review" and shown["recorded_status"] == "accepted"
    [driver] = shown["drivers"]
    assert driver["verdict"] == "does not hold" and driver["holds"] is False and driver["clearly"] is True
    assert f"{E2E} v2: median 1.30 s" in driver["detail"]
    assert any(r.startswith(f"driver {E2E} < 1.0 s does not hold: {E2E} v2") for r in shown["review_reasons"])
    listed = cli("decision", "list", "--json").json()
    assert [x["status"] for x in listed] == ["needs review"]
    status = cli("status", "--json").json()
    assert [x["number"] for x in status["decisions_needing_review"]] == [1]
    assert f"driver {E2E} < 1.0 s does not hold" in status["decisions_needing_review"][0]["review_reason"]

    # Nothing stale is stored: an older measurement recorded now does not change what is current.
    record(cli, E2E, "0.5,0.5,0.5", 3)
    assert cli("decision", "show", "1", "--json").json()["status"] == "needs review"
    # Re-rendering the file shows the driver's current truth.
    decisions.write_files(registry, None, isolated)
    fm = front_matter(path)
    assert fm["status"] == "needs review" and fm["factreg-drivers"][0]["now"] == "does not hold"


def test_holds_but_not_clearly_when_the_interval_straddles_the_threshold(facts_now):
    cli = facts_now
    d = add(cli, "--driver", f"{E2E} < 0.9").json()  # median 0.835, interval up to ≈ 0.91
    [driver] = d["drivers"]
    assert driver["verdict"] == "holds, but not clearly" and driver["holds"] and driver["clearly"] is False
    assert "the interval reaches across 0.900 s" in driver["detail"]
    assert d["status"] == "accepted"  # it still holds: no review


def test_a_driver_against_another_fact(facts_now):
    cli = facts_now
    d = add(cli, "--driver", f"{E2E} > {OTHER}").json()
    assert sorted(c["id"] for c in d["cites"]) == [OTHER, E2E]
    [driver] = d["drivers"]
    assert driver["other"] == OTHER and driver["verdict"] == "holds" and driver["clearly"] is True
    assert d["status"] == "accepted"
    # The other fact gets slower than this one: the comparison flips.
    record(cli, OTHER, "0.95,1.00,1.05", 1)
    shown = cli("decision", "show", "1", "--json").json()
    assert shown["drivers"][0]["verdict"] == "does not hold"
    assert shown["status"] == "needs review"
    assert any(f"driver {E2E} > {OTHER} does not hold" in r for r in shown["review_reasons"])


def test_overlapping_intervals_hold_but_not_clearly(facts_now):
    cli = facts_now
    record(cli, OTHER, "0.70,0.80,0.90", 1)  # median 0.80 < 0.835, intervals overlap
    d = add(cli, "--driver", f"{E2E} >= {OTHER}").json()
    assert d["drivers"][0]["verdict"] == "holds, but not clearly"
    assert "(the intervals overlap)" in d["drivers"][0]["detail"]


def test_review_by_in_the_past_and_in_the_future(facts_now, monkeypatch):
    cli = facts_now
    past = add(cli, "--cites", E2E, "--review-by", ago(1, date_only=True)).json()
    assert past["status"] == "needs review"
    assert past["review_reasons"] == [f"its review date {ago(1, date_only=True)} has passed"]
    future = add(cli, "--cites", E2E, "--review-by", ago(-10, date_only=True)).json()
    assert future["status"] == "accepted" and future["review_by"] == ago(-10, date_only=True)
    # On the review date itself it still holds; the day after, it needs review (the clock is read, nothing stored).
    monkeypatch.setenv("FACTREG_NOW", ago(-10))
    assert cli("decision", "show", "2", "--json").json()["status"] == "accepted"
    monkeypatch.setenv("FACTREG_NOW", ago(-11))
    assert cli("decision", "show", "2", "--json").json()["status"] == "needs review"


BAD_DRIVERS = [
    f"{E2E} = 1.0",  # not a comparison factreg knows
    f"{E2E} == 1.0",
    f"{E2E} != 1.0",
    f"{E2E} <",
    "< 1.0",
    f"{E2E} < 1.0 < 2.0",
    f"{E2E} < nan",
    f"{E2E} < inf",
    f"{E2E} < 1e999",
    "Daytime/X < 1.0",  # not a fact id
    f"{E2E} < ../etc",
    f"{E2E} < {E2E}",
    f"{E2E} < 1.0 ms",  # another unit than the fact's
    f"{E2E} < {TTFT}",  # another metric
    "no/such/fact < 1.0",
    f"{E2E} > no/such/fact",
    f"{E2E} < 1.0\nrm -rf /",
    "x" * 600,
    "",
]


@pytest.mark.parametrize("bad", BAD_DRIVERS)
def test_bad_driver_is_one_error_line_and_nothing_stored(facts_now, isolated, bad):
    r = add(facts_now, "--driver", bad)
    assert r.exit_code == 2, (bad, r.stdout, r.stderr)
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("Error: ")
    assert facts_now("decision", "list", "--json").json() == []
    assert not (isolated / "decisions").exists()


@pytest.mark.parametrize("args", [
    ("--driver", f"{E2E} < 1.0", "--driver", f"{E2E} < 1.0"),  # the same driver twice
    ("--cites", E2E, "--review-by", "2026-13-01"),
    ("--cites", E2E, "--review-by", "next week"),
    ("--review-by", ago(-5, date_only=True)),  # neither a cite nor a driver
])
def test_bad_review_date_or_repeated_driver_is_refused(facts_now, isolated, args):
    r = add(facts_now, *args)
    assert r.exit_code == 2 and r.stderr.startswith("Error: ") and len(r.stderr.strip().splitlines()) == 1
    assert facts_now("decision", "list", "--json").json() == []


def test_parse_gives_one_canonical_text():
    assert drivers.parse("a/b<1").text == "a/b < 1.0"
    assert drivers.parse("  a/b >= -2.5e-3 tok/s ").text == "a/b >= -0.0025 tok/s"
    assert drivers.parse("a/b > c/d").other == "c/d"
    assert drivers.parse("a/b <= 35b/e2e").other == "35b/e2e"  # a fact id that starts with digits is an id
    for text in ("a/b < 1.0 s", "a/b > c/d", "a/b <= 0.001"):
        assert drivers.parse(drivers.parse(text).text) == drivers.parse(text)
    with pytest.raises(UsageError):
        drivers.loads('{"a": 1}')
    with pytest.raises(UsageError):
        drivers.loads('["a/b = 1"]')
    assert drivers.loads(None) == []


def test_judged_on_the_median_not_the_mean():
    # Median 1.0, mean 2.0 (one outlier): `< 1.5` holds on the median.
    fact = {"id": "a/b", "version": 1, "value": 1.0, "unit": "s", "metric": "e2e",
            "stats": {"median": 1.0, "ci95": [0.2, 3.8]}}
    judged = drivers.judge(drivers.parse("a/b < 1.5 s"), fact)
    assert judged["holds"] is True and judged["clearly"] is False and judged["verdict"] == "holds, but not clearly"
    no_interval = {**fact, "stats": {"median": None, "ci95": None}, "value": 2.0}
    judged = drivers.judge(drivers.parse("a/b < 1.5 s"), no_interval)
    assert judged["verdict"] == "does not hold" and judged["clearly"] is None and "no interval" in judged["detail"]
    assert drivers.judge(drivers.parse("a/b < 1.5 ms"), fact)["verdict"] == "cannot be judged"
    assert drivers.judge(drivers.parse("a/b < c/d"), fact, None)["detail"] == "c/d is not in the registry"


def test_export_import_round_trip_of_drivers(facts_now, registry, db_url, tmp_path):
    cli = facts_now
    r = add(cli, "--driver", f"{E2E} < 1.0", "--driver", f"{E2E} > {OTHER}", "--review-by", ago(-30, date_only=True))
    assert r.exit_code == 0, r.stderr
    exported = list(jsonl.export_lines(registry))
    [line] = [json.loads(x) for x in exported if json.loads(x)["kind"] == "decision"]
    assert json.loads(line["drivers"]) == [f"{E2E} < 1.0 s", f"{E2E} > {OTHER}"]
    assert line["review_by"] == ago(-30, date_only=True)
    dump = tmp_path / "export.jsonl"
    dump.write_text("\n".join(exported) + "\n", encoding="utf-8")
    other = Registry(f"sqlite:///{tmp_path / 'copy.db'}")
    try:
        jsonl.import_files(other, [dump])
        assert list(jsonl.export_lines(other)) == exported
        copied = decisions.get(other, 1)
        assert [j["text"] for j in copied["drivers"]] == [f"{E2E} < 1.0 s", f"{E2E} > {OTHER}"]
        assert copied["review_by"] == ago(-30, date_only=True) and copied["status"] == "accepted"
    finally:
        other.close()


@pytest.mark.parametrize("field,value", [
    ("drivers", '["daytime/35b-a3b/e2e = 1"]'),
    ("drivers", '"daytime/35b-a3b/e2e < 1"'),
    ("drivers", "not json"),
    ("drivers", 5),
    ("drivers", '["../x < 1"]'),
    ("review_by", "2026-02-30"),
    ("review_by", "tomorrow"),
])
def test_import_checks_drivers_and_review_by_like_the_command(facts_now, registry, tmp_path, field, value):
    assert add(facts_now, "--driver", f"{E2E} < 1.0").exit_code == 0
    [line] = [json.loads(x) for x in jsonl.export_lines(registry) if '"kind":"decision"' in x]
    line[field] = value
    dump = tmp_path / "bad.jsonl"
    dump.write_text(json.dumps(line) + "\n", encoding="utf-8")
    other = Registry(f"sqlite:///{tmp_path / 'copy.db'}")
    try:
        r = facts_now("import", str(dump), "--db", f"sqlite:///{tmp_path / 'copy.db'}")
        assert r.exit_code == 2 and r.stderr.startswith("Error: ") and len(r.stderr.strip().splitlines()) == 1
        assert decisions.list_decisions(other) == []
    finally:
        other.close()


def test_a_unit_the_driver_text_cannot_carry_is_implied(cli):
    r = cli("record", "odd/unit", "--metric", "odd", "--unit", "<ok>", "--value", "3", "--measured-at", ago(1))
    assert r.exit_code == 0, r.stderr
    d = add(cli, "--driver", "odd/unit > 2").json()
    assert d["drivers"][0]["text"] == "odd/unit > 2.0" and d["drivers"][0]["verdict"] == "holds"
    assert cli("decision", "show", "1", "--json").json()["status"] == "accepted"
