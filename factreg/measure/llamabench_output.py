"""llama-bench's output read as data: JSON, JSONL, CSV, the Markdown table or a SQLite database, format sniffed.

Every format becomes `BenchResult`s through one validation of the fields (`result_from_record`): counts are whole
numbers, rates finite, samples in t/s. Bad input is a `BadInput` with one line naming the file and the place.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factreg import textfile
from factreg.errors import BadInput

MAX_INPUT_BYTES = 32 * 2**20  # llama-bench output is kilobytes; anything this large is not one
RESULT_KEYS = ("avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts")

# `-o md` column titles → field names.
MD_COLUMNS = {
    "model": "model_type", "backend": "backends", "threads": "n_threads", "ngl": "n_gpu_layers",
    "fa": "flash_attn", "mmap": "use_mmap", "sm": "split_mode", "mg": "main_gpu", "ts": "tensor_split",
    "nkvo": "no_kv_offload", "dev": "devices", "ot": "tensor_buft_overrides", "embd": "embeddings",
    "strict": "cpu_strict", "size": "model_size_text", "params": "model_params_text", "n_cpu_moe": "n_cpu_moe",
    "type_k": "type_k", "type_v": "type_v", "n_batch": "n_batch", "n_ubatch": "n_ubatch", "cpu_mask": "cpu_mask",
    "poll": "poll", "load_mode": "load_mode",
}  # fmt: skip


@dataclass
class BenchResult:
    """One llama-bench test result: its fields (conditions), rates and raw text."""

    fields: dict[str, Any]
    avg_ts: float
    stddev_ts: float | None
    samples_ts: list[float] = field(default_factory=list)
    n: int | None = None
    raw: str = ""

    @property
    def n_prompt(self) -> int:
        return int(self.fields.get("n_prompt") or 0)

    @property
    def n_gen(self) -> int:
        return int(self.fields.get("n_gen") or 0)

    @property
    def n_depth(self) -> int:
        return int(self.fields.get("n_depth") or 0)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number llama-bench writes")


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise BadInput(f"{where}: not valid llama-bench JSON ({exc})") from None


def _number(value: Any, what: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadInput(f"{where}: {what} must be a number, got {value!r}")
    try:
        x = float(value)
    except ValueError:
        raise BadInput(f"{where}: {what} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise BadInput(f"{where}: {what} must be a finite number, got {value!r}")
    return x


def _count(value: Any, what: str, where: str) -> int:
    x = _number(value, what, where)
    if x < 0 or not x.is_integer():
        raise BadInput(f"{where}: {what} must be a whole number ≥ 0, got {value!r}")
    return int(x)


def result_from_record(record: Any, where: str, raw: str | None = None) -> BenchResult:
    """Validate one llama-bench result object (JSON, JSONL, CSV or SQLite row) and split fields from rates."""
    if not isinstance(record, dict):
        raise BadInput(f"{where}: expected an object with llama-bench fields, got {type(record).__name__}")
    if "avg_ts" not in record:
        raise BadInput(f"{where}: no avg_ts field: not llama-bench output")
    fields = {k: v for k, v in record.items() if k not in RESULT_KEYS}
    for key in ("n_prompt", "n_gen"):
        if key not in fields:
            raise BadInput(f"{where}: no {key} field: not llama-bench output")
        fields[key] = _count(fields[key], key, where)
    fields["n_depth"] = _count(fields.get("n_depth", 0) or 0, "n_depth", where)
    if fields["n_prompt"] == 0 and fields["n_gen"] == 0:
        raise BadInput(f"{where}: n_prompt and n_gen are both 0")
    avg = _number(record["avg_ts"], "avg_ts", where)
    if avg < 0:
        raise BadInput(f"{where}: avg_ts cannot be negative")
    sd = record.get("stddev_ts")
    stddev = None if sd is None or sd == "" else _number(sd, "stddev_ts", where)
    samples: list[float] = []
    if record.get("samples_ts") is not None:
        if not isinstance(record["samples_ts"], list):
            raise BadInput(f"{where}: samples_ts must be a list of numbers")
        samples = [_number(x, "every samples_ts value", where) for x in record["samples_ts"]]
    elif isinstance(record.get("samples_ns"), list):
        ns = [_number(x, "every samples_ns value", where) for x in record["samples_ns"]]
        tokens = fields["n_prompt"] + fields["n_gen"]
        if any(x <= 0 for x in ns):
            raise BadInput(f"{where}: samples_ns must be positive")
        samples = [1e9 * tokens / x for x in ns]
    text = raw if raw is not None else json.dumps(record, ensure_ascii=False, sort_keys=False)
    return BenchResult(fields, avg, stddev, samples, len(samples) or None, text)


def parse_json(text: str, name: str = "input") -> list[BenchResult]:
    """`-o json`: an array of result objects."""
    data = _loads(text, name)
    if not isinstance(data, list):
        raise BadInput(f"{name}: expected a JSON array of llama-bench results, got {type(data).__name__}")
    if not data:
        raise BadInput(f"{name}: the JSON array is empty: no llama-bench results")
    return [result_from_record(r, f"{name} result {i + 1}") for i, r in enumerate(data)]


def parse_jsonl(text: str, name: str = "input") -> list[BenchResult]:
    """`-o jsonl`: one result object per line."""
    out = []
    for lineno, line in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 etc. can be inside values
        if line.strip():
            where = f"{name} line {lineno}"
            out.append(result_from_record(_loads(line, where), where, raw=line))
    if not out:
        raise BadInput(f"{name}: no llama-bench results")
    return out


def parse_csv(text: str, name: str = "input") -> list[BenchResult]:
    """`-o csv`: a header row and one row per test (no samples)."""
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise BadInput(f"{name}: malformed CSV ({exc})") from None
    rows = [r for r in rows if r]
    if len(rows) < 2:
        raise BadInput(f"{name}: no llama-bench results in the CSV")
    header = rows[0]
    out = []
    for i, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise BadInput(f"{name} line {i}: {len(row)} columns, the header has {len(header)}")
        raw = _csv_line(header) + _csv_line(row)
        out.append(result_from_record(dict(zip(header, row, strict=True)), f"{name} line {i}", raw=raw))
    return out


def _csv_line(row: Sequence[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(row)
    return buf.getvalue()


def _md_cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_md(text: str, name: str = "input") -> list[BenchResult]:
    """`-o md`: the table (`avg ± stddev` in t/s, no samples, no n) and its `build: <commit> (<number>)` footer."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    table = [ln for ln in lines if ln.lstrip().startswith("|")]
    if len(table) < 3:
        raise BadInput(f"{name}: no llama-bench markdown table")
    header = _md_cells(table[0])
    if "test" not in header or "t/s" not in header:
        raise BadInput(f"{name}: the markdown table has no 'test' and 't/s' columns")
    build: dict[str, Any] = {}
    for ln in lines:
        if ln.startswith("build:"):
            parts = ln.split(":", 1)[1].split()
            if parts:
                build["build_commit"] = parts[0]
            if len(parts) > 1:
                build["build_number"] = parts[1].strip("()")
    out = []
    for i, line in enumerate(table[2:], 3):
        where = f"{name} table row {i}"
        cells = _md_cells(line)
        if len(cells) != len(header):
            raise BadInput(f"{where}: {len(cells)} cells, the header has {len(header)}")
        record: dict[str, Any] = dict(build)
        for title, cell in zip(header, cells, strict=True):
            if title == "test":
                record.update(_parse_test_name(cell, where))
            elif title == "t/s":
                avg, _, sd = cell.partition("±")
                record["avg_ts"] = avg.strip()
                record["stddev_ts"] = sd.strip() or None
            else:
                record[MD_COLUMNS.get(title, title)] = cell
        raw = table[0] + "\n" + line + ("\n" + lines[-1] if build else "")
        out.append(result_from_record(record, where, raw=raw))
    return out


