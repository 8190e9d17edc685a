"""Verifying a capacity fact: the sweep's recorded level re-run, refuted when the server no longer holds it.

The stand-in falls over at a chosen number of streams (`slowat=N`: its first answer token comes after 1.5 s
instead of 0.15 s once N streams were in flight), far on either side of the SLO (ttft < 0.5 s): a busy machine
would have to stall a request by 0.35 s to make a good one bad, and can never make a slow one fast (the stand-in
waits at least the injected delay). The threshold 0.75 with 4 requests per level tolerates one such stall per
level on the holding side, and the rule refutes only on a Wilson interval wholly below the threshold, which 0 or
1 good request of 4 gives ([0, 49%] and [5, 70%]).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factreg.measure import slo, sweep, verify
from factreg.measure.measurement import Measurement

BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}]}
SPEC = "ok,first=0.15,gap=0.005,tokens=2,slowat=4,slowfirst=1.5,model=cap"


@pytest.fixture
def body_file(tmp_path: Path) -> str:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(BODY), encoding="utf-8")
    return str(path)


def g(good: int, total: int) -> slo.Goodput:
    low, high = slo.wilson(good, total)
    return slo.Goodput(good, total, low, high)


def test_a_capacity_is_refuted_once_the_server_degrades_below_it(cli, server, body_file) -> None:
    r = cli("sweep", server.url(SPEC), "--body", body_file, "--concurrency", "1,2,4", "--n", "4", "--warmup", "0",
            "--slo", "ttft<0.5", "--threshold", "0.75", "--record", "cap/p", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    shares = {lv["concurrency"]: lv["goodput"]["share"] for lv in data["levels"]}
    assert data["capacity"] == 2, shares  # the sweep finds the level the stand-in holds: it falls over at 4
    assert shares[4] <= 0.25
    fact = cli("show", "cap/p/capacity", "--json").json()
    assert fact["value"] == 2 and fact["method"]["kind"] == "sweep" and fact["method"]["threshold"] == 0.75

    held = cli("verify", "cap/p/capacity", "--json")
    assert held.exit_code == 0, held.stderr
    assert held.json()[0]["verdict"] == "confirmed", held.json()[0]["message"]

    server.override = {"slowat": 2}  # the same server now falls over at 2 streams
    try:
        v = cli("verify", "cap/p/capacity", "--json")
    finally:
        server.override = {}
    assert v.exit_code == 1, v.stderr  # verify's contract: 1 when a fact is refuted
    out = v.json()[0]
    assert out["verdict"] == "refuted", out["message"]
    assert "capacity 2 no longer holds: level 2" in out["message"]
    history = cli("history", "cap/p/capacity", "--json").json()
    assert [x["verdict"] for x in history[0]["verifications"]] == ["confirmed", "refuted"]


def test_a_capacity_that_cannot_be_measured_is_not_refuted(cli, server, body_file) -> None:
    r = cli("sweep", server.url(SPEC), "--body", body_file, "--concurrency", "1,2", "--n", "2", "--warmup", "0",
            "--slo", "ttft<0.5", "--threshold", "0.5", "--record", "cap/q")
    assert r.exit_code == 0, r.stderr
    server.override = {"status": 401}  # the address now answers 401: nothing measured, nothing refuted
    try:
        v = cli("verify", "cap/q/capacity", "--json")
    finally:
        server.override = {}
    assert v.json()[0]["verdict"] == "auth_failed" and v.exit_code == 3


@pytest.mark.parametrize(
    ("recorded", "levels", "verdict", "needle"),
    [
        (2, {1: g(4, 4), 2: g(0, 4), 4: g(0, 4)}, "refuted", "capacity 2 no longer holds: level 2"),
        (2, {1: g(1, 4), 2: g(4, 4), 4: g(0, 4)}, "refuted", "level 1"),
        (2, {1: g(4, 4), 2: g(4, 4), 4: g(80, 80)}, "refuted", "now exceeded: level 4"),
        (0, {1: g(80, 80), 2: g(0, 4)}, "refuted", "no capacity is now exceeded: level 1"),
        (2, {1: g(4, 4), 2: g(4, 4), 4: g(0, 4)}, "confirmed", "capacity 2 holds"),
        (4, {1: g(4, 4), 2: g(4, 4), 4: g(4, 4)}, "confirmed", "capacity 4 holds"),
        (0, {1: g(0, 4)}, "confirmed", "no capacity holds"),
        (2, {1: g(4, 4), 2: g(3, 4), 4: g(0, 4)}, "inconclusive", "level 2"),  # 75%: interval reaches 95%
        (2, {1: g(4, 4), 2: g(4, 4), 4: g(4, 4)}, "inconclusive", "level 4"),  # above holds, not clearly
    ],
)
def test_the_capacity_rule(recorded, levels, verdict, needle) -> None:
    out = slo.verify_capacity(recorded, levels, 0.95)
    assert out.verdict == verdict and needle in out.message, out.message


def test_a_capacity_fact_is_judged_by_its_levels_not_by_two_numbers() -> None:
    fact = {"id": "c/capacity", "version": 1, "metric": "capacity", "unit": "streams", "value": 4.0, "spread": None,
            "n": 1, "samples": [4.0], "conditions": {"identity": {}}, "method": {"kind": "sweep", "threshold": 0.95}}
    m = Measurement(samples=[1.0], value=1.0, n=1, levels={1.0: (4, 4), 2.0: (0, 4), 4.0: (0, 4), 8.0: (0, 4)})
    assert verify.judge(fact, m)["verdict"] == "refuted"  # type: ignore[arg-type]
    m.levels = {}  # a plain re-measured number alone: the statistics cannot decide
    assert verify.judge(fact, m)["verdict"] == "inconclusive"  # type: ignore[arg-type]


def test_verify_re_runs_only_the_levels_a_capacity_needs() -> None:
    cap = {"metric": "capacity", "value": 2.0, "method": {"select": {"metric": "capacity"}}}
    assert sweep.needed_levels([1, 2, 4, 8, 16], [cap]) == [1, 2, 4]  # type: ignore[list-item]
    top = {**cap, "value": 16.0}
    assert sweep.needed_levels([1, 2, 4, 8, 16], [top]) == [1, 2, 4, 8, 16]  # type: ignore[list-item]
    none = {**cap, "value": 0.0}
    assert sweep.needed_levels([1, 2, 4], [none]) == [1]  # type: ignore[list-item]
    good8 = {"metric": "goodput", "value": 1.0, "method": {"select": {"metric": "goodput", "concurrency": 8}}}
    assert sweep.needed_levels([1, 2, 4, 8, 16], [cap, good8]) == [1, 2, 4, 8]  # type: ignore[list-item]
