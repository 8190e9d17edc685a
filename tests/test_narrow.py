"""Tables never break an id: on an 80-column terminal (a real pseudo-terminal) `list`, `history` and `status` keep
every id whole on one line, shortening other columns with `…` or dropping them; `--since 7d|2w|yesterday`;
`list --status S` and `list PREFIX`."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ago, pinned_env

LONG = [f"gamebox/qwen3moe-30b-a3b-q4-k-medium/pp512-tg128-d4096-ngl99-fa1-t{i}" for i in (8, 16)]
LONGER = "gamebox/qwen3moe-30b-a3b-q4-k-medium/pp512-tg128-d4096-ngl99-fa1-t8-ub512-b2048-ctk-f16-mmap0"  # > 80


def on_terminal(db: Path, *args: str, columns: int = 80) -> list[str]:
    """`factreg ARGS` on a pseudo-terminal `columns` wide: its lines as the terminal shows them."""
    leader, follower = pty.openpty()
    env = pinned_env(FACTREG_DB=str(db), COLUMNS=str(columns), LINES="50", TERM="xterm", NO_COLOR="1")
    proc = subprocess.Popen([sys.executable, "-m", "factreg", *args], stdin=follower, stdout=follower,
                            stderr=subprocess.DEVNULL, env=env, close_fds=True)  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n").splitlines()


@pytest.fixture
def long_ids(cli, db_path: Path) -> Path:
    for i, fid in enumerate(LONG):
        r = cli("record", fid, "--metric", "tg_rate", "--samples", "11.9,12.4,10.8", "--cond", "machine=gamebox",
                "--cond", "model=qwen3", "--info", "note=a long info value that makes no column narrow",
                "--measured-at", ago(i))
        assert r.exit_code == 0, r.stderr
    cli("record", LONG[0], "--metric", "tg_rate", "--samples", "12.0,12.1,12.2", "--measured-at", ago(0.5))
    for value in ("11.9", "12.3"):
        cli("record", LONGER, "--metric", "tg_rate", "--value", value, "--db", str(db_path).replace(".db", "-2.db"))
    return db_path


@pytest.mark.parametrize("command", [["list"], ["status"]])
def test_every_id_stays_whole_on_one_line_at_80_columns(long_ids: Path, command: list[str]) -> None:
    lines = on_terminal(long_ids, *command)
    for fid in LONG:
        assert any(fid in line for line in lines), (fid, lines)
    # Every line fits the terminal, so the terminal does not wrap one either: other columns shortened or dropped.
    assert all(len(line) <= 80 for line in lines), lines


def test_history_keeps_an_id_wider_than_the_terminal_whole(long_ids: Path) -> None:
    lines = on_terminal(long_ids.with_name(long_ids.name.replace(".db", "-2.db")), "history", LONGER)
    assert lines[0].startswith(LONGER + " — 2 version(s)"), lines
    assert all(len(line) <= 80 for line in lines[1:]), lines


def test_a_table_keeps_the_id_and_drops_columns_from_the_right() -> None:
    from factreg.cli.common import Column, fit_columns

    cols = [Column(n, n, str) for n in ("id", "metric", "value", "status", "flags", "measured")]
    cells = [["x" * 70, "tg_rate", "median 11.9 tok/s · sd 0.8 · n=3", "fresh", "few_samples", "2026-11-30"]]
    kept = fit_columns(cols, cells, 80)
    assert kept[0] == (0, 70) and len(kept) < len(cols)  # the id whole, columns dropped from the right
    assert sum(w for _, w in kept) + 2 * (len(kept) - 1) <= 80
    wide = fit_columns(cols, cells, 200)
    assert [i for i, _ in wide] == list(range(len(cols))) and wide[2] == (2, len(cells[0][2]))


def test_since_takes_durations_and_words(cli) -> None:
    for fid, days in (("a/new", 0.2), ("a/week", 5), ("a/fortnight", 12), ("a/old", 40)):
        assert cli("record", fid, "--metric", "e2e", "--value", "1", "--measured-at", ago(days)).exit_code == 0

    def ids(*args: str) -> list[str]:
        run = cli("list", "--json", *args)
        assert run.exit_code == 0, run.stderr
        return sorted(f["id"] for f in run.json())

    assert ids("--since", "7d") == ["a/new", "a/week"]
    assert ids("--since", "2w") == ["a/fortnight", "a/new", "a/week"]
    assert ids("--since", "yesterday") == ["a/new"]
    assert ids("--since", ago(6, date_only=True)) == ["a/new", "a/week"]
    assert cli("status", "--json", "--since", "7d").json()["facts"][0]["id"] == "a/new"
    bad = cli("list", "--since", "last week")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: invalid --since 'last week'")
    assert "7d, 2w" in bad.stderr


def test_list_by_status_and_by_prefix(cli) -> None:
    cli("record", "gamebox/a3b/tg32", "--metric", "tg_rate", "--value", "11.9")
    cli("record", "gamebox/a3b/pp512", "--metric", "pp_rate", "--value", "140", "--measured-at", ago(100))
    cli("record", "gamebox/a3bx/tg32", "--metric", "tg_rate", "--value", "9")
    cli("record", "night/tg32", "--metric", "tg_rate", "--value", "8", "--measured-at", ago(40))

    def ids(*args: str) -> list[str]:
        return [f["id"] for f in cli("list", "--json", *args).json()]

    assert ids("gamebox/a3b") == ["gamebox/a3b/pp512", "gamebox/a3b/tg32"]
    assert ids("gamebox/") == ["gamebox/a3b/pp512", "gamebox/a3b/tg32", "gamebox/a3bx/tg32"]
    assert ids("gamebox/a3b/tg32") == ["gamebox/a3b/tg32"]
    assert ids("--status", "aging") == ["night/tg32"]
    # pp512 is past error_after and was typed by hand: `unverifiable (no method)`
    assert ids("--status", "unverifiable,aging") == ["gamebox/a3b/pp512", "night/tg32"]
    assert ids("gamebox", "--status", "unverifiable") == ["gamebox/a3b/pp512"]
    assert ids("--status", "stale") == []
    bad = cli("list", "--status", "old")
    assert bad.exit_code == 2 and "choose among fresh" in bad.stderr
