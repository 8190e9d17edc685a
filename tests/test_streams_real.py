"""Real recorded chat-completion streams (tests/data/streams-real) read by factreg, against an independent reading.

Each `NAME.sse` holds a stream as a provider sent it (or as its source stored it: see the sidecar's `recorded`);
`NAME.json` says where it comes from and what it contains (`expected`, computed by tests/streams_real_support.py,
which does not use factreg's parser). The comparisons run factreg's own code: `SSEParser` plus the probe's
per-chunk handler (`_handle`, with the chunk's index as its time) and, for the outcome, `stream_request` against a
loopback server replaying the bytes. Known dialect gaps are marked xfail(strict=True): fixing one flips its test.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from factreg.measure import stream
from factreg.measure.sse import SSEParser
from factreg.verdicts import Verdict
from tests.streams_real_support import read

DATA = Path(__file__).parent / "data" / "streams-real"
NAMES = sorted(p.stem for p in DATA.glob("*.sse"))
EXPECTED_KEYS = (
    "answer_text", "reasoning_text", "answer_chunks", "reasoning_chunks", "first_answer_chunk_index",
    "first_reasoning_chunk_index", "thinking_observed", "usage", "answer_tokens", "reasoning_tokens",
    "generated_tokens", "json_chunks", "done", "error", "timings",
)  # fmt: skip

# What factreg's stream reading does not understand yet, per (fixture, aspect). Each entry names the gap.
GEMINI = "native Gemini schema (candidates[].content.parts, usageMetadata, finishReason, no [DONE]) is not read"
KNOWN_GAPS: dict[tuple[str, str], str] = {
    ("gemini-native-crlf", "answer"): GEMINI,
    ("gemini-native-crlf", "usage"): GEMINI,
    ("gemini-native-crlf", "tokens"): GEMINI,
    ("gemini-native-crlf", "outcome"): GEMINI,
}
ASPECTS = ("chunks", "answer", "reasoning", "usage", "tokens", "error", "outcome")


def sidecar(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def applies(name: str, aspect: str) -> bool:
    exp = sidecar(name)["expected"]
    if aspect in ("usage", "tokens") and exp["error"] is not None:
        return False  # a failed stream's usage is not measured
    if aspect == "tokens":
        return exp["generated_tokens"] is not None
    return True


def cases() -> list[Any]:
    out = []
    for name in NAMES:
        for aspect in ASPECTS:
            if not applies(name, aspect):
                continue
            gap = KNOWN_GAPS.get((name, aspect))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            out.append(pytest.param(name, aspect, id=f"{name}-{aspect}", marks=marks))
    return out


def factreg_reading(raw: bytes, piece: int = 4096) -> tuple[stream.RequestTrace, str | None]:
    """factreg's parser and per-chunk handler over the recording; a chunk's time is its index."""
    parser = SSEParser()
    trace = stream.RequestTrace(kind="fixture")
    reader = stream.ChunkReader(trace)
    index = 0
    try:
        events = []
        for i in range(0, len(raw), piece):
            events += parser.feed(raw[i : i + piece])
        events += parser.close()
        for ev in events:
            if ev.done:
                trace.done_seen = True
                continue
            reader.feed(ev.data, float(index))
            index += 1
        reader.finish()
    except stream.ProbeFailure as exc:
        return trace, exc.message
    return trace, None


# ---------------------------------------------------------------- the corpus itself


def test_the_corpus_is_there() -> None:
    assert len(NAMES) >= 20, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_fixture_has_its_sidecar_and_source(name: str) -> None:
    meta = sidecar(name)
    src = meta["source"]
    assert src["url"].startswith("https://github.com/") and src["repo"] in src["url"], src
    if src.get("kind") == "issue-comment":  # a stream pasted in an issue thread: the thread and comment cited
        assert src["url"].startswith(f"https://github.com/{src['repo']}/issues/") and src["comment"], src
        assert meta["recorded"] in ("pasted", "pasted-excerpt") and src["licence"], src
    else:
        assert len(src["commit"]) == 40 and src["path"] and src["licence"], src
    for key in ("provider", "dialect", "notes", "recorded"):
        assert isinstance(meta[key], str) and meta[key], key
    assert meta["recorded"] in ("raw", "reconstructed", "pasted", "pasted-excerpt")
    assert set(EXPECTED_KEYS) <= set(meta["expected"]), set(EXPECTED_KEYS) - set(meta["expected"])


def test_no_stray_files_and_the_readme_lists_every_fixture() -> None:
    stems = {p.name.split(".")[0] for p in DATA.iterdir() if p.name != "README.md"}
    assert stems == set(NAMES), stems ^ set(NAMES)
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"`{name}`" in readme, name


@pytest.mark.parametrize("name", NAMES)
def test_the_expected_reading_is_the_independent_readers(name: str) -> None:
    """The stored expectation is what the independent reader says of the bytes (no hand edits drift)."""
    meta = sidecar(name)
    assert read((DATA / f"{name}.sse").read_bytes(), meta["reading"]) == meta["expected"]


def test_the_independent_reader_reads_what_matters() -> None:
    """Spot checks of the reader on small fixtures, by hand from the recordings."""
    exp = sidecar("openrouter-claude-reasoning")["expected"]
    assert exp["reasoning_text"] == "This is a simple arithmetic question. 2+2 equals 4."
    assert exp["answer_text"] == "2 + 2 = 4" and exp["comment_lines"] == 4
    exp = sidecar("xai-grok3-mini-usage-excludes-reasoning")["expected"]
    assert (exp["answer_tokens"], exp["reasoning_tokens"], exp["generated_tokens"]) == (2, 340, 342)
    exp = sidecar("gemini-native-crlf")["expected"]
    assert exp["line_endings"] == ["CRLF"] and exp["answer_text"] == "The capital of France is Paris.\n"
    exp = sidecar("together-deepseek-r1-think-tags")["expected"]
    assert exp["first_reasoning_chunk_index"] == 1 and "<think>" not in exp["reasoning_text"] + exp["answer_text"]
    exp = sidecar("mistral-magistral-content-parts")["expected"]
    assert exp["reasoning_text"].startswith("Okay") and exp["answer_text"].startswith("To cross the street")
    exp = sidecar("llamacpp-b6459-reasoning-content-timings")["expected"]
    assert (exp["reasoning_chunks"], exp["answer_chunks"], exp["first_answer_chunk_index"]) == (101, 10, 102)
    assert exp["answer_text"] == "Hello! How can I help you today? \U0001f60a" and exp["timings"]["predicted_n"] == 117


# ---------------------------------------------------------------- factreg against the reading


def _check(name: str, aspect: str, trace: stream.RequestTrace, error: str | None, exp: dict[str, Any]) -> None:
    if aspect == "chunks":
        want = exp["error_chunk_index"] + 1 if exp["error"] is not None else exp["json_chunks"]
        assert trace.n_chunks == want
    elif aspect == "answer":
        assert (trace.n_answer, trace.first_answer) == (
            exp["answer_chunks"],
            None if exp["first_answer_chunk_index"] is None else float(exp["first_answer_chunk_index"]),
        )
    elif aspect == "reasoning":
        assert (trace.n_reasoning, trace.first_reasoning, trace.thinking) == (
            exp["reasoning_chunks"],
            None if exp["first_reasoning_chunk_index"] is None else float(exp["first_reasoning_chunk_index"]),
            exp["thinking_observed"],
        )
    elif aspect == "usage":
        assert (trace.usage, trace.timings) == (exp["usage"], exp["timings"])
    elif aspect == "tokens":
        assert trace.tokens() == exp["generated_tokens"]
        answer, reasoning, source = trace.token_counts()
        if exp["answer_tokens"] is not None:  # the usage says how many answer tokens: factreg takes them from it
            assert (answer, source) == (exp["answer_tokens"], "usage")
        if exp["reasoning_tokens"] is not None:
            assert (reasoning, source) == (exp["reasoning_tokens"], "usage")
        if exp["answer_tokens"] is None and exp["reasoning_tokens"] is None:  # the usage cannot split: counted
            assert (answer, reasoning, source) == (exp["answer_chunks"], exp["reasoning_chunks"], "counted")
    elif aspect == "error":
        assert (error is not None) == (exp["error"] is not None), error
        if exp["error"] is not None:
            assert exp["error"][:100] in str(error)


@pytest.mark.parametrize(("name", "aspect"), [c for c in cases() if c.values[1] != "outcome"])
def test_factreg_reads_the_stream_as_the_reading_does(name: str, aspect: str) -> None:
    exp = sidecar(name)["expected"]
    trace, error = factreg_reading((DATA / f"{name}.sse").read_bytes())
    _check(name, aspect, trace, error, exp)


@pytest.mark.parametrize("name", ["openai-gpt4o-include-usage", "openrouter-o3-processing-comments"])
def test_the_reading_does_not_depend_on_how_the_bytes_arrive(name: str) -> None:
    raw = (DATA / f"{name}.sse").read_bytes()
    whole, _ = factreg_reading(raw, piece=len(raw))
    bytewise, _ = factreg_reading(raw, piece=7)
    assert (whole.n_chunks, whole.n_answer, whole.n_reasoning, whole.usage) == (
        bytewise.n_chunks, bytewise.n_answer, bytewise.n_reasoning, bytewise.usage)  # fmt: skip


@pytest.mark.parametrize("name", ["llamacpp-b6459-reasoning-content-timings", "deepseek-reasoner-reasoning-content"])
def test_crlf_framing_and_keep_alive_comments_change_nothing(name: str) -> None:
    """No real OpenAI-compatible recording with CRLF or `: keep-alive` lines was found: the same events re-framed
    with CRLF (and with CR alone) and with a keep-alive comment before every event read the same."""
    raw = (DATA / f"{name}.sse").read_bytes()
    plain, _ = factreg_reading(raw)
    for ending in (b"\r\n", b"\r"):
        framed = raw.replace(b"\n", ending).replace(b"data: ", b": keep-alive" + ending + b"data: ")
        assert read(framed, {})["comment_lines"] == raw.count(b"data: ")
        for piece in (len(framed), 3):
            got, _ = factreg_reading(framed, piece=piece)
            assert (got.n_chunks, got.n_answer, got.n_reasoning, got.first_answer, got.usage, got.timings) == (
                plain.n_chunks, plain.n_answer, plain.n_reasoning, plain.first_answer, plain.usage, plain.timings)  # fmt: skip


# ---------------------------------------------------------------- the whole request, over loopback


class _Replay(BaseHTTPRequestHandler):
    payload = b""

    def do_GET(self) -> None:  # noqa: N802 - the http.server API; no /v1/models, no /props
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(self.payload)))
        self.end_headers()
        self.wfile.write(self.payload)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def replay() -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Replay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def serve(payload: bytes) -> str:
        _Replay.payload = payload
        return f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"

    yield serve
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("name", "aspect"), [c for c in cases() if c.values[1] == "outcome"])
def test_a_probe_request_ends_as_the_stream_did(name: str, aspect: str, replay: Any) -> None:
    """A complete stream is accepted; a stream carrying an error is a failure with the server's message."""
    from factreg.measure.http import make_client

    exp = sidecar(name)["expected"]
    url = replay((DATA / f"{name}.sse").read_bytes())
    with make_client(10, keepalive=False) as client:
        try:
            trace = stream.stream_request(client, url, {}, {"stream": True}, 10)
        except stream.ProbeFailure as exc:
            assert exp["error"] is not None, exc.message
            assert exc.verdict == Verdict.ERROR and exp["error"][:100] in exc.message
            return
    assert exp["error"] is None
    assert trace.n_answer == exp["answer_chunks"] or (name, "answer") in KNOWN_GAPS


