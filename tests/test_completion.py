"""Shell completion: `factreg completion bash|zsh|fish` prints a script; the completion entry point answers fact
ids and metric names from the registry, read-only, without importing typer, SQLAlchemy or httpx."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from factreg.cli.completion import SCRIPTS
from tests.docs_support import record

ROOT = Path(__file__).resolve().parent.parent


def _env(db_url: str | None = None, shell: str = "bash") -> dict[str, str]:
    env = {**os.environ, "_FACTREG_COMPLETE": shell, "PYTHONPATH": str(ROOT)}
    if db_url:
        env["FACTREG_DB"] = db_url
    return env


def _complete(*words: str, db_url: str | None = None) -> list[str]:
    """Run the real entry point (`python -m factreg`) as a shell would, and return its candidates."""
    done = subprocess.run([sys.executable, "-m", "factreg", *words], env=_env(db_url), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout.splitlines()


@pytest.fixture
def seeded(registry, db_url) -> str:  # type: ignore[no-untyped-def]
    for fact_id in ("gamebox/a3b/tg32", "gamebox/a3b/pp512", "gamebox/dense/tg32", "laptop/q4/tg32"):
        record(registry, fact_id, 10.0)
    record(registry, "gamebox/ttft", 0.5, metric="ttft")
    registry.close()
    return db_url


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_script_of_each_shell(shell, cli) -> None:
    run = cli("completion", shell)
    assert run.exit_code == 0
    assert "_FACTREG_COMPLETE=" + shell in run.stdout
    assert run.stdout == SCRIPTS[shell]


def test_completion_of_an_unknown_shell_is_one_error_line(cli) -> None:
    run = cli("completion", "tcsh")
    assert run.exit_code == 2 and run.stderr.startswith("Error: ") and run.stdout == ""


def test_a_partial_fact_id_completes_from_the_registry(seeded) -> None:
    assert _complete("show", "gamebox/a", db_url=seeded) == ["gamebox/a3b/pp512", "gamebox/a3b/tg32"]
    assert _complete("history", "lap", db_url=seeded) == ["laptop/q4/tg32"]
    assert _complete("verify", "gamebox/a3b/tg32", "gamebox/d", db_url=seeded) == ["gamebox/dense/tg32"]
    assert _complete("show", "nothing/", db_url=seeded) == []


def test_metric_names_complete_after_metric(seeded) -> None:
    assert _complete("list", "--metric", "t", db_url=seeded) == ["tg_rate", "ttft"]
    assert _complete("record", "x/y", "-m", "tt", db_url=seeded) == ["ttft"]


def test_the_db_given_on_the_command_line_is_the_one_read(seeded, tmp_path) -> None:
    other = tmp_path / "nothing.db"
    assert _complete("--db", str(other), "show", "game", db_url=seeded) == []
    path = seeded.removeprefix("sqlite:///")
    assert _complete("--db", path, "show", "laptop", db_url=f"sqlite:///{other}") == ["laptop/q4/tg32"]
    assert not other.exists()  # completion never creates a registry


def test_commands_subcommands_and_options_complete() -> None:
    assert _complete("st") == ["status"]
    assert _complete("docs", "c") == ["check", "cites", "coverage"]
    assert "--sort" in _complete("list", "--so")
    assert _complete("--qu") == ["--quiet"]
    assert _complete("--quiet", "--version", "hi") == ["history"]  # global flags take no value


def test_values_of_other_options_are_left_to_the_shell(seeded) -> None:
    assert _complete("record", "x/y", "--note", "game", db_url=seeded) == []


def test_the_completion_path_imports_no_typer_sqlalchemy_or_httpx(seeded) -> None:
    code = (
        "import sys\n"
        "sys.argv = ['factreg', 'show', 'gamebox/a']\n"
        "import factreg.__main__ as entry\n"
        "try:\n    entry.main()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'sqlalchemy', 'httpx',"
        " 'rich', 'sqlmodel', 'jinja2'))\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=_env(seeded), capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["gamebox/a3b/pp512", "gamebox/a3b/tg32"]
    assert lines[-1] == "HEAVY []"


def test_a_broken_registry_completes_nothing_and_prints_nothing(tmp_path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all" * 100)
    assert _complete("show", "g", db_url=f"sqlite:///{bad}") == []


def _bash_setup(tmp_path: Path) -> tuple[Path, Path]:
    """A `factreg` on the PATH of a test (this interpreter, this checkout) and the bash completion script."""
    wrapper = tmp_path / "factreg"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m factreg \"$@\"\n")
    wrapper.chmod(0o755)
    script = tmp_path / "completion.bash"
    script.write_text(SCRIPTS["bash"])
    return wrapper, script


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_the_bash_script_completes_a_fact_id_in_bash(seeded, tmp_path) -> None:
    wrapper, script = _bash_setup(tmp_path)
    code = (f"source {script}; COMP_WORDS=({wrapper} show gamebox/a3b/t); COMP_CWORD=2; _factreg_complete; "
            "printf '%s\\n' \"${COMPREPLY[@]}\"")
    env = {**_env(seeded), "_FACTREG_COMPLETE": ""}
    done = subprocess.run(["bash", "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.splitlines() == ["gamebox/a3b/tg32"], done.stderr


HOSTILE_IDS = ("gamebox/$(touch pwned)", "gamebox/`touch pwned`", "gamebox/a;touch pwned", "gamebox/a b",
               "gamebox/../a", "gamebox/A3B", "gamebox/a\ntouch pwned", "gamebox/a'b", "gamebox/a|touch pwned")


@pytest.fixture
def tampered(registry, db_url) -> str:  # type: ignore[no-untyped-def]
    """A registry whose fact ids and a metric name were written by someone else (a shared registry, an import, a
    hand edit): ids `ids.check_id` refuses everywhere else, and a custom metric named like a command."""
    import sqlite3

    record(registry, "gamebox/ok", 10.0)
    for n, _ in enumerate(HOSTILE_IDS):
        record(registry, f"gamebox/t{n}", 10.0)
    from factreg.registry import facts

    facts.record(registry, facts.NewFact(id="gamebox/m", metric="$(touch pwned)", unit="s", value=1.0))
    registry.close()
    conn = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    with conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        for n, bad in enumerate(HOSTILE_IDS):
            for table, col in (("fact", "id"), ("fact_version", "fact_id"), ("sample", "fact_id"),
                               ("condition", "fact_id")):
                conn.execute(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", (bad, f"gamebox/t{n}"))
    conn.close()
    return db_url


def test_completion_offers_only_valid_ids_and_quotes_for_the_shell(tampered, tmp_path) -> None:
    """9 ids the id rules refuse are never offered (was: all of them, unquoted, so bash put `$(…)` on the line);
    a custom metric named `$(touch pwned)` is offered single-quoted to bash, as it is to zsh and fish (which quote
    what they insert), and nothing runs."""
    assert _complete("show", "gamebox/", db_url=tampered) == ["gamebox/m", "gamebox/ok"]
    assert _complete("verify", "game", db_url=tampered) == ["gamebox/m", "gamebox/ok"]
    assert _complete("list", "--metric", "$", db_url=tampered) == ["'$(touch pwned)'"]
    for shell in ("zsh", "fish"):
        done = subprocess.run([sys.executable, "-m", "factreg", "list", "--metric", "$"],
                              env=_env(tampered, shell), capture_output=True, text=True, timeout=60, check=False)
        assert done.stdout.splitlines() == ["$(touch pwned)"], shell
    if shutil.which("bash") is None:
        return
    wrapper, script = _bash_setup(tmp_path)
    # what bash puts on the line, then runs when the user presses return: the words reach the command as text
    code = (f"cd {tmp_path}; source {script}; COMP_WORDS=({wrapper} list --metric '$'); COMP_CWORD=3; "
            "_factreg_complete; printf '%s\\n' \"${COMPREPLY[@]}\"; eval \"printf '<%s>\\n' ${COMPREPLY[0]}\"; "
            f"COMP_WORDS=({wrapper} show gamebox/); COMP_CWORD=2; _factreg_complete; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    env = {**_env(tampered), "_FACTREG_COMPLETE": ""}
    done = subprocess.run(["bash", "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.splitlines() == ["'$(touch pwned)'", "<$(touch pwned)>", "gamebox/m", "gamebox/ok"], done.stderr
    assert not (tmp_path / "pwned").exists()
