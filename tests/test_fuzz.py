"""Bad input, generated: the llama-bench parsers, the SSE parser, the citation-marker parser, the claim lint and the
JSONL importer take arbitrary and near-miss input without an unhandled exception (only FactregError subclasses,
and the SSE parser's own SSEError, which the probe turns into a verdict), and keep their round-trip properties.

Example counts are moderate so that the suite stays fast; docs/reliability.md lists them."""

from __future__ import annotations

import contextlib
import json
import math
import string
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factreg.docs import lint, markers
from factreg.errors import FactregError
from factreg.measure import llamabench_output as lbo
from factreg.measure.sse import SSEError, SSEParser
from factreg.registry import jsonl
from factreg.registry.store import Registry

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)

json_scalars = (
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=12
)

# ---------------------------------------------------------------- llama-bench output

BENCH_KEYS = [
    "avg_ts",
    "stddev_ts",
    "samples_ts",
    "samples_ns",
    "n_prompt",
    "n_gen",
    "n_depth",
    "model_type",
    "build_commit",
    "n_threads",
    "model_filename",
    "test_time",
    "backends",
]
near_record = st.dictionaries(st.sampled_from(BENCH_KEYS) | st.text(max_size=6), json_values, max_size=10)


def parse_any(text: str) -> list:
    try:
        fmt = lbo.sniff(text)
        return lbo.PARSERS[fmt](text, "fuzz")
    except FactregError:
        return []


@FUZZ
@given(st.text(max_size=400))
def test_llamabench_parsers_take_any_text(text):
    parse_any(text)
    for parser in lbo.PARSERS.values():
        with contextlib.suppress(FactregError):
            parser(text, "fuzz")


@FUZZ
@given(st.lists(near_record, min_size=0, max_size=4), st.sampled_from(["json", "jsonl", "csv", "md"]))
def test_llamabench_parsers_take_near_miss_records(records, fmt):
    if fmt == "json":
        text = json.dumps(records)
    elif fmt == "jsonl":
        text = "\n".join(json.dumps(r) for r in records)
    elif fmt == "csv":
        keys = sorted({k for r in records for k in r})
        text = ",".join(keys) + "\n" + "\n".join(",".join(str(r.get(k, "")) for k in keys) for r in records)
    else:
        keys = sorted({k for r in records for k in r}) or ["model"]
        text = (
            "| "
            + " | ".join(keys)
            + " |\n|"
            + "---|" * len(keys)
            + "\n"
            + "\n".join("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in records)
        )
    with contextlib.suppress(FactregError):
        lbo.PARSERS[fmt](text, "fuzz")


finite_pos = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)
valid_record = st.fixed_dictionaries({
    "n_prompt": st.integers(0, 4096), "n_gen": st.integers(1, 4096), "n_depth": st.integers(0, 8192),
    "avg_ts": finite_pos, "stddev_ts": finite_pos, "model_type": st.text(string.ascii_letters + " .", max_size=20),
    "n_threads": st.integers(1, 64), "samples_ts": st.lists(finite_pos, min_size=1, max_size=6),
})  # fmt: skip


@FUZZ
@given(st.lists(valid_record, min_size=1, max_size=4))
def test_llamabench_json_jsonl_csv_round_trip(records):
    as_json = lbo.parse_json(json.dumps(records))
    as_jsonl = lbo.parse_jsonl("\n".join(json.dumps(r) for r in records))
    keys = [k for k in records[0] if k != "samples_ts"]
    as_csv = lbo.parse_csv(
        ",".join(keys)
        + "\n"
        + "\n".join(",".join(repr(r[k]) if isinstance(r[k], float) else f'"{r[k]}"' for k in keys) for r in records)
    )
    for parsed in (as_json, as_jsonl, as_csv):
        assert [p.avg_ts for p in parsed] == [r["avg_ts"] for r in records]
        assert [(p.n_prompt, p.n_gen, p.n_depth) for p in parsed] == [
            (r["n_prompt"], r["n_gen"], r["n_depth"]) for r in records
        ]
    assert [p.samples_ts for p in as_json] == [r["samples_ts"] for r in records]


# ---------------------------------------------------------------- SSE

sse_pieces = st.sampled_from(
    [
        b"data: ",
        b"data:",
        b"[DONE]",
        b"\n",
        b"\r\n",
        b"\r",
        b": ping",
        b"event: x",
        b'{"choices":[{"delta":{"content":"hi"}}]}',
        b"{",
        b"}",
        b"\xff",
        b"\xc3",
        b"\xa9",
        b"retry: 10",
        b"id: 1",
        b"garbage",
    ]
) | st.binary(max_size=12)


