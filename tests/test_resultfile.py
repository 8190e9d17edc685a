"""`factreg import FILE` recognises the format by content (real files in tests/data), says which it chose, and
refuses a file it does not know in one line naming the formats it reads; llama-bench imports get `bench`'s ids;
`show` names the missing identity keys behind `no_conditions` and an imported method."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from factreg.errors import BadInput
from factreg.measure import resultfile

DATA = Path(__file__).parent / "data"
STORY = Path(__file__).parent.parent / "facts"
BENCH = DATA / "llamabench"
OTHERS = DATA / "results-others"
VLLM = OTHERS / "vllm-bench" / "openai-1.0qps-Qwen2.5-VL-3B-Instruct-20260722-060114.json"

CASES = [
    (BENCH / "new.json", "llama-bench", "json"),
    (BENCH / "new.jsonl", "llama-bench", "jsonl"),
    (BENCH / "new.csv", "llama-bench", "csv"),
    (BENCH / "new.md", "llama-bench", "md"),
    (BENCH / "new.sql", "llama-bench", "sql"),
    (DATA / "llamabench-real" / "ik-disc399-three-runs-ot.txt", "llama-bench", "md"),  # tables inside a log
    (VLLM, "vllm-bench", None),
    (OTHERS / "aiperf" / "profile_export_aiperf.json", "aiperf", None),
    (OTHERS / "llama-benchy" / "sample.json", "llama-benchy", None),
    (STORY / "01-night.jsonl", "jsonl", None),
]


@pytest.mark.parametrize("path, fmt, variant", CASES, ids=[c[0].name for c in CASES])
def test_every_format_is_recognised_from_a_real_file(path: Path, fmt: str, variant: str | None) -> None:
    found = resultfile.recognise(path)
    assert (found.format, found.variant) == (fmt, variant)


def test_a_sqlite_database_and_an_export_are_recognised(tmp_path: Path, cli) -> None:
    db = tmp_path / "bench.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript((BENCH / "new.sql").read_text(encoding="utf-8"))
    conn.close()
    assert resultfile.recognise(db) == resultfile.Recognised("llama-bench", "sqlite")
    cli("record", "a/b", "--metric", "e2e", "--value", "1.0")
    export = tmp_path / "export.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0
    assert resultfile.recognise(export).format == "jsonl"


@pytest.mark.parametrize("path, fmt, variant", [c for c in CASES if c[1] != "jsonl"] + [CASES[-1]],
                         ids=[c[0].name for c in CASES])
def test_import_without_a_format_name_says_which_it_chose(cli, path: Path, fmt: str, variant: str | None,
                                                          tmp_path: Path) -> None:
    args = ["--measured-at", "2026-10-26"] if variant in ("md", "sql") or path.suffix == ".txt" else []
    if variant == "sql":  # SQL text is read as `llama-bench -o sql | sqlite3` leaves it
        copy = tmp_path / path.name
        shutil.copy(path, copy)
        path = copy
    r = cli("import", str(path), *args, "--json")
    assert r.exit_code == 0, r.stderr
    said = resultfile.Recognised(fmt, variant).describe()
    assert f"{path}: {said}" in r.stderr
    assert cli("list", "--json").json()


def test_a_text_file_is_refused_in_one_line(cli, registry, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("We measured 28 tok/s yesterday, roughly.\n| a | b |\n|---|---|\n| 1 | 2 |\n", encoding="utf-8")
    r = cli("import", str(notes))
    assert r.exit_code == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1
    line = r.stderr.strip()
    assert line.startswith(f"Error: {notes}: not a format factreg recognises")
    for name in ("factreg JSONL", "llama-bench output", "vLLM", "AIPerf", "llama-benchy", "factreg import jsonl|"):
        assert name in line
    with pytest.raises(BadInput):
        resultfile.recognise(notes)
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world",\n "n": 3}\n', encoding="utf-8")
    r = cli("import", str(other))
    assert r.exit_code == 2 and "JSON that no reader claims" in r.stderr
    assert cli("list", "--json").json() == []


def test_files_of_two_formats_are_refused_before_anything_is_imported(cli, registry) -> None:
    r = cli("import", str(BENCH / "new.json"), str(STORY / "01-night.jsonl"))
    assert r.exit_code == 2 and "different formats" in r.stderr
    assert cli("list", "--json").json() == []


def test_llama_bench_imports_get_bench_ids_under_the_machine(cli) -> None:
    r = cli("import", str(BENCH / "new.json"), "--json")
    assert r.exit_code == 0, r.stderr
    assert "machine testhost (from FACTREG_HOSTNAME)" in r.stderr and "--machine NAME" in r.stderr
    ids = r.json()["ids"]
    assert "testhost/qwen3-35b-a3b-q4-k-m/tg32@1" in ids and all(i.startswith("testhost/qwen3-35b-a3b-q4-k-m/")
                                                                  for i in ids)
    r = cli("import", "llama-bench", str(BENCH / "new.jsonl"), "--machine", "gamebox", "--json")
    assert r.exit_code == 0, r.stderr
    assert all(i.startswith("gamebox/qwen3-35b-a3b-q4-k-m/") for i in r.json()["ids"])
    fact = cli("show", "gamebox/qwen3-35b-a3b-q4-k-m/tg32", "--json").json()
    assert fact["conditions"]["identity"]["machine"] == "gamebox"
    assert fact["method"]["kind"] == "imported" and fact["method"]["tool"] == "llama-bench"
    text = cli("show", "gamebox/qwen3-35b-a3b-q4-k-m/tg32").stdout
    assert "method llama-bench, imported" in text
    bad = cli("import", str(VLLM), "--machine", "gamebox")
    assert bad.exit_code == 2 and "--machine is for llama-bench output" in bad.stderr


def test_show_names_the_missing_identity_keys(cli) -> None:
    assert cli("import", str(VLLM)).exit_code == 0
    ttft = next(f for f in cli("list", "--json").json() if f["metric"] == "ttft_any")
    assert "no_conditions" in ttft["flags"]
    text = cli("show", ttft["id"]).stdout
    assert "no_conditions (missing: endpoint|machine)" in text
    assert "method vllm-bench-serve, imported" in text
    cli("record", "bare/e2e", "--metric", "e2e", "--value", "1.0")
    assert "no_conditions (missing: model, endpoint|machine)" in cli("show", "bare/e2e").stdout
