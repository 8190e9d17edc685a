"""An independent reader of real llama-bench outputs (tests/data/llamabench-real), for their `expected` rows.

Written from llama-bench's printers (llama.cpp and ik_llama.cpp `llama-bench.cpp`) and from what people paste, not
from factreg's importer. Markdown, console captures and whole documents: every table whose header has a `test` and
a `t/s` column is llama-bench output; the rows under its separator are results, except rows whose test cell is
empty (a log line captured as a row); lines that are not table rows inside a table (log lines such as
`============ Repacked 187 tensors`) are skipped; the table ends at a blank line, a `build:` line or the next
header; the first `build: <commit> (<number>)` after a table belongs to it. Cells beyond the header's count that are
empty (a row ending in `||`) are dropped. JSON, CSV and SQL (run in an in-memory SQLite) are read record by record.

Test names: `pp512`, `tg128`, `pp512+tg128`, old `pp 512`/`tg 128`, mainline `tg128 @ d512` (depth), and
ik_llama.cpp's `tg64@pp512` (-gp: 64 tokens generated after a 512-token prompt, the rate over the 64 generated
tokens only, i.e. mainline's `tg64 @ d512`; read as n_prompt 0, n_gen 64, n_depth 512).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from typing import Any

RESULT_KEYS = ("avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts")
_BUILD = re.compile(r"^build:\s*(\S+)\s*\((\d+)\)")


def parse_test(name: str) -> dict[str, int]:
    """n_prompt, n_gen, n_depth of a llama-bench test label."""
    s = name.strip()
    m = re.fullmatch(r"tg\s*(\d+)\s*@\s*pp\s*(\d+)", s)
    if m:
        return {"n_prompt": 0, "n_gen": int(m[1]), "n_depth": int(m[2])}
    base, _, depth = s.partition("@")
    out = {"n_prompt": 0, "n_gen": 0, "n_depth": int(depth.strip().lstrip("d")) if depth.strip() else 0}
    for part in base.split("+"):
        m = re.fullmatch(r"(pp|tg)\s*(\d+)", part.strip())
        if not m:
            raise ValueError(f"not a llama-bench test name: {name!r}")
        out["n_prompt" if m[1] == "pp" else "n_gen"] = int(m[2])
    return out


def test_label(n_prompt: int, n_gen: int, n_depth: int) -> str:
    name = f"pp{n_prompt}" if n_gen == 0 else f"tg{n_gen}" if n_prompt == 0 else f"pp{n_prompt}+tg{n_gen}"
    return name + (f" @ d{n_depth}" if n_depth else "")


def _cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def _is_separator(line: str) -> bool:
    cells = _cells(line)
    return bool(cells) and all(re.fullmatch(r":?-+:?", c) for c in cells)


def _is_header(line: str) -> bool:
    if not line.strip().startswith("|"):
        return False
    cells = _cells(line)
    return "test" in cells and "t/s" in cells


def read_markdown(text: str) -> list[dict[str, Any]]:
    lines = text.splitlines()
    rows: list[dict[str, Any]] = []
    i = 0
    while i < len(lines):
        if not (_is_header(lines[i]) and i + 1 < len(lines) and _is_separator(lines[i + 1])):
            i += 1
            continue
        header = _cells(lines[i])
        table: list[dict[str, Any]] = []
        j = i + 2
        while j < len(lines):
            line = lines[j]
            if not line.strip() or _BUILD.match(line.strip()) or _is_header(line):
                break
            if line.strip().startswith("|"):
                cells = _cells(line)
                while len(cells) > len(header) and cells[-1] == "":
                    cells.pop()
                if len(cells) != len(header):
                    raise ValueError(f"line {j + 1}: {len(cells)} cells, header has {len(header)}")
                rec = dict(zip(header, cells, strict=True))
                if rec["test"]:
                    table.append(_md_row(rec))
            j += 1
        build = None
        k = j
        while k < len(lines) and not _is_header(lines[k]):
            m = _BUILD.match(lines[k].strip())
            if m:
                build = {"build_commit": m[1], "build_number": m[2]}
                break
            k += 1
        for row in table:
            row["build"] = build
        rows += table
        i = j
    return rows


def _md_row(rec: dict[str, str]) -> dict[str, Any]:
    avg, sep, sd = rec["t/s"].partition("±")
    return {
        "test": rec["test"],
        **parse_test(rec["test"]),
        "avg_ts": float(avg),
        "stddev_ts": float(sd) if sep else None,
        "columns": {k: v for k, v in rec.items() if k not in ("test", "t/s")},
    }


def _record_row(rec: dict[str, Any]) -> dict[str, Any]:
    n_prompt, n_gen, n_depth = (int(rec.get(k) or 0) for k in ("n_prompt", "n_gen", "n_depth"))
    sd = rec.get("stddev_ts")
    return {
        "test": str(rec["test"]) if rec.get("test") else test_label(n_prompt, n_gen, n_depth),
        "n_prompt": n_prompt,
        "n_gen": n_gen,
        "n_depth": n_depth,
        "avg_ts": float(rec["avg_ts"]),
        "stddev_ts": None if sd in (None, "") else float(sd),
        "columns": {k: v for k, v in rec.items() if k not in RESULT_KEYS},
        "build": None,
    }


def read(data: bytes, suffix: str) -> list[dict[str, Any]]:
    """The expected rows of one file (`suffix` is its extension: md, txt, json, csv, sql)."""
    text = data.decode("utf-8")
    if suffix == "json":
        return [_record_row(r) for r in json.loads(text)]
    if suffix == "csv":
        table = [r for r in csv.reader(io.StringIO(text)) if r]
        for n, r in enumerate(table[1:], 2):
            if len(r) != len(table[0]):
                raise ValueError(f"CSV line {n}: {len(r)} values, the header has {len(table[0])}")
        return [_record_row(dict(zip(table[0], r, strict=True))) for r in table[1:]]
    if suffix == "sql":
        conn = sqlite3.connect(":memory:")
        try:
            try:
                conn.executescript(text)
            except sqlite3.Error as exc:
                raise ValueError(f"the SQL does not load: {exc}") from None
            conn.row_factory = sqlite3.Row
            name = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchone()[0]
            return [_record_row(dict(r)) for r in conn.execute(f'SELECT * FROM "{name}" ORDER BY rowid')]
        finally:
            conn.close()
    return read_markdown(text)
