"""compare: ratio of medians with an interval, worded by direction, refused with every reason."""

from __future__ import annotations

import math

import pytest

from factreg.measure import compare
from factreg.registry import facts, freshness
from factreg.registry.facts import NewFact
from tests.decisions_support import add_verification, seed

pytestmark = pytest.mark.usefixtures("story_clock")  # the case study, told at its own time

DAY_ALLOW = ("--allow-different", "model,machine", "--allow-different", "endpoint")


@pytest.fixture
def seeded(registry):  # type: ignore[no-untyped-def]
    seed(registry)
    return registry


def test_case_study_28x_claim_is_refused_naming_thinking_and_cold(cli, seeded):
    r = cli("compare", "night/35b-a3b/ttft", "night/flash-next-thinking/ttft", "--json")
    assert r.exit_code == 1
    data = r.json()
    assert data["refused"] is True and data["ratio"] is None and data["ci95"] is None
    keys = {x["key"] for x in data["reasons"]}
    assert {"thinking", "cold"} <= keys
    assert {"model", "endpoint"} <= keys  # every reason, not only the first
    cold = next(x for x in data["reasons"] if x["key"] == "cold")
    assert (cold["a"], cold["b"]) == ("cold", "warm")
    assert {w["code"] for w in data["warnings"]} >= {"few_samples", "cold"}
    human = cli("compare", "night/35b-a3b/ttft", "night/flash-next-thinking/ttft")
    assert human.exit_code == 1
    assert "thinking differs: off vs on" in human.stdout and "cold vs warm" in human.stdout
    assert human.stderr.strip().endswith("Error: not comparable: endpoint; model; thinking; cold")


def test_allowing_the_model_still_refuses_thinking_and_cold(cli, seeded):
    r = cli(
        "compare",
        "night/35b-a3b/ttft",
        "night/flash-next-thinking/ttft",
        "--allow-different",
        "model,endpoint",
        "--json",
    )
    assert r.exit_code == 1
    assert [x["key"] for x in r.json()["reasons"]] == ["thinking", "cold"]
    r = cli(
        "compare",
        "night/35b-a3b/ttft",
        "night/flash-next-thinking/ttft",
        "--allow-different",
        "model,endpoint,thinking",
        "--allow-different",
        "warm",
        "--json",
    )
    assert r.exit_code == 0, r.stdout
    assert math.isclose(r.json()["ratio"], 0.13 / 3.75)
    assert r.json()["wording"] == "29× faster"


