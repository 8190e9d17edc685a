"""Real llama-bench outputs (tests/data/llamabench-real) through factreg's importer, against an independent reading.

Each FILE has a sidecar FILE.json: where it comes from and `expected.rows` (computed by
tests/llamabench_real_support.py, which does not use factreg's parsers) or `expected.refused` for a file that is not
consistent llama-bench output. Known gaps are marked xfail(strict=True): fixing one flips its test.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from factreg.errors import FactregError
from factreg.measure import llamabench_output as lbo
from tests.llamabench_real_support import read

DATA = Path(__file__).parent / "data" / "llamabench-real"
FILES = sorted(p.name for p in DATA.iterdir() if p.name != "README.md" and not (DATA / p.name[:-5]).is_file())
# (FILES: every file that is not some other file's sidecar)

# Per file: gaps that stand between factreg and the reading, each marked xfail(strict=True) (empty: none left; the
# gaps fixed were text around tables, several tables per file, ik_llama.cpp's tgN@ppM tests, log lines inside a
# table, swept columns factreg had no identity key for, the same test in two runs of a file, rows ending in '||').
GAPS_BY_FILE: dict[str, tuple[str, ...]] = {}
# Rows that repeat another row of the same table (same test, every column the same), by hand from the files: one
# measurement with more repetitions, merged into one fact. ik-pr278: lines 8-9, pp512 with thp 1 (153.14, 152.38).
REPEATED_ROWS = {"ik-pr278-thp-only-columns.md": 1}
KNOWN_GAPS = {(f, a): "; ".join(why) for f, why in GAPS_BY_FILE.items() for a in ("read", "columns", "import")}
ASPECTS = ("read", "columns", "import")


def sidecar(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def cases() -> list[Any]:
    out = []
    for name in FILES:
        for aspect in ASPECTS:
            gap = KNOWN_GAPS.get((name, aspect))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            out.append(pytest.param(name, aspect, id=f"{name}-{aspect}", marks=marks))
    return out


def input_path(name: str, tmp_path: Path) -> Path:
    """The file factreg reads: SQL text is loaded into SQLite first, as `llama-bench -o sql | sqlite3 db` does."""
    path = DATA / name
    if path.suffix != ".sql":
        return path
    db = tmp_path / (path.stem + ".sqlite")
    conn = sqlite3.connect(db)
    with contextlib.suppress(sqlite3.Error):  # an inconsistent dump loads partly; the importer must refuse it
        conn.executescript(path.read_text(encoding="utf-8"))
    conn.commit()
    conn.close()
    return db


# ---------------------------------------------------------------- the corpus itself


def test_the_corpus_is_there() -> None:
    assert len(FILES) >= 15, FILES


@pytest.mark.parametrize("name", FILES)
def test_every_file_has_its_sidecar_and_source(name: str) -> None:
    meta = sidecar(name)
    src = meta["source"]
    assert src["url"].startswith("https://github.com/") and src["repo"] in src["url"], src
    assert len(src["commit"]) == 40 and src["path"] and src["licence"], src
    assert isinstance(meta["kind"], str) and meta["notes"], meta
    exp = meta["expected"]
    assert (exp["rows"] is None) != (exp["refused"] is None), exp
    for row in exp["rows"] or []:
        assert {"test", "n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts", "columns", "build"} <= set(row)


def test_the_readme_lists_every_file() -> None:
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for name in FILES:
        assert f"`{name}`" in readme, name


@pytest.mark.parametrize("name", FILES)
def test_the_expected_rows_are_the_independent_readers(name: str) -> None:
    exp = sidecar(name)["expected"]
    try:
        rows = read((DATA / name).read_bytes(), Path(name).suffix.lstrip("."))
    except ValueError as exc:
        assert exp["refused"] == str(exc)
    else:
        assert exp["rows"] == rows


def test_the_independent_reader_reads_what_matters() -> None:
    """Spot checks, by hand from the files."""
    rows = sidecar("ik-pr283-two-runs-gp-tests.md")["expected"]["rows"]
    assert [(r["test"], r["n_prompt"], r["n_gen"], r["n_depth"]) for r in rows[2:4]] == [
        ("tg64@pp512", 0, 64, 512), ("tg64@pp4096", 0, 64, 4096)]  # fmt: skip
    assert (rows[0]["avg_ts"], rows[0]["stddev_ts"], rows[0]["build"]["build_commit"]) == (105.5, 0.62, "f9307d79")
    assert rows[4]["build"] == {"build_commit": "7f6980fa", "build_number": "3610"}
    rows = sidecar("ik-issue419-logs-repack-ser.txt")["expected"]["rows"]
    assert len(rows) == 12 and rows[6]["columns"]["ser"] == "4,1" and rows[11]["avg_ts"] == 10.10
    rows = sidecar("ik-disc385-repack-row-in-table.md")["expected"]["rows"]
    assert len(rows) == 8 and rows[0]["test"] == "pp32"
    assert sidecar("ik-readme-old-era.csv")["expected"]["refused"].startswith("CSV line 2: 27 values")


# ---------------------------------------------------------------- factreg against the reading


def _read_by_factreg(name: str, tmp_path: Path) -> list[lbo.BenchResult]:
    return lbo.read_file(input_path(name, tmp_path))[1]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


@pytest.mark.parametrize(("name", "aspect"), cases())
def test_factreg_imports_the_file_as_the_reading_does(name: str, aspect: str, tmp_path: Path, cli: Any) -> None:
    exp = sidecar(name)["expected"]
    path = input_path(name, tmp_path)
    if exp["refused"] is not None:
        # Not consistent llama-bench output: every way in refuses it with one line, records nothing.
        if aspect == "import":
            r = cli("import", "llama-bench", str(path))
            assert r.exit_code != 0 and r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
        else:
            with pytest.raises(FactregError):
                lbo.read_file(path)
        return
    rows = exp["rows"]
    if aspect == "read":
        results = _read_by_factreg(name, tmp_path)
        got = [(r.n_prompt, r.n_gen, r.n_depth, r.avg_ts, r.stddev_ts) for r in results]
        want = [(w["n_prompt"], w["n_gen"], w["n_depth"], w["avg_ts"], w["stddev_ts"]) for w in rows]
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g[:3] == w[:3]
            assert math.isclose(g[3], w[3], rel_tol=1e-12)
            assert (g[4] is None and w[4] is None) or math.isclose(g[4], w[4], rel_tol=1e-12)
    elif aspect == "columns":
        results = _read_by_factreg(name, tmp_path)
        assert len(results) == len(rows)
        for r, w in zip(results, rows, strict=True):
            for title, value in w["columns"].items():
                key = lbo.MD_COLUMNS.get(title, title) if Path(name).suffix in (".md", ".txt") else title
                assert _text(r.fields.get(key)) == _text(value), (title, r.fields.get(key), value)
            if w["build"]:
                assert (str(r.fields.get("build_commit")), str(r.fields.get("build_number"))) == (
                    w["build"]["build_commit"], w["build"]["build_number"])  # fmt: skip
    else:
        # Tables carry no date: the import is told when the runs were made (pasted output is dated by its post).
        # A table cut down to a few columns, without the model's: the user names the facts.
        named = ["--id", "pasted/model"] if any("model" not in w["columns"] for w in rows) else []
        r = cli("import", "llama-bench", str(path), "--measured-at", "2025-05-01", *named, "--json")
        assert r.exit_code == 0, r.stderr
        assert r.json()["facts"] == len(rows) - REPEATED_ROWS.get(name, 0)
        assert len(set(r.json()["ids"])) == r.json()["facts"]  # one version of one fact per distinct result