def feed_all(stream: bytes, cuts: list[int]) -> tuple[list, int]:
    parser = SSEParser(max_line=256)
    events = []
    last = 0
    for cut in sorted(c % (len(stream) + 1) for c in cuts):
        events += parser.feed(stream[last:cut])
        last = cut
    events += parser.feed(stream[last:])
    events += parser.close()
    return [(e.done, json.dumps(e.data, sort_keys=True)) for e in events], parser.garbage


@FUZZ
@given(st.lists(sse_pieces, max_size=40), st.lists(st.integers(0, 10_000), max_size=8))
def test_sse_parser_takes_any_bytes_in_any_chunks(pieces, cuts):
    stream = b"".join(pieces)
    try:
        whole = feed_all(stream, [])
    except SSEError:
        whole = None
    try:
        chunked = feed_all(stream, cuts)
    except SSEError:
        chunked = None
    assert chunked == whole  # where the network splits the stream changes nothing


small_json = st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=8) | st.booleans(), max_size=3)


@FUZZ
@given(
    st.lists(small_json, max_size=6),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
    st.lists(st.integers(0, 10_000), max_size=6),
)
def test_sse_events_round_trip(objs, eol, cuts):
    stream = b"".join(b"data: " + json.dumps(o).encode() + eol + eol for o in objs) + b"data: [DONE]" + eol + eol
    events, garbage = feed_all(stream, cuts)
    assert events == [(False, json.dumps(o, sort_keys=True)) for o in objs] + [(True, "null")]
    assert garbage == 0


# ---------------------------------------------------------------- citation markers

slug = st.text(string.ascii_lowercase + string.digits + "-", min_size=1, max_size=8)
fact_ids = st.lists(slug, min_size=1, max_size=3).map("/".join)
marker_bits = st.sampled_from(
    [
        "<!-- fact: ",
        "<!-- fact:",
        "-->",
        "<!-- /fact -->",
        "<!--",
        "`",
        "```\n",
        "~~~",
        "\n",
        "    ",
        "---\n",
        'format="{value:.1f}"',
        "asof",
        "a/b",
        "../x",
        " ",
        "x",
        "-",
        '"',
        "{",
        "}",
        "{{ 7*7 }}",
    ]
)


@FUZZ
@given(st.lists(marker_bits | st.text(max_size=6), max_size=40))
def test_marker_parser_never_raises(parts):
    text = "".join(parts)
    found, problems = markers.parse(text)
    for m in found:
        assert text[m.start : m.end].startswith("<!--") and m.text == text[m.text_start : m.text_end]
        assert ".." not in m.fact_id.split("/")
    for p in problems:
        assert p.line >= 1 and p.message


inner = st.text(string.ascii_letters + string.digits + " .±/", max_size=20)


@FUZZ
@given(st.lists(st.tuples(fact_ids, inner, st.text(string.ascii_letters + " .,\n", max_size=20)), max_size=5))
def test_markers_round_trip(items):
    text = "".join(f"{gap}<!-- fact: {fid} -->{body}<!-- /fact -->" for fid, body, gap in items)
    found, problems = markers.parse(text)
    assert problems == []
    assert [(m.fact_id, m.text) for m in found] == [(fid, body) for fid, body, _ in items]
    # rewriting every marker's text with the same text gives the same document
    assert markers.replace_spans(text, [(m.text_start, m.text_end, m.text) for m in found]) == text


# ---------------------------------------------------------------- claim lint

claim_bits = st.sampled_from(
    [
        "11.9 tok/s",
        "0.45 s",
        "TTFT",
        "is",
        "runs at",
        "<!-- fact: a/b -->",
        "<!-- /fact -->",
        "```\n",
        "`",
        "\n",
        " ",
        "초",
        "토큰",
        "%",
        "ms",
        "lint: ignore",
        "<!--",
        "-->",
        "http://x/1.5",
        "1e308",
        "9" * 40,
        "±",
        "~",
        "|",
        "#",
    ]
)


@FUZZ
@given(st.lists(claim_bits | st.text(max_size=8), max_size=40), st.booleans())
def test_claim_lint_never_raises(parts, include_code):
    text = "".join(parts)
    findings = lint.lint_text(text, include_code=include_code)
    assert all(f.line >= 1 for f in findings)


# ---------------------------------------------------------------- JSONL import

RECORD_KEYS = [
    "kind",
    "id",
    "metric",
    "value",
    "samples",
    "unit",
    "spread",
    "n",
    "cond",
    "identity",
    "info",
    "conditions",
    "subject",
    "measured_at",
    "warn_after",
    "error_after",
    "tolerance",
    "note",
    "method",
    "raw",
    "direction",
    "versions",
    "verifications",
    "current_version",
    "number",
]
near_line = st.dictionaries(
    st.sampled_from(RECORD_KEYS),
    json_values
    | st.sampled_from(["record", "fact", "decision", "correction", "ttft", "tg_rate", "a/b", "../etc/passwd", "7d"]),
    max_size=8,
)


