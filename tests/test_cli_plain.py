"""Piped output printed without rich (cli/tables.py: `plain_table`, `print_lines`) is byte for byte what rich prints,
and falls back to rich whenever it might not be."""

from __future__ import annotations

import random

import pytest

from factreg.cli import tables
from factreg.cli.tables import Bold, Column

# Characters of every kind the plain path must either print as rich does or hand to rich: ASCII (spaces and colons
# too, for times and emoji codes), the one-column characters factreg writes, letters with accents, a wide character,
# a combining accent, a soft hyphen, an emoji and a character rich gives no width.
POOL = list("abcXYZ019 .,-_/=[]\\:") + ["·", "—", "…", "±", "×", "→", "≤", "é", "ß", "ő", "中", "\u0301", "\u00ad",
                                        "😀", "\u200b"]
WORDS = [":smile:", ":100:", "02:30:00Z", "::", ":30:", "[bold]x[/bold]", "token=sk-abcdefgh12345678", "  ", "a:b:c"]


CLEAN = POOL[:POOL.index("é") + 1]  # what the plain path may print itself


def _text(rng: random.Random, longest: int, clean: bool = False) -> str:
    if clean:
        return "".join(rng.choice(CLEAN) for _ in range(rng.randint(0, longest))).rstrip()
    parts = [rng.choice(WORDS) if rng.random() < 0.08 else rng.choice(POOL) for _ in range(rng.randint(0, longest))]
    return "".join(parts)


def _both(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, show) -> tuple[str, str, bool]:  # type: ignore[no-untyped-def]
    """What `show()` prints through the plain path and through rich alone, and whether the plain path printed
    it itself (without asking rich for a console)."""
    asked: list[bool] = []
    made = tables.console

    def console(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(True)
        return made(*args, **kwargs)

    monkeypatch.setattr(tables, "console", console)
    monkeypatch.setattr(tables, "plain_stdout", lambda: True)
    capsys.readouterr()
    show()
    plain = capsys.readouterr().out
    itself = not asked
    monkeypatch.setattr(tables, "plain_stdout", lambda: False)
    show()
    return plain, capsys.readouterr().out, itself


def test_one_column_characters_are_one_column_for_rich():
    from rich._emoji_codes import EMOJI
    from rich.cells import cell_len

    wide = [hex(code) for lo, hi in tables._ONE_COLUMN for code in range(lo, hi + 1) if cell_len(chr(code)) != 1]
    assert wide == []
    assert sorted(name for name in EMOJI if name.isdigit()) == sorted(tables._DIGIT_EMOJI)


def test_piped_tables_print_what_rich_prints(capsys, monkeypatch):
    rng = random.Random(20261202)
    plain_taken = fallback = 0
    for _ in range(400):
        ncol = rng.randint(1, 5)
        justify = [rng.choice(("left", "left", "right")) for _ in range(ncol)]
        longest = rng.choice((6, 12, 60))
        rows = [[_text(rng, longest) for _ in range(ncol)] for _ in range(rng.randint(0, 5))]
        columns = [Column(rng.choice(("id", "value", "n", "status", "flags", "version", "reason")) + str(i), str(i),
                          lambda row, i=i: row[i], justify[i]) for i in range(ncol)]
        plain, rich, itself = _both(capsys, monkeypatch, lambda rows=rows, columns=columns: tables.print_table(rows, columns))
        assert plain == rich, (rows, justify)
        plain_taken += itself
        fallback += not itself
    assert plain_taken > 60 and fallback > 60, (plain_taken, fallback)  # both paths were compared


def test_piped_lines_print_what_rich_prints(capsys, monkeypatch):
    rng = random.Random(20261203)
    plain_taken = fallback = 0
    for _ in range(400):
        lines: list[str | list[str]] = []
        clean = rng.random() < 0.5
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.4:  # parts: a fact's id, metric and headline (no backslash: rich's escaping of
                # one at a part's end breaks its own markup, on either path)
                parts = [_text(rng, 10, clean).replace("\\", "") for _ in range(rng.randint(1, 3))]
                lines.append([Bold(p) if rng.random() < 0.5 else p for p in parts])
            else:
                lines.append("  " + _text(rng, rng.choice((10, 40, 200)), clean))
        plain, rich, itself = _both(capsys, monkeypatch, lambda lines=lines: tables.print_lines(lines))
        assert plain == rich, lines
        plain_taken += itself
        fallback += not itself
    assert plain_taken > 60 and fallback > 60, (plain_taken, fallback)  # both paths were compared
    assert tables.plain_text("  samples: 21.22, 23.50", cell=False)
    assert tables.plain_text("  measured 2026-10-26T02:30:00Z, method manual", cell=False)
    assert not tables.plain_text("note :smile:", cell=False)
    assert not tables.plain_text("中", cell=False)
    assert not tables.plain_text(" padded ")


def test_a_forced_terminal_leaves_the_choice_to_rich(monkeypatch):
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv("FORCE_COLOR", raising=False)
        monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
        assert tables.plain_stdout()
        monkeypatch.setenv(var, "")  # any value, even empty: rich reads it
        assert not tables.plain_stdout()
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setattr(tables.GLOBAL, "color", True)
    assert not tables.plain_stdout()
