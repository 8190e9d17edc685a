"""One pass for `docs check` and `docs lint` (factreg/docs/scan.py): the same problems and findings as the two
separate passes, and the same output, in the same order, from several processes as from one."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from factreg.docs import check as chk
from factreg.docs import lint as ln
from factreg.docs import scan as sc
from tests.docs_support import record
from tests.test_lint_prefilter import bench_documents


def make_tree(root: Path, n: int = 90) -> Path:
    """Documents in nested folders, some citing facts (one of them outdated), one binary, one not UTF-8, one with
    a broken marker."""
    rnd = random.Random(3)
    docs = bench_documents(0.2, n)
    for i, text in enumerate(docs):
        folder = root / f"d{i % 4}" / f"e{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        if i % 9 == 0:
            shown = "28 tok/s" if rnd.random() < 0.3 else "12.3 ± 0.4 tok/s"
            text += f"\nMeasured: <!-- fact: m1/model/tg32 -->{shown}<!-- /fact --> here.\n"
        (folder / f"doc{i:03d}.md").write_text(text, encoding="utf-8")
    (root / "d0" / "bin.md").write_bytes(b"\x00\x01binary 28 tok/s")
    (root / "d1" / "latin1.md").write_bytes("caf\xe9 28 tok/s".encode("latin-1"))
    (root / "d2" / "broken.md").write_text("It runs at 28 tok/s. <!-- fact: m1/model/tg32 -->oops\n", encoding="utf-8")
    return root


def parallel_everywhere(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make any tree large enough for several processes; the chunk counts of every parallel run are recorded."""
    monkeypatch.setattr(sc, "PARALLEL_MIN_BYTES", 0)
    runs: list[int] = []
    real = sc._parallel

    def spy(chunks, opts, reader, jobs):  # type: ignore[no-untyped-def]
        runs.append(len(chunks))
        return real(chunks, opts, reader, jobs)

    monkeypatch.setattr(sc, "_parallel", spy)
    return runs


def key(scan: sc.Scan) -> tuple:  # type: ignore[type-arg]
    return (
        [(d.path, d.text, d.markers, d.problems) for d in scan.docs],
        scan.findings,
        scan.unreadable,
    )


@pytest.mark.parametrize("targets", [False, True])
def test_one_pass_finds_what_the_two_passes_find(tmp_path: Path, targets: bool) -> None:
    root = make_tree(tmp_path / "docs")
    both = sc.scan([root], lint=True, targets=targets, jobs=1)
    docs = chk.scan([root])
    findings, unreadable = ln.lint_documents([root], targets=targets)
    assert [(d.path, d.text, d.markers, d.problems) for d in both.docs] == [
        (d.path, d.text, d.markers, d.problems) for d in docs
    ]
    assert both.findings == findings
    assert both.unreadable == unreadable
    assert len(findings) > 100 and len(docs) > 10 and len(unreadable) == 2


@pytest.mark.parametrize("jobs", [2, 3])
def test_several_processes_give_the_same_result_in_the_same_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    root = make_tree(tmp_path / "docs")
    one = sc.scan([root], lint=True, targets=True, jobs=1)
    runs = parallel_everywhere(monkeypatch)
    many = sc.scan([root], lint=True, targets=True, jobs=jobs)
    assert runs == [jobs * sc.CHUNKS_PER_JOB]  # the parallel path ran, over that many chunks
    assert key(many) == key(one)
    lint_only = sc.scan([root], check=False, lint=True, jobs=jobs)
    assert lint_only.docs == [] and lint_only.findings == [f for f in one.findings if f.kind == "claim"]


def test_small_trees_stay_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree(tmp_path / "docs", 10)
    runs: list[int] = []
    monkeypatch.setattr(sc, "_parallel", lambda *a: runs.append(1))
    sc.scan([root], lint=True, jobs=2)
    assert runs == []  # under PARALLEL_MIN_BYTES


def test_cli_check_with_lint_and_jobs(registry, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record(registry, "m1/model/tg32", 12.3, 0.4, machine="m1")
    monkeypatch.setenv("FACTREG_CACHE_DIR", "")  # every run reads and lints (tests/test_doc_cache.py: with it)
    root = make_tree(tmp_path / "docs")
    check_only = cli("docs", "check", "--json", str(root))
    lint_only = cli("docs", "lint", "--json", str(root))
    one = cli("docs", "check", "--lint", "--json", "--jobs", "1", str(root))
    runs = parallel_everywhere(monkeypatch)
    two = cli("docs", "check", "--lint", "--json", "--jobs", "2", str(root))
    lint_two = cli("docs", "lint", "--json", "-j", "2", str(root))
    text_one = cli("docs", "check", "--lint", "--jobs", "1", str(root))
    text_two = cli("docs", "check", "--lint", "--jobs", "2", str(root))
    assert len(runs) == 3
    assert one.exit_code == two.exit_code == text_two.exit_code == 1
    assert one.stdout == two.stdout and one.stderr == two.stderr
    assert text_one.stdout == text_two.stdout and text_one.stderr == text_two.stderr
    assert lint_two.stdout == lint_only.stdout
    both = one.json()
    assert both["claims"] == lint_only.json() and len(both["claims"]) > 100
    assert {k: v for k, v in both.items() if k != "claims"} == check_only.json()
    assert "claims" not in check_only.json()
    assert "docs lint: " in text_one.stderr and "unsourced claim(s)" in text_one.stderr
    assert text_one.stdout.count(" tok/s (") > 50  # the claims are listed after the problems


def test_cli_check_with_lint_fails_on_claims_alone(cli, tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("Decoding runs at 28 tok/s here.\n", encoding="utf-8")
    assert cli("docs", "check", str(doc)).exit_code == 0
    run = cli("docs", "check", "--lint", str(doc))
    assert run.exit_code == 1
    assert run.stdout == f"{doc}:1:18: FR111 28 tok/s (28 tok/s)\n"
    doc.write_text("Decoding runs fast here.\n", encoding="utf-8")
    assert cli("docs", "check", "--lint", str(doc)).exit_code == 0


def test_jobs_must_be_positive(cli, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello\n", encoding="utf-8")
    run = cli("docs", "lint", "--jobs", "0", str(tmp_path))
    assert run.exit_code == 2
    with pytest.raises(Exception, match="--jobs"):
        sc.scan([tmp_path], jobs=0)


def test_json_keys_of_a_finding_are_kept(cli, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("It runs at 28 tok/s.\n", encoding="utf-8")
    (finding,) = json.loads(cli("docs", "lint", "--json", str(tmp_path)).stdout)
    assert list(finding) == ["path", "line", "col", "text", "value", "unit", "kind", "rule"]
