"""The endpoint's own evidence (measure/endpoint.py, sched.py, serverload.py): where the server runs, whether it
was kept from a CPU, whether it was busy with other traffic — and how each enters a probe's verdict.

Verdicts here come from fixed numbers, so each can be asserted exactly; real servers under real load are in
tests/test_verify_endpoint.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from factreg.measure import endpoint, sched, serverload
from factreg.measure import verify as engine
from factreg.measure.measurement import Measurement

IDENT = {"machine": "testhost", "model": "m1", "endpoint": "http://127.0.0.1:9/v1/chat/completions"}
BASE = [40.1, 40.9, 39.8, 41.2, 40.5, 40.0, 41.0, 40.6]  # decode_rate, tok/s


def probe_fact(samples, *, metric="decode_rate", unit="tok/s", direction="higher", server=None):
    info = {} if server is None else {endpoint.KEY: json.dumps(server)}
    return {"id": "gamebox/a3b/decode_rate", "version": 1, "metric": metric, "unit": unit, "direction": direction,
            "value": sum(samples) / len(samples), "spread": None, "n": len(samples), "samples": list(samples),
            "tolerance": None, "method": {"kind": "probe", "url": IDENT["endpoint"]},
            "conditions": {"identity": dict(IDENT), "info": info}}  # fmt: skip


def measured(samples, server):
    return Measurement(samples=list(samples), observed={**IDENT, endpoint.KEY: json.dumps(server)})


def local(denied=0.0, top=None, busy=None, **extra):
    ev = {"local": True, "where": "127.0.0.1 is this machine", "denied": denied,
          "server": {"pid_found": True, "readable": True}, **extra}  # fmt: skip
    if top:
        ev["top"] = top
    if busy is not None:
        ev["load"] = {"available": True, "server": "llama.cpp", "busy": busy > 0, "other_max": float(busy),
                      "readings": 6, "other_readings": 6 if busy else 0}  # fmt: skip
    return ev


REMOTE = {"local": False, "where": "gamebox (10.0.0.5) is not an address of this machine",
          "client": {"readable": True, "wait_s": 3.0, "run_s": 1.0, "wall_s": 4.0}}  # fmt: skip
BURN = [{"name": "burn", "cpu_pct": 98}, {"name": "burn2", "cpu_pct": 97}]


def half(xs):
    return [x / 2 for x in xs]


# ---------------------------------------------------------------- verdicts


def test_a_local_server_twice_as_slow_that_barely_waited_for_a_cpu_is_refuted():
    res = engine.judge(probe_fact(BASE), measured(half(BASE), local(denied=0.04, top=BURN)))
    assert res["verdict"] == "refuted" and "as_measured" not in res
    assert "kept from a CPU 4% of the run now" in res["message"] and "cannot account for it" in res["message"]
    assert res["denied"]["verdict"] == "refuted"


def test_a_local_server_that_waited_for_a_cpu_most_of_the_run_is_inconclusive_naming_share_and_processes():
    res = engine.judge(probe_fact(BASE), measured(half(BASE), local(denied=0.6, top=BURN)))
    assert res["verdict"] == "inconclusive" and res["as_measured"] == "refuted"
    assert res["excused_by"] == "server_cpu_wait"
    assert "the server was kept from a CPU 60% of the run now; busiest: burn 98%, burn2 97%" in res["message"]


def test_a_server_busy_with_other_traffic_is_inconclusive_and_an_idle_one_is_refuted():
    res = engine.judge(probe_fact(BASE), measured(half(BASE), local(busy=3)))
    assert res["verdict"] == "inconclusive" and res["excused_by"] == "server_busy"
    assert res["message"].startswith("server busy: 3 other requests running now")
    idle = engine.judge(probe_fact(BASE), measured(half(BASE), local(busy=0)))
    assert idle["verdict"] == "refuted"


def test_a_remote_server_is_never_scaled_by_the_clients_speed():
    # The case: the client was starved (its control would have run 2× slower); the server is elsewhere.
    res = engine.judge(probe_fact(BASE), measured(half(BASE), REMOTE))
    assert res["verdict"] == "refuted" and "as_measured" not in res and "speed_factor" not in res
    assert "a remote server: the client's speed does not excuse it" in res["message"]


def test_an_old_probe_fact_with_a_client_loop_control_is_judged_by_the_server_not_the_loop():
    f = probe_fact(BASE)
    f["conditions"]["info"]["control"] = json.dumps({"kind": "cpu-loop", "spec": {"workload": "python loop"},
                                                     "unit": "Mloop/s", "value": 7.31, "samples": [7.31] * 5})
    m = measured(half(BASE), local(denied=0.03, top=BURN))
    m.observed["control"] = json.dumps({"kind": "cpu-loop", "spec": {"workload": "python loop"}, "unit": "Mloop/s",
                                        "value": 3.67, "samples": [3.67] * 5})  # fmt: skip
    assert engine.judge(f, m)["verdict"] == "refuted"


def test_a_faster_result_is_not_excused_by_a_hindered_server_now():
    res = engine.judge(probe_fact(BASE), measured([x * 2 for x in BASE], local(denied=0.7, busy=4)))
    assert res["verdict"] == "refuted"


def test_a_fact_measured_on_a_busy_server_explains_a_faster_result_now():
    f = probe_fact(half(BASE), server=local(busy=2))
    res = engine.judge(f, measured(BASE, local(busy=0)))
    assert res["verdict"] == "inconclusive" and "running when the fact was measured" in res["message"]


def test_a_latency_is_taken_at_its_best_the_other_way():
    ttft = [0.150, 0.152, 0.149, 0.151, 0.150, 0.153]
    slow = [x * 1.5 for x in ttft]
    hindered = engine.judge(probe_fact(ttft, metric="ttft", unit="s", direction="lower"), measured(slow, local(0.4)))
    assert hindered["verdict"] == "inconclusive"  # 1.5× slower, but the server waited 40% of the run
    barely = engine.judge(probe_fact(ttft, metric="ttft", unit="s", direction="lower"), measured(slow, local(0.1)))
    assert barely["verdict"] == "refuted"  # at best 1.35× slower: outside ±10%


def test_a_confirmation_on_a_hindered_server_stands():
    res = engine.judge(probe_fact(BASE), measured(BASE, local(denied=0.5, top=BURN)))
    assert res["verdict"] == "confirmed" and "server kept from a CPU 50% of the run" in res["message"]


def test_an_unreadable_server_process_falls_back_to_the_machines_cpu_pressure_and_says_so():
    ev = {"local": True, "where": "x", "server": {"pid_found": False, "why": "could not be found"},
          "denied": 0.9, "denied_source": "machine-wide CPU pressure"}  # fmt: skip
    res = engine.judge(probe_fact(BASE), measured(half(BASE), ev))
    assert res["verdict"] == "inconclusive"
    assert "(machine-wide CPU pressure: the server's own process could not be read)" in res["message"]


def test_a_remote_clients_own_delay_is_noted_for_a_latency_metric_only_when_it_matters():
    ttft = [0.150, 0.152, 0.149, 0.151, 0.150]
    f = probe_fact(ttft, metric="ttft", unit="s", direction="lower")
    m = measured(ttft, {**REMOTE, "client": {"readable": True, "wait_s": 0.5, "wall_s": 3}})
    m.n = 5
    assert "the client itself waited for a CPU 0.1 s per request" in engine.judge(f, m)["message"]
    m.observed[endpoint.KEY] = json.dumps({**REMOTE, "client": {"readable": True, "wait_s": 0.001, "wall_s": 3}})
    assert "client itself" not in engine.judge(f, m)["message"]


# ---------------------------------------------------------------- where the server runs


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/v1", "http://localhost:1/", "http://[::1]:8080/",
                                 "http://127.8.9.10:5/"])  # fmt: skip
def test_loopback_hosts_are_local(url):
    assert endpoint.locality(url)[0] is True


def test_an_unresolvable_or_foreign_host_is_remote():
    assert endpoint.locality("http://no-such-host.invalid:8080/v1")[0] is False
    assert endpoint.locality("http://203.0.113.7:8080/v1")[0] is False  # TEST-NET-3: never an interface here


def test_the_interface_addresses_come_from_the_kernels_local_routes(tmp_path: Path):
    net = tmp_path / "net"
    net.mkdir()
    (net / "fib_trie").write_text("Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 10.1.2.3\n        /32 host LOCAL\n"
                                  "     |-- 10.1.2.255\n        /32 link BROADCAST\n", encoding="ascii")
    (net / "if_inet6").write_text("fe800000000000000000000000000001 02 40 20 80 eth0\n", encoding="ascii")
    found = endpoint.local_addresses(str(tmp_path))
    assert "10.1.2.3" in found and "fe80::1" in found and "10.1.2.255" not in found


# ---------------------------------------------------------------- the server's scheduling


def test_a_process_that_shares_one_cpu_with_two_others_is_seen_waiting(tmp_path: Path):
    # Three CPU-bound processes pinned to one CPU: each can run a third of the time, so each waits.
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs sched_setaffinity (Linux)")
    cpu = sorted(os.sched_getaffinity(0))[0]
    loop = f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    procs = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(3)]
    try:
        time.sleep(0.3)
        watch = sched.watch_process(procs[0].pid).start()
        time.sleep(0.6)
        usage = watch.stop()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert usage.readable and usage.threads == 1
    assert usage.run_s > 0 and usage.wait_s > 0
    assert usage.runnable_wait is not None and usage.runnable_wait > 0.3  # ≈ 2/3 when the three share evenly


def test_a_sleeping_process_waits_for_nothing():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        time.sleep(0.2)
        usage = sched.watch_process(proc.pid).start().stop()
    finally:
        proc.kill()
        proc.wait()
    assert usage.readable and usage.wait_s < 0.05


def test_a_process_that_cannot_be_read_is_reported_unreadable():
    usage = sched.watch_process(2**22 + 7).start().stop()  # above pid_max's default: no such process
    assert not usage.readable and usage.why and usage.denied_share() is None


def test_the_children_watch_counts_a_child_that_starts_during_the_run():
    watch = sched.watch_children().start()
    proc = subprocess.Popen([sys.executable, "-c", "x = 0\nfor i in range(3_000_000): x += i"])
    proc.wait()
    usage = watch.stop()
    assert usage.readable and usage.run_s > 0


def test_schedstat_lines_are_parsed_per_thread(tmp_path: Path):
    task = tmp_path / "42" / "task"
    for tid, line in (("42", "1000000 2000000 3\n"), ("43", "5 6 7\n"), ("44", "garbage\n")):
        (task / tid).mkdir(parents=True)
        (task / tid / "schedstat").write_text(line, encoding="ascii")
    assert sched.read_tasks(42, str(tmp_path)) == {42: (1000000, 2000000, 3), 43: (5, 6, 7)}


# ---------------------------------------------------------------- other traffic


LLAMA = """# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 3
llamacpp:requests_deferred 1
llamacpp:prompt_tokens_total 1234
"""
VLLM = """vllm:num_requests_running{engine="0",model_name="a"} 2.0
vllm:num_requests_waiting{engine="0",model_name="a"} 1.0
vllm:num_requests_running{engine="0",model_name="b b"} 1.0
"""
SGLANG = 'sglang:num_running_reqs{model_name="m"} 4\nsglang:num_queue_reqs{model_name="m"} 0\n'


@pytest.mark.parametrize(("text", "kind", "total"), [(LLAMA, "llama.cpp", 4), (VLLM, "vLLM", 4),
                                                    (SGLANG, "SGLang", 4)])  # fmt: skip
def test_the_load_gauges_of_three_servers_are_read(text, kind, total):
    gauges = serverload.parse(text)
    assert gauges is not None and serverload.server_kind(gauges) == kind and serverload.total(gauges) == total


@pytest.mark.parametrize("text", ["", "<html>not metrics</html>", "llamacpp:requests_processing NaN\n",
                                  "llamacpp:requests_processing -3\n", "other_metric 5\n"])  # fmt: skip
def test_pages_without_a_usable_gauge_are_not_load(text):
    assert serverload.parse(text) is None


def test_the_probes_own_requests_are_not_other_traffic():
    spans = [(10.0, 11.0), (11.05, 12.0)]
    ours = [serverload.Reading(t, 1) for t in (10.5, 11.5)]  # the server counts exactly the probe's request
    assert serverload.other_traffic(ours, spans)["busy"] is False
    theirs = [serverload.Reading(t, 4) for t in (9.0, 10.5, 11.5, 12.5)]  # three more, all along
    got = serverload.other_traffic(theirs, spans)
    assert got["busy"] is True and got["other_max"] == 4 and got["other_readings"] == 4
    once = [serverload.Reading(t, n) for t, n in ((9.0, 0), (10.5, 2), (11.5, 1))]  # one reading at a boundary
    assert serverload.other_traffic(once, spans)["busy"] is False


def test_the_metrics_url_is_the_servers_root_without_credentials():
    assert serverload.metrics_url("http://u:pw@h:8080/v1/chat/completions?x=1") == "http://h:8080/metrics"


def test_the_sampler_reads_a_real_servers_metrics_and_a_server_without_them():
    from factreg.demo import standin

    with standin.running() as srv:
        srv.override["busy"] = 3
        s = serverload.Sampler(srv.url(), interval_s=0.05).start()
        time.sleep(0.2)
        got = serverload.summary(s.stop(), [])
        assert got["available"] and got["server"] == "llama.cpp" and got["busy"] and got["other_max"] == 3
        srv.override["metrics"] = 0
        off = serverload.summary(serverload.Sampler(srv.url()).start().stop(), [])
        assert off == {"available": False, "why": "/metrics answered HTTP 501"}


def test_an_unreachable_metrics_endpoint_is_never_a_failure():
    got = serverload.summary(serverload.Sampler("http://127.0.0.1:9/v1").start().stop(), [])
    assert got["available"] is False and "could not be read" in got["why"]


# ---------------------------------------------------------------- an unresolved verdict is never silent


def test_an_inconclusive_verdict_says_what_would_resolve_it():
    busy_res = engine.judge(probe_fact(BASE), measured(half(BASE), local(busy=3)))
    assert engine.resolution(busy_res) == ("re-run when the server has no other traffic: "
                                           "`factreg verify gamebox/a3b/decode_rate`")
    waited = engine.judge(probe_fact(BASE), measured(half(BASE), local(denied=0.6, top=BURN)))
    assert engine.resolution(waited).startswith("re-run when burn, burn2 are done: `factreg verify gamebox/a3b/")
    noisy = engine.judge(probe_fact([40.0, 40.4, 39.6, 40.2, 39.8, 40.1]), measured([33, 47, 41], local()))
    assert noisy["verdict"] == "inconclusive" and noisy["needed_n"]
    assert f"measure more samples: `factreg verify gamebox/a3b/decode_rate --n {noisy['needed_n']}`" in \
        engine.resolution(noisy)
    assert engine.resolution(engine.judge(probe_fact(BASE), measured(half(BASE), local()))) is None  # refuted
    imprecise = engine.judge(probe_fact([30, 50, 40]), measured([33, 47, 41], local()))
    assert engine.resolution(imprecise).startswith("re-record the fact with more samples")


def test_verify_n_changes_only_the_count_of_this_run():
    probe = {"kind": "probe", "url": "http://127.0.0.1:1/v1", "n": 5}
    assert engine.with_n(probe, 40) == {**probe, "n": 40} and probe["n"] == 5
    bench = {"kind": "llama-bench", "args": ["-m", "m.gguf", "-r", "5", "-n", "32", "--repetitions=3"]}
    assert engine.with_n(bench, 12)["args"] == ["-m", "m.gguf", "-n", "32", "-r", "12"]
    assert engine.with_n(bench, None) == bench
    with pytest.raises(engine.UsageError):
        engine.with_n(probe, 0)


def _two_noisy_facts(cli):
    for fid, xs in (("t/noisy", "40,40.4,39.6,40.2,39.8,40.1"), ("t/again", "33,47,41")):
        r = cli("record", fid, "--metric", "decode_rate", "--samples", xs, "--cond", "machine=testhost",
                "--cond", "model=m1")  # fmt: skip
        assert r.exit_code == 0, r.stderr


def test_fail_on_inconclusive_fails_the_run_and_status_counts_the_unresolved(cli, tmp_path):
    _two_noisy_facts(cli)
    r = cli("verify", "t/noisy", "--against", "t/again")
    assert r.exit_code == 0 and "inconclusive" in r.stdout and "to resolve: measure more samples" in r.stdout
    assert cli("verify", "t/noisy", "--against", "t/again", "--fail-on", "inconclusive").exit_code == 1
    bad = cli("verify", "t/noisy", "--against", "t/again", "--fail-on", "refutedish")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: --fail-on takes inconclusive or skipped")
    row = next(f for f in cli("status", "--json").json()["facts"] if f["id"] == "t/noisy")
    assert row["inconclusive_since_confirmed"] == 2  # the two runs above (the refused third never ran)
    assert "2 inconclusive verifications since its last confirmation" in row["status_reason"]


def test_the_config_key_fails_a_cron_run_on_inconclusive(cli, tmp_path):
    _two_noisy_facts(cli)
    cfg = Path.cwd() / ".factreg" / "config.toml"
    cfg.parent.mkdir(exist_ok=True)
    cfg.write_text('[verify]\nfail_on = ["inconclusive"]\n', encoding="utf-8")
    assert cli("verify", "t/noisy", "--against", "t/again").exit_code == 1


def test_the_time_requests_were_at_the_server_is_the_union_of_their_spans():
    assert endpoint.covered([(0.0, 1.0), (0.5, 1.5), (3.0, 4.0), (3.2, 3.3)]) == pytest.approx(2.5)
    assert endpoint.covered([]) == 0.0
