"""`verify ID --against OTHER`: a number that cannot be re-run here, judged by a newer measurement."""

import pytest


@pytest.fixture
def seeded(cli):
    cli("record", "skill/gamebox/a3b-decode", "-m", "tg_rate", "--value", "28", "-c", "machine=gamebox",
        "-c", "model=35B-A3B", "--measured-at", "2026-09-14T10:00:00Z")
    cli("record", "gamebox/35b-a3b/tg32", "-m", "tg_rate", "--value", "11.9", "--spread", "7.2", "--n", "5",
        "-c", "machine=gamebox", "-c", "model=35B-A3B", "-c", "build_commit=8cf427ff")
    return cli


def test_the_stale_skill_number_is_refuted(seeded):
    r = seeded("verify", "skill/gamebox/a3b-decode", "--against", "gamebox/35b-a3b/tg32", "--json")
    assert r.exit_code == 1, r.stderr
    (res,) = r.json()
    assert res["verdict"] == "refuted"
    assert res["old"]["value"] == 28.0 and res["new"] == {"value": 11.9, "spread": 7.2, "n": 5}
    # one-sample t-test of 11.9 ± 7.2 (n=5) against 28: t = −5.0, df 4
    assert res["p_value"] == pytest.approx(0.0075, abs=0.0005)
    assert res["rel_diff"] == pytest.approx(11.9 / 28 - 1)
    shown = seeded("show", "skill/gamebox/a3b-decode", "--json").json()
    assert shown["status"] == "refuted" and "gamebox/35b-a3b/tg32" in shown["status_reason"]
    hist = seeded("history", "skill/gamebox/a3b-decode", "--json").json()
    assert hist[0]["verifications"][0]["method_kind"] == "fact:gamebox/35b-a3b/tg32"


def test_other_conditions_mean_changed_not_refuted(seeded):
    seeded("record", "studio/35b-a3b/tg32", "-m", "tg_rate", "--value", "11.9", "--spread", "0.5", "--n", "5",
           "-c", "machine=studio", "-c", "model=35B-A3B")
    r = seeded("verify", "skill/gamebox/a3b-decode", "--against", "studio/35b-a3b/tg32", "--json")
    assert r.exit_code == 1
    (res,) = r.json()
    assert res["verdict"] == "conditions_changed" and res["diff"] == {"machine": ["gamebox", "studio"]}


def test_against_refuses_another_metric_and_bad_usage(seeded):
    seeded("record", "gamebox/35b-a3b/e2e", "-m", "e2e", "--value", "2.27", "-c", "model=35B-A3B",
           "-c", "machine=gamebox")
    r = seeded("verify", "skill/gamebox/a3b-decode", "--against", "gamebox/35b-a3b/e2e")
    assert r.exit_code == 2 and "only the same metric" in r.stderr and r.stderr.count("\n") == 1
    r = seeded("verify", "--all", "--against", "gamebox/35b-a3b/tg32")
    assert r.exit_code == 2 and "exactly one fact" in r.stderr
    r = seeded("verify", "skill/gamebox/a3b-decode", "--against", "nope/nope")
    assert r.exit_code == 2 and "no fact 'nope/nope'" in r.stderr
    hist = seeded("history", "skill/gamebox/a3b-decode", "--json").json()
    assert hist[0]["verifications"] == []
