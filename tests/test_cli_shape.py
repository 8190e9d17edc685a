"""The command line's shape: --version, help panels, the start-here lines, global options before or after the
command, NO_COLOR, readable metavars, and --limit/--sort/--since/--columns/--jsonl on list, status and history."""

from __future__ import annotations

import json
import re

import pytest
import typer.main
from typer.testing import CliRunner

from factreg.cli import app, panels
from factreg.registry.migrations import NAMES
from tests.conftest import ago
from tests.docs_support import record


def _root():  # type: ignore[no-untyped-def]
    return typer.main.get_command(app)


def _commands(cmd, path=()):  # type: ignore[no-untyped-def]
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_version_names_the_package_and_the_schema(cli) -> None:
    import factreg

    run = cli("--version")
    assert run.exit_code == 0
    assert run.stdout.splitlines()[0] == f"factreg {factreg.__version__}, schema {len(NAMES)}"


def test_version_counts_the_migrations_applied_to_the_registry_found(cli, registry, db_path) -> None:
    import sqlite3

    registry.close()
    with sqlite3.connect(db_path) as conn:
        conn.execute("DELETE FROM factreg_migration WHERE name = ?", (NAMES[-1],))
    run = cli("--version")
    assert f"schema {len(NAMES)} (registry: {len(NAMES) - 1} applied)" in run.stdout


