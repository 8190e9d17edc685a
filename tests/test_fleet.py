"""A fleet: several machines (processes with different FACTREG_HOSTNAME) run `factreg verify --here` into one
registry at the same time. Each verifies only its own facts (real llama-bench runs of a tiny model); nothing is
lost or duplicated — on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from factreg.registry import facts
from factreg.registry.facts import NewFact
from factreg.registry.store import Registry
from tests.llamabench_support import tiny_model  # noqa: F401

HOSTS = ["fleet-a", "fleet-b", "fleet-c"]
BENCH = ["-p", "0", "-n", "16", "-r", "3", "-t", "1"]


@pytest.mark.slow
@pytest.mark.shares  # any verdict but an error passes: the tiny model's run is plumbing
def test_fleet_verifies_each_machines_own_facts(any_url, cli, tiny_model, tmp_path):  # noqa: F811
    r = cli("bench", "--json", "--db", any_url, "--", "-m", str(tiny_model), *BENCH)
    assert r.exit_code == 0, r.stderr
    [measured] = r.json()
    reg = Registry(any_url)
    # The same measurement, as each machine of the fleet (and one machine that is not running) recorded it.
    own = {}
    for host in [*HOSTS, "fleet-offline"]:
        ids = [f"{host}/tiny/tg16", f"{host}/tiny/tg16-copy"]
        own[host] = ids
        facts.record_many(reg, [
            NewFact(id=i, metric=measured["metric"], samples=measured["samples"],
                    identity={**measured["conditions"]["identity"], "machine": host},
                    info=measured["conditions"]["info"], method=measured["method"])
            for i in ids
        ])  # fmt: skip

    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTREG_")}
    procs = {
        host: subprocess.Popen(
            [sys.executable, "-m", "factreg", "verify", "--here", "--json", "--db", any_url],
            env={**env, "FACTREG_HOSTNAME": host, "FACTREG_USER_DIR": str(tmp_path / host)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for host in HOSTS
    }  # fmt: skip
    for host, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 1), err  # 1 = a finding (refuted/changed) on a noisy machine, still recorded
        results = json.loads(out)
        assert sorted(res["id"] for res in results) == sorted(own[host]), host
        assert all(res["verdict"] not in ("error", "unreachable", "auth_failed") for res in results), results

    rows = reg.query("SELECT fact_id, hostname, method_kind FROM verification")
    per_fact = Counter(r["fact_id"] for r in rows)
    for host in HOSTS:
        for fid in own[host]:
            assert per_fact[fid] == 1, (fid, per_fact)  # verified once, by its own machine
    assert all(r["fact_id"].split("/")[0] == r["hostname"] for r in rows)
    assert all(per_fact[fid] == 0 for fid in own["fleet-offline"])
    assert per_fact[measured["id"]] == 0  # the bench host is not part of the fleet
    assert len(rows) == 2 * len(HOSTS)
    assert reg.integrity_check() == "ok"
    reg.close()
