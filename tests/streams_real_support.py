"""An independent reader of recorded chat-completion streams, for the fixtures in tests/data/streams-real.

Written from the SSE specification (WHATWG HTML, "Server-sent events") and the providers' documented chunk shapes,
without factreg's parser: it is the second opinion the fixtures' `expected` readings come from. It reads whole
recordings (not byte by byte) and attributes every character of text to the data event it arrived in.

What counts (the same words the sidecars use):
- a *chunk* is one `data:` event whose payload is a JSON object; chunk indexes count those from 0 (`[DONE]`,
  comments, other fields and non-JSON data are not chunks);
- *reasoning text*: `delta.reasoning_content`, `delta.reasoning`, else the text of `delta.reasoning_details` items
  (`reasoning.text` / `reasoning.summary`), the `thinking` parts of a list-valued `delta.content` (Mistral), and
  content between `<think>` and `</think>` when the fixture's reading says the model writes think tags;
- *answer text*: the rest of `delta.content` (string, or `text` parts of a list), and `delta.refusal` when the
  reading says so; a chunk with `delta.tool_calls` is an answer chunk even without text;
- an answer (reasoning) chunk is a chunk with non-empty answer (reasoning) text or tool calls; the first answer
  chunk is the first whose answer text is not only whitespace, or that has tool calls;
- only `choices[*]` with index 0 (or no index) are read;
- `usage` is the last usage object sent (top-level `usage`, else Groq's `x_groq.usage`; Gemini's `usageMetadata`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


@dataclass
class SSEEvent:
    event: str
    data: str


@dataclass
class Framing:
    events: list[SSEEvent] = field(default_factory=list)
    comments: int = 0
    other_lines: int = 0  # lines that are not SSE fields (e.g. `...` elisions in pasted excerpts)
    line_endings: list[str] = field(default_factory=list)


def _lines(text: str) -> tuple[list[str], list[str]]:
    """Split on CRLF, LF or CR (the three SSE line endings); also report which endings occur."""
    parts = re.split(r"(\r\n|\n|\r)", text)
    lines = parts[0::2]
    ends = sorted(set(parts[1::2]))
    if lines and lines[-1] == "":
        lines.pop()
    return lines, ends


def frame(raw: bytes) -> Framing:
    """SSE framing: fields per line, events dispatched at blank lines (and, leniently, at the end of the data)."""
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines, ends = _lines(text)
    out = Framing(line_endings=ends)
    data: list[str] = []
    event = ""
    for line in lines:
        if line == "":
            if data:
                out.events.append(SSEEvent(event or "message", "\n".join(data)))
            data, event = [], ""
            continue
        if line.startswith(":"):
            out.comments += 1
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name in ("id", "retry"):
            pass
        else:
            out.other_lines += 1
    if data:
        out.events.append(SSEEvent(event or "message", "\n".join(data)))
    return out


@dataclass
class Piece:
    reasoning: str = ""
    answer: str = ""
    tool: bool = False


def _reasoning_fields(delta: dict[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        if isinstance(delta.get(key), str) and delta[key]:
            return str(delta[key])
    text = ""
    for item in delta.get("reasoning_details") or []:
        if isinstance(item, dict) and item.get("type") in ("reasoning.text", "reasoning.summary"):
            value = item.get("text") if item.get("type") == "reasoning.text" else item.get("summary")
            if isinstance(value, str):
                text += value
    return text


def _content_parts(content: Any) -> tuple[str, str]:
    """(reasoning, answer) of a list-valued content (Mistral Magistral)."""
    reasoning, answer = "", ""
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "thinking":
            for sub in part.get("thinking") or []:
                if isinstance(sub, dict) and isinstance(sub.get("text"), str):
                    reasoning += sub["text"]
        elif part.get("type") == "text" and isinstance(part.get("text"), str):
            answer += part["text"]
    return reasoning, answer


def _split_think(contents: list[str], starts_inside: bool) -> list[tuple[str, str]]:
    """Per content piece: (reasoning, answer), with <think>…</think> found in the concatenated text."""
    owner: list[int] = []
    for i, c in enumerate(contents):
        owner.extend([i] * len(c))
    full = "".join(contents)
    kind = [""] * len(full)  # "r" reasoning, "a" answer, "" tag
    inside, pos = starts_inside, 0
    while pos < len(full):
        tag = THINK_CLOSE if inside else THINK_OPEN
        at = full.find(tag, pos)
        end = len(full) if at < 0 else at
        for j in range(pos, end):
            kind[j] = "r" if inside else "a"
        if at < 0:
            break
        pos = at + len(tag)
        inside = not inside
    reasoning: list[list[str]] = [[] for _ in contents]
    answer: list[list[str]] = [[] for _ in contents]
    for j, ch in enumerate(full):
        if kind[j] == "r":
            reasoning[owner[j]].append(ch)
        elif kind[j] == "a":
            answer[owner[j]].append(ch)
    out = [("".join(r), "".join(a)) for r, a in zip(reasoning, answer, strict=True)]
    return out


def _choice0(obj: dict[str, Any]) -> dict[str, Any] | None:
    for ch in obj.get("choices") or []:
        if isinstance(ch, dict) and ch.get("index", 0) == 0:
            return ch
    return None


def _gemini_piece(obj: dict[str, Any]) -> Piece:
    p = Piece()
    for cand in obj.get("candidates") or []:
        if cand.get("index", 0) != 0:
            continue
        for part in (cand.get("content") or {}).get("parts") or []:
            if isinstance(part.get("text"), str):
                if part.get("thought"):
                    p.reasoning += part["text"]
                else:
                    p.answer += part["text"]
            if "functionCall" in part:
                p.tool = True
    return p


def read(raw: bytes, reading: dict[str, Any]) -> dict[str, Any]:
    """The expected reading of one recorded stream (see the module docstring for what counts)."""
    fr = frame(raw)
    chunks: list[dict[str, Any]] = []
    done = False
    non_json = 0
    for ev in fr.events:
        if ev.data.strip() == "[DONE]":
            done = True
            continue
        try:
            obj = json.loads(ev.data)
        except ValueError:
            non_json += 1
            continue
        if isinstance(obj, dict):
            chunks.append(obj)
        else:
            non_json += 1

    gemini = reading.get("schema") == "gemini"
    pieces: list[Piece] = []
    contents: list[str] = []
    usage: Any = None
    timings: Any = None
    error: str | None = None
    error_index: int | None = None
    finish: str | None = None
    for k, obj in enumerate(chunks):
        err = obj.get("error")
        if isinstance(err, (dict, str)) and error is None:
            error = str(err.get("message") if isinstance(err, dict) else err)
            error_index = k
        if gemini:
            pieces.append(_gemini_piece(obj))
            contents.append("")
            if isinstance(obj.get("usageMetadata"), dict):
                usage = obj["usageMetadata"]
            for cand in obj.get("candidates") or []:
                if cand.get("finishReason"):
                    finish = str(cand["finishReason"])
            continue
        if isinstance(obj.get("usage"), dict):
            usage = obj["usage"]
        elif isinstance((obj.get("x_groq") or {}).get("usage"), dict):
            usage = obj["x_groq"]["usage"]
        if isinstance(obj.get("timings"), dict):
            timings = obj["timings"]
        p = Piece()
        text = ""
        ch = _choice0(obj)
        if ch is not None:
            if ch.get("finish_reason"):
                finish = str(ch["finish_reason"])
            delta = ch.get("delta") if isinstance(ch.get("delta"), dict) else {}
            p.reasoning += _reasoning_fields(delta)
            content = delta.get("content")
            if isinstance(content, str):
                text = content
            elif isinstance(content, list):
                r, a = _content_parts(content)
                p.reasoning += r
                p.answer += a
            if reading.get("refusal_is_answer") and isinstance(delta.get("refusal"), str):
                p.answer += delta["refusal"]
            if delta.get("tool_calls"):
                p.tool = True
        pieces.append(p)
        contents.append(text)

    if reading.get("think_tags") or reading.get("starts_inside_think"):
        split = _split_think(contents, bool(reading.get("starts_inside_think")))
    else:
        split = [("", c) for c in contents]
    for p, (r, a) in zip(pieces, split, strict=True):
        p.reasoning += r
        p.answer += a

    answer_idx = [k for k, p in enumerate(pieces) if p.answer or p.tool]
    reasoning_idx = [k for k, p in enumerate(pieces) if p.reasoning]
    first_answer = next((k for k, p in enumerate(pieces) if p.answer.strip() or p.tool), None)
    tokens = usage_tokens(usage, reading, bool(reasoning_idx)) if not gemini else _gemini_tokens(usage)
    return {
        "answer_text": "".join(p.answer for p in pieces),
        "reasoning_text": "".join(p.reasoning for p in pieces),
        "answer_chunks": len(answer_idx),
        "reasoning_chunks": len(reasoning_idx),
        "tool_call_chunks": sum(1 for p in pieces if p.tool),
        "first_answer_chunk_index": first_answer,
        "first_reasoning_chunk_index": reasoning_idx[0] if reasoning_idx else None,
        "thinking_observed": bool(reasoning_idx),
        "json_chunks": len(chunks),
        "non_json_data_events": non_json,
        "comment_lines": fr.comments,
        "non_sse_lines": fr.other_lines,
        "line_endings": ["CRLF" if e == "\r\n" else "LF" if e == "\n" else "CR" for e in fr.line_endings],
        "done": done,
        "error": error,
        "error_chunk_index": error_index,
        "finish_reason": finish,
        "usage": usage,
        "timings": timings,
        **tokens,
    }


def usage_tokens(usage: Any, reading: dict[str, Any], thinking: bool) -> dict[str, int | None]:
    """answer/reasoning/generated token counts the usage object supports (None where it does not say)."""
    out: dict[str, int | None] = {"answer_tokens": None, "reasoning_tokens": None, "generated_tokens": None}
    if not isinstance(usage, dict) or not isinstance(usage.get("completion_tokens"), int):
        return out
    completion = int(usage["completion_tokens"])
    details = usage.get("completion_tokens_details") if isinstance(usage.get("completion_tokens_details"), dict) else {}
    stated = details.get("reasoning_tokens", usage.get("reasoning_tokens"))
    reasoning = int(stated) if isinstance(stated, int) else None
    if reasoning is not None and not reading.get("reasoning_tokens_reliable", True):
        reasoning = None
    if reading.get("usage_semantics") == "xai":
        out["answer_tokens"] = completion
        out["reasoning_tokens"] = reasoning
        out["generated_tokens"] = completion + (reasoning or 0)
        return out
    out["generated_tokens"] = completion
    out["reasoning_tokens"] = reasoning
    if reasoning is not None and reasoning <= completion:
        out["answer_tokens"] = completion - reasoning
    elif not thinking:
        out["answer_tokens"] = completion
    return out


def _gemini_tokens(usage: Any) -> dict[str, int | None]:
    out: dict[str, int | None] = {"answer_tokens": None, "reasoning_tokens": None, "generated_tokens": None}
    if isinstance(usage, dict) and isinstance(usage.get("candidatesTokenCount"), int):
        thoughts = usage.get("thoughtsTokenCount", 0)
        out["answer_tokens"] = int(usage["candidatesTokenCount"])
        out["reasoning_tokens"] = int(thoughts)
        out["generated_tokens"] = int(usage["candidatesTokenCount"]) + int(thoughts)
    return out