@pytest.mark.parametrize("name", [n for n in NAMES if (n, "outcome") not in KNOWN_GAPS])
def test_the_whole_probe_reports_what_the_stream_held(name: str, replay: Any) -> None:
    """The probe (identity check, one measured request) over the recording: a stream with an answer is `ok` with
    ttft and e2e, thinking as the reading saw it; one without an answer token is `no_answer`, never `ok`."""
    from factreg.measure import probe as core

    exp = sidecar(name)["expected"]
    url = replay((DATA / f"{name}.sse").read_bytes())
    result = core.probe(core.ProbeSpec(url=url, body={"messages": []}, n=1, warmup=0, timeout=10), hostname="h")
    if exp["error"] is not None:
        assert result.verdict == Verdict.ERROR and exp["error"][:100] in str(result.message)
    elif exp["first_answer_chunk_index"] is None:
        assert result.verdict == Verdict.NO_ANSWER and result.failed and result.samples == {}
    else:
        assert result.verdict == "ok", result.message
        assert set(result.samples) >= {"ttft", "ttft_any", "e2e"}
        assert result.observed["thinking"] == ("on" if exp["thinking_observed"] else "off")
        assert ("reasoning_time" in result.samples) == (exp["first_reasoning_chunk_index"] is not None)
        answer, reasoning, source = result.requests[-1].token_counts()
        assert result.info["tokens_source"] == source
        assert (result.info["answer_tokens"], result.info["reasoning_tokens"]) == (str(answer), str(reasoning))


