"""A slower server is never explained away: real servers on 127.0.0.1, real CPU-bound processes beside them.

The stand-in runs in a process of its own (`python -m factreg.demo.standin`), sleep-paced (its token gaps are
sleeps) and, as a server that matters is, at a higher priority (nice −10; as root, as in CI): three busy
processes at the default priority starve the client — the probe, and the CPU loop that once scaled the server's
figures by the client's speed — but barely the server. A 2× slower stand-in is a 2× slower server, which
`verify` must refute whatever the busy processes do to the client. `POST /override` changes it in place (same URL, same
process, same uptime): `gap` makes it slower, `busy` makes its `/metrics` report somebody else's requests."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from factreg.measure import endpoint

BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 20}
SPEC = "ok,first=0.05,gap=0.024,tokens=12,model=m1"
FACT = "sb/p/decode_rate"


class StandIn:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "factreg.demo.standin"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, preexec_fn=_priority)  # fmt: skip
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{SPEC}/v1/chat/completions"

    def override(self, **params: float) -> None:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/override", data=json.dumps(params).encode(),
                                         method="POST")  # fmt: skip
        with urllib.request.urlopen(request, timeout=5) as reply:  # noqa: S310 - 127.0.0.1 only
            assert reply.status == 200

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _priority() -> None:
    """The stand-in's scheduling priority: nice −10 where allowed (root), else the default."""
    with contextlib.suppress(OSError):
        os.nice(-10)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    srv = StandIn()
    yield srv
    srv.stop()


@pytest.fixture
def busy(tmp_path: Path) -> Iterator[object]:
    """Three CPU-bound processes named `burn` (a shell loop), started by the test, stopped at its end."""
    burn = tmp_path / "burn"
    burn.symlink_to("/bin/sh")
    procs: list[subprocess.Popen] = []

    def start() -> None:
        procs.extend(subprocess.Popen([str(burn), "-c", "while :; do :; done"]) for _ in range(3))

    yield start
    for p in procs:
        p.kill()
        p.wait()


@pytest.fixture
def recorded(cli, standin: StandIn, tmp_path: Path) -> Path:
    """The stand-in's decode rate recorded on a quiet machine, and a document citing it (synced, checked green)."""
    body = tmp_path / "body.json"
    body.write_text(json.dumps(BODY), encoding="utf-8")
    r = cli("probe", standin.url(), "--body", str(body), "--n", "6", "--warmup", "1", "--min-uptime", "0",
            "--record", "sb/p")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "speed.md").write_text(f"The front end decodes at <!-- fact: {FACT} -->?<!-- /fact -->.\n", "utf-8")
    assert cli("docs", "sync", str(docs)).exit_code == 0
    assert cli("docs", "check", str(docs)).exit_code == 0
    return docs


def test_a_server_twice_as_slow_beside_three_busy_processes_is_refuted_and_the_doc_fails(
    cli, standin, busy, recorded
):
    fact = cli("show", FACT, "--json").json()
    ev = endpoint.parse(fact["conditions"]["info"][endpoint.KEY])
    assert ev["local"] is True and ev["server"]["pid_found"] is True  # the stand-in's own process was watched
    busy()
    standin.override(gap=0.05)
    r = cli("verify", FACT, "--json")
    [res] = r.json()
    assert res["verdict"] == "refuted", res["message"]
    assert r.exit_code == 1
    assert res["server"]["now"]["local"] is True and "control" not in res.get("observed", {})
    assert [t["name"] for t in res["server"]["now"]["top"]]  # the busiest other processes are named
    assert cli("docs", "check", str(recorded)).exit_code == 1


def test_the_same_server_unchanged_beside_three_busy_processes_is_not_refuted(cli, standin, busy, recorded):
    busy()
    r = cli("verify", FACT, "--json")
    [res] = r.json()
    assert res["verdict"] != "refuted", res["message"]
    assert r.exit_code == 0 and cli("docs", "check", str(recorded)).exit_code == 0


