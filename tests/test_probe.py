"""The endpoint probe against the fault-injection server: timings, thinking, faults, settle, record, secrets."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from factreg import __version__
from factreg.config import resolve
from factreg.demo import standin as faultserver
from factreg.measure import probe as core
from factreg.measure import stream
from factreg.measure.identity import endpoints
from factreg.measure.uptime import local_uptime, process_started_at
from factreg.registry import facts
from factreg.registry.store import Registry

# A real process's age comes from /proc (the kernel's clock); when only this Python process's clock is moved
# (tests/test_clock.py's years-from-now runs), the two disagree by years. A real clock change moves both.
REAL_PROCESS_AGE = pytest.mark.skipif(bool(os.environ.get("FACTREG_TEST_TRAVEL")),
                                      reason="compares a real process's start time with this process's moved clock")



def at_least(measured: float, truth: float, slack: float = 0.05) -> bool:
    """A delay the stand-in injected is a floor the probe never reads below; above it a busy machine adds
    scheduling delay, so the upper bound is loose (accuracy is measured in bench/bench_probe.py)."""
    return truth - 0.002 <= measured < truth + slack


BODY = {"model": "any", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def server() -> Iterator[faultserver.FaultServer]:
    with faultserver.running() as srv:
        yield srv


@pytest.fixture
def body_file(tmp_path: Path) -> str:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(BODY), encoding="utf-8")
    return str(path)


def run_probe(cli, url: str, body_file: str, *args: str):  # type: ignore[no-untyped-def]
    return cli("probe", url, "--body", body_file, *args)


def n_facts(db_url: str) -> int:
    reg = Registry(db_url)
    try:
        return facts.count(reg)
    finally:
        reg.close()


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Error:")]


# ---------------------------------------------------------------- what the user hears


def test_thinking_server_reports_ttft_and_ttft_any_side_by_side(cli, server, body_file) -> None:
    url = server.url("ok,think=1.5,thinkgap=0.02,gap=0.01,tokens=3")
    r = run_probe(cli, url, body_file, "--n", "2", "--warmup", "0", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    m = data["metrics"]
    assert m["ttft"]["min"] >= 1.5  # the answer comes after 1.5 s of reasoning: a floor, whatever the load
    assert m["ttft_any"]["max"] < m["ttft"]["min"] - 1.0  # the first reasoning token long before the answer
    assert at_least(m["reasoning_time"]["median"], 1.5 - 0.02, slack=0.3)
    assert data["observed"]["thinking"] == "on"
    assert "thinking_on" in data["flags"]
    # people see both numbers in one table
    human = run_probe(cli, url, body_file, "--n", "1", "--warmup", "0")
    assert human.exit_code == 0
    rows = {line.split()[0]: line for line in human.stdout.splitlines() if line.strip()}
    assert "ttft" in rows and "ttft_any" in rows and "thinking=on" in human.stdout


def test_think_tags_inside_content_count_as_reasoning(cli, server, body_file) -> None:
    r = run_probe(cli, server.url("ok,think=0.3,tags=1,tokens=3"), body_file, "--n", "1", "--warmup", "0", "--json")
    assert r.exit_code == 0, r.stderr
    m = r.json()["metrics"]
    assert m["ttft"]["median"] >= 0.3 and m["ttft_any"]["median"] < 0.1
    assert r.json()["observed"]["thinking"] == "on"


def test_think_splitter_handles_tags_split_across_deltas() -> None:
    split = stream._ThinkSplitter()
    parts = [split.feed(t) for t in ["<th", "ink>plan", " more</t", "hink>", "\n\nHello", " <b>"]]
    assert "".join(p[0] for p in parts) == "plan more"
    assert "".join(p[1] for p in parts) == "\n\nHello <b>"
    assert parts[2] == (" more", "")


def test_role_only_first_chunk_is_not_a_token(cli, server, body_file) -> None:
    r = run_probe(cli, server.url("ok,first=0.2,tokens=3"), body_file, "--n", "2", "--warmup", "0", "--json")
    data = r.json()
    assert data["metrics"]["ttft"]["min"] >= 0.2
    assert data["metrics"]["ttft_any"]["min"] >= 0.2
    assert data["metrics"]["ttfb"]["max"] < 0.1
    req = data["requests"][-1]
    assert req["events_s"]["first_chunk"] < 0.1  # the role chunk arrived at once, and did not count


def test_injected_delays_are_measured(cli, server, body_file) -> None:
    r = run_probe(cli, server.url("ok,first=0.3,gap=0.02,tokens=10"), body_file, "--n", "3", "--warmup", "1", "--json")
    assert r.exit_code == 0, r.stderr
    m = r.json()["metrics"]
    # The stand-in sleeps before each chunk, so the truth is a floor the probe can never read below; above it, a
    # busy machine adds scheduling delay (the probe's accuracy is measured in bench/bench_probe.py, not here).
    assert 0.3 - 0.002 <= m["ttft"]["median"] < 0.3 + 0.05
    assert 0.48 - 0.002 <= m["e2e"]["median"] < 0.48 + 0.1
    assert 30 < m["decode_rate"]["median"] <= 9 / 0.18 * 1.02  # (n-1)/span: 9 intervals of at least 20 ms
    assert "reasoning_time" not in m
    assert r.json()["observed"]["thinking"] == "off"


# ---------------------------------------------------------------- faults


FAULTS = [
    ("ok,done=0,tokens=0,usage=0,role=0,think=0.05,thinkgap=0.1", "no_answer", "held no answer token"),
    ("ok,think=0.2,tokens=0", "no_answer", "held no answer token"),
    ("disconnect,after=2", "error", "closed mid-stream"),
    ("ok,status=401", "auth_failed", "HTTP 401"),
    ("ok,status=403", "auth_failed", "HTTP 403"),
    ("ok,status=404", "error", "HTTP 404"),
    ("ok,status=500", "error", "HTTP 500"),
    ("ok,status=503", "error", "HTTP 503"),
    ("redirect", "error", "another host (elsewhere.invalid)"),
    ("nonutf8", "error", "not UTF-8"),
    ("huge", "error", "exceeded 32 MB"),
    ("json", "error", "not an event stream"),
]


@pytest.mark.parametrize(("spec", "verdict", "fragment"), FAULTS)
def test_every_fault_gives_its_verdict_and_records_nothing(
    cli, server, body_file, db_url, spec, verdict, fragment
) -> None:
    r = run_probe(
        cli, server.url(spec), body_file, "--n", "2", "--warmup", "0", "--timeout", "5", "--record", "fault/x", "--json"
    )
    assert r.exit_code == 3, r.stderr
    data = r.json()
    assert data["verdict"] == verdict
    assert data["metrics"] == {} and data["recorded"] == []
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and fragment in lines[0], r.stderr
    # the verdict names the failure, once: "Error: auth_failed: HTTP 401 …", but "Error: HTTP 404 …"
    assert lines[0].startswith("Error: " if verdict == "error" else f"Error: {verdict}: "), lines[0]
    assert not lines[0].lower().startswith("error: error"), lines[0]
    assert "Traceback" not in r.stderr
    assert n_facts(db_url) == 0


def test_redirect_is_not_followed(cli, server, body_file) -> None:
    before = len(server.requests)
    r = run_probe(cli, server.url("redirect"), body_file, "--warmup", "0")
    assert r.exit_code == 3
    assert len(server.requests) - before <= 1  # nothing was re-sent anywhere


def test_stall_ends_at_the_timeout(cli, server, body_file, db_url) -> None:
    start = time.monotonic()
    r = run_probe(cli, server.url("stall,after=1"), body_file, "--timeout", "1.5", "--record", "x/y", "--json")
    elapsed = time.monotonic() - start
    assert r.exit_code == 3
    assert r.json()["verdict"] == "error" and "stalled" in r.json()["message"]
    assert elapsed < 1.5 + 1.0
    assert n_facts(db_url) == 0


def test_stall_in_a_measured_request_also_ends_at_the_timeout(server, body_file) -> None:
    # the 1-token identity request finishes; the first full request stalls after two tokens
    spec = core.ProbeSpec(url=server.url("stall,after=2"), body=BODY, n=3, warmup=0, timeout=1.0)
    start = time.monotonic()
    result = core.probe(spec, hostname="h")
    assert result.verdict == "error" and time.monotonic() - start < 1.0 + 1.0 + 0.5


def test_unreachable_port(cli, body_file, db_url) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    r = run_probe(
        cli, f"http://127.0.0.1:{port}/v1/chat/completions", body_file, "--timeout", "2", "--record", "a/b", "--json"
    )
    assert r.exit_code == 3
    assert r.json()["verdict"] == "unreachable"
    assert n_facts(db_url) == 0


def test_silent_server_is_unreachable_within_the_timeout(cli, body_file) -> None:
    with socket.socket() as sock:  # accepts connections, never answers
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        start = time.monotonic()
        r = run_probe(
            cli, f"http://127.0.0.1:{sock.getsockname()[1]}/v1/chat/completions", body_file, "--timeout", "1", "--json"
        )
        assert time.monotonic() - start < 2.0
    assert r.exit_code == 3 and r.json()["verdict"] == "unreachable"


def test_garbage_lines_are_tolerated_and_flagged(cli, server, body_file) -> None:
    r = run_probe(cli, server.url("ok,garbage=1,first=0.1"), body_file, "--n", "2", "--warmup", "0", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    assert "garbage_lines" in data["flags"]
    assert at_least(data["metrics"]["ttft"]["median"], 0.1)
    assert "were not SSE data" in r.stderr


# ---------------------------------------------------------------- settle


def test_warmup_discard_makes_the_median_the_settled_speed(server) -> None:
    # the first 3 requests after start are 5x faster (identity check + 2 warm-ups)
    slow = 0.25
    cold = core.probe(
        core.ProbeSpec(url=server.url(f"ok,fast=3,first={slow},tokens=3,model=a"), body=BODY, n=3, warmup=0, timeout=5),
        hostname="h",
    )
    warm = core.probe(
        core.ProbeSpec(url=server.url(f"ok,fast=3,first={slow},tokens=3,model=b"), body=BODY, n=3, warmup=2, timeout=5),
        hostname="h",
    )
    assert stats_median(cold.samples["ttft"]) < slow / 2  # unsettled: the warm-graph replay looks fast
    assert all(at_least(x, slow) for x in warm.samples["ttft"])
    assert "no_warmup" in cold.flags and cold.observed["warm"] == "false"
    assert warm.observed["warm"] == "true" or "cold" in warm.flags


def stats_median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def test_uptime_of_the_local_server_comes_from_proc(server) -> None:
    uptime, pid = local_uptime(server.url())
    assert pid == os.getpid()  # the fault server runs inside the test process
    started = process_started_at(os.getpid())
    assert started is not None and uptime is not None
    assert abs((time.time() - started) - uptime) < 2


@REAL_PROCESS_AGE
def test_process_start_time_of_a_new_process() -> None:
    before = time.time()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        started = process_started_at(child.pid)
        assert started is not None and before - 1.5 <= started <= time.time() + 1.5
    finally:
        child.kill()
        child.wait()


def test_cold_flag_and_server_started_at(cli, server, body_file) -> None:
    url = server.url("ok,first=0.02")
    recent = (datetime.now(timezone.utc) - timedelta(seconds=10)).isoformat()
    r = run_probe(cli, url, body_file, "--n", "1", "--warmup", "1", "--server-started-at", recent, "--json")
    data = r.json()
    assert "cold" in data["flags"] and data["observed"]["warm"] == "false"
    assert 9 <= float(data["info"]["uptime_s"]) <= 30
    old = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()
    r = run_probe(cli, url, body_file, "--n", "1", "--warmup", "1", "--server-started-at", old, "--json")
    assert "cold" not in r.json()["flags"] and r.json()["observed"]["warm"] == "true"


def test_wait_for_uptime_waits_until_settled(cli, server, body_file) -> None:
    started = (datetime.now(timezone.utc) - timedelta(seconds=9)).isoformat()
    t = time.monotonic()
    r = run_probe(
        cli,
        server.url("ok,first=0.02"),
        body_file,
        "--n",
        "1",
        "--warmup",
        "0",
        "--min-uptime",
        "10",
        "--wait-for-uptime",
        "--server-started-at",
        started,
        "--json",
    )
    assert r.exit_code == 0
    assert 0.5 < time.monotonic() - t < 5
    assert "cold" not in r.json()["flags"]
    assert "waiting" in r.stderr


def test_no_cache_sends_cache_prompt_false_and_flags_cache_hits(cli, server, body_file) -> None:
    r = run_probe(
        cli, server.url("ok,cache_n=7,model=nc"), body_file, "--n", "1", "--warmup", "0", "--no-cache", "--json"
    )
    assert "cache_hit" in r.json()["flags"]
    sent = [q for q in server.requests if q["body"] and q["body"].get("cache_prompt") is False]
    assert sent and all(q["body"]["stream"] is True for q in sent)


def test_spacing_spaces_measured_requests(server) -> None:
    spec = core.ProbeSpec(url=server.url("ok,first=0.01,tokens=2"), body=BODY, n=3, warmup=0, timeout=5, spacing=0.3)
    t = time.monotonic()
    assert core.probe(spec, hostname="h").verdict == "ok"
    assert time.monotonic() - t >= 0.6


# ---------------------------------------------------------------- identity and expectations


def test_identity_observed_and_user_agent(cli, server, body_file) -> None:
    r = run_probe(
        cli, server.url("ok,model=m-7,fp=b99-cafe,first=0.01"), body_file, "--n", "1", "--warmup", "0", "--json"
    )
    obs = r.json()["observed"]
    assert obs["model"] == "m-7" and obs["build"] == "b99-cafe" and obs["machine"] == "testhost"
    assert obs["body_sha256"] == core.cond.body_sha256(BODY)
    agents = {q["headers"].get("User-Agent") for q in server.requests}
    assert f"factreg/{__version__}" in agents
    identity = [q for q in server.requests if q["body"] and q["body"].get("max_tokens") == 1]
    assert identity, "a 1-token request checks identity before timing"


def test_expect_other_model_is_conditions_changed_before_timing(cli, server, body_file, db_url) -> None:
    before = len(server.requests)
    r = run_probe(
        cli, server.url("ok,model=flash-next"), body_file, "--expect", "model=a3b", "--record", "p/q", "--json"
    )
    assert r.exit_code == 1
    data = r.json()
    assert data["verdict"] == "conditions_changed"
    assert data["diff"] == {"model": ["a3b", "flash-next"]}
    assert len(server.requests) - before == 1  # only the identity request; nothing timed
    assert n_facts(db_url) == 0
    assert len(error_lines(r.stderr)) == 1


def test_expect_thinking_off_catches_the_wiring_gap(cli, server, body_file, db_url) -> None:
    r = run_probe(
        cli,
        server.url("ok,think=0.2,tokens=2"),
        body_file,
        "--n",
        "1",
        "--warmup",
        "0",
        "--expect",
        "thinking=off",
        "--record",
        "p/q",
        "--json",
    )
    assert r.exit_code == 1
    assert r.json()["diff"] == {"thinking": ["off", "on"]}
    assert n_facts(db_url) == 0


def test_a_stream_ending_without_done_after_its_answer_is_complete(cli, server, body_file) -> None:
    """ik_llama.cpp ends the stream after its finish_reason chunk without data: [DONE]: the reply is complete."""
    r = run_probe(cli, server.url("ok,done=0,tokens=4"), body_file, "--n", "2", "--warmup", "0", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    assert data["verdict"] == "ok" and data["metrics"]["ttft"]["n"] == 2
    assert "ended without data: [DONE]" in r.stderr
    assert all(req["done_seen"] is False for req in data["requests"])


def test_a_reply_of_reasoning_only_is_no_answer_not_ok(cli, server, body_file, db_url) -> None:
    """Reasoning until max_tokens ran out: no answer token, so no ttft/e2e: never `ok`, exit 3, nothing recorded."""
    r = run_probe(
        cli, server.url("ok,think=0.2,tokens=0"), body_file, "--n", "2", "--warmup", "0", "--record", "q/x", "--json"
    )
    assert r.exit_code == 3, r.stderr
    data = r.json()
    assert data["verdict"] == "no_answer" and data["metrics"] == {} and data["recorded"] == []
    assert "2 of 2 measured replies held no answer token" in data["message"]
    assert data["observed"]["thinking"] == "on"
    assert error_lines(r.stderr) == [f"Error: no_answer: {data['message']}"]
    assert n_facts(db_url) == 0


def test_one_silent_reply_out_of_several_is_no_answer(server) -> None:
    # a real probe's replies, all answered, plus one measured reply that only reasoned
    spec = core.ProbeSpec(url=server.url("ok,tokens=2"), body=BODY, n=3, warmup=0, timeout=5)
    plain = core.probe(spec, hostname="h")
    assert plain.verdict == "ok"
    silent = stream.RequestTrace(kind="measured", first_reasoning=0.1, n_reasoning=3)
    result = core.ProbeResult(verdict="ok", requests=[*plain.requests, silent])
    core._derive(spec, result, None)
    assert result.verdict == "no_answer" and result.failed and result.samples == {}
    assert result.message is not None and result.message.startswith("1 of 4 measured replies")


def test_answer_and_reasoning_tokens_are_recorded_with_their_source(cli, server, body_file) -> None:
    r = run_probe(cli, server.url("ok,tokens=4"), body_file, "--n", "2", "--warmup", "0", "--json")
    assert r.exit_code == 0, r.stderr
    info = r.json()["info"]
    assert (info["answer_tokens"], info["reasoning_tokens"], info["tokens_source"]) == ("4,4", "0,0", "usage")
    r = run_probe(cli, server.url("ok,tokens=3,usage=0,think=0.1,thinkgap=0.02"), body_file, "--n", "1",
                  "--warmup", "0", "--json")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    info = r.json()["info"]
    tokens = r.json()["requests"][-1]["tokens"]
    assert info["tokens_source"] == "counted" and info["answer_tokens"] == "3"
    assert info["reasoning_tokens"] == str(tokens["reasoning_chunks"]) and tokens["reasoning_chunks"] >= 3


@pytest.mark.parametrize(
    ("given", "probed"),
    [
        ("http://h:8080/v1", "http://h:8080/v1/chat/completions"),
        ("http://h:8080/v1/", "http://h:8080/v1/chat/completions"),
        ("http://h:8080", "http://h:8080/v1/chat/completions"),
        ("http://h:8080/", "http://h:8080/v1/chat/completions"),
        ("https://gw.example/openai/v1", "https://gw.example/openai/v1/chat/completions"),
        ("http://h:8080/v1/chat/completions", "http://h:8080/v1/chat/completions"),
        ("http://h:8080/api/chat", "http://h:8080/api/chat"),
        ("ftp://h/v1", "ftp://h/v1"),
    ],
)
def test_a_base_url_is_probed_at_its_chat_completions(given: str, probed: str) -> None:
    assert core.ProbeSpec(url=given, body=BODY).url == probed


def test_the_base_url_works_from_the_command_line(cli, server, body_file) -> None:
    base = server.url("ok,tokens=3", path="/v1")
    assert base.endswith("/v1")
    r = run_probe(cli, base, body_file, "--n", "1", "--warmup", "0", "--json")
    assert r.exit_code == 0, r.stderr  # was: Error: error: HTTP 404
    assert r.json()["observed"]["endpoint"] == base + "/chat/completions"


def _all_subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_all_subclasses(sub)]
    return out


def test_every_error_class_says_error_once() -> None:
    """Every FactregError prints one line starting `Error: ` and never `Error: error: …`, whatever its message."""
    import typer

    from factreg import errors
    from factreg.cli.common import handles_errors

    classes = [errors.FactregError, *_all_subclasses(errors.FactregError)]
    assert {c.__name__ for c in classes} >= {"UsageError", "BadInput", "NotFound", "ConfigError", "Findings",
                                             "CouldNotVerify"}  # fmt: skip
    messages = {
        "error: HTTP 404 from h:1/v1": "Error: HTTP 404 from h:1/v1",
        "Error: Error: boom": "Error: boom",
        "ERROR : boom": "Error: boom",
        "error:boom": "Error: boom",
        "auth_failed: HTTP 401": "Error: auth_failed: HTTP 401",
        "errors in 3 files": "Error: errors in 3 files",
        "the server reported an error mid-stream: x": "Error: the server reported an error mid-stream: x",
    }
    for cls in classes:
        for message, line in messages.items():
            assert cls(message).line() == line, (cls, message)

            @handles_errors
            def fails(cls: type = cls, message: str = message) -> None:
                raise cls(message)

            import contextlib
            import io

            err = io.StringIO()
            with contextlib.redirect_stderr(err), pytest.raises(typer.Exit) as exit_info:
                fails()
            assert err.getvalue() == line + "\n" and exit_info.value.exit_code == cls.exit_code


def test_endpoints_keep_a_path_prefix() -> None:
    assert endpoints("http://h:1/gw/v1/chat/completions") == ("http://h:1/gw/v1/models", "http://h:1/gw/props")
    assert endpoints("https://h/v1/chat/completions") == ("https://h/v1/models", "https://h/props")


# ---------------------------------------------------------------- bad usage


def test_bad_usage_exits_2(cli, server, body_file, tmp_path, db_url) -> None:
    not_json = tmp_path / "b.json"
    not_json.write_text("{not json", encoding="utf-8")
    latin = tmp_path / "l.json"
    latin.write_bytes(b'{"a": "\xe9"}')
    array = tmp_path / "a.json"
    array.write_text("[1]", encoding="utf-8")
    url = server.url()
    cases = [
        ("probe", url, "--body", str(not_json)),
        ("probe", url, "--body", str(latin)),
        ("probe", url, "--body", str(array)),
        ("probe", url, "--body", str(tmp_path / "missing.json")),
        ("probe", url, "--body", body_file, "--n", "0"),
        ("probe", "ftp://h/x", "--body", body_file),
        ("probe", url, "--body", body_file, "--header", "no colon"),
        ("probe", url, "--body", body_file, "--header", "Authorization: Bearer ${SURELY_UNSET_VAR}"),
        ("probe", url, "--body", body_file, "--expect", "model"),
        ("probe", url, "--body", body_file, "--record", "../bad"),
    ]
    for args in cases:
        r = cli(*args)
        assert r.exit_code == 2, (args, r.stderr)
        assert len(error_lines(r.stderr)) == 1 and "Traceback" not in r.stderr
    assert n_facts(db_url) == 0


# ---------------------------------------------------------------- record and verify


def test_record_writes_facts_with_conditions_and_method(cli, server, body_file, monkeypatch) -> None:
    monkeypatch.setenv("PROBE_TEST_KEY", "k-0123456789abcdef")
    url = server.url("ok,first=0.05,gap=0.01,tokens=4,model=rec")
    r = run_probe(
        cli,
        url,
        body_file,
        "--n",
        "3",
        "--warmup",
        "1",
        "--api-key-env",
        "PROBE_TEST_KEY",
        "--record",
        "box/voice",
        "--min-uptime",
        "0",
        "--json",
    )
    assert r.exit_code == 0, r.stderr
    assert sorted(r.json()["recorded"]) == sorted(
        f"box/voice/{m}@1" for m in ("ttft", "ttft_any", "ttfb", "e2e", "decode_rate", "tpot", "itl")
    )
    fact = cli("show", "box/voice/ttft", "--json").json()
    assert fact["n"] == 3 and fact["unit"] == "s" and len(fact["samples"]) == 3
    ident = fact["conditions"]["identity"]
    assert ident["endpoint"] == url and ident["model"] == "rec" and ident["thinking"] == "off"
    assert ident["warm"] == "true" and ident["machine"] == "testhost" and ident["build"] == "b4242-abcdef0"
    assert ident["body_sha256"] == core.cond.body_sha256(BODY)
    info = fact["conditions"]["info"]
    assert info["n_warmup"] == "1" and info["user_agent"] == f"factreg/{__version__}" and "uptime_s" in info
    method = fact["method"]
    assert method["kind"] == "probe" and method["select"] == {"metric": "ttft"}
    assert method["headers"] == {"Authorization": "Bearer ${PROBE_TEST_KEY}"}
    assert method["body"] == BODY and method["n"] == 3 and method["warmup"] == 1
    assert "no_conditions" not in fact["flags"]


def test_remeasure_reruns_the_recorded_method(cli, server, body_file, db_url, monkeypatch) -> None:
    url = server.url("ok,first=0.05,gap=0.01,tokens=4,model=rm")
    assert run_probe(cli, url, body_file, "--n", "3", "--warmup", "0", "--record", "rm/p").exit_code == 0
    reg = Registry(db_url)
    try:
        group = [facts.get(reg, "rm/p/ttft"), facts.get(reg, "rm/p/e2e")]
    finally:
        reg.close()
    method = {k: v for k, v in group[0]["method"].items() if k != "select"}
    out = core.remeasure(method, group, resolve())
    assert set(out) == {"rm/p/ttft", "rm/p/e2e"}
    m = out["rm/p/ttft"]
    assert m.failure is None and len(m.samples) == 3 and at_least(m.value, 0.05)
    assert m.observed["model"] == "rm" and m.observed["endpoint"] == url
    assert at_least(out["rm/p/e2e"].value, 0.08)
    # the same facts against a server answering 401 / another model
    for spec, expected in (("ok,status=401", "auth_failed"), ("ok,model=other", None)):
        moved = {**method, "url": server.url(spec)}
        got = core.remeasure(moved, group, resolve())["rm/p/ttft"]
        assert got.failure == expected
        if expected is None:
            assert got.samples == [] and got.observed["model"] == "other"
        else:
            assert got.value is None and got.samples == [] and got.message


def test_verify_command_rechecks_probe_facts(cli, server, body_file) -> None:
    url = server.url("ok,first=0.05,gap=0.01,tokens=4,model=vf")
    assert run_probe(cli, url, body_file, "--n", "5", "--warmup", "1", "--record", "vf/p").exit_code == 0
    r = cli("verify", "vf/p/ttft", "--json")
    assert r.exit_code in (0, 1), r.stderr
    assert "Traceback" not in r.stderr


def test_model_file_records_its_sha256_and_verify_sees_the_file_change(cli, server, body_file, tmp_path) -> None:
    import hashlib

    model = tmp_path / "served.gguf"
    model.write_bytes(b"GGUF one")
    url = server.url("ok,first=0.01,gap=0.005,tokens=3,model=mf")
    r = run_probe(cli, url, body_file, "--n", "3", "--warmup", "0", "--model-file", str(model), "--record", "mf/p",
                  "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    assert data["observed"]["model_sha256"] == hashlib.sha256(b"GGUF one").hexdigest()
    assert data["info"]["model_file"] == str(model.resolve()) and data["info"]["model_file_size"] == "8"
    # the stand-in's /props names /models/mf.gguf: a server serving another file than the one named is said
    assert "the server's /props names model /models/mf.gguf, not --model-file" in " ".join(data["warnings"])
    fact = cli("show", "mf/p/ttft", "--json").json()
    assert fact["conditions"]["identity"]["model_sha256"] == data["observed"]["model_sha256"]
    assert fact["method"]["model_file"] == str(model)
    model.write_bytes(b"GGUF two")  # the file the server serves changed: the fact is about another model
    [res] = cli("verify", "mf/p/ttft", "--json").json()
    assert res["verdict"] == "conditions_changed" and "model_sha256" in res["diff"], res


def test_model_file_that_is_no_file_is_one_error_line(cli, server, body_file, tmp_path, db_url) -> None:
    r = run_probe(cli, server.url("ok"), body_file, "--model-file", str(tmp_path / "none.gguf"), "--record", "x/y")
    assert r.exit_code == 2 and error_lines(r.stderr) == [f"Error: --model-file {tmp_path / 'none.gguf'} is not a file"]
    assert n_facts(db_url) == 0


# ---------------------------------------------------------------- secrets


def assert_nowhere(secret: str, db_path: Path, *texts: str) -> None:
    for text in texts:
        assert secret not in text
    for path in db_path.parent.glob(db_path.name + "*"):  # the database and its -wal/-shm files
        assert secret.encode() not in path.read_bytes(), path


def test_token_by_header_or_env_is_found_nowhere(cli, server, body_file, db_path, monkeypatch, caplog) -> None:
    token = server.token
    monkeypatch.setenv("MY_TOKEN", token)
    url = server.url("ok,auth=1,first=0.02,tokens=3,model=sec")
    outputs = []
    for args in (
        ("--header", "Authorization: Bearer ${MY_TOKEN}", "--record", "sec/hdr"),
        ("--api-key-env", "MY_TOKEN", "--record", "sec/env"),
    ):
        for json_flag in ((), ("--json",)):
            r = run_probe(cli, url, body_file, "--n", "2", "--warmup", "0", *args, *json_flag)
            assert r.exit_code == 0, r.stderr
            outputs += [r.stdout, r.stderr]
    assert any(q["headers"].get("Authorization") == f"Bearer {token}" for q in server.requests)
    shown = [cli("show", f"sec/{p}/ttft", "--json").stdout for p in ("hdr", "env")]
    history = cli("history", "sec/hdr/ttft", "--json").stdout
    exported = cli("export").stdout
    verified = cli("verify", "sec/hdr/ttft", "--json")
    # a wrong token: auth_failed, and neither token appears in the error
    monkeypatch.setenv("WRONG_TOKEN", "wrong-token-abcdef0123")
    bad = run_probe(cli, url, body_file, "--header", "Authorization: Bearer ${WRONG_TOKEN}", "--json")
    assert bad.exit_code == 3 and bad.json()["verdict"] == "auth_failed"
    assert "wrong-token-abcdef0123" not in bad.stdout + bad.stderr
    logs = caplog.text
    assert_nowhere(
        token,
        db_path,
        *outputs,
        *shown,
        history,
        exported,
        verified.stdout,
        verified.stderr,
        bad.stdout,
        bad.stderr,
        logs,
    )
    assert '"Authorization": "Bearer ${MY_TOKEN}"' in shown[0]


def test_literal_secret_is_refused_for_record_and_redacted_otherwise(cli, server, body_file, db_path) -> None:
    token = server.token
    url = server.url("ok,auth=1,first=0.02,tokens=3,model=lit")
    refused = run_probe(cli, url, body_file, "--header", f"Authorization: Bearer {token}", "--record", "lit/x")
    assert refused.exit_code == 2
    assert "${" in refused.stderr and token not in refused.stderr + refused.stdout
    ok = run_probe(
        cli, url, body_file, "--n", "1", "--warmup", "0", "--header", f"Authorization: Bearer {token}", "--json"
    )
    assert ok.exit_code == 0, ok.stderr
    assert_nowhere(token, db_path, ok.stdout, ok.stderr)
    assert n_facts(f"sqlite:///{db_path}") == 0


def test_pooled_gaps_beyond_the_cap_are_thinned_to_order_statistics(cli, server, body_file, monkeypatch) -> None:
    """A load run pools every gap between chunks (itl): beyond the samples a version keeps, the probe keeps the
    order statistics at evenly spaced ranks (minimum and maximum included) and says so in its info. The cap is
    lowered here to reach it with a short run."""
    from factreg import stats

    monkeypatch.setattr(stats, "MAX_SAMPLES", 20)
    r = run_probe(cli, server.url("ok,first=0.01,gap=0.001,tokens=30"), body_file, "--n", "2", "--warmup", "0",
                  "--record", "thin/box", "--budget", "0.001s")  # one run: not repeated for precision
    assert r.exit_code == 0, r.stderr
    itl = cli("show", "thin/box/itl", "--json").json()
    assert itl["n"] == 20 and itl["samples"] == sorted(itl["samples"])
    assert itl["conditions"]["info"]["samples_thinned"] == "itl: 20 of 58"
    assert cli("show", "thin/box/ttft", "--json").json()["n"] == 2


def test_thin_keeps_the_extremes_and_every_quantile() -> None:
    from factreg import stats

    xs = [((i * 7919) % 1000) / 10 for i in range(1000)]
    got = stats.thin(xs, 101)
    assert len(got) == 101 and got[0] == min(xs) and got[-1] == max(xs)
    ordered = sorted(xs)
    for q in (0.1, 0.5, 0.9, 0.99):
        assert abs(stats.quantile(got, q) - stats.quantile(ordered, q)) <= 1.0
    assert stats.thin(xs[:50], 101) == xs[:50]