def test_decode_rate_counts_the_reasoning_tokens_xai_leaves_out_of_completion_tokens() -> None:
    """xAI: completion_tokens=2 beside 340 reasoning tokens; the rate is over all 342 generated tokens."""
    trace, _ = factreg_reading((DATA / "xai-grok3-mini-usage-excludes-reasoning.sse").read_bytes())
    assert trace.token_counts() == (2, 340, "usage")
    span = trace.last_token - min(trace.first_reasoning, trace.first_answer)  # type: ignore[operator,type-var]
    assert trace.metrics()["decode_rate"] == pytest.approx((342 - 1) / span)


# ---------------------------------------------------------------- a think block the prompt opened


def _sse(deltas: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
    """A stream in llama.cpp's shape: one chunk per delta, a finish chunk, a usage chunk, [DONE]."""
    base = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "model": "qwen3"}
    chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if usage is not None:
        chunks.append({**base, "choices": [], "usage": usage})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


LEADING_CLOSE = {
    # Qwen3 / DeepSeek-R1 templates end the prompt with "<think>\n": the reply opens inside the think block
    "tag-alone": ["Okay", ", the user", " said hi.", "\n", "</think>", "\n\n", "Hello", "!"],
    "tag-split": ["Okay", ", the user said hi.</th", "ink>\n\nHel", "lo!"],
    "tag-with-answer": ["Okay, the user said hi.", "\n</think>\n\nHello", "!"],
    "whitespace-then-tag": ["\n", "</think>", "Hello!"],
    "no-tags-at-all": ["Hello", " there", "!"],
    "opening-tag-later": ["\n", "<think>", "hmm", "</think>", "Hi", "</think>"],
}


