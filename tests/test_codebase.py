"""The codebase holds its own conventions: lint, types, help on every command, a thin CLI."""

import subprocess
import sys
from pathlib import Path

import typer.main

from factreg.cli import app

ROOT = Path(__file__).resolve().parent.parent


def _commands(group, prefix=()):
    yield prefix, group
    if hasattr(group, "commands"):  # typer ships its own Click: isinstance against `click` would be False
        for name, cmd in group.commands.items():
            yield from _commands(cmd, (*prefix, name))


def test_every_command_has_help():
    root = typer.main.get_command(app)
    found = list(_commands(root))
    assert len(found) > 10
    missing = [" ".join(p) for p, cmd in found if p and not (cmd.help or "").strip()]
    assert missing == []


def test_core_never_imports_typer():
    offenders = []
    for path in (ROOT / "factreg").rglob("*.py"):
        if "cli" in path.relative_to(ROOT / "factreg").parts:
            continue
        text = path.read_text(encoding="utf-8")
        if "import typer" in text or "from typer" in text or "import click" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_ruff_clean():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "factreg", "tests", "bench"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_clean():
    r = subprocess.run([sys.executable, "-m", "mypy", "factreg"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_read_paths_do_not_import_heavy_modules():
    code = ("import sys, io, contextlib\nfrom factreg.cli import main\nsys.argv=['factreg','--help']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main()\n"
            "    except SystemExit:\n        pass\n"
            "print(','.join(m for m in ('httpx','jinja2','git','scipy','numpy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "", f"heavy modules imported at start-up: {r.stdout}"
