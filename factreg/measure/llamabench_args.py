"""llama-bench's arguments and model files: the allow-list every stored argument passes before anything runs, the
model roots a model must lie under, and the cache of model hashes (`measure/llamabench.py` runs them)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.errors import CouldNotVerify, UsageError

if TYPE_CHECKING:
    from factreg.config import Settings


BINARY_NAME = "llama-bench"


# Characters no llama-bench argument needs; their presence means a method was tampered with.
SHELL_META = set(";|&$`<>\n\r\0") | {"$(", "&&"}


OUTPUT_OPTIONS = ("-o", "--output")


MODEL_OPTIONS = ("-m", "--model")


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


def hash_cache_path(settings: Settings | None = None) -> Path:
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
