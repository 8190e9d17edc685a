"""An incremental parser for server-sent events as OpenAI-compatible servers stream them (`data:` lines).

Bytes go in as they arrive; parsed events come out. Garbage lines (not SSE, or `data:` that is not JSON) are
counted and skipped, the parser keeps going. Bytes that are not UTF-8, or a line longer than the limit, raise
`SSEError` with one clear line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_LINE = 4 * 1024 * 1024
_FIELDS = (b"event", b"id", b"retry")


class SSEError(Exception):
    """The stream cannot be read as SSE (not UTF-8, a line too long)."""


@dataclass
class Event:
    """One parsed `data:` line: a JSON object, or the `[DONE]` sentinel (`done=True`, `data=None`)."""

    data: Any = None
    done: bool = False


class SSEParser:
    """Feed bytes with `feed()`, call `close()` at the end of the stream; both return the events completed."""

    def __init__(self, max_line: int = MAX_LINE):
        self.max_line = max_line
        self._buf = bytearray()
        self._pending_cr = False
        self.bytes = 0
        self.lines = 0
        self.garbage = 0
        self.garbage_examples: list[str] = []
        self.done = False
        self.after_done = 0

    def feed(self, chunk: bytes) -> list[Event]:
        """Parse the complete lines in `chunk` (plus what was buffered); keep a partial last line."""
        self.bytes += len(chunk)
        data = bytes(chunk)
        if self._pending_cr and data.startswith(b"\n"):
            data = data[1:]
        self._pending_cr = False
        self._buf += data
        events: list[Event] = []
        start = 0
        buf = self._buf
        next_lf = buf.find(b"\n", start)
        next_cr = buf.find(b"\r", start)
        while True:
            if next_lf >= 0 and next_lf < start:
                next_lf = buf.find(b"\n", start)
            if next_cr >= 0 and next_cr < start:
                next_cr = buf.find(b"\r", start)
            candidates = [i for i in (next_lf, next_cr) if i >= 0]
            if not candidates:
                break
            nl = min(candidates)
            line = bytes(buf[start:nl])
            if buf[nl] == 13:
                if nl + 1 < len(buf):
                    if buf[nl + 1] == 10:
                        nl += 1
                else:
                    self._pending_cr = True
            start = nl + 1
            ev = self._line(line)
            if ev is not None:
                events.append(ev)
        del buf[:start]
        if len(buf) > self.max_line:
            raise SSEError(f"an SSE line is longer than {self.max_line // (1024 * 1024)} MB; not an event stream")
        return events

    def close(self) -> list[Event]:
        """The end of the stream: a last line without a line break still counts."""
        if not self._buf:
            return []
        line = bytes(self._buf)
        self._buf.clear()
        ev = self._line(line)
        return [ev] if ev is not None else []

    def _garbage(self, line: bytes) -> None:
        self.garbage += 1
        if len(self.garbage_examples) < 3:
            self.garbage_examples.append(line[:60].decode("utf-8", "replace"))

    def _line(self, line: bytes) -> Event | None:
        self.lines += 1
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SSEError(
                f"the stream is not UTF-8 (byte 0x{line[exc.start]:02x} at byte {self.bytes - len(self._buf)}"
                f" of line {self.lines})"
            ) from None
        if not text.strip() or text.startswith(":"):
            return None  # event boundary or comment (keep-alive)
        if not text.startswith("data:"):
            name = line.split(b":", 1)[0].strip()
            if ":" in text and name in _FIELDS:
                return None
            self._garbage(line)
            return None
        payload = text[5:].strip()
        if self.done:
            self.after_done += 1
        if payload == "[DONE]":
            self.done = True
            return Event(done=True)
        try:
            obj = json.loads(payload)
        except ValueError:
            self._garbage(line)
            return None
        if not isinstance(obj, dict):
            self._garbage(line)
            return None
        return Event(data=obj)
