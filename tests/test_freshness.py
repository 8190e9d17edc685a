"""Freshness: thresholds at fact, metric-default and registry-default levels; status order; condition changes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from factreg.errors import UsageError
from factreg.registry import freshness
from tests import conftest
from tests.docs_support import record

NOW = datetime(2026, 10, 26, tzinfo=timezone.utc)


def ago(days: float) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def fact(**kw):  # type: ignore[no-untyped-def]
    return {"id": "f", "metric": "tg_rate", "measured_at": ago(10), "warn_after": None, "error_after": None, **kw}


def test_threshold_levels_fact_over_metric_over_registry_over_default() -> None:
    config = {
        "freshness": {
            "warn_after": "5d",
            "error_after": "20d",
            "metrics": {"ttft": {"warn_after": "1d", "error_after": "2d"}},
        }
    }
    assert freshness.thresholds(fact(), None) == freshness.Thresholds("30d", "90d", "default")
    assert freshness.thresholds(fact(), config) == freshness.Thresholds("5d", "20d", "registry")
    assert freshness.thresholds(fact(metric="ttft"), config) == freshness.Thresholds("1d", "2d", "metric")
    assert freshness.thresholds(fact(metric="ttft", warn_after="3h"), config) == freshness.Thresholds(
        "3h", "2d", "fact"
    )
    only_warn = {"freshness": {"metrics": {"ttft": {"warn_after": "12h"}}}}
    assert freshness.thresholds(fact(metric="ttft"), only_warn) == freshness.Thresholds("12h", "90d", "metric")


def test_status_by_age_and_confirmation() -> None:
    assert freshness.status_of(fact(measured_at=ago(10)), None, None, NOW)[0] == "fresh"
    assert freshness.status_of(fact(measured_at=ago(40)), None, None, NOW) == (
        "aging",
        "last measured or confirmed 40d ago (warn_after 30d)",
    )
    assert freshness.status_of(fact(measured_at=ago(100)), None, None, NOW)[0] == "stale"
    confirmed = {"verdict": "confirmed", "verified_at": ago(1), "message": None}
    assert freshness.status_of(fact(measured_at=ago(100)), confirmed, None, NOW)[0] == "fresh"
    refuted = {"verdict": "refuted", "verified_at": ago(1), "message": "11.9 ± 7.2"}
    assert freshness.status_of(fact(), refuted, None, NOW) == (
        "refuted",
        f"refuted by a verification on {ago(1)[:10]}: 11.9 ± 7.2",
    )
    down = {"verdict": "unreachable", "verified_at": ago(1), "message": None}
    assert freshness.status_of(fact(), down, None, NOW)[0] == "unverifiable"
    assert freshness.status_of(fact(superseded_by="g"), refuted, None, NOW) == ("superseded", "superseded by g")


def test_severity_order_and_fail_levels() -> None:
    assert [freshness.severity(s) for s in freshness.ORDER] == sorted(freshness.severity(s) for s in freshness.ORDER)
    assert freshness.fails("stale") and freshness.fails("unverifiable") and freshness.fails("conditions_changed")
    assert not freshness.fails("aging") and not freshness.fails("superseded") and not freshness.fails("fresh")
    assert freshness.fails("aging", "aging") and not freshness.fails("superseded", "aging")
    assert freshness.fails("refuted", "refuted") and not freshness.fails("stale", "refuted")
    with pytest.raises(UsageError, match="--fail-on"):
        freshness.fails("stale", "sometimes")


def test_parse_duration() -> None:
    assert freshness.parse_duration("90d") == 90 * 86400
    assert freshness.parse_duration("1.5h") == 5400
    for bad in ("", "10", "d", "-1d", "3 fortnights"):
        with pytest.raises(UsageError):
            freshness.parse_duration(bad)


def test_condition_change_makes_older_facts_of_that_machine_stale() -> None:
    def f(fid, when, **ident):  # type: ignore[no-untyped-def]
        return {"id": fid, "measured_at": when, "conditions": {"identity": ident}}

    facts = [
        f("g/old-tg", ago(20), machine="gamebox", build_commit="b5000"),
        f("g/old-pp", ago(19), machine="gamebox", build_commit="b5000", gpu_driver="550"),
        f("g/new", ago(2), machine="gamebox", build_commit="b6012", gpu_driver="550"),
        f("g/no-build", ago(30), machine="gamebox"),  # does not depend on the build
        f("o/other", ago(30), machine="other", build_commit="b5000"),  # another machine
    ]
    out = freshness.invalidations(facts)
    assert set(out) == {"g/old-tg", "g/old-pp"}
    assert out["g/old-tg"].startswith("gamebox now runs build_commit b6012 (seen in g/new")
    assert out["g/old-tg"].endswith("this was measured with b5000")


def test_config_file_levels_through_the_cli(registry, cli, isolated: Path) -> None:
    (isolated / ".factreg").mkdir()
    (isolated / ".factreg" / "config.toml").write_text(
        '[freshness]\nwarn_after = "1d"\nerror_after = "3d"\n'
        '[freshness.metrics.ttft]\nwarn_after = "10d"\nerror_after = "20d"\n',
        encoding="utf-8",
    )
    two_days = conftest.ago(2)
    record(registry, "r/tg", 10.0, measured_at=two_days)  # registry default: aging after 1d
    record(registry, "r/ttft", 0.5, metric="ttft", measured_at=two_days)  # metric default: fresh until 10d
    from factreg.registry import facts

    facts.record(
        registry,
        facts.NewFact(
            id="r/own",
            metric="ttft",
            value=0.5,
            measured_at=two_days,
            identity={"machine": "gamebox"},
            error_after="1d",
        ),
    )  # its own: stale
    run = cli("status", "--json")
    got = {f["id"]: (f["status"], f["status_reason"]) for f in run.json()["facts"]}
    assert got["r/tg"] == ("aging", "last measured or confirmed 2d ago (warn_after 1d)")
    assert got["r/ttft"][0] == "fresh"
    # typed by hand, so nothing can re-measure it: stale without a method is `unverifiable (no method)`
    assert got["r/own"] == ("unverifiable", "no method to re-run it: last measured or confirmed 2d ago (error_after "
                            "1d); give it one: `factreg method r/own --probe URL --body FILE` (or `--bench -- ARGS`)")
    assert run.exit_code == 1
