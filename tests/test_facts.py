"""Recording and reading facts through the CLI, as a user would."""

import json

import pytest

from tests.conftest import ago


def record_27b(cli, *extra):
    return cli("record", "daytime/27b/e2e", "--metric", "e2e", "--samples", "0.43,0.73,0.85",
               "--cond", "model=27b", "--cond", "endpoint=http://remote:8080/v1", "--cond", "body_sha256=ab12",
               "--info", "note_from=voice terminal", "--measured-at", "2026-10-26T14:05:00Z", *extra)


def test_record_with_samples_gives_median_and_stats(cli):
    r = record_27b(cli, "--json")
    assert r.exit_code == 0, r.stderr
    f = r.json()
    assert f["id"] == "daytime/27b/e2e"
    assert f["value"] == 0.73 and f["n"] == 3 and f["unit"] == "s"
    assert f["samples"] == [0.43, 0.73, 0.85]
    assert f["stats"]["median"] == 0.73
    assert f["stats"]["ci95"][0] < 0.67 < f["stats"]["ci95"][1]
    assert "few_samples" in f["flags"] and "high_variance" in f["flags"]
    assert "no_conditions" not in f["flags"]
    assert f["conditions"]["identity"] == {"body_sha256": "ab12", "endpoint": "http://remote:8080/v1", "model": "27b"}
    assert f["conditions"]["info"] == {"note_from": "voice terminal"}
    assert f["measured_at"] == "2026-10-26T14:05:00Z"
    assert f["method"] == {"kind": "manual"}
    assert f["version"] == 1
    for key in ("subject", "metric", "spread", "status", "recorded_at"):
        assert key in f


def test_value_with_spread_and_n(cli):
    r = cli("record", "gamebox/a3b/tg32", "-m", "tg_rate", "--value", "11.9", "--spread", "7.2", "--n", "5",
            "-c", "machine=gamebox", "-c", "model_type=qwen3moe 35B.A3B", "--json")
    assert r.exit_code == 0, r.stderr
    f = r.json()
    assert (f["value"], f["spread"], f["n"], f["unit"]) == (11.9, 7.2, 5, "tok/s")
    assert f["samples"] == []
    assert "high_variance" in f["flags"]  # cv = 7.2 / 11.9 = 61%
    assert "few_samples" not in f["flags"]
    lo, hi = f["stats"]["ci95"]
    assert lo == pytest.approx(11.9 - 2.7764451051977934 * 7.2 / 5 ** 0.5)
    assert hi == pytest.approx(11.9 + 2.7764451051977934 * 7.2 / 5 ** 0.5)


def test_flags_no_conditions_and_cold(cli):
    f = cli("record", "x/rate", "-m", "tg_rate", "--value", "28", "--json").json()
    assert "no_conditions" in f["flags"] and "few_samples" in f["flags"]
    # a rate needs `machine`: a model alone is not enough
    f = cli("record", "y/rate", "-m", "tg_rate", "--value", "28", "-c", "model=a3b", "--json").json()
    assert "no_conditions" in f["flags"]
    f = cli("record", "z/ttft", "-m", "ttft", "--samples", "0.13", "-c", "model=a3b", "-c", "endpoint=http://gb",
            "-c", "warm=false", "--json").json()
    assert "cold" in f["flags"] and "no_conditions" not in f["flags"]
    f = cli("record", "w/ttft", "-m", "ttft", "--samples", "0.13", "-c", "model=a3b", "-c", "endpoint=http://gb",
            "-i", "uptime_s=40", "--json").json()
    assert "cold" in f["flags"]
    f = cli("record", "v/ttft", "-m", "ttft", "--samples", "0.13", "-c", "model=a3b", "-c", "endpoint=http://gb",
            "-i", "uptime_s=4000", "-c", "thinking=on", "--json").json()
    assert "cold" not in f["flags"] and "thinking_on" in f["flags"]