def fresh_registry(tmp: str) -> Registry:
    return Registry(f"sqlite:///{tmp}/r.db")


@FEW
@given(st.lists(near_line, min_size=1, max_size=4))
def test_jsonl_import_refuses_bad_lines_whole(lines):
    with tempfile.TemporaryDirectory() as tmp:
        reg = fresh_registry(tmp)
        text = "\n".join(json.dumps(x) for x in lines)
        try:
            jsonl.import_lines(reg, jsonl.parse_text(text))
        except FactregError:
            assert reg.query("SELECT count(*) AS n FROM fact_version")[0]["n"] == 0  # nothing half-imported
        reg.close()


@FUZZ
@given(st.text(max_size=200))
def test_jsonl_parser_takes_any_text(text):
    with contextlib.suppress(FactregError):
        jsonl.parse_text(text)


valid_line = st.fixed_dictionaries({
    "id": fact_ids, "metric": st.sampled_from(["ttft", "tg_rate", "pp_rate", "e2e"]),
    "samples": st.lists(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False), min_size=1,
                        max_size=5),
    "cond": st.dictionaries(st.text(string.ascii_lowercase + "_", min_size=1, max_size=8), st.text(max_size=10),
                            max_size=3),
    "info": st.dictionaries(st.text(string.ascii_lowercase, min_size=1, max_size=5), st.text(max_size=10), max_size=2),
    "measured_at": st.sampled_from(["2026-10-26T14:05:00Z", "2026-10-26T14:05:00.123456Z"]),
    "note": st.none() | st.text(max_size=20),
})  # fmt: skip


@FEW
@given(st.lists(valid_line, min_size=1, max_size=5))
def test_jsonl_export_import_export_is_byte_identical(lines):
    with tempfile.TemporaryDirectory() as tmp:
        one = fresh_registry(tmp)
        try:
            jsonl.import_lines(one, jsonl.parse_text("\n".join(json.dumps(x) for x in lines)))
        except FactregError:
            one.close()
            return  # e.g. a condition key the vocabulary refuses: refused whole, tested above
        first = "\n".join(jsonl.export_lines(one))
        Path(tmp, "two").mkdir()
        two = fresh_registry(f"{tmp}/two")
        jsonl.import_lines(two, jsonl.parse_text(first))
        assert "\n".join(jsonl.export_lines(two)) == first
        for line in first.split("\n"):
            for v in json.loads(line)["versions"]:
                assert all(math.isfinite(x) for x in v["samples"])
        one.close()
        two.close()


# ---------------------------------------------------------------- whole commands: no traceback, the registry reads

# Through the command line in-process (the `cli` fixture); the registry persists across examples, so every accepted
# input adds to what the next example's `list` and `export` must still read.
CLI_FEW = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)

hostile_numbers = st.sampled_from([
    "1e999", "-1e999", "1e308", "9" * 400, "99999999999999999999", "NaN", "Infinity", "1_000", "0x10", "١٢", "",
    " 1 ", "1e-400", "-0", "0", "1.5", "3", "1e100", "1e101", "+7", ".5", "5.",
])  # fmt: skip
hostile_text = (
    st.text(max_size=12)
    | st.sampled_from(["[/bold]", "[red]x", "\ud800", "a\udfffb", "\x00", "\u2028", "${HOME}", "../x", "=", "k=v"])
)


def _no_traceback(r) -> None:  # type: ignore[no-untyped-def]
    assert r.exit_code != 70, r.stderr  # the internal-error guard caught something
    assert "Traceback" not in r.stderr, r.stderr
    if r.exit_code == 2:
        assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr


def _registry_reads(cli) -> None:  # type: ignore[no-untyped-def]
    listed = cli("list", "--json")
    assert listed.exit_code in (0, 2), listed.stderr
    _no_traceback(listed)
    exported = cli("export")
    _no_traceback(exported)
    if listed.exit_code == 0:
        assert exported.exit_code == 0, exported.stderr
        ids = [json.loads(line)["id"] for line in exported.stdout.split("\n") if '"kind":"fact"' in line]
        assert sorted(f["id"] for f in listed.json()) == sorted(ids)
        assert "Warning" not in listed.stderr + exported.stderr  # nothing accepted is unreadable afterwards


def _number_json(text: str) -> str:
    return text if text and all(c in "0123456789+-.eE" for c in text) and text not in "+-." else json.dumps(text)


