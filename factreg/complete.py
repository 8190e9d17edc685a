"""Shell completion, fast: the words typed so far in, one candidate per line out.

The shell scripts (`factreg completion bash|zsh|fish`) run `_FACTREG_COMPLETE=SHELL factreg WORD... INCOMPLETE`;
the entry point (factreg/__main__.py) sees the variable before it imports the command line, so completing a fact
id or a metric name imports neither typer nor SQLAlchemy nor httpx: the registry's SQLite file is read with the
standard library's sqlite3, read-only. Only an option name (`--…`) takes the slow path through the CLI itself.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote, unquote

ENV = "_FACTREG_COMPLETE"
SHELLS = ("bash", "zsh", "fish")
MAX_CANDIDATES = 200
GLOBAL_OPTIONS = ("--db", "--json", "--jsonl", "--quiet", "-q", "--color", "--no-color", "--version", "--verbose",
                  "--help", "-h")

def _panels() -> ModuleType:
    """factreg/cli/panels.py, loaded by itself: importing the package factreg.cli would load typer."""
    name = "factreg._panels_for_completion"
    if name not in sys.modules:
        path = Path(__file__).parent / "cli" / "panels.py"
        module = ModuleType(name)
        module.__file__ = str(path)
        sys.modules[name] = module  # before exec: `from __future__` annotations and dataclasses look it up
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)  # noqa: S102
    return sys.modules[name]


def _db_option(words: list[str]) -> str | None:
    db = None
    for i, word in enumerate(words):
        if word == "--db" and i + 1 < len(words):
            db = words[i + 1]
        elif word.startswith("--db="):
            db = word[5:]
    return db


def _connect(db: str | None) -> Any:
    """The registry's SQLite file opened read-only; None when there is none (or it is not SQLite)."""
    import sqlite3

    from factreg import config

    try:
        url, _ = config.resolve_db(db, config.find_project_dir())
    except Exception:  # noqa: BLE001 - completion offers nothing rather than failing
        return None
    if not url.startswith("sqlite:///"):
        return None
    path = unquote(url.split("sqlite:///", 1)[1].split("?", 1)[0])
    if not os.path.isfile(path):
        return None
    try:
        return sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error:
        return None


def _query(db: str | None, sql: str, prefix: str) -> list[str]:
    import sqlite3

    conn = _connect(db)
    if conn is None:
        return []
    try:
        # a range on the primary key, not LIKE: answers from the index whatever the registry's size
        rows = conn.execute(sql, (prefix, prefix + "\U0010ffff", MAX_CANDIDATES)).fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    return [r[0] for r in rows]


def _valid_id(text: str) -> bool:
    from factreg.errors import UsageError
    from factreg.registry.ids import check_id

    try:
        check_id(text)
    except UsageError:
        return False
    return True


def fact_ids(prefix: str, db: str | None = None) -> list[str]:
    """The ids starting with `prefix` that pass the id rules (`ids.check_id`): a registry shared with others, an
    imported file or a hand edit can hold others (`gamebox/$(id)`), and a completion is typed into a shell."""
    found = _query(db, "SELECT id FROM fact WHERE id >= ? AND id < ? ORDER BY id LIMIT ?", prefix)
    return [fact_id for fact_id in found if _valid_id(fact_id)]


def metric_names(prefix: str, db: str | None = None) -> list[str]:
    """The metric names starting with `prefix` (a custom metric's name is free text: quoted by `main`)."""
    return _query(db, "SELECT DISTINCT metric FROM fact_version WHERE metric >= ? AND metric < ? ORDER BY metric "
                      "LIMIT ?", prefix)


_PLAIN = re.compile(r"[A-Za-z0-9_./:=@%+,-]+")


def for_shell(word: str, shell: str) -> str | None:
    """`word` as the shell inserts it on the command line, or None when it cannot be offered (a line break or
    another control character). bash inserts a candidate as it is: anything but plain characters is put in single
    quotes. zsh (`compadd`) and fish quote what they insert themselves."""
    if not word or any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in word):
        return None
    if shell != "bash" or _PLAIN.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _options_of(path: list[str]) -> list[str]:
    """The option names of a command: the slow path, through the command line itself."""
    from factreg.cli import app
    from factreg.cli.completion import option_names

    return option_names(app, path)


def _takes_value(option: str, path: list[str], panels: ModuleType) -> bool:
    """Whether `option` is followed by its value: before the command only --db is; after it, the options named
    in panels.METAVARS and the short ones in panels.SHORT_VALUE_OPTIONS."""
    if not path:
        return option == "--db"
    return option in panels.METAVARS or option in panels.SHORT_VALUE_OPTIONS


def candidates(words: list[str]) -> list[str]:
    """What may come next: `words` are those after `factreg`, the last one the word being completed."""
    panels = _panels()
    incomplete, before = (words[-1], words[:-1]) if words else ("", [])
    db = _db_option(before)
    path: list[str] = []
    skip = False
    for word in before:  # the command (and subcommand) named so far, skipping options and their values
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = _takes_value(word, path, panels)
        elif not path or (path[0] in panels.SUBCOMMANDS and len(path) == 1):
            path.append(word)
    previous = before[-1] if before else ""
    if previous in panels.METRIC_OPTIONS:
        return metric_names(incomplete, db)
    if path and previous in panels.FACT_ID_OPTIONS.get(path[-1], ()):
        return fact_ids(incomplete, db)
    if previous.startswith("-") and _takes_value(previous, path, panels):
        return []  # some other option's value: the shell completes files
    if incomplete.startswith("-"):
        names = list(GLOBAL_OPTIONS) if not path else _options_of(path)
        return [n for n in names if n.startswith(incomplete)]
    if not path:
        return sorted(n for n in panels.PANELS if n.startswith(incomplete))
    if path[0] in panels.SUBCOMMANDS and len(path) == 1:
        return [n for n in panels.SUBCOMMANDS[path[0]] if n.startswith(incomplete)]
    if path[-1] in panels.TAKES_FACT_IDS:
        return fact_ids(incomplete, db)
    return []


def main(argv: list[str] | None = None) -> int:
    """Print the candidates for the words in argv (after the program name), one a line."""
    words = list(sys.argv[1:] if argv is None else argv)
    shell = os.environ.get(ENV, "bash")
    try:
        found = [shown for c in candidates(words) if (shown := for_shell(c, shell)) is not None]
    except Exception:  # noqa: BLE001 - a completion never prints a traceback into the shell
        return 1
    sys.stdout.write("".join(f"{c}\n" for c in found))
    return 0
