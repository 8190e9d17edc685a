"""docs/cli.md is the `--help` of every command; regenerate it with `python -m factreg.cli.reference`."""

from pathlib import Path

from factreg.cli import reference

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def test_cli_reference_is_up_to_date():
    expected = reference.render()
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/cli.md is out of date: run `python -m factreg.cli.reference > docs/cli.md`")


def test_reference_covers_every_command():
    text = reference.render()
    for name in ("record", "show", "list", "history", "init", "env", "export", "import", "demo"):
        assert f"## `factreg {name}`" in text