def test_custom_metric_needs_unit(cli):
    r = cli("record", "gb/vram", "-m", "vram_used", "--value", "7.5")
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: unknown metric 'vram_used'") and r.stderr.count("\n") == 1
    r = cli("record", "gb/vram", "-m", "vram_used", "--value", "7.5", "--unit", "GB", "--json")
    assert r.exit_code == 0 and r.json()["unit"] == "GB"


def test_recording_again_makes_a_version_and_history_keeps_all(cli):
    assert record_27b(cli).exit_code == 0
    r = cli("record", "daytime/27b/e2e", "-m", "e2e", "--samples", "0.5,0.6,0.7,0.8,0.9", "-c", "model=27b",
            "--json")
    assert r.json()["version"] == 2 and r.json()["value"] == 0.7
    h = cli("history", "daytime/27b/e2e", "--json").json()
    assert [v["version"] for v in h] == [1, 2]
    assert [v["current"] for v in h] == [False, True]
    assert h[0]["samples"] == [0.43, 0.73, 0.85]
    old = cli("show", "daytime/27b/e2e", "--version", "1", "--json").json()
    assert old["value"] == 0.73
    human = cli("history", "daytime/27b/e2e")
    assert "2 version(s)" in human.stdout and "(current)" in human.stdout


def test_list_filters(cli):
    record_27b(cli)
    cli("record", "gamebox/a3b/tg32", "-m", "tg_rate", "--value", "11.9", "-c", "machine=gamebox", "-c", "model=a3b")
    cli("record", "remote/27b/tg32", "-m", "tg_rate", "--value", "20", "-c", "machine=remote", "-c", "model=27b")
    everything = cli("list", "--json").json()
    assert [f["id"] for f in everything] == ["daytime/27b/e2e", "gamebox/a3b/tg32", "remote/27b/tg32"]
    assert [f["id"] for f in cli("list", "--metric", "tg_rate", "--json").json()] == [
        "gamebox/a3b/tg32", "remote/27b/tg32"]
    assert [f["id"] for f in cli("list", "--cond", "model=27b", "--json").json()] == [
        "daytime/27b/e2e", "remote/27b/tg32"]
    assert [f["id"] for f in cli("list", "--cond", "model=27b", "--metric", "tg_rate", "--json").json()] == [
        "remote/27b/tg32"]
    assert [f["id"] for f in cli("list", "--subject", "gamebox/a3b", "--json").json()] == ["gamebox/a3b/tg32"]
    # samples and conditions belong to the listed facts only
    listed = {f["id"]: f for f in cli("list", "--cond", "machine=remote", "--json").json()}
    assert listed["remote/27b/tg32"]["conditions"]["identity"] == {"machine": "remote", "model": "27b"}
    human = cli("list")
    assert "gamebox/a3b/tg32" in human.stdout and "3 fact(s)" in human.stderr


def test_show_unknown_fact(cli):
    cli("record", "a/b", "-m", "ttft", "--value", "1")
    r = cli("show", "nope/nope")
    assert r.exit_code == 2 and r.stderr == "Error: no fact 'nope/nope' in the registry\n"


def test_json_is_pure_and_parseable(cli):
    r = record_27b(cli, "--json")
    json.loads(r.stdout)
    # stderr only says, once, that a typed fact needs a method to be re-verified
    assert r.stderr.startswith("daytime/27b/e2e was typed by hand") and r.stderr.count("\n") == 1


def test_newer_build_on_the_same_machine_makes_older_facts_stale(cli):
    common = ["-c", "machine=gamebox", "-c", "model=a3b"]
    cli("record", "gamebox/a3b/tg32", "-m", "tg_rate", "--value", "28", "-c", "build_commit=8cf427ff", *common,
        "--measured-at", "2026-11-20T00:00:00Z")
    cli("record", "gamebox/a3b/pp512", "-m", "pp_rate", "--value", "300", "-c", "build_commit=1a2b3c4", *common,
        "--measured-at", "2026-11-25T00:00:00Z")
    cli("record", "remote/27b/tg32", "-m", "tg_rate", "--value", "20", "-c", "machine=remote", "-c", "model=27b",
        "-c", "build_commit=8cf427ff", "--measured-at", "2026-11-20T00:00:00Z")
    shown = cli("show", "gamebox/a3b/tg32", "--json").json()
    assert shown["status"] == "stale"
    assert "gamebox now runs build_commit 1a2b3c4 (seen in gamebox/a3b/pp512" in shown["status_reason"]
    listed = {f["id"]: f for f in cli("list", "--json").json()}
    assert listed["gamebox/a3b/tg32"]["status_reason"] == shown["status_reason"]
    # another machine, and the newer fact itself, are untouched
    assert "now runs" not in listed["remote/27b/tg32"]["status_reason"]
    assert "now runs" not in listed["gamebox/a3b/pp512"]["status_reason"]
    assert "now runs" not in cli("show", "remote/27b/tg32", "--json").json()["status_reason"]


