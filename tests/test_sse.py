"""The incremental SSE parser: split anywhere, tolerant of garbage, strict about UTF-8."""

from __future__ import annotations

import json

import pytest

from factreg.measure.sse import Event, SSEError, SSEParser

STREAM = (
    b'data: {"choices":[{"delta":{"role":"assistant","content":null}}]}\n\n'
    b": keep-alive\n\n"
    b"event: message\nid: 7\nretry: 100\n"
    b'data: {"choices":[{"delta":{"content":"caf\xc3\xa9"}}]}\r\n\r\n'
    b"data: [DONE]\n\n"
)


def parse_all(data: bytes, size: int) -> tuple[list[Event], SSEParser]:
    parser = SSEParser()
    events: list[Event] = []
    for i in range(0, len(data), size):
        events += parser.feed(data[i : i + size])
    events += parser.close()
    return events, parser


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 10_000])
def test_events_are_the_same_however_the_bytes_are_split(size: int) -> None:
    events, parser = parse_all(STREAM, size)
    assert [e.done for e in events] == [False, False, True]
    assert events[1].data["choices"][0]["delta"]["content"] == "café"
    assert parser.garbage == 0  # comments, event:, id:, retry: are SSE, not garbage
    assert parser.done


def test_cr_only_and_crlf_split_across_feeds() -> None:
    parser = SSEParser()
    events = parser.feed(b'data: {"a":1}\r') + parser.feed(b'\ndata: {"b":2}\rdata: [DONE]\r')
    assert [e.data for e in events] == [{"a": 1}, {"b": 2}, None]
    assert parser.lines == 3


def test_garbage_lines_are_counted_and_skipped() -> None:
    data = b'hello world\ndata: {broken\ndata: [1,2]\n<html>\ndata: {"ok":true}\n\ndata: [DONE]\n'
    events, parser = parse_all(data, 5)
    assert [e.data for e in events if not e.done] == [{"ok": True}]
    assert parser.garbage == 4
    assert parser.garbage_examples[0] == "hello world"


def test_last_line_without_newline_counts_at_close() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: [DO") == []
    assert parser.feed(b"NE]") == []
    assert [e.done for e in parser.close()] == [True]


def test_no_done_is_reported() -> None:
    _, parser = parse_all(b'data: {"x":1}\n\n', 4)
    assert not parser.done


def test_non_utf8_is_a_clear_error() -> None:
    parser = SSEParser()
    parser.feed(b'data: {"a":1}\n\n')
    with pytest.raises(SSEError, match=r"not UTF-8 \(byte 0xff"):
        parser.feed(b'data: {"content":"\xff\xfe"}\n')


def test_a_huge_line_is_refused_without_buffering_it_all() -> None:
    parser = SSEParser(max_line=1024 * 1024)
    with pytest.raises(SSEError, match="longer than 1 MB"):
        for _ in range(100):
            parser.feed(b"x" * 65536)
    assert parser.bytes <= 2 * 1024 * 1024


def test_many_events_parse_in_linear_time() -> None:
    line = b"data: " + json.dumps({"choices": [{"delta": {"content": "t"}}]}).encode() + b"\n\n"
    events, parser = parse_all(line * 20_000, 65536)
    assert len(events) == 20_000 and parser.garbage == 0