hostile_import_line = st.one_of(
    st.builds(lambda fid, metric, value, note: (f'{{"id": {json.dumps(fid)}, "metric": {json.dumps(metric)}, '
                                                f'"value": {_number_json(value)}, "note": {json.dumps(note)}}}'),
              st.sampled_from(["a/b", "a/c", "x/y"]), st.sampled_from(["ttft", "tg_rate", "ratio"]),
              hostile_numbers, hostile_text),
    st.builds(lambda depth: '{"id": "a/b", "metric": "ttft", "value": 1, "note": ' + "[" * depth + "]" * depth + "}",
              st.sampled_from([1, 31, 33, 999, 5000, 100_000])),
    st.builds(lambda xs: '{"id": "a/b", "metric": "ttft", "samples": [' + ", ".join(map(_number_json, xs)) + "]}",
              st.lists(hostile_numbers, min_size=1, max_size=4)),
    near_line.map(json.dumps),
)


@CLI_FEW
@given(st.lists(hostile_import_line, min_size=1, max_size=3), st.booleans())
def test_import_lines_never_traceback_and_the_registry_reads(cli, tmp_path, lines, bom):
    f = tmp_path / "in.jsonl"
    f.write_bytes((b"\xef\xbb\xbf" if bom else b"") + "\n".join(lines).encode("utf-8", "surrogatepass"))
    r = cli("import", str(f))
    _no_traceback(r)
    assert r.exit_code in (0, 2)
    _registry_reads(cli)


record_args = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["--value", "--spread", "--tolerance", "--n", "--samples"]), hostile_numbers),
        st.tuples(st.just("--samples"), st.lists(hostile_numbers, min_size=1, max_size=3).map(",".join)),
        st.tuples(st.sampled_from(["--cond", "--info"]), st.builds("{}={}".format, st.sampled_from(
            ["model", "machine", "build", "quant", "x"]), hostile_text)),
        st.tuples(st.sampled_from(["--note", "--subject", "--unit", "--direction"]), hostile_text),
        st.tuples(st.sampled_from(["--measured-at", "--warn-after", "--error-after"]),
                  st.sampled_from(["2026-99-99", "1-01-01T00:00:00Z", "9999-12-31", "2026-10-26", "30d", "1e9d",
                                   "2026-10-26T25:00:00Z", "0d", "soon"]) | hostile_text),
    ),
    max_size=5,
)


@CLI_FEW
@given(st.sampled_from(["a/b", "a/c", "b/x"]), st.sampled_from(["ttft", "tg_rate", "mem_gb", "custom_x"]), record_args)
def test_command_line_values_never_traceback_and_the_registry_reads(cli, fact_id, metric, pairs):
    args = ["record", fact_id, "-m", metric]
    for option, value in pairs:
        args += [option, value]
    r = cli(*args)
    _no_traceback(r)
    assert r.exit_code in (0, 2)
    _registry_reads(cli)
    shown = cli("show", fact_id)
    _no_traceback(shown)
    assert shown.exit_code in (0, 2)


toml_values = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str), st.floats(allow_nan=True).map(lambda x: repr(x).replace("inf", "inf")
                                                                           .replace("nan", "nan")),
    st.booleans().map(lambda b: "true" if b else "false"), st.text(max_size=8).map(json.dumps),
    st.sampled_from(['"30d"', '"soon"', '["."]', "[1, 2]", '["docs", "."]', "{}", '{ warn_after = "1d" }', "0.1"]),
)
config_keys = st.sampled_from([
    "freshness.warn_after", "freshness.error_after", "freshness.metrics.ttft.warn_after", "freshness.metrics.ttft",
    "freshness", "verify.tolerance", "verify.tolerance_by_metric.ttft", "verify.alpha", "verify.confirm_refutes",
    "verify.timeout_s", "docs.roots", "docs.max_file_mb", "probe.min_uptime_s", "probe.max_response_mb", "probe",
    "other.key",
])  # fmt: skip


def _toml(pairs: dict[str, str]) -> str:
    """`a.b.c = v` lines as TOML: dotted keys at the top level (a table given twice is a TOML error: also fine)."""
    return "".join(f"{key} = {value}\n" for key, value in pairs.items())


@settings(CLI_FEW, max_examples=12)
@given(st.dictionaries(config_keys, toml_values, max_size=4))
def test_config_files_never_traceback(cli, pairs):
    Path(".factreg").mkdir(exist_ok=True)
    Path(".factreg/config.toml").write_text(_toml(pairs), encoding="utf-8")
    for args in (["record", "a/b", "-m", "ttft", "--value", "1"], ["list"], ["status"], ["show", "a/b"],
                 ["export"]):
        r = cli(*args)
        _no_traceback(r)
        assert r.exit_code in (0, 1, 2), (args, r.stderr)
    Path(".factreg/config.toml").unlink()
    _registry_reads(cli)