def test_version_verbose_names_the_registry_and_the_llama_cpp_build(cli, monkeypatch, tmp_path) -> None:
    fake = tmp_path / "llama-bench"
    fake.write_text("#!/bin/sh\necho 'version: 7123 (abc1234)' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("FACTREG_LLAMA_BENCH", str(fake))
    run = cli("--version", "--verbose")
    assert run.exit_code == 0
    assert "llama.cpp: build 7123 (abc1234)" in run.stdout
    assert "registry: sqlite:///" in run.stdout
    assert "llama.cpp" not in cli("--version").stdout


def test_every_command_belongs_to_a_panel_and_every_panel_line_to_a_command() -> None:
    root = _root()
    names = set(root.commands)
    assert names - set(panels.PANELS) == set(), "add the command to factreg/cli/panels.py PANELS"
    assert set(panels.PANELS) - names == set(), "PANELS names a command that does not exist"
    assert set(panels.PANELS.values()) <= set(panels.PANEL_ORDER)
    for group, subs in panels.SUBCOMMANDS.items():
        assert set(root.commands[group].commands) == set(subs), f"panels.SUBCOMMANDS[{group!r}] is out of date"


def test_help_shows_the_commands_in_panels_by_job() -> None:
    out = CliRunner().invoke(app, ["--help"], terminal_width=100).stdout
    sections = re.findall(r"^(\w[\w ]*):$", out, flags=re.M)
    assert [s for s in sections if s in panels.PANEL_ORDER] == list(panels.PANEL_ORDER)
    assert "Other:" not in out and "Commands:" not in out
    measure = out.split("Measure:")[1].split("Read:")[0]
    assert [line.split()[0] for line in measure.strip().splitlines()] == ["record", "bench", "probe", "import", "method", "sweep"]
    publish = out.split("Publish:")[1].split("Set up:")[0]
    assert {line.split()[0] for line in publish.strip().splitlines()} == {"correct", "retract", "rm", "mv", "report", "decision"}


def test_no_arguments_prints_where_to_start_and_exits_0(cli) -> None:
    run = cli()
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert len(lines) == 5
    for command in ("factreg demo", "factreg init", "factreg record", "factreg docs check"):
        assert any(line.strip().startswith(command) for line in lines), command
    assert "Usage" not in run.stdout + run.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_global_db_before_or_after_the_command(where, tmp_path, monkeypatch) -> None:
    from factreg.registry.store import Registry

    monkeypatch.delenv("FACTREG_DB", raising=False)
    path = tmp_path / "elsewhere.db"
    reg = Registry(f"sqlite:///{path}")
    record(reg, "g/one", 10.0)
    reg.close()
    args = ["--db", str(path), "list", "--json"] if where == "before" else ["list", "--json", "--db", str(path)]
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.stderr
    assert [f["id"] for f in json.loads(run.stdout)] == ["g/one"]


def test_the_commands_own_db_wins_over_the_global_one(tmp_path, monkeypatch) -> None:
    from factreg.registry.store import Registry

    monkeypatch.delenv("FACTREG_DB", raising=False)
    for name in ("a", "b"):
        reg = Registry(f"sqlite:///{tmp_path / name}.db")
        record(reg, f"g/{name}", 1.0)
        reg.close()
    run = CliRunner().invoke(app, ["--db", str(tmp_path / "a.db"), "list", "--json", "--db", str(tmp_path / "b.db")])
    assert [f["id"] for f in json.loads(run.stdout)] == ["g/b"]


def test_global_db_reaches_commands_without_their_own_db_option(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("FACTREG_DB", raising=False)
    run = CliRunner().invoke(app, ["--db", str(tmp_path / "nowhere.db"), "env", "--json"])
    assert json.loads(run.stdout)["db_source"] == "--db"
    assert str(tmp_path / "nowhere.db") in json.loads(run.stdout)["db"]


def test_global_json_before_the_command(cli, registry) -> None:
    record(registry, "g/one", 10.0)
    run = cli("--json", "show", "g/one")
    assert run.exit_code == 0 and json.loads(run.stdout)["id"] == "g/one"


@pytest.mark.parametrize("args", [["--quiet", "status"], ["status", "--quiet"], ["-q", "list"], ["list", "-q"]])
def test_quiet_leaves_out_the_summary_line_before_or_after(args, cli, registry) -> None:
    record(registry, "g/one", 10.0)
    loud = cli(*[a for a in args if a not in ("--quiet", "-q")])
    assert loud.stderr.strip()
    run = cli(*args)
    assert run.exit_code == 0 and run.stdout == loud.stdout
    assert run.stderr == ""


def test_quiet_still_prints_errors(cli) -> None:
    run = cli("--quiet", "show", "no/such")
    assert run.exit_code != 0 and run.stderr.startswith("Error: ")


def test_color_on_request_and_no_color_honoured(cli, registry, monkeypatch) -> None:
    record(registry, "g/one", 10.0)
    assert "\x1b[" in cli("--color", "show", "g/one").stdout
    assert "\x1b[" in cli("show", "g/one", "--color").stdout
    assert "\x1b[" not in cli("show", "g/one").stdout  # not a terminal
    assert "\x1b[" not in cli("--no-color", "show", "g/one").stdout
    assert "\x1b[" not in cli("--color", "show", "g/one", "--no-color").stdout  # the command's own wins
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" not in cli("show", "g/one").stdout


def test_no_option_shows_a_python_type_metavar() -> None:
    runner = CliRunner()
    bad = []
    for path, _cmd in _commands(_root()):
        out = runner.invoke(app, [*path, "--help"], terminal_width=200).stdout
        for line in out.splitlines():
            # an option (`--n <int>`, `-c, --cond <list[str]>`) or an argument (`ID <str>`) followed by <type>
            if re.match(r"\s+(-\w, )?(--?[\w-]+(/--?[\w-]+)?|[A-Z][\w.|\[\]]*)\s+<[\w\[\], |]+>", line):
                bad.append(f"{' '.join(path)}: {line.strip()}")
    assert bad == []


def test_metavars_are_readable_words() -> None:
    out = CliRunner().invoke(app, ["record", "--help"], terminal_width=200).stdout
    for expected in ("--cond KEY=VALUE", "--warn-after DURATION", "--measured-at DATE", "--n N", "--db URL|FILE"):
        assert expected in out
    assert "ID  " in out and "ID <" not in out


# list, status, history: --limit, --sort, --since, --columns, --jsonl


def _seed(registry) -> None:  # type: ignore[no-untyped-def]
    record(registry, "g/old", 30.0, measured_at=ago(20))
    record(registry, "g/mid", 10.0, measured_at=ago(10))
    record(registry, "g/new", 20.0, measured_at=ago(1))


def test_list_sort_limit_since_columns(cli, registry) -> None:
    _seed(registry)
    ids = [f["id"] for f in cli("list", "--json", "--sort", "value").json()]
    assert ids == ["g/mid", "g/new", "g/old"]
    ids = [f["id"] for f in cli("list", "--json", "--sort", "-value", "--limit", "2").json()]
    assert ids == ["g/old", "g/new"]
    ids = [f["id"] for f in cli("list", "--json", "--since", ago(11, date_only=True)).json()]
    assert sorted(ids) == ["g/mid", "g/new"]
    rows = cli("list", "--json", "--columns", "id,value", "--sort", "measured").json()
    assert rows == [{"id": "g/old", "value": 30.0}, {"id": "g/mid", "value": 10.0}, {"id": "g/new", "value": 20.0}]
    table = cli("list", "--columns", "value,id", "--sort", "id").stdout.splitlines()
    assert table[0].split() == ["value", "id"]
    assert [line.split()[-1] for line in table[1:]] == ["g/mid", "g/new", "g/old"]


@pytest.mark.parametrize("args", [["--sort", "nosuch"], ["--sort", "flags"], ["--columns", "id,nosuch"],
                                  ["--since", "last week"], ["--limit", "ten"], ["--columns", ","]])
def test_bad_row_options_are_one_error_line(args, cli, registry) -> None:
    _seed(registry)
    run = cli("list", *args)
    assert run.exit_code == 2
    assert run.stderr.startswith("Error: ") and len(run.stderr.strip().splitlines()) == 1
    assert run.stdout == ""


def test_jsonl_is_one_object_a_line(cli, registry) -> None:
    _seed(registry)
    for args in (["list", "--jsonl"], ["--jsonl", "list"], ["status", "--jsonl"], ["history", "g/old", "--jsonl"]):
        run = cli(*args)
        lines = run.stdout.splitlines()
        assert lines and all(isinstance(json.loads(line), dict) for line in lines), args
    assert len(cli("list", "--jsonl").stdout.splitlines()) == 3


def test_jsonl_writes_each_object_as_it_is_produced(monkeypatch) -> None:
    import sys

    from factreg.cli import common

    class Out:
        def __init__(self) -> None:
            self.pending, self.flushed = "", []  # type: ignore[var-annotated]

        def write(self, text: str) -> None:
            self.pending += text

        def flush(self) -> None:
            self.flushed.append(self.pending)
            self.pending = ""

    out = Out()
    monkeypatch.setattr(sys, "stdout", out)

    def rows():  # type: ignore[no-untyped-def]
        yield {"a": 1}
        assert out.flushed == ['{"a": 1}\n']  # the first line is out before the second row exists
        yield {"a": 2}

    common.emit_jsonl(rows())
    assert out.flushed == ['{"a": 1}\n', '{"a": 2}\n']


def test_status_sort_limit_keep_the_summary_of_every_fact(cli, registry) -> None:
    _seed(registry)
    run = cli("status", "--sort", "id", "--limit", "1")
    assert [line.split()[1] for line in run.stdout.splitlines()] == ["g/mid"]
    assert run.stderr.strip().splitlines()[-1].startswith("3 fact(s)")
    rows = cli("status", "--json", "--columns", "id,status", "--since", ago(5, date_only=True)).json()["facts"]
    assert rows == [{"id": "g/new", "status": "fresh"}]


def test_history_limit_and_sort(cli, registry) -> None:
    record(registry, "g/h", 1.0, measured_at=ago(3))
    record(registry, "g/h", 2.0, measured_at=ago(2))
    record(registry, "g/h", 3.0, measured_at=ago(1))
    rows = cli("history", "g/h", "--json", "--sort", "-version", "--limit", "2", "--columns", "version,value").json()
    assert rows == [{"version": 3, "value": 3.0}, {"version": 2, "value": 2.0}]


def test_tables_fit_the_terminal_and_never_cut_an_id(registry, monkeypatch) -> None:
    from factreg.cli import tables

    long_id = "g/" + "x" * 70
    record(registry, long_id, 10.0)
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(tables, "console", _terminal_console(60))
    monkeypatch.setattr(tables, "plain_stdout", lambda: False)  # a terminal: not the piped plain path
    monkeypatch.setenv("FACTREG_DB", str(registry.url))
    run = CliRunner().invoke(app, ["list"])
    lines = run.stdout.splitlines()
    # The id is never cut or folded (as gh keeps it): whole on one line, even wider than the terminal; the other
    # columns are shortened or dropped.
    assert len(lines) == 2 and lines[1].split()[0] == long_id
    short = "g/s"
    record(registry, short, 10.0)
    lines = CliRunner().invoke(app, ["list", short]).stdout.splitlines()
    assert max(len(line) for line in lines) <= 60 and lines[1].split()[0] == short


def _terminal_console(width: int):  # type: ignore[no-untyped-def]
    from factreg.cli import common

    original = common.console

    def make(stderr: bool = False):  # type: ignore[no-untyped-def]
        out = original(stderr)
        out._force_terminal = True  # as on a terminal
        out.width = width
        return out

    return make


def test_each_command_module_registers_exactly_the_commands_mapped_to_it() -> None:
    """`main()` builds only the module MODULES names for a command: the map must match what each module registers."""
    from factreg import cli

    every = set()
    for module in cli.ORDER:
        names = set(typer.main.get_command(cli.build((module,))).commands)  # type: ignore[attr-defined]
        assert names == {c for c, m in cli.MODULES.items() if m == module}, module
        every |= names
    assert every == set(_root().commands) == set(panels.PANELS)  # type: ignore[attr-defined]


ONLY_ITS_MODULE = """
import sys, io, contextlib
from factreg.cli import main
sys.argv = ['factreg', sys.argv[1], '--help']
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(','.join(sorted(m for m in sys.modules if m.startswith('factreg.cli.'))))
"""


def _first_command_of_each_module() -> list[tuple[str, str]]:
    from factreg import cli

    return [(next(c for c, m in cli.MODULES.items() if m == module), module) for module in cli.ORDER]


@pytest.mark.parametrize(("command", "module"), _first_command_of_each_module())
def test_a_command_imports_its_own_module_of_cli_and_no_other(command, module, tmp_path) -> None:
    """`factreg X` (the real entry point) loads X's module of factreg/cli and none of the other command groups',
    only the shared ones (application, base, common, panels, progress, formats, quick, tables)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-c", ONLY_ITS_MODULE, command], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 0, r.stderr
    loaded = {m.removeprefix("factreg.cli.") for m in r.stdout.strip().split(",") if m}
    assert loaded - {"application", "base", "common", "panels", "progress", "formats", "quick", "tables"} == {module}, (
        command, loaded)


@pytest.mark.parametrize("args", [["--version"], ["list", "--db", "x.db", "--limit", "2"], ["--db", "x.db", "show"],
                                  ["--db=x.db", "docs", "lint"], ["-q", "--", "list"], ["--json"], ["nosuch"]])
def test_the_command_word_skips_global_options_and_their_values(args) -> None:
    from factreg.cli import command_word

    expected = {"list": "list", "show": "show", "docs": "docs", "nosuch": "nosuch"}
    assert command_word(args) == next((expected[a] for a in args if a in expected and "--" not in args), None)


def test_a_command_built_alone_has_the_same_help_as_in_the_whole_command_line() -> None:
    from factreg import cli

    runner = CliRunner()
    for path, _cmd in _commands(_root()):
        if not path:
            continue
        alone = cli.build((cli.MODULES[path[0]],), only=path[0])
        for where in (app, alone):
            assert runner.invoke(where, [*path, "--help"], terminal_width=100).exit_code == 0
        assert runner.invoke(alone, [*path, "--help"], terminal_width=100).stdout == \
            runner.invoke(app, [*path, "--help"], terminal_width=100).stdout, path
