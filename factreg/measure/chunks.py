"""A streamed reply read into its trace: the SSE blocks as they arrive (`Reading`), each JSON chunk split into
reasoning and answer (`ChunkReader`: `reasoning_content`/`reasoning`/`reasoning_details`, `<think>` tags in
content (`_ThinkSplitter`), a leading `</think>` whose opening tag was in the prompt, Mistral's content parts,
refusals, tool calls), usage and timings. No I/O: the exchange (`measure/stream.py`) feeds it bytes and times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from factreg.measure.http import encoding_message, unasked_encoding, where
from factreg.measure.sse import SSEParser
from factreg.measure.trace import MeasurementError, ProbeFailure, RequestTrace
from factreg.verdicts import Verdict

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


class _ThinkSplitter:
    """Splits `content` deltas into reasoning (inside `<think>…</think>`) and answer text, tags split anywhere.

    Until the first tag, content is undecided (`provisional`): a leading run that ends in `</think>` without an
    opening tag is reasoning (Qwen3 / DeepSeek-R1 templates open the think block in the prompt); a run that meets
    `<think>` first, or the end of the stream, is answer. `resolved` says how the earlier undecided text turned out.
    """

    def __init__(self) -> None:
        self.state = "start"  # "start" (no tag seen yet), "answer" (outside a think block) or "inside"
        self.pending = ""
        self.provisional = ""  # this delta's undecided text (state "start")
        self.resolved: str | None = None  # "answer" / "reasoning": what this delta decided about earlier text

    @property
    def inside(self) -> bool:
        return self.state == "inside"

    def feed(self, text: str) -> tuple[str, str]:
        """(reasoning, answer) text of this delta; a partial tag at the end waits for the next delta."""
        buf = self.pending + text
        self.pending = ""
        self.provisional = ""
        self.resolved = None
        reasoning: list[str] = []
        answer: list[str] = []
        provisional: list[str] = []
        while buf:
            if self.state == "start":
                tags = [(buf.find(tag), tag) for tag in (THINK_OPEN, THINK_CLOSE)]
                found = [(at, tag) for at, tag in tags if at >= 0]
                if found:
                    at, tag = min(found)
                    if tag == THINK_OPEN:
                        self.resolved, self.state = "answer", "inside"
                        answer.append("".join(provisional) + buf[:at])
                    else:
                        self.resolved, self.state = "reasoning", "answer"
                        reasoning.append("".join(provisional) + buf[:at])
                    provisional = []
                    buf = buf[at + len(tag) :]
                    continue
                keep = _partial_tag(buf, (THINK_OPEN, THINK_CLOSE))
                provisional.append(buf[: len(buf) - keep])
                self.pending = buf[len(buf) - keep :]
                break
            tag = THINK_CLOSE if self.state == "inside" else THINK_OPEN
            at = buf.find(tag)
            if at >= 0:
                (reasoning if self.state == "inside" else answer).append(buf[:at])
                buf = buf[at + len(tag) :]
                self.state = "answer" if self.state == "inside" else "inside"
                continue
            keep = _partial_tag(buf, (tag,))
            (reasoning if self.state == "inside" else answer).append(buf[: len(buf) - keep])
            self.pending = buf[len(buf) - keep :]
            break
        self.provisional = "".join(provisional)
        return "".join(reasoning), "".join(answer)

    def flush(self) -> str:
        """The end of the stream: a partial tag left waiting is plain text after all."""
        text, self.pending = self.pending, ""
        return text


def _partial_tag(buf: str, tags: tuple[str, ...]) -> int:
    """Length of the longest end of `buf` that may begin one of `tags`."""
    longest = min(max(len(t) for t in tags) - 1, len(buf))
    if "<" not in buf[len(buf) - longest :]:  # every tag begins with "<": the common case, one look
        return 0
    for k in range(longest, 0, -1):
        if any(t.startswith(buf[-k:]) for t in tags):
            return k
    return 0


@dataclass
class _Chunk:
    """What one JSON chunk was counted as (reasoning, answer), for decisions made after it arrived."""

    t: float
    reasoning: bool = False
    answer: bool = False
    visible: bool = False  # answer text that is not only whitespace (or a tool call): the user sees it
    provisional_visible: bool = False


def _text_of(value: Any) -> str:
    """Text of a reasoning/thinking value: a string, or a list of `{"text": …}` parts (Mistral)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            v if isinstance(v, str) else str(v["text"]) if isinstance(v, dict) and isinstance(v.get("text"), str) else ""
            for v in value
        )
    return ""