def test_daytime_e2e_is_3_1x_slower_with_interval_and_few_samples(cli, seeded):
    r = cli("compare", "day/35b-a3b/e2e", "day/27b/e2e", *DAY_ALLOW, "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    assert set(data) >= {"ratio", "ci95", "direction", "refused", "reasons", "warnings"}
    assert math.isclose(data["ratio"], 2.27 / 0.73)
    assert data["wording"] == "3.1× slower" and data["direction"] == "lower"
    assert data["refused"] is False and data["reasons"] == []
    lo, hi = data["ci95"]
    # A percentile bootstrap of medians stays between the smallest and largest possible ratio of medians.
    assert 2.0 / 0.85 - 1e-9 <= lo < data["ratio"] < hi <= 4.1 / 0.43 + 1e-9
    assert data["interval_method"] == "bootstrap"
    assert "few_samples" in {w["code"] for w in data["warnings"]}
    again = cli("compare", "day/35b-a3b/e2e", "day/27b/e2e", *DAY_ALLOW, "--json").json()
    assert again["ci95"] == data["ci95"]  # fixed seed: deterministic
    human = cli("compare", "day/35b-a3b/e2e", "day/27b/e2e", *DAY_ALLOW)
    assert "is 3.1× slower than day/27b/e2e" in human.stdout
    assert "warning: few_samples" in human.stderr


def test_different_metrics_are_refused_even_with_everything_allowed(cli, seeded):
    r = cli("compare", "night/35b-a3b/ttft", "night/35b-a3b/e2e", "--allow-different", "metric,unit,cold", "--json")
    assert r.exit_code == 1
    assert r.json()["reasons"][0]["key"] == "metric"
    assert "never compared" in r.json()["reasons"][0]["message"]


def test_body_hash_difference_is_refused(cli, seeded):
    r = cli("compare", "day/35b-a3b/e2e", "night/35b-a3b/e2e", "--allow-different", "cold", "--json")
    assert r.exit_code == 1
    assert [x["key"] for x in r.json()["reasons"]] == ["body_sha256"]


def test_missing_condition_on_one_side_is_a_difference(registry):
    a = facts.record(registry, NewFact(id="x/a", metric="ttft", value=1.0, identity={"model": "m", "thinking": "off"}))
    b = facts.record(registry, NewFact(id="x/b", metric="ttft", value=2.0, identity={"model": "m"}))
    res = compare.compare(a, b)
    assert res["refused"] and res["reasons"][0]["key"] == "thinking"
    assert res["reasons"][0]["b"] is None and "(not recorded)" in res["reasons"][0]["message"]


def test_delta_method_when_there_are_no_samples(registry):
    ident = {"machine": "gamebox", "model_type": "qwen3moe"}
    a = facts.record(registry, NewFact(id="r/a", metric="tg_rate", value=24.0, spread=2.0, n=5, identity=ident))
    b = facts.record(registry, NewFact(id="r/b", metric="tg_rate", value=12.0, spread=1.0, n=5, identity=ident))
    res = compare.compare(a, b)
    assert res["interval_method"] == "delta" and res["ratio"] == 2.0
    lo, hi = res["ci95"]
    assert math.isclose(lo * hi, 4.0)  # symmetric on the log scale
    expected_half = 1.959964 * math.sqrt(2 * (1 / 12) ** 2 / 5)
    assert math.isclose(math.log(hi / 2.0), expected_half, rel_tol=1e-4)
    assert res["wording"] == "2× faster"  # higher is better: a bigger rate is faster
    res = compare.compare(b, a)
    assert res["wording"] == "2× slower"


def test_no_interval_without_spread(registry):
    a = facts.record(registry, NewFact(id="n/a", metric="ttft", value=1.0, identity={"model": "m"}))
    b = facts.record(registry, NewFact(id="n/b", metric="ttft", value=0.5, identity={"model": "m"}))
    res = compare.compare(a, b)
    assert res["ci95"] is None and "no_interval" in {w["code"] for w in res["warnings"]}
    assert res["wording"] == "2× slower"


def test_bootstrap_matches_an_independent_resampling(seeded):
    a = facts.get(seeded, "day/35b-a3b/e2e")
    b = facts.get(seeded, "day/27b/e2e")
    lo, hi = compare.bootstrap_ci(a["samples"], b["samples"], resamples=20000, seed=7)
    # Exact distribution: each median of 3 resampled values has a known law; enumerate all 27×27 resamples.
    import itertools
    import statistics

    ratios = sorted(
        statistics.median(x) / statistics.median(y)
        for x in itertools.product(a["samples"], repeat=3)
        for y in itertools.product(b["samples"], repeat=3)
    )
    q = lambda p: ratios[round(p * (len(ratios) - 1))]  # noqa: E731
    assert abs(lo - q(0.025)) / q(0.025) < 0.08
    assert abs(hi - q(0.975)) / q(0.975) < 0.08


def test_record_stores_a_derived_fact_that_goes_stale_with_its_sources(cli, seeded):
    r = cli("compare", "day/35b-a3b/e2e", "day/27b/e2e", *DAY_ALLOW, "--record", "day/ratio", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["recorded"] == "day/ratio@v1"
    f = facts.get(seeded, "day/ratio")
    assert f["metric"] == "ratio" and math.isclose(f["value"], 2.27 / 0.73)
    assert f["method"]["kind"] == "derived"
    assert f["derived_from"] == [{"id": "day/35b-a3b/e2e", "version": 1}, {"id": "day/27b/e2e", "version": 1}]
    assert f["status"] == "fresh" or f["status"] == "aging"
    assert f["status"] != "stale"
    # A newer version of B makes the ratio stale.
    facts.record(
        seeded,
        NewFact(
            id="day/27b/e2e",
            metric="e2e",
            samples=[0.5, 0.6, 0.7],
            identity=facts.get(seeded, "day/27b/e2e")["conditions"]["identity"],
            measured_at="2026-10-27T10:00:00Z",
        ),
    )
    f = facts.get(seeded, "day/ratio")
    assert f["status"] == "stale" and "day/27b/e2e v1; it is now at v2" in f["status_reason"]
    assert next(x for x in facts.list_facts(seeded) if x["id"] == "day/ratio")["status"] == "stale"


def test_derived_fact_stale_when_a_source_is_refuted_or_superseded(cli, seeded):
    assert cli("compare", "day/35b-a3b/e2e", "day/27b/e2e", *DAY_ALLOW, "--record", "day/ratio").exit_code == 0
    add_verification(seeded, "day/35b-a3b/e2e", "refuted", samples=[1.0, 1.1, 1.2])
    f = facts.get(seeded, "day/ratio")
    assert f["status"] == "stale" and "refuted" in f["status_reason"]
    assert (
        cli(
            "compare",
            "day/27b/e2e",
            "night/27b-gateway/e2e",
            "--allow-different",
            "body_sha256,endpoint",
            "--record",
            "r2",
        ).exit_code
        == 0
    )
    assert facts.get(seeded, "r2")["status"] != "stale"
    facts.supersede(seeded, "night/27b-gateway/e2e", "day/27b/e2e", "gateway gone")
    f = facts.get(seeded, "r2")
    assert f["status"] == "stale" and "superseded by day/27b/e2e" in f["status_reason"]


def test_derived_invalidation_rule():
    src = {"id": "a", "version": 2, "superseded_by": None}
    fact = {"id": "r", "derived_from": [{"id": "a", "version": 2}]}
    assert freshness.derived_invalidation(fact, {"a": src}) is None
    assert "now at v3" in freshness.derived_invalidation(fact, {"a": {**src, "version": 3}})
    assert "superseded by b" in freshness.derived_invalidation(fact, {"a": {**src, "superseded_by": "b"}})
    assert "refuted" in freshness.derived_invalidation(fact, {"a": src}, {"a": {"verdict": "refuted"}})
    assert "not in the registry" in freshness.derived_invalidation(fact, {})
    assert freshness.derived_invalidation({"id": "plain"}, {}) is None


def test_refused_record_writes_nothing(cli, seeded):
    r = cli("compare", "night/35b-a3b/ttft", "night/flash-next-thinking/ttft", "--record", "bad/ratio")
    assert r.exit_code == 1 and "nothing recorded" in r.stderr
    assert cli("show", "bad/ratio").exit_code == 2


def test_unknown_fact_and_bad_record_id(cli, seeded):
    r = cli("compare", "nope/x", "day/27b/e2e")
    assert r.exit_code == 2 and r.stderr.startswith("Error: ")
    r = cli("compare", "day/35b-a3b/e2e", "day/27b/e2e", "--record", "Bad Id")
    assert r.exit_code == 2 and "invalid fact id" in r.stderr


def test_wording_by_direction():
    assert compare.wording(3.11, "lower", "latency") == "3.1× slower"
    assert compare.wording(0.5, "lower", "latency") == "2× faster"
    assert compare.wording(2.0, "higher", "rate") == "2× faster"
    assert compare.wording(2.0, None) == "2× higher"
    assert compare.wording(1.0, "lower") == "the same"
