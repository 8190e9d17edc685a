"""The plain forms answered without typer (factreg/cli/quick.py: `docs lint PATH…`, `docs check PATH…`, each with
or without `--no-cache`, `cite ID`, `status` with or without `--json`, `list [PREFIX]` with or without `--limit N` and
`--json`) print what the command line prints for them, byte for byte, on stdout and stderr, with the same exit code;
every other form goes to the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ago, pinned_env

# the real entry point, noting whether typer was imported (so a case that silently took the command line is seen)
QUICK = """
import os, sys
from factreg.__main__ import main
sys.argv = ['factreg', *sys.argv[1:]]
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code or 0
with open(os.environ['QUICK_NOTE'], 'w') as fh:
    fh.write(str('typer' in sys.modules))
sys.exit(code)
"""
# the command line itself, as every form other than the plain ones runs
TYPER = """
import sys
from factreg.cli import main
sys.argv = ['factreg', *sys.argv[1:]]
main()
"""

FRESH, FEW, STALE = "gamebox/a3b/tg0", "gamebox/a3b/few", "gamebox/a3b/old"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder: a registry with a fresh fact, a fact of one sample and a stale one, and documents with
    claims, citations (current, unknown, stale), no numbers, a folder with a file name that is not UTF-8."""
    from factreg.registry import facts
    from factreg.registry.store import Registry

    reg = Registry(f"sqlite:///{tmp_path / 'registry.db'}")
    facts.record_many(reg, [
        facts.NewFact(id=FRESH, metric="tg_rate", samples=[20.0 + k % 3 for k in range(12)],
                      identity={"machine": "gamebox"}, measured_at=ago(days=1)),
        facts.NewFact(id=FEW, metric="tg_rate", samples=[20.0], identity={"machine": "gamebox"},
                      measured_at=ago(days=1)),
        facts.NewFact(id=STALE, metric="tg_rate", samples=[30.0 + k % 2 for k in range(12)],
                      identity={"machine": "gamebox"}, measured_at=ago(days=400)),
    ])
    reg.close()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "claims.md").write_text("# Notes\n\nDecode is 12 tok/s; the first token took 412 ms.\n\n"
                                    "| run | rate |\n|---|---|\n| a | 28 tok/s |\n")
    (docs / "plain.md").write_text("# Notes\n\nNo numbers here.\n")
    (tmp_path / "unknown.md").write_text("<!-- fact: gamebox/none/tg -->20 tok/s<!-- /fact -->\n")
    (tmp_path / "stale.md").write_text(f"Decode: <!-- fact: {STALE} -->30 tok/s<!-- /fact -->\n")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / os.fsdecode(b"caf\xe9.md")).write_text("It reached 9 tok/s.\n")
    return tmp_path


def _both(args: list[str | bytes], cwd: Path, **env: str) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    base = pinned_env(**{"FACTREG_DB": str(cwd / "registry.db"), "FACTREG_CACHE_DIR": str(cwd / "cache"), **env})
    if "GITHUB_ACTIONS" not in env:
        base.pop("GITHUB_ACTIONS", None)
    if not base["FACTREG_DB"]:
        del base["FACTREG_DB"]
    note = cwd / "quick-note"
    quick = subprocess.run([sys.executable, "-c", QUICK, *args], cwd=cwd, capture_output=True,
                           env={**base, "QUICK_NOTE": str(note)})
    assert note.read_text() == "False", f"{args} took the command line, not the plain form"
    typer_run = subprocess.run([sys.executable, "-c", TYPER, *args], cwd=cwd, capture_output=True, env=base)
    return quick, typer_run