def _content_parts(parts: list[Any]) -> tuple[str, str]:
    """(reasoning, answer) of a list-valued `content` (Mistral Magistral: `thinking` and `text` parts)."""
    reasoning, answer = "", ""
    for part in parts:
        if isinstance(part, str):
            answer += part
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind in ("thinking", "reasoning"):
                reasoning += _text_of(part.get("thinking", part.get("reasoning", part.get("text"))))
            elif kind in (None, "text", "output_text") and isinstance(part.get("text"), str):
                answer += part["text"]
    return reasoning, answer


def _reasoning_fields(delta: dict[str, Any]) -> str:
    """Reasoning text of a delta: `reasoning_content` (DeepSeek, vLLM, llama.cpp), `reasoning` (Groq, Ollama,
    OpenRouter), else the text of `reasoning_details` (OpenRouter, Anthropic behind gateways)."""
    for key in ("reasoning_content", "reasoning"):
        if isinstance(delta.get(key), str) and delta[key]:
            return str(delta[key])
    text = ""
    details = delta.get("reasoning_details")
    for item in details if isinstance(details, list) else []:
        if isinstance(item, dict):
            value = item.get("summary") if item.get("type") == "reasoning.summary" else item.get("text")
            if item.get("type") in ("reasoning.text", "reasoning.summary") and isinstance(value, str):
                text += value
    return text


class ChunkReader:
    """Reads one request's JSON chunks into its trace: reasoning vs answer chunk by chunk, usage, timings.

    `feed(obj, t)` per chunk (t: seconds after sending), `finish()` at the end of the stream: content that was
    still undecided (before any think tag) is answer then.
    """

    def __init__(self, trace: RequestTrace):
        self.trace = trace
        self.think = _ThinkSplitter()
        self._undecided: list[_Chunk] = []
        self._last_content: _Chunk | None = None

    def _count(self, c: _Chunk, kind: str) -> bool:
        """Count chunk `c` as `kind` (reasoning or answer) once: its number and time in the trace, and the last
        token's time. False when it was counted as `kind` already."""
        if getattr(c, kind):
            return False
        setattr(c, kind, True)
        tr = self.trace
        setattr(tr, f"n_{kind}", getattr(tr, f"n_{kind}") + 1)
        getattr(tr, f"{kind}_times").append(c.t)
        tr.last_token = c.t if tr.last_token is None else max(tr.last_token, c.t)
        return True

    def _reasoning(self, c: _Chunk) -> None:
        tr = self.trace
        if self._count(c, "reasoning"):
            tr.first_reasoning = c.t if tr.first_reasoning is None else min(tr.first_reasoning, c.t)

    def _answer(self, c: _Chunk, visible: bool) -> None:
        tr = self.trace
        if self._count(c, "answer"):
            tr.last_answer = c.t if tr.last_answer is None else max(tr.last_answer, c.t)
        if visible and not c.visible:
            c.visible = True
            tr.first_answer = c.t if tr.first_answer is None else min(tr.first_answer, c.t)

    def _resolve(self, kind: str) -> None:
        for c in self._undecided:
            if kind == "reasoning":
                self._reasoning(c)
            else:
                self._answer(c, c.provisional_visible)
        self._undecided = []

    def feed(self, obj: dict[str, Any], t: float) -> None:
        tr = self.trace
        if tr.first_chunk is None:
            tr.first_chunk = t
        tr.n_chunks += 1
        if isinstance(obj.get("error"), (dict, str)):
            err = obj["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            raise ProbeFailure(Verdict.ERROR, f"the server reported an error mid-stream: {str(msg)[:200]}")
        if isinstance(obj.get("model"), str):
            tr.model = obj["model"]
        if tr.response_id is None and isinstance(obj.get("id"), str):
            tr.response_id = obj["id"][:200]
        if isinstance(obj.get("system_fingerprint"), str) and obj["system_fingerprint"]:
            tr.system_fingerprint = obj["system_fingerprint"]
        groq = obj.get("x_groq")
        if isinstance(obj.get("usage"), dict):
            tr.usage = obj["usage"]
        elif isinstance(groq, dict) and isinstance(groq.get("usage"), dict):
            tr.usage = groq["usage"]  # Groq sends usage only inside x_groq
        if isinstance(obj.get("timings"), dict):
            tr.timings = obj["timings"]
        choices = obj.get("choices")
        if not isinstance(choices, list):
            return
        choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0), None)
        if choice is None:
            return
        if choice.get("finish_reason"):
            tr.finish_reason = str(choice["finish_reason"])
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        chunk = _Chunk(t)
        reasoning = _reasoning_fields(delta)
        answer = delta["refusal"] if isinstance(delta.get("refusal"), str) else ""  # a refusal is the reply
        content = delta.get("content")
        if isinstance(content, str):
            r, a = self.think.feed(content)
            if self.think.resolved:
                self._resolve(self.think.resolved)
            reasoning += r
            answer += a
            self._last_content = chunk
            if self.think.provisional:
                chunk.provisional_visible = bool(self.think.provisional.strip())
                self._undecided.append(chunk)
        elif isinstance(content, list):
            r, a = _content_parts(content)
            reasoning += r
            answer += a
        if reasoning:
            self._reasoning(chunk)
        if answer or delta.get("tool_calls"):  # a tool call is the reply: it counts as answer output
            self._answer(chunk, bool(answer.strip()) or bool(delta.get("tool_calls")))

    def finish(self) -> None:
        """The stream ended: undecided content is answer; a partial tag left waiting is text."""
        rest = self.think.flush()
        inside = self.think.inside
        self._resolve("answer")
        if rest and self._last_content is not None:
            if inside:
                self._reasoning(self._last_content)
            else:
                self._answer(self._last_content, bool(rest.strip()))



