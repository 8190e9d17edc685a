"""JSONL text read strictly: every non-blank line one JSON object holding only what a registry can store (numbers
a float or a 64-bit integer holds, text that is UTF-8, bounded nesting), and which objects are factreg's lines."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from factreg.errors import BadInput
from factreg.textfile import read_text

MAX_LINE = 50 * 1024 * 1024


def read_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Parse a JSONL file strictly: every non-blank line must be a JSON object."""
    return parse_text(read_text(path), str(path))


def parse_text(text: str, name: str = "<input>") -> list[tuple[int, dict[str, Any]]]:
    out = []
    # Lines end at \n only: str.splitlines() would also split inside a value holding U+0085, U+2028 or U+2029,
    # which the export writes unescaped.
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            raise BadInput(f"{name}:{lineno}: line longer than {MAX_LINE} bytes")
        try:
            obj = json.loads(line, parse_constant=_no_constant, parse_float=_finite_float, parse_int=_bounded_int)
        except (json.JSONDecodeError, ValueError) as exc:
            raise BadInput(f"{name}:{lineno}: not valid JSON ({exc})") from None
        except RecursionError:
            raise BadInput(f"{name}:{lineno}: nested more than {MAX_DEPTH} levels deep") from None
        if not isinstance(obj, dict):
            raise BadInput(f"{name}:{lineno}: expected a JSON object, got {type(obj).__name__}")
        problem = None
        if _may_hold_surrogate(line):
            problem = _unstorable(obj)
        elif line.count("[") + line.count("{") > MAX_DEPTH and _too_deep(obj):
            problem = f"nested more than {MAX_DEPTH} levels deep"
        if problem:
            raise BadInput(f"{name}:{lineno}: {problem}")
        out.append((lineno, obj))
    return out


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _may_hold_surrogate(line: str) -> bool:
    """Whether a line's parsed value may hold a lone surrogate (and needs `_unstorable`'s walk of every string): only
    from a `\\uD800`-`\\uDFFF` escape or a surrogate in the text itself (a fact line of an export has neither)."""
    if "\\u" in line and _SURROGATE_ESCAPE.search(line):
        return True
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _too_deep(obj: Any) -> bool:
    """Whether a parsed value nests more than MAX_DEPTH levels: a walk of its containers only (a fact line holds
    thousands of brackets, inside its verifications' JSON text too, but nests a few levels)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node)
                     if isinstance(v, (dict, list)))
    return False


# What an import line may hold: numbers a float or a 64-bit integer holds, text that is UTF-8, bounded nesting.
MAX_INT = 2**63 - 1
MAX_DEPTH = 32


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number factreg accepts")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(int(text)) > MAX_INT:
        raise ValueError(f"integer {text[:40]}{'…' if len(text) > 40 else ''} is out of range")
    return int(text)


def _unstorable(obj: Any) -> str | None:
    """Why a parsed line cannot be stored: too deeply nested, or a string with a lone surrogate (not UTF-8)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep"
        if isinstance(node, dict):
            stack.extend((k, depth) for k in node)
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
        elif isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return f"text {node.encode('utf-8', 'replace')[:40]!r} holds a lone surrogate (not UTF-8)"
    return None


LINE_KINDS = ("fact", "decision", "correction", "record")


def is_line(obj: Any) -> bool:
    """Whether a JSON object is a line of factreg's JSONL: a `kind` factreg writes, or a record's `id` and `metric`."""
    return isinstance(obj, dict) and (obj.get("kind") in LINE_KINDS or (
        "kind" not in obj and isinstance(obj.get("id"), str) and isinstance(obj.get("metric"), str)))
