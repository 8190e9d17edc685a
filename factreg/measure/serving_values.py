"""A result file of a serving benchmark (`measure/serving_import.py`) read as JSON within bounds, and each value
in it checked as it is taken: a number finite, not negative and not absurdly large, a count whole, a name a short
printable string, a date factreg's ISO time. Anything else is `BadInput` with one line naming the file and the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factreg import clock, textfile
from factreg.errors import BadInput, UsageError

MAX_INPUT_BYTES = 64 * 2**20  # llama-benchy with time series is megabytes; nothing real is this large
MAX_NESTING = 64  # JSON deeper than this is no tool's output (and would exhaust the parser's stack)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def load_json(path: Path) -> Any:
    """The file's JSON; BadInput with one line for anything else (empty, not UTF-8, NaN, too deep, too large)."""
    data = textfile.read_bytes(path, max_bytes=MAX_INPUT_BYTES)
    if not data.strip():
        raise BadInput(f"{path}: the file is empty")
    text = textfile.decode(data, str(path))
    depth = max_depth(text)
    if depth > MAX_NESTING:
        raise BadInput(f"{path}: JSON nested {depth} levels deep: no benchmark writes that")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise BadInput(f"{path}: not valid JSON ({str(exc).splitlines()[0][:200]})") from None


def max_depth(text: str) -> int:
    """How deeply brackets nest in JSON text, strings skipped (checked before parsing, which recurses)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


# A number in a result file is at most this large (a count, a time in ms, a rate): 10^15 ms is 30,000 years.
MAX_NUMBER = 1e15


def number(value: Any, what: str, where: str, *, positive: bool = False) -> float:
    """`value` as a finite number ≥ 0 (> 0 when `positive`) up to MAX_NUMBER."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadInput(f"{where}: {what} must be a number, got {str(value)[:60]!r}")
    if isinstance(value, int) and not -MAX_NUMBER <= value <= MAX_NUMBER:  # float() of 10^400 overflows
        raise BadInput(f"{where}: {what} must be a number up to {MAX_NUMBER:g}, got a {len(str(abs(value)))}-digit "
                       "number")
    x = float(value)
    if not math.isfinite(x) or x < 0 or (positive and x == 0):
        raise BadInput(f"{where}: {what} must be a finite number {'> 0' if positive else '≥ 0'}, got {value!r}")
    if x > MAX_NUMBER:
        raise BadInput(f"{where}: {what} must be a number up to {MAX_NUMBER:g}, got {value!r}")
    return x


def count(value: Any, what: str, where: str) -> int:
    """`value` as a whole number ≥ 0."""
    x = number(value, what, where)
    if not x.is_integer() or x > 1e12:
        raise BadInput(f"{where}: {what} must be a whole number, got {value!r}")
    return int(x)


def name(value: Any, what: str, where: str, max_len: int = 500) -> str:
    """`value` as a non-empty printable string of at most `max_len` characters (a model, a backend)."""
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{where}: {what} must be a non-empty string, got {str(value)[:60]!r}")
    if len(value) > max_len or any(ord(c) < 32 for c in value):
        raise BadInput(f"{where}: {what} is not a name a benchmark writes ({value[:60]!r}…)")
    return value.strip()


def obj(value: Any, what: str, where: str) -> dict[str, Any]:
    """`value` as a JSON object."""
    if not isinstance(value, dict):
        raise BadInput(f"{where}: {what} must be a JSON object, got {type(value).__name__}")
    return value


def opt(data: Mapping[str, Any], key: str) -> str | None:
    """An optional scalar as condition text (None when absent or null)."""
    from factreg.registry.conditions import as_text

    value = data.get(key)
    if value is None or isinstance(value, (dict, list)):
        return None
    text = as_text(value)
    return text[:200] if text else None


def opt_count(data: Mapping[str, Any], key: str, where: str) -> str | None:
    """An optional whole number ≥ 0 as condition text (a count of prompts, tokens, failures)."""
    return None if data.get(key) is None else str(count(data[key], key, where))


def opt_number(data: Mapping[str, Any], key: str, where: str) -> str | None:
    """An optional number ≥ 0 as condition text (a duration, a rate); `inf` for a rate without limit."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
        return "inf"
    number(value, key, where)
    return opt(data, key)


_VLLM_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})")


def iso(text: Any, what: str, where: str) -> str:
    """A tool's date as factreg's ISO time; a time without zone is UTC (as `clock.parse` takes every one)."""
    if not isinstance(text, str):
        raise BadInput(f"{where}: {what} must be a date string, got {str(text)[:60]!r}")
    value = text.strip()
    m = _VLLM_DATE.fullmatch(value)
    if m:
        value = f"{m[1]}-{m[2]}-{m[3]}T{m[4]}:{m[5]}:{m[6]}"
    try:
        return clock.iso(clock.parse(value, f"{what} in {where}"))
    except UsageError as exc:
        raise BadInput(exc.message) from None
