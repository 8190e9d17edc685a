"""The codebase holds its own conventions: lint, types, help on every command, a thin CLI."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
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


def test_type_ignores_are_few_explained_and_listed_in_the_design_page():
    """At most 10 `# type: ignore`s in the package, each with a reason after it on its line, and as many per file as
    docs/design.md's "Type ignores" lists."""
    found: dict[str, int] = {}
    unexplained = []
    for path in sorted((ROOT / "factreg").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = re.search(r"# type: ignore(\[[\w,-]+\])?(.*)$", line)
            if m:
                name = str(path.relative_to(ROOT / "factreg"))
                found[name] = found.get(name, 0) + 1
                if not re.match(r"\s+#\s*\S", m.group(2)):
                    unexplained.append(f"{name}:{n}")
    section = (ROOT / "docs" / "design.md").read_text(encoding="utf-8").split("## Type ignores", 1)[1].split("\n## ")[0]
    listed = {name: int(count) for name, count in re.findall(r"^- `([\w/]+\.py)` \((\d+)\)", section, flags=re.M)}
    assert sum(found.values()) <= 10
    assert unexplained == []
    assert found == listed


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


GUARD = """
import contextlib, io, subprocess, sys
spawned = []
_init = subprocess.Popen.__init__
def _noted(self, args, *a, **k):
    spawned.append(str(args))
    return _init(self, args, *a, **k)
subprocess.Popen.__init__ = _noted
from factreg.__main__ import main
sys.argv = ['factreg', *sys.argv[1:]]
code = 0
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
heavy = ('sqlalchemy', 'sqlmodel', 'httpx', 'jinja2', 'rich', 'git', 'pydantic', 'typer', 'socket')
print(code)
print(','.join(m for m in heavy if m in sys.modules))
print(';'.join(spawned))
"""
FACT = "gamebox/a3b/tg0"
TABLES = ("rich", "typer")  # a table on a terminal is rich's to lay out
NO_TABLE = ("typer",)  # piped (as here), a table or a fact's lines are the characters rich would print (cli/common.py)


@pytest.mark.parametrize(("args", "allowed"), [
    (["--version"], ()),  # answered before the command line: not even typer
    (["--db", "{db}", "--version"], ()),
    (["--help"], ("typer",)),
    (["show", FACT], NO_TABLE),
    (["list", "--limit", "20"], ()),  # a plain form: not even typer
    (["list", "gamebox", "--json"], ()),
    (["list", "--limit", "20", "--jsonl"], NO_TABLE),
    (["history", FACT], NO_TABLE),
    (["--color", "list", "--limit", "20"], TABLES),  # colour forced: rich decides
    (["status"], ()),
    (["status", "--json"], ()),
    (["status", "--jsonl"], NO_TABLE),
    (["cite", FACT], ()),  # the plain forms (cli/quick.py): not even typer
    (["changes"], NO_TABLE),
    (["docs", "check", "doc.md"], ()),
    (["docs", "lint", "doc.md"], ()),
    (["docs", "lint", "plain.md"], ()),
    (["docs", "lint", "doc.md", "--no-cache"], ()),
    (["docs", "check", "--no-cache", "doc.md"], ()),
    (["docs", "lint", "--quiet", "doc.md"], NO_TABLE),  # any other option: the command line
    (["cite", FACT, "--json"], NO_TABLE),
])
def test_read_commands_import_no_heavy_library_and_run_no_program(args, allowed, db_path, tmp_path, monkeypatch):
    """The read paths (the real entry point, output piped) load neither SQLAlchemy, SQLModel, httpx, jinja2, git nor
    pydantic, nor rich unless colour is forced, nor socket (no read asks the machine's name), and start no other
    program; `--version` and the plain forms of `cite`, `docs check`, `docs lint`, `status` and `list` not even
    typer."""
    from factreg.registry import facts
    from factreg.registry.store import Registry

    reg = Registry(f"sqlite:///{db_path}")
    facts.record_many(reg, [facts.NewFact(id=f"gamebox/a3b/tg{k}", metric="tg_rate", samples=[20.0 + k, 21.0, 22.0],
                                          identity={"machine": "gamebox"}) for k in range(3)])
    reg.close()
    (tmp_path / "doc.md").write_text(f"Decode is 12 tok/s.\n\n<!-- fact: {FACT} -->x<!-- /fact -->\n")
    (tmp_path / "plain.md").write_text("# Notes\n\nNo numbers here.\n")
    monkeypatch.setenv("FACTREG_DB", str(db_path))
    argv = [a.format(db=db_path) for a in args]
    r = subprocess.run([sys.executable, "-c", GUARD, *argv], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    code, loaded, spawned = (r.stdout.splitlines() + ["", "", ""])[:3]
    assert code in ("0", "1"), (argv, r.stderr)  # 1: docs check / lint found what the documents hold
    assert [m for m in loaded.split(",") if m and m not in allowed] == [], f"{argv} imported {loaded}"
    assert spawned == "", f"{argv} started {spawned}"


LINT_ONLY = """
import contextlib, io, sys
from factreg.__main__ import main
sys.argv = ['factreg', 'docs', 'lint', *sys.argv[1:]]
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(','.join(m for m in ('factreg.docs.check', 'factreg.docs.markers', 'factreg.docs.cache',
                           'factreg.registry.store', 'sqlite3', 'hashlib') if m in sys.modules))
"""


def test_a_lint_without_the_cache_imports_neither_the_check_the_markers_the_cache_nor_the_store(tmp_path):
    """`docs lint --no-cache` needs the rules alone: not the check, the markers, the document cache or the
    registry's store (`handles_errors` gathers unreadable rows through registry/unreadable.py)."""
    (tmp_path / "doc.md").write_text("Decode is 12 tok/s; the first token took 412 ms.\n")
    r = subprocess.run([sys.executable, "-c", LINT_ONLY, "doc.md", "--no-cache"], cwd=tmp_path, capture_output=True,
                       text=True, env={**os.environ, "FACTREG_DB": str(tmp_path / "none.db")})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "", f"docs lint --no-cache imported {r.stdout}"
    cached = subprocess.run([sys.executable, "-c", LINT_ONLY, "doc.md"], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "FACTREG_DB": str(tmp_path / "none.db"),
                                 "FACTREG_CACHE_DIR": str(tmp_path / "cache")})
    assert "factreg.docs.cache" in cached.stdout, cached.stdout + cached.stderr  # the guard can see the imports


def test_record_writes_a_sqlite_registry_without_sqlalchemy(db_path, tmp_path, monkeypatch):
    """`record` writes its version with sqlite3 (`Registry.write_lean`): SQLAlchemy only for a registry's first
    write (its keys), never for the next."""
    monkeypatch.setenv("FACTREG_DB", str(db_path))
    args = ["record", "gamebox/a3b/tg1", "-m", "tg_rate", "--samples", "20,21,22", "-c", "machine=gamebox", "-q"]
    for k in range(2):
        r = subprocess.run([sys.executable, "-c", GUARD, *args], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.splitlines()[0] == "0", r.stderr
        if k == 1:
            assert "sqlalchemy" not in r.stdout.splitlines()[1], r.stdout
    import sqlite3

    con = sqlite3.connect(db_path)
    assert con.execute("SELECT count(*) FROM fact_version WHERE fact_id = 'gamebox/a3b/tg1'").fetchone()[0] == 2
    con.close()