@pytest.mark.parametrize(("args", "env", "code"), [
    (["docs", "lint", "docs/claims.md"], {}, 1),
    (["docs", "lint", "docs/plain.md"], {}, 0),
    (["docs", "lint", "docs", "--no-cache"], {}, 1),
    (["docs", "lint", "--no-cache", "docs/plain.md", "odd"], {}, 1),  # a name not UTF-8: a warning line
    (["docs", "lint"], {}, 1),  # no path: the current folder
    (["docs", "lint", "docs/claims.md"], {"GITHUB_ACTIONS": "true"}, 1),  # on GitHub: annotations
    (["docs", "lint", "missing.md"], {}, None),
    (["docs", "lint", b"caf\xe9.md"], {}, 2),  # an argument that is not UTF-8 text
    (["docs", "check", "stale.md", "unknown.md", "docs"], {}, 1),
    (["docs", "check", "docs/plain.md"], {}, 0),
    (["docs", "check", "--no-cache", "stale.md"], {"GITHUB_ACTIONS": "true"}, 1),
    (["docs", "check", "unknown.md"], {"FACTREG_DB": "nowhere/registry.db"}, None),  # no registry to read
    (["cite", FRESH], {}, 0),
    (["cite", FEW], {}, 1),  # printed, and why it should not be cited
    (["cite", STALE], {}, 1),
    (["cite", "gamebox/none/tg"], {}, None),
    (["cite", "not an id"], {}, None),
    (["status"], {}, 1),  # a stale fact
    (["status", "--json"], {}, 1),
    (["status"], {"GITHUB_ACTIONS": "true"}, 1),  # on GitHub: annotations
    (["status"], {"FACTREG_DB": "nowhere/registry.db"}, None),
    (["list"], {}, 0),
    (["list", "--limit", "2"], {}, 0),
    (["list", "--limit", "0"], {}, 0),
    (["list", "gamebox/a3b", "--json", "--limit", "02"], {}, 0),
    (["list", "--json", "gamebox"], {}, 0),
    (["list", "gamebox/a3b/old/"], {}, 0),
    (["list", "not an id"], {}, None),
    (["list"], {"FACTREG_DB": "nowhere/registry.db"}, None),
])
def test_a_plain_form_prints_what_the_command_line_prints(args, env, code, project):
    quick, typer_run = _both(args, project, **env)
    assert (quick.returncode, quick.stdout, quick.stderr) == (typer_run.returncode, typer_run.stdout,
                                                              typer_run.stderr), args
    if code is not None:
        assert quick.returncode == code, quick.stderr
    else:  # an error: one line `Error: …`, a usage or configuration error, or not found
        assert quick.returncode in (2, 4) and quick.stderr.decode().startswith("Error: ") \
            and quick.stderr.count(b"\n") == 1, quick.stderr
    assert b"Traceback" not in quick.stderr


def test_a_broken_configuration_is_the_same_error_line_both_ways(project):
    (project / ".factreg").mkdir()
    (project / ".factreg" / "config.toml").write_text("[docs\nroots = 3\n")
    for args in (["docs", "lint"], ["docs", "check"], ["cite", FRESH], ["status"], ["list"]):
        quick, typer_run = _both(args, project, FACTREG_DB="")
        assert quick.returncode == typer_run.returncode == 2, quick.stderr
        assert quick.stderr == typer_run.stderr and quick.stderr.startswith(b"Error: "), quick.stderr


@pytest.mark.parametrize("args", [
    ["docs", "lint", "--help"], ["docs", "lint", "-q", "a.md"], ["docs", "lint", "--", "a.md"],
    ["docs", "lint", ""], ["docs", "lint", "--no-cache=1"], ["docs", "lint", "--json", "a.md"], ["docs"],
    ["docs", "sync", "a.md"], ["docs", "check", "--lint", "a.md"], ["cite"], ["cite", "a/b", "c/d"],
    ["cite", "--json", "a/b"], ["cite", "a/b", "--asof"], ["--db", "x.db", "cite", "a/b"],
    ["status", "--fail-on", "aging"], ["status", "--jsonl"], ["status", "a/b"], ["status", "--json", "-q"],
    ["list", "a/b", "c/d"], ["list", "--limit"], ["list", "--limit", "-1"], ["list", "--limit", "x"],
    ["list", "--limit=2"], ["list", "--limit", "1", "--limit", "2"], ["list", "--limit", "1234567"],
    ["list", "--limit", "\u0662"], ["list", "--jsonl"], ["list", "--sort", "value"], ["list", "-q"], ["lists"],
])
def test_every_other_form_goes_to_the_command_line(args):
    from factreg.cli import quick

    assert quick.main(args) is None


@pytest.mark.parametrize(("raised", "code", "line"), [
    (RuntimeError("boom\nsecond line"), 70, "Error: internal error: RuntimeError: boom (traceback in "),
    (KeyboardInterrupt(), 130, "Error: interrupted"),
    (BrokenPipeError(), 0, None),
])
def test_a_plain_forms_failure_is_one_line_and_the_command_lines_exit_code(raised, code, line, tmp_path, monkeypatch,
                                                                             capsys):
    """`base.run_body`, the plain forms' last resort, ends as the command line's decorator and group do."""
    from factreg.cli import quick

    def broken(*_a: object, **_k: object) -> None:
        raise raised

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(quick, "scan", broken)
    assert quick.main(["docs", "lint", "a.md"]) == code
    err = capsys.readouterr().err
    if line is None:
        assert err == ""
    else:
        assert err.startswith(line) and err.count("\n") == 1, err
    if code == 70:
        trace = Path(err.split("traceback in ", 1)[1].split(";", 1)[0])
        assert "boom" in trace.read_text()
        trace.unlink()
