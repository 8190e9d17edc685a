"""The wheel holds every module of the package: `[tool.setuptools] packages` is an explicit list, and an editable
install (what the tests run on) hides a package missing from it (as factreg.docs.lint was at first)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(900)
def test_the_wheel_holds_every_module(tmp_path: Path) -> None:
    src = tmp_path / "src"  # a copy: building in the work tree would leave build/ and *.egg-info there
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("factreg", "templates", "facts"):
        shutil.copytree(ROOT / folder, src / folder, ignore=ignore)
    out = tmp_path / "dist"
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    (wheel,) = out.glob("factreg-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "factreg").rglob("*.py"))
    assert any(m.startswith("factreg/docs/lint/rules/") for m in modules)
    missing = [m for m in modules if m not in names]
    assert missing == [], f"not in the wheel (add the package to pyproject.toml's packages): {missing}"