class Reading:
    """Reads one streamed reply into its trace (both clients, sync and async, feed it): the content type, each
    block of bytes with its arrival time, the end; `finish` checks the reply was complete."""

    def __init__(self, trace: RequestTrace, url: str, max_bytes: int):
        self.trace, self.url, self.max_bytes = trace, url, max_bytes
        self.parser = SSEParser()
        self.reader = ChunkReader(trace)

    def check_headers(self, content_type: str, content_encoding: str | None = None) -> None:
        self.trace.content_type = content_type
        coding = unasked_encoding(content_encoding)
        if coding is not None:
            raise ProbeFailure(Verdict.ERROR, encoding_message(self.url, coding))
        if "json" in content_type and "event-stream" not in content_type:
            raise ProbeFailure(
                Verdict.ERROR,
                f'{where(self.url)} answered with JSON, not an event stream (does it support "stream": true?)',
            )

    def feed(self, chunk: bytes, t: float) -> None:
        trace = self.trace
        trace.bytes += len(chunk)
        if trace.bytes > self.max_bytes:
            raise ProbeFailure(
                Verdict.ERROR, f"the reply exceeded {self.max_bytes // (1024 * 1024)} MB; stopped reading"
            )
        for ev in self.parser.feed(chunk):
            if ev.done:
                trace.done_seen = True
                trace.done = t
            else:
                self.reader.feed(ev.data, t)

    def close(self, t: float) -> None:
        for ev in self.parser.close():
            if ev.done:
                self.trace.done_seen, self.trace.done = True, t
            else:
                self.reader.feed(ev.data, t)
        self.reader.finish()
        self.trace.end = t

    def finish(self) -> RequestTrace:
        trace = self.trace
        trace.garbage = self.parser.garbage
        if not trace.done_seen and not trace.finish_reason and not trace.n_answer:
            # A clean end of the connection without [DONE] (ik_llama.cpp, Gemini) is the end of a reply that said
            # it finished or that carried an answer; with neither, nothing shows the reply was complete.
            raise ProbeFailure(
                Verdict.ERROR,
                f"the stream ended early, without finish_reason, answer or [DONE], after {trace.n_chunks} chunks",
            )
        if trace.n_chunks == 0:
            raise ProbeFailure(Verdict.ERROR, "the stream held no JSON chunks")
        problem = trace.impossible()
        if problem is not None:
            raise MeasurementError(problem)
        return trace
