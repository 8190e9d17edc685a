"""factreg.jsontext: what `--json` prints — the same data as `json.dumps(indent=2)`, flat containers on one line."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factreg import jsontext

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
keys = st.text() | st.integers() | st.booleans() | st.none()
data = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(data, st.booleans())
def test_parses_to_what_json_dumps_writes(value, ascii_only) -> None:
    text = jsontext.dumps(value, ensure_ascii=ascii_only)
    assert json.loads(text) == json.loads(json.dumps(value, indent=2, ensure_ascii=ascii_only))
    if ascii_only:
        assert text.isascii()


def test_flat_containers_take_one_line_each() -> None:
    findings = {
        "claims": [
            {"path": "a.md", "line": 3, "text": "28 tok/s", "diff": ["- x", "+ y"]},
            {"path": "b.md", "line": 9, "text": "1.2 s", "diff": []},
        ],
        "count": 2,
        "empty": {},
        "nested": {"identity": {"machine": "m1"}, "samples": [1.5, 2]},
    }
    assert jsontext.dumps(findings) == (
        "{\n"
        '  "claims": [\n'
        '    {"path": "a.md", "line": 3, "text": "28 tok/s", "diff": ["- x", "+ y"]},\n'
        '    {"path": "b.md", "line": 9, "text": "1.2 s", "diff": []}\n'
        "  ],\n"
        '  "count": 2,\n'
        '  "empty": {},\n'
        '  "nested": {\n'
        '    "identity": {"machine": "m1"},\n'
        '    "samples": [1.5, 2]\n'
        "  }\n"
        "}"
    )
    assert jsontext.dumps([]) == "[]"
    assert jsontext.dumps("é") == '"é"'


def test_keys_are_written_as_json_writes_them() -> None:
    value = {1: {"a": [1]}, 2.5: [[1]], False: {"x": {}}, None: [{"k": [2]}], "s": [[]]}
    assert json.loads(jsontext.dumps(value)) == json.loads(json.dumps(value))
    with pytest.raises(TypeError):
        jsontext.dumps({(1, 2): [[1]]})


def test_nan_is_refused_and_unknown_types_raise() -> None:
    with pytest.raises(ValueError):
        jsontext.dumps({"x": [math.nan]})
    with pytest.raises(ValueError):
        jsontext.dumps({"x": [{"y": [math.inf]}]})
    assert jsontext.dumps({"x": math.nan}, allow_nan=True) == '{"x": NaN}'
    with pytest.raises(TypeError):
        jsontext.dumps({"x": [{1, 2}]})
