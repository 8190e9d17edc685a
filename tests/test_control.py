"""The control measurement and the machine's state: the speed factor, verdicts judged with it, its bounds.

Verdicts here come from fixed numbers (no real run), so each can be asserted exactly; the real llama-bench under
induced load is in tests/test_verify_control.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import insert

from factreg.demo import standin
from factreg.measure import control, machine, remeasure, speed
from factreg.measure import verify as engine
from factreg.measure.measurement import Measurement
from factreg.registry import facts
from factreg.registry.facts import VERIFICATION, NewFact

SPEC = {"model": control.TINY_NAME, "threads": "1", "workload": "tiny tg16 r5"}
IDENT = {"machine": "testhost", "model_filename": "tiny.gguf", "n_threads": "1"}


def ctl(value: float, spec: dict | None = None, kind: str = "llama-bench-tiny", unit: str = "tok/s",
        share: float | None = None) -> str:
    data = {"kind": kind, "spec": spec or SPEC, "unit": unit, "value": value, "samples": [value] * 4}
    return json.dumps(data if share is None else {**data, "run_cpu_share": share})


def fact(samples, control_value=None, metric="tg_rate", unit="tok/s", direction="higher", **info):
    if control_value is not None:
        info[control.KEY] = ctl(control_value, unit="Mloop/s" if unit == "s" else "tok/s",
                                kind="cpu-loop" if unit == "s" else "llama-bench-tiny")
    mean = sum(samples) / len(samples)
    return {"id": "testhost/tiny/tg32", "version": 1, "metric": metric, "unit": unit, "direction": direction,
            "value": mean, "spread": None, "n": len(samples), "samples": list(samples), "tolerance": None,
            "conditions": {"identity": dict(IDENT), "info": info}}  # fmt: skip


def measured(samples, control_value=None, unit="tok/s", **state):
    observed = dict(IDENT)
    if control_value is not None:
        observed[control.KEY] = ctl(control_value, unit="Mloop/s" if unit == "s" else "tok/s",
                                    kind="cpu-loop" if unit == "s" else "llama-bench-tiny")
    observed[machine.KEY] = machine.as_condition(state or {"load1": 3.9, "ncpu": 2, "top": [
        {"name": "burn", "cpu_pct": 95}]})  # fmt: skip
    return Measurement(samples=list(samples), observed=observed)


BASE = [9700, 9800, 9650, 9750, 9820]


def scaled(xs, k):
    return [x * k for x in xs]


def test_the_case_study_machine_ran_twice_as_fast_is_inconclusive_with_the_factor_and_scaled_value():
    res = engine.judge(fact(BASE, 9743), measured(scaled(BASE, 2.0), 19486))
    assert res["verdict"] == "inconclusive" and res["as_measured"] == "refuted"
    assert res["speed_factor"] == pytest.approx(2.0)
    assert "the machine ran 2.0× faster than when the fact was recorded: control 9.7k → 19.5k tok/s" in res["message"]
    assert "scaled to the machine as it was: 9" in res["message"] and "scaled, the measurement agrees" in res["message"]
    assert res["scaled"]["value"] == pytest.approx(sum(BASE) / 5, rel=1e-6)
    assert "load 3.9/2 CPUs" in res["message"] and "burn 95%" in res["message"]


def test_control_held_and_the_measurement_moved_is_refuted():
    res = engine.judge(fact(BASE, 9743), measured(scaled(BASE, 2.0), 9900))
    assert res["verdict"] == "refuted" and "as_measured" not in res
    assert "the machine held its speed (control 9.7k → 9.9k tok/s" in res["message"]


def test_a_claim_ten_times_off_stays_refuted_on_a_machine_twice_as_fast():
    res = engine.judge(fact(scaled(BASE, 10), 9743), measured(scaled(BASE, 2.0), 19486))
    assert res["verdict"] == "refuted"
    assert "scaled it still refutes the fact" in res["message"] and res["scaled"]["verdict"] == "refuted"


@pytest.mark.parametrize("factor", [0.4, 0.5, 2.0, 2.5])
def test_a_claim_three_times_the_real_rate_stays_refuted_whatever_the_machine_did(factor):
    # The measurement follows the machine (×factor) and so does the control: scaled, the gap stays 3×.
    res = engine.judge(fact(scaled(BASE, 3), 9743), measured(scaled(BASE, factor), 9743 * factor))
    assert res["verdict"] == "refuted", res["message"]


def test_control_held_but_the_measured_run_got_half_the_cpu_when_recorded_is_inconclusive():
    f = fact(BASE)
    f["conditions"]["info"][control.KEY] = ctl(9743, share=0.48)
    m = measured(scaled(BASE, 2.0))
    m.observed[control.KEY] = ctl(9900, share=0.97)
    res = engine.judge(f, m)
    assert res["verdict"] == "inconclusive" and res["as_measured"] == "refuted"
    assert res["cpu_share_factor"] == pytest.approx(0.97 / 0.48, rel=1e-3)
    assert "the measured run got 2.02× the CPU share it had when the fact was recorded (0.48 → 0.97" in res["message"]
    m.observed[control.KEY] = ctl(9900, share=0.50)  # the same share: nothing explains the doubling
    assert engine.judge(f, m)["verdict"] == "refuted"


def test_a_cpu_share_that_explains_more_than_the_drop_is_inconclusive_not_refuted():
    # As in a CI run: the measured run got a third of the CPU it had (0.87 → 0.29 CPU-s/s) and measured 46% less.
    # Scaled by the whole share it overshoots (+62%): part of the share explains the drop exactly.
    f = fact(BASE)
    f["conditions"]["info"][control.KEY] = ctl(9743, share=0.87)
    m = measured(scaled(BASE, 0.54))
    m.observed[control.KEY] = ctl(9743 / 1.2, share=0.29)
    res = engine.judge(f, m)
    assert res["verdict"] == "inconclusive" and res["as_measured"] == "refuted", res["message"]
    assert res["scaled"]["rel_diff"] > 0 > res["rel_diff"]
    assert "as measured below the fact, scaled above it" in res["message"]
    m.observed[control.KEY] = ctl(9743 / 1.2, share=0.80)  # the share held: a 46% drop is not the machine's
    assert engine.judge(f, m)["verdict"] == "refuted"


def test_agrees_as_measured_but_the_machine_ran_three_times_faster_is_inconclusive():
    res = engine.judge(fact(BASE, 9743), measured(BASE, 3 * 9743))
    assert res["verdict"] == "inconclusive" and res["as_measured"] == "confirmed"
    assert "as measured it agrees, but scaled it would not" in res["message"]


def test_a_latency_on_a_machine_twice_as_slow_is_scaled_the_other_way():
    lat = [0.50, 0.52, 0.49, 0.51, 0.50]
    res = engine.judge(fact(lat, 30.0, metric="ttft", unit="s", direction="lower"),
                       measured(scaled(lat, 2.0), 15.0, unit="s"))
    assert res["verdict"] == "inconclusive" and res["speed_factor"] == pytest.approx(0.5)
    assert "2.0× slower" in res["message"] and res["scaled"]["value"] == pytest.approx(sum(lat) / 5)


def test_a_fact_without_a_control_cannot_be_compared_and_says_so():
    res = engine.judge(fact(BASE), measured(scaled(BASE, 2.0), 19486))
    assert res["verdict"] == "refuted" and res["speed_factor"] is None
    assert "the machine could not be compared: the fact was recorded without a control measurement" in res["message"]
    assert "this verification's control is kept as the fact's from now on" in res["message"]


def test_controls_of_other_settings_are_not_compared():
    other = {**SPEC, "threads": "8"}
    f = fact(BASE)
    f["conditions"]["info"][control.KEY] = ctl(9743, spec=other)
    res = engine.judge(f, measured(scaled(BASE, 2.0), 19486))
    assert res["verdict"] == "refuted" and "the control differs from the fact's" in res["message"]


def test_a_control_that_could_not_run_leaves_the_verdict_to_the_statistics():
    m = measured(scaled(BASE, 2.0))
    m.observed[control.KEY] = json.dumps({"kind": "llama-bench-tiny", "spec": SPEC, "unit": "tok/s",
                                          "error": "llama-bench did not finish within 0.15 s"})
    res = engine.judge(fact(BASE, 9743), m)
    assert res["verdict"] == "refuted" and "the control could not run now (llama-bench did not finish" in res["message"]


def test_an_explained_refutation_is_measured_again_and_a_control_fluke_excuses_nothing(registry, monkeypatch):
    """First run: the control says 10× slower (a fluke), which would excuse a claim 10× off; the re-run's control
    held and the measurement did not move: refuted."""
    facts.record(registry, NewFact(id="testhost/tiny/tg32", metric="tg_rate", samples=scaled(BASE, 10),
                                       identity=IDENT, info={control.KEY: ctl(9743)},
                                       method={"kind": "llama-bench", "args": ["-m", "tiny.gguf"]}))  # fmt: skip
    runs = iter([(BASE, 974.3), (BASE, 9743)])  # (measurement, control now)

    def fake_remeasure(method, group, settings):
        samples, _ = current.pop()
        return {x["id"]: Measurement(samples=list(samples), observed=dict(IDENT)) for x in group}

    current: list = []

    def fake_bracket(method, settings, fn, expected_run_s=None, llama_bench=None, server_ms=None, spans=None,
                     headers=None, watch_server=True):
        current.append(next(runs))
        value = current[-1][1]
        seen = control.Bracketed({"load1": 1.0}, control.Control("llama-bench-tiny", SPEC, "tok/s", [value] * 4), 0.1)
        return fn(), seen

    monkeypatch.setattr(remeasure, "load_verifier", lambda kind: fake_remeasure)
    monkeypatch.setattr(control, "bracket", fake_bracket)
    [fact_data] = facts.list_facts(registry, {}, ids=["testhost/tiny/tg32"])
    [res] = engine.verify(registry, None, [fact_data])
    assert res["verdict"] == "refuted" and "reproduced in 2 runs" in res["message"], res["message"]


def test_the_control_becomes_the_facts_after_a_first_confirmed_verification(registry):
    facts.record(registry, NewFact(id="testhost/tiny/tg32", metric="tg_rate", samples=BASE, identity=IDENT,
                                   method={"kind": "llama-bench", "args": ["-m", "tiny.gguf"]}))  # fmt: skip
    [f] = facts.list_facts(registry, {}, ids=["testhost/tiny/tg32"])
    assert speed.with_baseline(registry, f) == f  # nothing yet
    row = {"fact_id": f["id"], "fact_version": 1, "verified_at": "2026-11-30T11:00:00Z", "method_kind": "llama-bench",
           "samples": "[]", "diff": "{}"}  # fmt: skip
    with registry.write() as conn:
        conn.execute(insert(VERIFICATION), [
            {**row, "verdict": "refuted", "observed": json.dumps({control.KEY: ctl(5000)})},
            {**row, "verdict": "confirmed", "observed": json.dumps({control.KEY: ctl(9743)})},
            {**row, "verdict": "confirmed", "observed": json.dumps({control.KEY: ctl(7000)})},
        ])  # fmt: skip
    got = speed.with_baseline(registry, f)
    assert control.of_fact(got)["value"] == 9743  # the first confirmed one: the machine agreed with the fact then
    res = engine.judge(got, measured(scaled(BASE, 2.0), 19486))
    assert res["verdict"] == "inconclusive" and res["speed_factor"] == pytest.approx(2.0)


def test_device_and_thread_settings_are_copied_into_the_control():
    args, spec = control.llama_spec(["-m", "big.gguf", "-p", "512", "-t", "4,8", "--n-gpu-layers=99", "-fa", "on",
                                     "-r", "10", "-dev", "CUDA0"])  # fmt: skip
    assert args == [*control.TINY_WORKLOAD, "-t", "4", "--n-gpu-layers", "99", "-fa", "on", "-dev", "CUDA0"]
    assert spec["threads"] == "4" and spec["n_gpu_layers"] == "99" and spec["device"] == "CUDA0"


def test_the_control_budget_is_the_larger_of_0_3_s_and_15_percent_of_the_run():
    assert control.budget_for(None) * 2 == pytest.approx(0.3)
    assert control.budget_for(1.0) * 2 == pytest.approx(0.3)
    assert control.budget_for(10.0) * 2 == pytest.approx(1.5)


def test_a_control_over_its_budget_is_stopped_and_reported_never_raised(monkeypatch, tmp_path):
    slow = tmp_path / "llama-bench"
    slow.write_text("#!/bin/sh\nexec sleep 5\n")
    slow.chmod(0o755)
    monkeypatch.setattr(control, "ensure_model", lambda settings: tmp_path / "m.gguf")
    t0 = time.monotonic()
    c = control.run_llama(slow, ["-t", "1"], None, 0.2)
    assert time.monotonic() - t0 < 3 and c.value is None and "no control sample within 0.8 s" in (c.error or "")
    assert "llama-bench not found" in (control.run_llama(None, [], None, 0.2).error or "")


def test_a_probe_has_no_client_control():
    # The client's speed says nothing about the server a probe measures (measure/endpoint.py judges it instead).
    assert control.runner({"kind": "probe", "url": "http://127.0.0.1:1/v1"}, None) is None
    assert not hasattr(control, "run_cpu")


def test_machine_state_names_processes_never_their_command_lines(tmp_path):
    burn = tmp_path / "burn"
    burn.symlink_to(sys.executable)
    secret = "sk-test-51cr3t-token"
    proc = subprocess.Popen([str(burn), "-c", f"import time\nt=time.time()\nwhile time.time()-t<3: pass # {secret}"])
    try:
        before, t0 = machine.process_times(), time.monotonic()
        w = machine.Watch().start()
        time.sleep(0.8)
        state = w.stop()
        everyone = machine.top_consumers(before, machine.process_times(), time.monotonic() - t0, set(), n=1000)
    finally:
        proc.kill()
        proc.wait()
    text = machine.as_condition(state)
    assert secret not in text and secret not in json.dumps(everyone)
    assert "burn" in [t["name"] for t in everyone], everyone  # by name (the busiest few go into the state)
    assert isinstance(state["load1"], float) and state["ncpu"] >= 1 and len(state.get("top", [])) <= machine.TOP_N
    assert "load" in machine.summary(text)


def test_machine_state_is_cheap():
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        machine.Watch().start().stop()
        times.append(time.perf_counter() - t0)
    assert sorted(times)[2] < 0.1  # ≤ 20 ms on a quiet machine; generous on a shared one


@pytest.mark.parametrize("text", [None, "", "not json", "[1, 2]", "{", 42])
def test_unreadable_machine_state_is_not_recorded(text):
    assert machine.summary(text) == "not recorded" and control.parse(text) == {}


# ---------------------------------------------------------------- shown: status, report, correction notes, compare

THEN = machine.as_condition({"load1": 0.8, "ncpu": 2, "cpu_pressure_pct": 3.0, "top": [{"name": "sshd", "cpu_pct": 2}]})
NOW = machine.as_condition({"load1": 3.9, "ncpu": 2, "cpu_pressure_pct": 81.0, "top": [{"name": "burn", "cpu_pct": 95}]})


def seed_two_sides(registry):
    """A fact measured on a quiet machine (control 9.7k tok/s) and a verification on a busy one that refuted it."""
    facts.record(registry, NewFact(id="testhost/tiny/tg32", metric="tg_rate", samples=BASE, identity=IDENT,
                                   info={control.KEY: ctl(9743), machine.KEY: THEN},
                                   method={"kind": "llama-bench", "args": ["-m", "tiny.gguf"]}))  # fmt: skip
    with registry.write() as conn:
        conn.execute(insert(VERIFICATION), [{
            "fact_id": "testhost/tiny/tg32", "fact_version": 1, "verified_at": "2026-11-30T11:00:00Z",
            "method_kind": "llama-bench", "verdict": "refuted", "samples": json.dumps(scaled(BASE, 0.5)),
            "value": 4870.0, "n": 5, "diff": "{}", "message": "new 4870 tok/s vs 9743 tok/s",
            "observed": json.dumps({**IDENT, control.KEY: ctl(9900), machine.KEY: NOW}),
        }])  # fmt: skip


def test_status_shows_the_machine_of_both_sides_of_a_refuted_fact(cli, registry):
    seed_two_sides(registry)
    facts.record(registry, NewFact(id="testhost/tiny/typed", metric="tg_rate", value=9000, identity=IDENT))
    r = cli("status")
    assert "machine when measured: load 0.8/2 CPUs, CPU pressure 3%, busiest: sshd 2%; control 9.7k tok/s" in r.stdout
    assert "machine at verification: load 3.9/2 CPUs, CPU pressure 81%, busiest: burn 95%; control 9.9k tok/s" in r.stdout
    rows = {f["id"]: f for f in cli("status", "--json").json()["facts"]}
    assert rows["testhost/tiny/tg32"]["machine"]["verification"].startswith("load 3.9/2 CPUs")
    assert "machine" not in rows["testhost/tiny/typed"]  # nothing recorded on either side: nothing shown


def test_the_fact_page_shows_the_machine_when_measured_and_at_each_verification(cli, registry):
    seed_two_sides(registry)
    assert cli("report").exit_code == 0
    page = Path.cwd() / "facts" / "testhost" / "tiny" / "tg32.md"
    text = page.read_text(encoding="utf-8")
    assert "## Machine" in text and "- when measured: load 0.8/2 CPUs" in text
    assert "- verification 1 (refuted): load 3.9/2 CPUs, CPU pressure 81%, busiest: burn 95%; control 9.9k" in text
    assert "| machine_state | info | load 0.8/2 CPUs" in text  # the condition summarised, not raw JSON


def test_a_correction_note_shows_the_machine_of_both_facts(cli, registry):
    seed_two_sides(registry)
    facts.record(registry, NewFact(id="testhost/tiny/tg32-busy", metric="tg_rate", samples=scaled(BASE, 0.5),
                                   identity=IDENT, info={control.KEY: ctl(4900), machine.KEY: NOW},
                                   method={"kind": "llama-bench", "args": ["-m", "tiny.gguf"]}))  # fmt: skip
    r = cli("correct", "testhost/tiny/tg32", "--by", "testhost/tiny/tg32-busy", "--json")
    assert r.exit_code == 0, r.stderr
    [note] = [p for p in Path.cwd().rglob("*.md") if "tg32" in p.name and "correction" in p.read_text()[:200].lower()]
    text = note.read_text(encoding="utf-8")
    assert "| machine_state | info | load 0.8/2 CPUs, CPU pressure 3%, busiest: sshd 2% | load 3.9/2 CPUs" in text
    assert "| control | info | control 9.7k tok/s" in text and "control 4.9k tok/s" in text


def test_compare_warns_when_the_two_facts_controls_differ(cli, registry):
    for fid, k in (("testhost/tiny/a", 1.0), ("testhost/tiny/b", 2.0)):
        facts.record(registry, NewFact(id=fid, metric="tg_rate", samples=scaled(BASE, k), identity=IDENT,
                                       info={control.KEY: ctl(9743 * k)}))  # fmt: skip
    facts.record(registry, NewFact(id="testhost/tiny/c", metric="tg_rate", samples=BASE, identity=IDENT))
    from factreg.measure import compare as cmp

    a, b, c = (facts.get(registry, f"testhost/tiny/{x}") for x in "abc")
    [w] = [w for w in cmp.compare(a, b)["warnings"] if w["code"] == "controls_differ"]
    assert "A was measured on a machine running 2.0× slower than B (control 19.5k vs 9.7k tok/s" in w["message"]
    assert [w["code"] for w in cmp.compare(a, c)["warnings"] if "control" in w["code"]] == ["control_missing"]
    assert not [w for w in cmp.compare(a, a)["warnings"] if "control" in w["code"]]


def test_a_probe_records_and_verifies_with_the_servers_own_evidence_and_no_client_control(cli, tmp_path):
    from factreg.measure import endpoint

    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "any", "messages": [{"role": "user", "content": "hi"}]}), encoding="utf-8")
    with standin.running() as srv:
        url = srv.url("ok,first=0.02,gap=0.005,tokens=4,model=ctl")
        r = cli("probe", url, "--body", str(body), "--n", "3", "--warmup", "1", "--record", "ctl/p", "--json")
        assert r.exit_code == 0, r.stderr
        info = cli("show", "ctl/p/ttft", "--json").json()["conditions"]["info"]
        assert control.KEY not in info
        ev = endpoint.parse(info[endpoint.KEY])
        assert ev["local"] is True and ev["identity_ms"] > 0 and ev["load"]["available"] is True
        assert ev["load"]["busy"] is False  # the stand-in's /metrics counted only the probe's own requests
        assert "load1" in machine.parse(info[machine.KEY])
        [res] = cli("verify", "ctl/p/ttft", "--json").json()
    assert "speed_factor" not in res and res["server"]["now"]["local"] is True


def test_the_measured_llama_benchs_own_run_queue_delay_explains_a_slower_run():
    # The control held (before and after), but the measured run itself waited on a run-queue half of its runnable
    # time (its own schedstat, polled while it ran): the direct evidence explains a halved rate.
    f = fact(BASE)
    f["conditions"]["info"][control.KEY] = json.dumps({**json.loads(ctl(9743)), "run_wait": 0.01, "run_steal": 0.0})
    m = measured(scaled(BASE, 0.5))
    m.observed[control.KEY] = json.dumps({**json.loads(ctl(9800)), "run_wait": 0.5, "run_steal": 0.0})
    res = engine.judge(f, m)
    assert res["verdict"] == "inconclusive" and res["as_measured"] == "refuted", res["message"]
    assert "the measured llama-bench waited on a run-queue 50% of its runnable time (when the fact was recorded: 1%)" \
        in res["message"]
    m.observed[control.KEY] = json.dumps({**json.loads(ctl(9800)), "run_wait": 0.02, "run_steal": 0.0})
    assert engine.judge(f, m)["verdict"] == "refuted"  # it got the CPU it wanted: nothing explains the halving


def test_the_wait_factor_counts_steal_and_a_side_without_it_as_unhindered():
    assert speed.wait_factor({}, {"run_wait": 0.5, "run_steal": 0.2}) == pytest.approx(0.4)
    assert speed.wait_factor({"run_wait": 0.5}, {"run_wait": 0.5}) == pytest.approx(1.0)
    assert speed.wait_factor({"run_wait": 0.1}, {}) is None
