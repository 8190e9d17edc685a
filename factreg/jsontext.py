"""JSON written for people and for `jq`: what `--json` prints.

Containers that hold containers are indented by two spaces, one member a line; a *flat* container (one whose
members are numbers, strings, booleans, nulls, or lists of those) is written on one line. A list of 38,000 findings
is then 38,000 lines, each one finding, as `sqlite-utils` prints rows — and each line is encoded by the C encoder of
the standard library, which `json.dumps(indent=2)` never uses (its indenting encoder is Python code; figures in
docs/performance.md). The text is valid JSON and parses to the same data as `json.dumps(data, indent=2)`.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SCALARS = frozenset({str, int, float, bool, type(None)})


def _flat(value: Any) -> bool:
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is list or kind is tuple:
        return all(type(x) in _SCALARS for x in value)
    if kind is dict:
        return all(type(v) in _SCALARS or ((type(v) is list or type(v) is tuple) and _flat(v)) for v in value.values())
    return False


def dumps(data: Any, *, ensure_ascii: bool = False, allow_nan: bool = False) -> str:
    """`data` as JSON text, flat containers on one line, the others indented (see the module's docstring)."""
    one_line = json.JSONEncoder(ensure_ascii=ensure_ascii, allow_nan=allow_nan, separators=(", ", ": ")).encode
    key_text = json.JSONEncoder(ensure_ascii=ensure_ascii).encode
    out: list[str] = []

    def write(value: Any, depth: int) -> None:
        kind = type(value)
        if kind is dict:
            items = list(value.items())
        elif kind is list or kind is tuple:
            items = None
        else:
            out.append(one_line(value))
            return
        if not value or _flat(value):
            out.append(one_line(value))
            return
        inner = "\n" + "  " * (depth + 1)
        if items is not None:
            out.append("{")
            for n, (key, member) in enumerate(items):
                out.append(("," if n else "") + inner + key_text(_key(key)) + ": ")
                write(member, depth + 1)
        else:
            out.append("[")
            sep = inner
            for member in value:
                out.append(sep)
                sep = "," + inner
                if type(member) in _SCALARS or _flat(member):  # most members of a long list: one line each
                    out.append(one_line(member))
                else:
                    write(member, depth + 1)
        out.append("\n" + "  " * depth + ("}" if items is not None else "]"))

    write(data, 0)
    return "".join(out)


def _key(key: Any) -> str:
    """A dict key as `json` writes it: strings as they are, numbers, booleans and None as their JSON text."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, (int, float)):
        return json.dumps(key, allow_nan=True)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


# In JSON text written with ensure_ascii=False, characters JSON does not escape that a terminal may obey (C1
# controls, bidirectional controls) and lone surrogates (the bytes of a file name that are not UTF-8).
_UNPRINTABLE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _printable_escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8: the text `\xff`, as the text output shows it
        return f"\\\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"  # the same character, escaped (a lone surrogate other than those: as JSON allows)


def printable(text: str) -> str:
    """JSON text as printed on stdout: valid UTF-8 whatever its strings held, nothing a terminal obeys; C1 and
    bidirectional controls escaped (the same data), a file name's bytes that are not UTF-8 as the text `\\xNN`."""
    if not _UNPRINTABLE.search(text):
        return text
    return _UNPRINTABLE.sub(lambda m: _printable_escape(m.group()), text)
