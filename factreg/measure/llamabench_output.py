"""llama-bench's output read as data: JSON, JSONL, CSV, Markdown tables, `-o sql` text or a SQLite database.

Every format becomes `BenchResult`s through one validation of the fields (`result_from_record`): counts are whole
numbers, rates finite, samples in t/s. Bad input is a `BadInput` with one line naming the file and the place.

Markdown is read as people paste it: every table whose header has `test` and `t/s` columns, wherever it stands in
a document (after log lines, between headings and prose, several per file), each table one run with the first
`build: <commit> (<number>)` line after it; what is not part of a table is reported as skipped (`Reading`).
`-o sql` text is loaded into an in-memory SQLite that lets it do nothing but create llama-bench's table and
insert rows into it.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factreg import textfile
from factreg.errors import BadInput

MAX_INPUT_BYTES = 32 * 2**20  # llama-bench output is kilobytes; anything this large is not one
RESULT_KEYS = ("avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts")

# `-o md` column titles → field names: llama.cpp's `get_field_display_name` (ngl, sm, threads, nkvo, fa, lm,
# embd, nopo, noh, dev, ts, ot, fitt, fitc; other fields print under their own name), plus ik_llama.cpp's (mla,
# amb, gr, ser, mmap, rtr, thp, fmoe, ger, no-fug, no-ooae, defer, cuda) so that a table and the JSON of one run
# give the same fields. The model column is the model type; size and params are rounded text.
MD_COLUMNS = {
    "model": "model_type", "backend": "backends", "threads": "n_threads", "ngl": "n_gpu_layers",
    "fa": "flash_attn", "mmap": "use_mmap", "sm": "split_mode", "mg": "main_gpu", "ts": "tensor_split",
    "nkvo": "no_kv_offload", "dev": "devices", "ot": "tensor_buft_overrides", "embd": "embeddings",
    "strict": "cpu_strict", "size": "model_size_text", "params": "model_params_text", "n_cpu_moe": "n_cpu_moe",
    "type_k": "type_k", "type_v": "type_v", "n_batch": "n_batch", "n_ubatch": "n_ubatch", "cpu_mask": "cpu_mask",
    "poll": "poll", "load_mode": "load_mode", "lm": "load_mode", "nopo": "no_op_offload", "noh": "no_host",
    "fitt": "fit_target", "fitc": "fit_min_ctx",
    "mla": "mla_attn", "amb": "attn_max_batch", "gr": "reuse", "rtr": "repack", "thp": "use_thp",
    "fmoe": "fused_moe", "ger": "grouped_er", "no-fug": "no_fused_up_gate", "no-ooae": "no_ooae",
    "defer": "defer_experts", "cuda": "cuda_params",
}  # fmt: skip
SQL_TABLES = ("llama_bench", "test")  # `-o sql` creates llama_bench (older builds: test)
MAX_SQL_ROWS = 100_000
MAX_SQL_STEPS = 20_000  # progress-handler calls (of 1000 VM instructions each) a load may take


@dataclass
class BenchResult:
    """One llama-bench test result: its fields (conditions), rates and raw text."""

    fields: dict[str, Any]
    avg_ts: float
    stddev_ts: float | None
    samples_ts: list[float] = field(default_factory=list)
    n: int | None = None
    raw: str = ""
    run: int = 1  # which table of a document (one llama-bench run each); 1 for the other formats
    line: int | None = None  # the row's line in a Markdown document


    @property
    def n_prompt(self) -> int:
        return int(self.fields.get("n_prompt") or 0)

    @property
    def n_gen(self) -> int:
        return int(self.fields.get("n_gen") or 0)

    @property
    def n_depth(self) -> int:
        return int(self.fields.get("n_depth") or 0)


@dataclass
class Reading:
    """One file read: its format, results, and (Markdown) where the tables were and which lines were skipped."""

    fmt: str
    results: list[BenchResult]
    tables: list[tuple[int, int]] = field(default_factory=list)  # first and last line of each table read
    skipped: list[tuple[int, int]] = field(default_factory=list)  # line ranges outside the tables and build lines
    skipped_count: int = 0  # non-blank lines in those ranges
    skipped_rows: list[tuple[int, str]] = field(default_factory=list)  # lines inside a table that are no result

    @property
    def runs(self) -> int:
        return max((r.run for r in self.results), default=1)


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


def is_result(record: Any) -> bool:
    """Whether an object is a llama-bench result (what `import FILE` recognises): it has `avg_ts`."""
    return isinstance(record, dict) and "avg_ts" in record


def result_from_record(record: Any, where: str, raw: str | None = None) -> BenchResult:
    """Validate one llama-bench result object (JSON, JSONL, CSV or SQLite row) and split fields from rates."""
    if not isinstance(record, dict):
        raise BadInput(f"{where}: expected an object with llama-bench fields, got {type(record).__name__}")
    if not is_result(record):
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


_BUILD = re.compile(r"build:\s*(\S+?)(?:\s*\((\d+)\))?\s*$")
_SEPARATOR_CELL = re.compile(r":?-+:?")
_GP_TEST = re.compile(r"tg\s*(\d+)\s*@\s*pp\s*(\d+)")  # ik_llama.cpp -gp: N generated after an M-token prompt
_SQL_START = re.compile(r"(CREATE|INSERT|ATTACH|DETACH|PRAGMA|SELECT|BEGIN|DROP|DELETE|UPDATE|REPLACE|ALTER|WITH|"
                        r"VACUUM|SAVEPOINT|RELEASE|END|COMMIT|ROLLBACK|ANALYZE|REINDEX|EXPLAIN)[\s;]")
_TEST_PART = re.compile(r"(pp|tg)\s*(\d+)")


def _md_cells(line: str) -> list[str]:
    text = line.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") else text
    return [c.strip() for c in text.split("|")]


def _is_header(line: str) -> bool:
    if not line.lstrip().startswith("|"):
        return False
    cells = _md_cells(line)
    return "test" in cells and "t/s" in cells


def _is_separator(line: str) -> bool:
    cells = _md_cells(line)
    return line.lstrip().startswith("|") and all(_SEPARATOR_CELL.fullmatch(c) for c in cells)


def _build_of(line: str) -> dict[str, str] | None:
    m = _BUILD.match(line.strip())
    if not m:
        return None
    return {"build_commit": m[1], **({"build_number": m[2]} if m[2] else {})}


def read_md(text: str, name: str = "input") -> Reading:
    """Every llama-bench table of a document (`-o md` output, a console capture, a page with prose around it).

    A table is a header with `test` and `t/s` columns and its separator; its rows run to a blank line, a `build:`
    line or the next header. Inside it, lines that are not rows (`============ Repacked N tensors`) and rows with
    an empty test cell (a log line captured as a row) are skipped, and empty cells after the header's last column
    (a row ending in `||`) are dropped. The first `build:` line after a table, before the next table, is its build.
    """
    lines = text.splitlines()
    out: list[BenchResult] = []
    used: set[int] = set()
    reading = Reading("md", out)
    i = 0
    while i < len(lines):
        if not (_is_header(lines[i]) and i + 1 < len(lines) and _is_separator(lines[i + 1])):
            i += 1
            continue
        run = len(reading.tables) + 1
        header = [MD_COLUMNS.get(t, t) if t not in ("test", "t/s") else t for t in _md_cells(lines[i])]
        used.update((i, i + 1))
        rows: list[tuple[int, list[str]]] = []
        j = i + 2
        while j < len(lines):
            line = lines[j]
            if not line.strip() or _build_of(line) or _is_header(line):
                break
            used.add(j)
            if not line.lstrip().startswith("|"):
                reading.skipped_rows.append((j + 1, "not a table row"))
            else:
                cells = _md_cells(line)
                while len(cells) > len(header) and cells[-1] == "":
                    cells.pop()
                if len(cells) != len(header):
                    raise BadInput(f"{name} line {j + 1}: {len(cells)} cells, the table's header has {len(header)}")
                if cells[header.index("test")]:
                    rows.append((j, cells))
                else:
                    reading.skipped_rows.append((j + 1, "no test name (a log line captured as a row)"))
            j += 1
        reading.tables.append((i + 1, j))
        build: dict[str, str] = {}
        build_line = ""
        for k in range(j, len(lines)):
            if _is_header(lines[k]):
                break
            found = _build_of(lines[k])
            if found:
                build, build_line = found, lines[k].strip()
                used.add(k)
                break
        for j_row, cells in rows:
            where = f"{name} line {j_row + 1}"
            record: dict[str, Any] = dict(build)
            for title, cell in zip(header, cells, strict=True):
                if title == "test":
                    record.update(_parse_test_name(cell, where))
                elif title == "t/s":
                    avg, _, sd = cell.partition("±")
                    record["avg_ts"] = avg.strip()
                    record["stddev_ts"] = sd.strip() or None
                else:
                    record[title] = cell
            raw = f"{lines[i].rstrip()}\n{lines[j_row].rstrip()}" + (f"\n{build_line}" if build_line else "")
            result = result_from_record(record, where, raw=raw)
            result.run, result.line = run, j_row + 1
            out.append(result)
        i = j
    if not out:
        raise BadInput(f"{name}: no llama-bench table (a Markdown table with 'test' and 't/s' columns)")
    for n, line in enumerate(lines, 1):
        if n - 1 in used or not line.strip():
            continue
        reading.skipped_count += 1
        last = reading.skipped[-1] if reading.skipped else None
        if last and all(not lines[k - 1].strip() for k in range(last[1] + 1, n)):  # only blank lines between
            reading.skipped[-1] = (last[0], n)
        else:
            reading.skipped.append((n, n))
    return reading


def parse_md(text: str, name: str = "input") -> list[BenchResult]:
    """`-o md`: the results of every table in the text (see `read_md`)."""
    return read_md(text, name).results


def _parse_test_name(cell: str, where: str) -> dict[str, int]:
    """`pp512`, `tg128`, `pp512+tg128`, `tg32 @ d4096`, old `tg 128`, ik_llama.cpp's `tg64@pp512` (64 tokens
    generated after a 512-token prompt, the rate over the generated tokens: mainline's `tg64 @ d512`)."""
    text = cell.strip()
    gp = _GP_TEST.fullmatch(text)
    if gp:
        return {"n_prompt": 0, "n_gen": int(gp[1]), "n_depth": int(gp[2])}
    name, _, depth = text.partition("@")
    out = {"n_prompt": 0, "n_gen": 0, "n_depth": 0}
    parts = [_TEST_PART.fullmatch(p.strip()) for p in name.split("+")]
    depth_match = re.fullmatch(r"d?\s*(\d+)", depth.strip())
    if not all(parts) or (depth.strip() and not depth_match):
        raise BadInput(f"{where}: cannot read test name {cell!r}")
    for m in parts:
        assert m is not None
        out["n_prompt" if m[1] == "pp" else "n_gen"] = int(m[2])
    if depth_match:
        out["n_depth"] = int(depth_match[1])
    return out


