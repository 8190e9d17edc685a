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


READ_COMMAND = """
import sys, io, contextlib
from factreg.cli import main
sys.argv = ['factreg', *sys.argv[1:]]
out, code = io.StringIO(), None
with contextlib.redirect_stdout(out):
    try:
        main()
    except SystemExit as exc:
        code = exc.code
print(repr(out.getvalue()))
print(code)
print(','.join(m for m in ('sqlalchemy', 'sqlmodel', 'factreg.registry.models', 'factreg.publish.decisions') if m in sys.modules))
"""


def test_read_commands_on_a_registry_with_decisions_do_not_import_sqlalchemy(db_path, monkeypatch):
    """`list`, `show` and `status` read a SQLite registry through sqlite3, decisions included."""
    from factreg.publish import decisions
    from factreg.registry import facts
    from factreg.registry.store import Registry

    reg = Registry(f"sqlite:///{db_path}")
    facts.record_many(reg, [facts.NewFact(id=f"gamebox/a3b/tg{k}", metric="tg_rate", value=20.0 + k,
                                          identity={"machine": "gamebox"}) for k in range(3)])
    decisions.add(reg, "Serve from gamebox", [("gamebox/a3b/tg0", None), ("gamebox/a3b/tg1", None)])
    facts.supersede(reg, "gamebox/a3b/tg0", "gamebox/a3b/tg2", "re-measured")  # the decision needs review
    reg.close()
    monkeypatch.setenv("FACTREG_DB", str(db_path))
    for args in (["list"], ["show", "gamebox/a3b/tg1"], ["status"], ["status", "--json"]):
        r = subprocess.run([sys.executable, "-c", READ_COMMAND, *args], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        shown, code, loaded = r.stdout.splitlines()
        assert code in ("None", "0"), (args, r.stderr)
        assert "gamebox/a3b/tg1" in shown
        if args[0] == "status":
            assert "decision 1" in shown or '"number": 1' in shown, shown  # the decisions were read
            assert loaded == "factreg.publish.decisions", f"{args}: {loaded}"
        else:
            assert "sqlalchemy" not in loaded, f"{args}: {loaded}"