def _parse_test_name(cell: str, where: str) -> dict[str, int]:
    """`pp512`, `tg128`, `pp512+tg128`, `tg32 @ d4096` → n_prompt, n_gen, n_depth."""
    name, _, depth = cell.partition("@")
    out = {"n_prompt": 0, "n_gen": 0, "n_depth": 0}
    try:
        for part in name.strip().split("+"):
            part = part.strip()
            if part.startswith("pp"):
                out["n_prompt"] = int(part[2:])
            elif part.startswith("tg"):
                out["n_gen"] = int(part[2:])
            else:
                raise ValueError(part)
        if depth.strip():
            out["n_depth"] = int(depth.strip().lstrip("d"))
    except ValueError:
        raise BadInput(f"{where}: cannot read test name {cell!r}") from None
    return out


def parse_sqlite(path: Path, name: str | None = None) -> list[BenchResult]:
    """The SQLite database the `-o sql | sqlite3 db` workflow builds (table `llama_bench`, or `test` in old builds)."""
    name = name or str(path)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BadInput(f"{name}: cannot open as SQLite ({exc})") from None
    try:
        conn.row_factory = sqlite3.Row
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        out: list[BenchResult] = []
        for table in tables:
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            if "avg_ts" not in cols or "n_prompt" not in cols:
                continue
            for i, row in enumerate(conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'), 1):
                record = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row is not a mapping
                out.append(result_from_record(record, f"{name} table {table} row {i}"))
    except sqlite3.Error as exc:
        raise BadInput(f"{name}: cannot read the SQLite database ({exc})") from None
    finally:
        conn.close()
    if not out:
        raise BadInput(f"{name}: no llama-bench table (with avg_ts and n_prompt columns) in the database")
    return out


def sniff(text: str) -> str:
    """Which text format llama-bench wrote: json, jsonl, csv or md."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        return "jsonl"
    if stripped.startswith("|"):
        return "md"
    first = stripped.splitlines()[0] if stripped else ""
    if "avg_ts" in first and "," in first:
        return "csv"
    raise BadInput("not llama-bench output: expected JSON, JSONL, CSV, markdown or a SQLite database")


PARSERS = {"json": parse_json, "jsonl": parse_jsonl, "csv": parse_csv, "md": parse_md}


def read_file(path: Path) -> tuple[str, list[BenchResult]]:
    """(format, results) of one llama-bench output file; BadInput with one line when it cannot be read."""
    data = textfile.read_bytes(path, max_bytes=MAX_INPUT_BYTES)  # a size limit, so /dev/zero ends too
    if not data:
        raise BadInput(f"{path}: the file is empty")
    if data.startswith(b"SQLite format 3\0"):
        return "sqlite", parse_sqlite(path, str(path))
    text = textfile.decode(data, str(path))
    try:
        fmt = sniff(text)
    except BadInput as exc:
        raise BadInput(f"{path}: {exc.message}") from None
    return fmt, PARSERS[fmt](text, str(path))