@pytest.mark.parametrize("case", sorted(LEADING_CLOSE))
def test_a_leading_run_ending_in_a_closing_tag_is_reasoning(case: str) -> None:
    raw = _sse([{"role": "assistant", "content": None}] + [{"content": c} for c in LEADING_CLOSE[case]])
    reading = {"opening-tag-later": {"think_tags": True}, "no-tags-at-all": {}}.get(case, {"starts_inside_think": True})
    exp = read(raw, reading)
    trace, error = factreg_reading(raw)
    assert error is None
    assert (trace.n_reasoning, trace.first_reasoning, trace.thinking) == (
        exp["reasoning_chunks"],
        None if exp["first_reasoning_chunk_index"] is None else float(exp["first_reasoning_chunk_index"]),
        exp["thinking_observed"],
    )
    assert (trace.n_answer, trace.first_answer) == (exp["answer_chunks"], float(exp["first_answer_chunk_index"]))
    bytewise, _ = factreg_reading(raw, piece=5)
    assert (bytewise.n_reasoning, bytewise.n_answer, bytewise.first_answer) == (
        trace.n_reasoning, trace.n_answer, trace.first_answer)  # fmt: skip


def test_a_leading_close_tag_puts_ttft_after_the_reasoning() -> None:
    """The case the old reading got wrong: thinking was `off` and ttft was the first reasoning chunk."""
    raw = _sse([{"role": "assistant", "content": None}] + [{"content": c} for c in LEADING_CLOSE["tag-alone"]])
    trace, _ = factreg_reading(raw)
    # chunks: 0 role, 1-4 reasoning ("Okay" … "\n"), 5 "</think>", 6 "\n\n", 7 "Hello"
    assert trace.thinking and (trace.n_reasoning, trace.first_reasoning, trace.first_answer) == (4, 1.0, 7.0)
    assert trace.metrics()["reasoning_time"] == 6.0


def test_content_parts_and_refusals_are_read() -> None:
    parts = [
        {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me see."}]}]},
        {"content": [{"type": "text", "text": "Cross at the light."}]},
        {"refusal": "I can't help with that."},
    ]
    raw = _sse(parts, {"prompt_tokens": 3, "completion_tokens": 9, "total_tokens": 12})
    trace, _ = factreg_reading(raw)
    assert (trace.n_reasoning, trace.first_reasoning, trace.n_answer, trace.first_answer) == (1, 0.0, 2, 1.0)
    assert trace.token_counts() == (2, 1, "counted") and trace.tokens() == 9