def test_a_slower_server_busy_with_other_requests_is_inconclusive_and_an_idle_one_is_refuted(
    cli, standin, recorded
):
    standin.override(gap=0.05, busy=3)
    [res] = cli("verify", FACT, "--json").json()
    assert res["verdict"] == "inconclusive" and res["excused_by"] == "server_busy", res["message"]
    assert res["message"].startswith("server busy: 3 other requests running now")
    standin.override(busy=0)
    r = cli("verify", FACT, "--json")
    [res] = r.json()
    assert res["verdict"] == "refuted" and r.exit_code == 1, res["message"]
    assert res["server"]["now"]["load"]["busy"] is False


# ---------------------------------------------------------------- the real llama-server

SMALL = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8, "temperature": 0}
# A long prompt (byte tokens: one per character) on a wider model: prompt processing is compute, so the number of
# threads shows in the first-token time.
LONG = {"messages": [{"role": "user", "content": "the quick brown fox jumps over the lazy dog " * 32}],
        "max_tokens": 2, "temperature": 0}  # fmt: skip


def _body(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "llama-body.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.llama
@pytest.mark.slow
def test_the_real_llama_server_beside_three_busy_processes_is_never_refuted_and_names_its_cpu_wait(
    cli, tmp_path, busy
):
    from factreg.demo.llamaserver import llama_server

    with llama_server(tmp_path, extra=("--metrics",)) as srv:
        r = cli("probe", srv.url, "--body", _body(tmp_path, SMALL), "--n", "5", "--warmup", "2", "--min-uptime", "0",
                "--record", "ls/p")  # fmt: skip
        assert r.exit_code == 0, r.stderr
        info = cli("show", "ls/p/e2e", "--json").json()["conditions"]["info"]
        ev = endpoint.parse(info[endpoint.KEY])
        assert ev["server"]["pid_found"] and ev["load"]["server"] == "llama.cpp"  # its own process and /metrics
        busy()
        verdicts = []
        for _ in range(10):
            [res] = cli("verify", "ls/p/e2e", "--json").json()
            verdicts.append(res["verdict"])
            assert "kept from a CPU" in res["message"], res["message"]
            assert res["server"]["now"]["load"]["busy"] is False  # nobody else's requests: the CPU is the cause
    # A 2 ms reply beside three burners (and, in the whole suite, another worker's tests): once in about 140 such
    # verifications a reply measured twice as long came with the server kept from a CPU only 10% of its requests'
    # time, and was refuted, as the evidence said. The machine's own drift can flip one verdict, not the rule.
    assert verdicts.count("refuted") <= 1, verdicts


@pytest.mark.llama
@pytest.mark.slow
def test_the_real_llama_server_restarted_slower_is_refuted_on_a_quiet_machine(cli, tmp_path):
    # A real slowdown of the server itself, with nothing keeping it from a CPU: restarted with a micro-batch of 16
    # tokens instead of 512, it processes the long prompt in 90 passes instead of 3. (Fewer threads would not do
    # on a 2-core machine: there `-t 2` is slower than `-t 1`, its compute threads crowding out the server's own
    # — measured 2.13 s against 0.73 s, its threads kept from a CPU 126% of the run; the evidence says so.)
    from factreg.demo.llamaserver import llama_server
    from factreg.demo.tinymodel import write_tiny_model

    model = write_tiny_model(tmp_path / "wide.gguf", n_layer=4, n_embd=256, n_ff=1024)
    body = _body(tmp_path, LONG)
    with llama_server(tmp_path, model=model, ctx=2048) as srv:
        r = cli("probe", srv.url, "--body", body, "--n", "5", "--warmup", "1", "--min-uptime", "0", "--no-cache",
                "--record", "ls/t")  # fmt: skip
        assert r.exit_code == 0, r.stderr
        port = srv.port
    with llama_server(tmp_path, model=model, ctx=2048, port=port, extra=("-ub", "16")) as srv:
        r = cli("verify", "ls/t/ttft", "--json")
    [res] = r.json()
    assert res["verdict"] == "refuted" and r.exit_code == 1, res["message"]
    assert res["rel_diff"] > 0.3, res["message"]  # the first token takes far longer
    assert "which cannot account for it" in res["message"] or "ran unhindered" in res["message"], res["message"]