def _sqlite_results(conn: sqlite3.Connection, name: str, tables: Sequence[str] | None = None) -> list[BenchResult]:
    """Results of every table with llama-bench's columns (avg_ts, n_prompt) in an open database."""
    conn.row_factory = sqlite3.Row
    if tables is None:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    out: list[BenchResult] = []
    for table in tables:
        cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        if "avg_ts" not in cols or "n_prompt" not in cols:
            continue
        for i, row in enumerate(conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'), 1):
            record = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row is not a mapping
            out.append(result_from_record(record, f"{name} table {table} row {i}"))
    if not out:
        raise BadInput(f"{name}: no llama-bench table (with avg_ts and n_prompt columns) in the database")
    return out


def parse_sqlite(path: Path, name: str | None = None) -> list[BenchResult]:
    """The SQLite database the `-o sql | sqlite3 db` workflow builds (table `llama_bench`, or `test` in old builds)."""
    name = name or str(path)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BadInput(f"{name}: cannot open as SQLite ({exc})") from None
    try:
        return _sqlite_results(conn, name)
    except sqlite3.Error as exc:
        raise BadInput(f"{name}: cannot read the SQLite database ({exc})") from None
    finally:
        conn.close()


# What `-o sql` text may do, by authorizer action: create llama-bench's table (which writes sqlite_master) and
# insert literal rows into it (a multi-row VALUES is a SELECT). Everything else is denied: ATTACH, PRAGMA, DROP,
# triggers, views, other tables, reading tables, transactions, every function (load_extension among them).
_SQL_ACTIONS = {sqlite3.SQLITE_CREATE_TABLE: "CREATE TABLE", sqlite3.SQLITE_INSERT: "INSERT",
                sqlite3.SQLITE_READ: "READ", sqlite3.SQLITE_UPDATE: "UPDATE", sqlite3.SQLITE_SELECT: "SELECT"}
_SQL_DENIED_NAMES = {getattr(sqlite3, n): n[7:].replace("_", " ") for n in (
    "SQLITE_ATTACH", "SQLITE_DETACH", "SQLITE_PRAGMA", "SQLITE_CREATE_TRIGGER", "SQLITE_CREATE_TEMP_TRIGGER",
    "SQLITE_DROP_TABLE", "SQLITE_DROP_TRIGGER", "SQLITE_FUNCTION", "SQLITE_DELETE", "SQLITE_UPDATE",
    "SQLITE_CREATE_VIEW", "SQLITE_CREATE_TEMP_TABLE", "SQLITE_CREATE_INDEX", "SQLITE_ALTER_TABLE",
    "SQLITE_TRANSACTION", "SQLITE_READ", "SQLITE_RECURSIVE", "SQLITE_CREATE_VTABLE", "SQLITE_SAVEPOINT",
    "SQLITE_ANALYZE", "SQLITE_REINDEX", "SQLITE_INSERT", "SQLITE_CREATE_TABLE") if hasattr(sqlite3, n)}


def parse_sql(text: str, name: str = "input") -> list[BenchResult]:
    """`-o sql` text (CREATE TABLE llama_bench + INSERTs), loaded into an in-memory SQLite under an authorizer that
    allows nothing else; one line names what was refused."""
    created: list[str] = []
    denied: list[str] = []

    def authorize(action: int, arg1: str | None, arg2: str | None, db: str | None, _trigger: str | None) -> int:
        main = db in (None, "main")
        if action == sqlite3.SQLITE_CREATE_TABLE and main and arg1 in SQL_TABLES and created in ([], [arg1]):
            created[:] = [arg1]
            return sqlite3.SQLITE_OK
        schema_row = main and arg1 == "sqlite_master"  # CREATE TABLE writes its schema row (nothing else may)
        ours = main and bool(created) and arg1 == created[0]
        if (action in (sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_READ) and schema_row
                or action == sqlite3.SQLITE_INSERT and ours or action == sqlite3.SQLITE_SELECT):
            return sqlite3.SQLITE_OK
        what = _SQL_DENIED_NAMES.get(action, f"action {action}")
        target = arg2 if action == sqlite3.SQLITE_FUNCTION else arg1
        denied.append(f"{what} {target}" if target else what)
        return sqlite3.SQLITE_DENY

    steps = [0]

    def progress() -> int:
        steps[0] += 1
        return 1 if steps[0] > MAX_SQL_STEPS else 0

    conn = sqlite3.connect(":memory:")
    try:
        for limit, value in (("SQLITE_LIMIT_LENGTH", 1_000_000), ("SQLITE_LIMIT_SQL_LENGTH", MAX_INPUT_BYTES),
                             ("SQLITE_LIMIT_COLUMN", 1000), ("SQLITE_LIMIT_ATTACHED", 0)):
            if hasattr(sqlite3, limit) and hasattr(conn, "setlimit"):
                getattr(conn, "setlimit")(getattr(sqlite3, limit), value)  # noqa: B009 - Python 3.11+
        conn.set_authorizer(authorize)
        conn.set_progress_handler(progress, 1000)
        try:
            conn.executescript(text)
        except (sqlite3.Error, ValueError) as exc:  # ValueError: a NUL character in the text
            if denied:
                why = f"{denied[0]} is not allowed (only CREATE TABLE llama_bench and INSERT INTO it)"
            elif steps[0] > MAX_SQL_STEPS:
                why = "loading it takes more work than llama-bench output ever needs"
            else:
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise BadInput(f"{name}: not llama-bench's -o sql output: {why}") from None
        conn.set_authorizer(None)
        conn.set_progress_handler(None, 0)
        if not created:
            raise BadInput(f"{name}: no CREATE TABLE llama_bench in the SQL")
        count = conn.execute(f'SELECT count(*) FROM "{created[0]}"').fetchone()[0]
        if count > MAX_SQL_ROWS:
            raise BadInput(f"{name}: {count} rows: more than llama-bench output ever holds")
        return _sqlite_results(conn, name, created)
    finally:
        conn.close()


def sniff(text: str) -> str:
    """Which text format llama-bench wrote: json, jsonl, sql, csv or md (tables anywhere in a document)."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        return "jsonl"
    if _SQL_START.match(stripped):  # every statement goes to the authorizer, which allows only llama-bench's
        return "sql"
    first = stripped.splitlines()[0] if stripped else ""
    if "avg_ts" in first and "," in first and not first.startswith("|"):
        return "csv"
    lines = text.splitlines()
    if any(_is_header(a) and _is_separator(b) for a, b in zip(lines, lines[1:], strict=False)):
        return "md"
    raise BadInput("not llama-bench output: expected JSON, JSONL, CSV, SQL, a Markdown table with 'test' and 't/s' "
                   "columns, or a SQLite database")


PARSERS: dict[str, Callable[[str, str], list[BenchResult]]] = {
    "json": parse_json, "jsonl": parse_jsonl, "csv": parse_csv, "md": parse_md, "sql": parse_sql}


def read(path: Path) -> Reading:
    """One llama-bench output file read, with what was skipped; BadInput with one line when it cannot be read."""
    data = textfile.read_bytes(path, max_bytes=MAX_INPUT_BYTES)  # a size limit, so /dev/zero ends too
    if not data:
        raise BadInput(f"{path}: the file is empty")
    if data.startswith(b"SQLite format 3\0"):
        return Reading("sqlite", parse_sqlite(path, str(path)))
    text = textfile.decode(data, str(path))
    try:
        fmt = sniff(text)
    except BadInput as exc:
        raise BadInput(f"{path}: {exc.message}") from None
    if fmt == "md":
        return read_md(text, str(path))
    return Reading(fmt, PARSERS[fmt](text, str(path)))


def read_file(path: Path) -> tuple[str, list[BenchResult]]:
    """(format, results) of one llama-bench output file."""
    reading = read(path)
    return reading.fmt, reading.results
