"""tests/README.md maps every module of factreg/ to the tests that exercise it, and stays true as modules move."""

from __future__ import annotations

from pathlib import Path

from tests import modulemap


def test_the_readme_of_the_tests_is_the_map_as_generated_now():
    written = (Path(__file__).resolve().parent / "README.md").read_text(encoding="utf-8")
    assert written == modulemap.build(), "regenerate: python -m tests.modulemap > tests/README.md"


def test_every_module_is_reached_by_some_test_file():
    rows = [line for line in modulemap.build().splitlines() if line.startswith("| `factreg")]
    assert len(rows) == len(modulemap.modules())
    assert [row for row in rows if row.endswith("| — |")] == []


def test_a_relative_import_counts_as_an_import(tmp_path):
    known = {"factreg.pkg", "factreg.pkg.a", "factreg.pkg.b"}
    src = tmp_path / "b.py"
    src.write_text("from . import a\nfrom .a import thing\n", encoding="utf-8")
    assert modulemap.imported(src, known, "factreg.pkg") == {"factreg.pkg", "factreg.pkg.a"}