def test_a_verification_that_sees_a_new_build_makes_older_facts_of_the_machine_stale(cli, registry):
    import json

    from sqlalchemy import insert

    from factreg.registry.facts import VERIFICATION

    common = ["-c", "machine=gamebox", "-c", "model=a3b", "-c", "build_commit=8cf427ff"]
    cli("record", "gamebox/a3b/tg32", "-m", "tg_rate", "--value", "28", *common, "--measured-at", "2026-11-20T00:00:00Z")
    cli("record", "gamebox/a3b/pp512", "-m", "pp_rate", "--value", "300", *common, "--measured-at", "2026-11-21T00:00:00Z")
    with registry.write() as conn:
        conn.execute(insert(VERIFICATION), [{
            "fact_id": "gamebox/a3b/pp512", "fact_version": 1, "verified_at": "2026-11-25T00:00:00Z",
            "verdict": "conditions_changed", "method_kind": "llama-bench", "samples": "[]",
            "observed": json.dumps({"machine": "gamebox", "build_commit": "1a2b3c4"}),
            "diff": json.dumps({"build_commit": ["8cf427ff", "1a2b3c4"]}), "message": "build_commit 8cf427ff → 1a2b3c4"}])
    tg = cli("show", "gamebox/a3b/tg32", "--json").json()
    assert tg["status"] == "stale"
    assert "gamebox now runs build_commit 1a2b3c4 (seen in a verification of gamebox/a3b/pp512" in tg["status_reason"]
    assert cli("show", "gamebox/a3b/pp512", "--json").json()["status"] == "conditions_changed"
    listed = {f["id"]: f["status"] for f in cli("list", "--json").json()}
    assert listed == {"gamebox/a3b/tg32": "stale", "gamebox/a3b/pp512": "conditions_changed"}
    assert {f["id"]: f["status"] for f in cli("status", "--json").json()["facts"]} == listed


def test_the_current_version_is_the_latest_measured_not_the_last_recorded(cli):
    """Recording an older measurement after a newer one adds it to the history without making it current."""
    newer, older = ago(days=2), ago(days=20)
    assert cli("record", "box/m/tg32", "-m", "tg_rate", "--value", "20", "--measured-at", newer).exit_code == 0
    r = cli("record", "box/m/tg32", "-m", "tg_rate", "--value", "10", "--measured-at", older, "--json")
    assert r.exit_code == 0, r.stderr
    assert (r.json()["version"], r.json()["value"], r.json()["measured_at"]) == (1, 20.0, newer)
    shown = cli("show", "box/m/tg32", "--json").json()
    assert (shown["version"], shown["value"]) == (1, 20.0)
    assert [f["value"] for f in cli("list", "--json").json()] == [20.0]
    h = cli("history", "box/m/tg32", "--json").json()
    assert [(v["version"], v["value"], v["measured_at"], v["current"]) for v in h] == [
        (2, 10.0, older, False), (1, 20.0, newer, True)]
    # A third, newest measurement becomes current; a tie on measured_at goes to the later recording.
    cli("record", "box/m/tg32", "-m", "tg_rate", "--value", "30", "--measured-at", newer)
    h = cli("history", "box/m/tg32", "--json").json()
    assert [(v["version"], v["current"]) for v in h] == [(2, False), (1, False), (3, True)]
    assert cli("show", "box/m/tg32", "--json").json()["value"] == 30.0
