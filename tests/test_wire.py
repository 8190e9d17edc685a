"""The lean HTTP/1.1 client of streamed probes (`factreg/measure/wire.py`): its reply parser fed byte by byte, and
whole requests against raw servers on 127.0.0.1 that frame their replies in ways llama-server does not."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys

import pytest

from factreg.measure import load as loading
from factreg.measure import wire
from factreg.measure.stream import ProbeFailure
from tests.raw_server import RawServer

EVENTS = [{"choices": [{"index": 0, "delta": {"content": f"t{i} "}}]} for i in range(4)]
SSE = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in EVENTS) + b"data: [DONE]\n\n"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def chunked(body: bytes, sizes: list[int]) -> bytes:
    out, at = b"", 0
    for size in sizes:
        part = body[at : at + size]
        at += len(part)
        if part:
            out += b"%x;ext=1\r\n" % len(part) + part + b"\r\n"
    rest = body[at:]
    if rest:
        out += b"%x\r\n" % len(rest) + rest + b"\r\n"
    return out + b"0\r\nX-Trailer: 1\r\n\r\n"


def feed_all(raw: bytes, step: int | None = None, split_at: int | None = None) -> tuple[wire.ReplyParser, bytes]:
    parser = wire.ReplyParser()
    pieces: list[bytes]
    if split_at is not None:
        pieces = [raw[:split_at], raw[split_at:]]
    else:
        size = step or len(raw)
        pieces = [raw[i : i + size] for i in range(0, len(raw), size)]
    body = b"".join(b"".join(parser.feed(p)) for p in pieces if p)
    return parser, body


HEAD_CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def test_a_chunked_reply_decodes_the_same_whatever_the_reads() -> None:
    raw = HEAD_CHUNKED + chunked(SSE, [7, 1, 60, 3])
    for split_at in range(1, len(raw)):  # every place one read can end
        parser, body = feed_all(raw, split_at=split_at)
        assert body == SSE, split_at
        assert parser.done and parser.reusable
    parser, body = feed_all(raw, step=1)
    assert body == SSE and parser.done and parser.head is not None and parser.head.status == 200
    assert parser.head.headers["content-type"] == "text/event-stream"


def test_thousands_of_tiny_chunks_in_one_read_are_all_decoded() -> None:
    body = bytes(range(256)) * 20
    raw = HEAD_CHUNKED + chunked(body, [1] * len(body))
    parser, got = feed_all(raw, step=64 * 1024)
    assert got == body and parser.done and parser.reusable


def test_content_length_and_close_delimited_bodies() -> None:
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(SSE) + SSE
    parser, body = feed_all(raw, step=5)
    assert body == SSE and parser.done and parser.reusable
    parser, body = feed_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + SSE, step=9)
    assert body == SSE and not parser.done  # the end of the body is the end of the connection
    parser.eof()
    assert parser.done and not parser.reusable


@pytest.mark.parametrize(
    ("head", "reusable"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", True),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\n", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n", False),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\n", True),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n", True),
    ],
)
def test_only_a_cleanly_framed_keep_alive_reply_leaves_its_connection_reusable(head: bytes, reusable: bool) -> None:
    parser, body = feed_all(head + b"abc")
    assert body == b"abc" and parser.done and parser.reusable is reusable


def test_bytes_after_the_end_or_both_framings_make_the_connection_unusable() -> None:
    parser, body = feed_all(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcEXTRA")
    assert body == b"abc" and parser.done and not parser.reusable
    both = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(b"abcdef", [2])
    parser, body = feed_all(both)
    assert body == b"abcdef" and parser.done and not parser.reusable  # Transfer-Encoding wins (RFC 9112 §6.3)


def test_interim_replies_are_skipped_and_no_body_statuses_have_none() -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + HEAD_CHUNKED + chunked(SSE, [])
    parser, body = feed_all(raw, step=4)
    assert parser.head is not None and parser.head.status == 200 and body == SSE
    parser, body = feed_all(b"HTTP/1.1 204 No Content\r\n\r\n")
    assert parser.done and body == b"" and parser.reusable


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", "switched protocols"),
        (b"HTTP/2 200 OK\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n", "malformed header line"),
        (b"HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n", "folded header"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabc", "invalid Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "invalid Content-Length"),
        # issue 30: numbers are ASCII digits only (`str.isdigit` takes these, int() then fails), and bounded
        (b"HTTP/1.1 200 OK\r\nContent-Length: \xb2\r\n\r\nab", "invalid Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: \xb9\xb3\r\n\r\nab", "invalid Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n", "invalid Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc", "invalid Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0x3\r\n\r\nabc", "invalid Content-Length"),
        (HEAD_CHUNKED + b"1" + b"0" * 16 + b"\r\nabc\r\n", "not a chunk size"),
        (HEAD_CHUNKED + b"zz\r\nabc\r\n", "not a chunk size"),
        (HEAD_CHUNKED + b"3\r\nabcX\r\n", "not followed by CRLF"),
        (HEAD_CHUNKED + b"1" * 2000, "chunk-size line over 1 KiB"),
        (HEAD_CHUNKED + b"\xb2\r\nab\r\n", "not a chunk size"),
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (70 * 1024), "head exceeds 64 KiB"),
    ],
)
def test_broken_framing_is_a_protocol_error(raw: bytes, message: str) -> None:
    with pytest.raises(wire.ProtocolError, match=message):
        feed_all(raw, step=1000)


def test_leading_zeros_of_a_chunk_size_are_allowed() -> None:
    parser, body = feed_all(HEAD_CHUNKED + b"0" * 100 + b"3\r\nabc\r\n0\r\n\r\n")
    assert body == b"abc" and parser.done


def test_an_end_before_any_byte_is_told_apart_from_an_end_mid_reply() -> None:
    parser = wire.ReplyParser()
    with pytest.raises(wire.ClosedBeforeReply):
        parser.eof()
    for partial in (b"HTTP/1.1 200", HEAD_CHUNKED + b"5\r\nab"):
        parser = wire.ReplyParser()
        parser.feed(partial)
        with pytest.raises(wire.ProtocolError) as caught:
            parser.eof()
        assert not isinstance(caught.value, wire.ClosedBeforeReply)


def test_the_request_head_carries_host_length_and_refuses_a_line_break_in_a_header() -> None:
    head = wire.request_head("http://127.0.0.1:8080/v1/chat/completions?x=1", {"Authorization": "Bearer k"}, 12, "ua/1")
    text = head.decode()
    assert text.startswith("POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")
    assert "Authorization: Bearer k\r\n" in text and text.endswith("Content-Length: 12\r\n\r\n")
    assert "User-Agent: ua/1\r\n" in text
    assert "user-agent: mine" in wire.request_head("http://h/", {"user-agent": "mine"}, 0, "ua/1").decode()
    with pytest.raises(ValueError, match="line break"):
        wire.request_head("http://h/", {"X-Evil": "a\r\nInjected: 1"}, 0, "ua/1")


def test_only_plain_http_without_credentials_is_carried() -> None:
    assert wire.handles("http://127.0.0.1:8080/v1/chat/completions")
    assert not wire.handles("https://127.0.0.1/v1/chat/completions")
    assert not wire.handles("http://user:pw@127.0.0.1/v1")


# ---------------------------------------------------------------- whole requests against raw servers


def run_load(url: str, n: int, concurrency: int = 1) -> loading.LoadRun:
    return asyncio.run(
        loading.run(loading.Load(concurrency=concurrency), url, {"X-Key": "v"}, lambda: dict(BODY), n=n, warmup=0, timeout=10)
    )


def test_a_chunked_stream_split_mid_event_is_read_whole_and_the_connection_reused() -> None:
    raw = chunked(SSE, [5, 40, 2, 90])
    pieces = [HEAD_CHUNKED[:20], HEAD_CHUNKED[20:] + raw[:3], raw[3:50], raw[50:51], raw[51:]]
    server = RawServer(lambda _n, _c: pieces, close_after=False)
    try:
        out = run_load(server.url, n=5)
    finally:
        server.close()
    assert not out.failures, [f.message for f in out.failures]
    assert len(out.traces) == 5 and all(t.n_answer == 4 and t.done_seen for t in out.traces)
    assert sum(t.connected is not None for t in out.traces) == 1  # one connection carried all five
    sent = server.requests[0].decode()
    assert sent.startswith("POST /v1/chat/completions HTTP/1.1\r\n") and "X-Key: v\r\n" in sent
    assert "Accept: text/event-stream\r\n" in sent and json.loads(sent.split("\r\n\r\n", 1)[1]) == BODY


def test_a_reply_cut_mid_chunk_fails_the_request_as_closed_mid_stream() -> None:
    raw = chunked(SSE, [60])
    server = RawServer(lambda _n, _c: [HEAD_CHUNKED, raw[:70]])  # then the connection closes
    try:
        out = run_load(server.url, n=1)
    finally:
        server.close()
    assert len(out.failures) == 1 and not out.traces
    assert out.failures[0].verdict == "error"
    assert "closed mid-stream" in out.failures[0].message, out.failures[0].message


def test_an_error_status_reads_the_error_body_through_its_framing() -> None:
    error = json.dumps({"error": {"message": "model is loading"}}).encode()
    head = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    server = RawServer(lambda _n, _c: [head, chunked(error, [4, 9])])
    try:
        out = run_load(server.url, n=1)
    finally:
        server.close()
    assert len(out.failures) == 1
    assert out.failures[0].message.endswith(f"HTTP 503 from 127.0.0.1:{server.port}/v1/chat/completions: model is loading")


def test_a_refused_connection_is_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connecting is refused
        out = run_load(f"http://127.0.0.1:{port}/v1/chat/completions", n=1)
    assert len(out.failures) == 1 and out.failures[0].verdict == "unreachable"
    assert out.failures[0].message.startswith(f"cannot connect to 127.0.0.1:{port}")


def test_the_sequential_probe_opens_a_connection_per_request_through_the_lean_client() -> None:
    server = RawServer(lambda _n, _c: [b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(SSE), SSE], close_after=False)
    try:
        with loading.OneAtATime(10) as seq:
            traces = [seq.request(server.url, {}, BODY, 10, "measured", 1 << 20) for _ in range(3)]
    finally:
        server.close()
    assert all(t.connected is not None and t.n_answer == 4 for t in traces)  # a new connection each time
    assert len(server.requests) == 3


def test_a_stalled_reply_ends_at_the_deadline() -> None:
    # The head and part of a chunk, then nothing: the connection stays open (the server waits for a next request).
    server = RawServer(lambda _n, _c: [HEAD_CHUNKED, chunked(SSE, [])[:40]], close_after=False)
    try:
        with loading.OneAtATime(0.5) as seq, pytest.raises(ProbeFailure, match="the stream stalled"):
            seq.request(server.url, {}, BODY, 0.5, "measured", 1 << 20)
    finally:
        server.close()


def test_httpx_is_imported_without_its_command_line_client_and_clients_share_one_tls_context() -> None:
    code = (
        "import sys\n"
        "from factreg.measure import http\n"
        "import httpx\n"
        "assert sys.modules.get('httpx._main') is None, 'httpx._main was imported'\n"
        "assert 'pygments' not in sys.modules\n"
        "a, b = http.make_client(5), http.make_client(5)\n"
        "ctx = {id(t._pool._ssl_context) for c in (a, b) for t in [c._transport, *c._mounts.values()] if t is not None}\n"
        "assert ctx == {id(http.tls_context())}, ctx\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_a_request_after_one_ended_at_its_deadline_gets_a_clean_connection() -> None:
    # The first reply stalls mid-chunk until its deadline; the next request opens a socket that the kernel gives the
    # number the stalled one just freed. It must neither inherit the old registration in the event loop's selector
    # nor lose its own reader to the old request's late clean-up.
    full = [b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(SSE), SSE]
    server = RawServer(lambda n, _c: [HEAD_CHUNKED, chunked(SSE, [])[:40]] if n == 1 else full, close_after=False)
    try:
        out = asyncio.run(
            loading.run(loading.Load(concurrency=1), server.url, {}, lambda: dict(BODY), n=3, warmup=0, timeout=0.5)
        )
    finally:
        server.close()
    assert [f.message for f in out.failures] == ["the stream stalled: not finished within --timeout 0.5 s (0 chunks received)"]
    assert len(out.traces) == 2 and all(t.n_answer == 4 for t in out.traces)
