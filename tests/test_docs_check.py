"""`docs check`: what it finds (stale, refuted, superseded, unknown, changed text, bad files) and that it writes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from factreg.docs import check as chk
from factreg.docs import walk
from factreg.registry import facts
from tests.docs_support import record, verify

SKILL = (
    "---\nname: gamebox-llm\ndescription: How fast gamebox decodes (28 tok/s).\n---\n# Gamebox\n\n"
    "Decoding runs at <!-- fact: gamebox/a3b/tg32 -->28.0 tok/s<!-- /fact --> on this machine.\n"
)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_clean_document_exits_0(registry, cli, tmp_path: Path) -> None:
    record(registry, "gamebox/a3b/tg32", 28.0)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    run = cli("docs", "check", str(tmp_path / "docs"))
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.stdout == ""
    assert "1 citation(s), 0 problem(s)" in run.stderr


def test_refuted_fact_fails_with_file_line_fact_and_fix(registry, cli, tmp_path: Path) -> None:
    record(registry, "gamebox/a3b/tg32", 28.0)
    verify(registry, "gamebox/a3b/tg32", "refuted", 11.9, 7.2, "tg32 now 11.9 ± 7.2 tok/s (p=0.001)")
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "SKILL.md"
    doc.write_text(SKILL, encoding="utf-8")
    before = snapshot(tmp_path / "docs")
    run = cli("docs", "check", str(doc))
    assert run.exit_code == 1
    assert f"{doc}:7:18: gamebox/a3b/tg32: refuted: cites gamebox/a3b/tg32, which is refuted" in run.stdout
    assert "fix: `factreg correct gamebox/a3b/tg32 --verification 1`" in run.stdout
    assert snapshot(tmp_path / "docs") == before  # check writes nothing


def test_text_differs_shows_a_diff(registry, cli, tmp_path: Path) -> None:
    record(registry, "a/b", 11.9, 7.2)
    doc = tmp_path / "README.md"
    doc.write_text("Speed: <!-- fact: a/b -->28 tok/s<!-- /fact -->.\n", encoding="utf-8")
    run = cli("docs", "check", str(doc), "--json")
    assert run.exit_code == 1
    (problem,) = run.json()["problems"]
    assert problem["kind"] == "text_differs" and problem["line"] == 1
    assert problem["expected"] == "11.9 ± 7.2 tok/s" and problem["actual"] == "28 tok/s"
    assert problem["diff"] == [
        "- Speed: <!-- fact: a/b -->28 tok/s<!-- /fact -->.",
        "+ Speed: <!-- fact: a/b -->11.9 ± 7.2 tok/s<!-- /fact -->.",
    ]
    assert "docs sync" in problem["fix"]


def test_stale_by_age_and_by_condition_change(registry, cli, tmp_path: Path) -> None:
    record(registry, "old/one", 5.0, measured_at="2020-01-01T00:00:00Z", machine="m1")
    record(registry, "m2/before", 10.0, machine="m2", build_commit="b1", measured_at="2026-01-01T00:00:00Z")
    record(registry, "m2/after", 12.0, machine="m2", build_commit="b2")
    doc = tmp_path / "a.md"
    doc.write_text(
        "<!-- fact: old/one -->5.00 tok/s<!-- /fact -->\n<!-- fact: m2/before -->10.0 tok/s<!-- /fact -->\n"
        "<!-- fact: m2/after -->12.0 tok/s<!-- /fact -->\n",
        encoding="utf-8",
    )
    run = cli("docs", "check", str(doc), "--json")
    assert run.exit_code == 1
    got = {(p["fact_id"], p["kind"]) for p in run.json()["problems"]}
    # old/one was typed by hand: stale, and nothing can re-measure it (`unverifiable (no method)`)
    assert got == {("old/one", "unverifiable"), ("m2/before", "stale")}
    reasons = {p["fact_id"]: p["message"] for p in run.json()["problems"]}
    assert "error_after" in reasons["old/one"]
    assert "m2 now runs build_commit b2" in reasons["m2/before"]


def test_superseded_and_unknown(registry, cli, tmp_path: Path) -> None:
    record(registry, "x/old", 28.0)
    record(registry, "x/new", 11.9, 7.2)
    facts.supersede(registry, "x/old", "x/new", "re-measured")
    doc = tmp_path / "a.md"
    doc.write_text(
        "<!-- fact: x/old -->28.0 tok/s<!-- /fact --> and <!-- fact: nope/none -->?<!-- /fact -->\n", encoding="utf-8"
    )
    run = cli("docs", "check", str(doc), "--json")
    assert run.exit_code == 1
    kinds = {p["kind"]: p for p in run.json()["problems"]}
    assert set(kinds) == {"superseded", "unknown_fact"}
    assert kinds["superseded"]["expected"] == "11.9 ± 7.2 tok/s"
    assert "superseded by x/new" in kinds["superseded"]["message"]
    assert kinds["superseded"]["diff"][1] == (
        "+ <!-- fact: x/new -->11.9 ± 7.2 tok/s<!-- /fact --> and <!-- fact: nope/none -->?<!-- /fact -->"
    )
    assert kinds["unknown_fact"]["fact_id"] == "nope/none"


def test_bad_files_are_findings_not_crashes(registry, cli, tmp_path: Path) -> None:
    record(registry, "a/b", 1.0)
    root = tmp_path / "docs"
    (root / "deep" / "er").mkdir(parents=True)
    (root / "bin.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / "latin1.md").write_bytes(b"# Caf\xe9\nspeed <!-- fact: a/b -->1.00<!-- /fact -->\n")
    with open(root / "huge.md", "wb") as fh:  # 200 MB, sparse: the size alone rules it out
        fh.truncate(200 * 1024 * 1024)
    (root / "deep" / "er" / "loop").symlink_to(root, target_is_directory=True)
    (root / "self.md").symlink_to(root / "self.md")
    (root / "broken.md").symlink_to(root / "missing.md")
    (root / "deep" / "er" / "ok.md").write_text(
        "<!-- fact: a/b -->1.00 tok/s<!-- /fact --> <!-- fact: a/b -->x\n", encoding="utf-8"
    )
    run = cli("docs", "check", str(root), "--json")
    assert run.exit_code == 1, run.stderr
    got = {(Path(p["path"]).name, p["kind"]) for p in run.json()["problems"]}
    assert got == {
        ("bin.md", "binary"),
        ("latin1.md", "encoding"),
        ("huge.md", "too_big"),
        ("loop", "symlink_loop"),
        ("self.md", "symlink_loop"),
        ("broken.md", "unreadable"),
        ("ok.md", "bad_marker"),
    }
    messages = " ".join(p["message"] for p in run.json()["problems"])
    assert "200 MB is over the 50 MB limit" in messages and "line 1" in messages
    assert run.json()["markers"] == 1  # the good marker in ok.md was checked (and is fine)


def test_size_cap_from_config(registry, tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("x" * 3000, encoding="utf-8")
    problems = chk.check(registry, [doc], {"docs": {"max_file_mb": 0.001}})
    assert [p.kind for p in problems] == ["too_big"]
    assert chk.check(registry, [doc], {}) == []


def test_no_markers_needs_no_registry(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FACTREG_DB", str(tmp_path / "nowhere" / "none.db"))
    (tmp_path / "a.md").write_text("# nothing cited\n", encoding="utf-8")
    run = cli("docs", "check", str(tmp_path / "a.md"))
    assert run.exit_code == 0
    assert not (tmp_path / "nowhere").exists()


def test_missing_registry_or_path_is_exit_2(cli, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.md").write_text("<!-- fact: a -->1<!-- /fact -->\n", encoding="utf-8")
    run = cli("docs", "check", str(tmp_path / "nope.md"))
    assert run.exit_code == 2 and run.stderr.startswith("Error: no such file or folder")
    monkeypatch.setenv("FACTREG_DB", str(tmp_path / "none.db"))
    run = cli("docs", "check", str(tmp_path / "a.md"))
    assert run.exit_code == 2 and "Error: no registry" in run.stderr


def test_walker_skips_git_and_hidden_folders_and_takes_markdown_only(tmp_path: Path) -> None:
    for rel in (".git/x.md", ".hidden/y.md", "a/b.markdown", "a/c.MD", "a/d.txt", "e.mdx"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "a", target_is_directory=True)  # same folder twice: once
    files, problems = walk.markdown_files([tmp_path])
    assert sorted(p.relative_to(tmp_path).as_posix() for p in files) == ["a/b.markdown", "a/c.MD", "e.mdx"]
    assert problems == []
    os.chmod(tmp_path / "a", 0o000)
    try:
        if os.geteuid() != 0:  # root reads everything
            _, problems = walk.markdown_files([tmp_path / "a"])
            assert problems and problems[0].kind == "unreadable"
    finally:
        os.chmod(tmp_path / "a", 0o755)


def test_huge_format_is_a_finding_not_gigabytes(registry, db_url: str, tmp_path: Path) -> None:
    """`{value:>400000000}` would take 3.5 GB and `{value:.999999999f}` 1 GB: under a 512 MB address-space limit
    (so nothing that large is ever allocated on this machine), `docs check` reports both as marker problems."""
    import resource
    import subprocess
    import sys

    record(registry, "a/b", 11.9, 7.2)
    doc = tmp_path / "huge.md"
    doc.write_text(
        'w <!-- fact: a/b format="{value:>400000000}" -->1<!-- /fact -->\n\n'
        'p <!-- fact: a/b format="{value:.999999999f}" -->1<!-- /fact -->\n\n'
        "ok <!-- fact: a/b -->11.9 ± 7.2 tok/s<!-- /fact -->\n",
        encoding="utf-8",
    )
    limit = 512 * 1024 * 1024

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    run = subprocess.run(
        [sys.executable, "-m", "factreg", "docs", "check", "--json", str(doc)],
        env={**os.environ, "FACTREG_DB": db_url},
        preexec_fn=cap,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and "MemoryError" not in run.stderr
    problems = json.loads(run.stdout)["problems"]
    assert [(p["line"], p["kind"]) for p in problems] == [(1, "bad_marker"), (3, "bad_marker")]
    assert "width 400000000 is over the limit of 64" in problems[0]["message"]
    assert "precision 999999999 is over the limit of 20" in problems[1]["message"]


def _one_paragraph(n: int) -> str:
    return "Speeds: " + " ".join(f"<!-- fact: a/b -->{i} tok/s<!-- /fact -->" for i in range(n)) + "\n"


def test_check_is_linear_in_the_markers_of_one_paragraph(tmp_path: Path) -> None:
    """n outdated markers on one line: every problem's diff shows a window around its marker, so the characters
    `docs check` produces (and the copies it makes) grow with n, not n² (the whole line once per marker)."""
    index = {"a/b": {"id": "a/b", "value": 11.9, "spread": 7.2, "unit": "tok/s", "status": "fresh"}}
    sizes = {}
    for n in (100, 400, 1600):
        doc = tmp_path / f"p{n}.md"
        doc.write_text(_one_paragraph(n), encoding="utf-8")
        problems = chk.check_scanned(chk.scan([doc]), index)  # type: ignore[arg-type]
        assert len(problems) == n and all(p.kind == "text_differs" for p in problems)
        sizes[n] = sum(len(line) for p in problems for line in p.diff)
        longest = max(len(line) for p in problems for line in p.diff)
        assert longest <= 2 * chk.DIFF_CONTEXT + 80, longest  # a window, not the line
    assert sizes[400] <= 4.2 * sizes[100] and sizes[1600] <= 4.2 * sizes[400], sizes
    first = chk.check_scanned(chk.scan([tmp_path / "p100.md"]), index)[1]  # type: ignore[arg-type]
    assert first.diff[0].startswith("- Speeds: <!-- fact: a/b -->0 tok/s<!-- /fact --> <!-- fact: a/b -->1 tok/s")
    assert first.diff[0].endswith("…") and first.diff[1].endswith("…")


@pytest.mark.alone
def test_unclosed_openers_are_read_once(tmp_path: Path) -> None:
    """A paragraph of `<!-- fact:` openers that never close (with quotes and dashes): each is read up to the next
    `<!--`, so 4× the openers cost about 4× the CPU; reading each to the end of the line (quadratic: 16×) took
    minutes at 400 KB. Growth as a ratio, no time limit."""
    import subprocess
    import sys

    piece = '<!-- fact: a/b format="x - y" - '
    code = (
        "import sys, time; from factreg.docs import markers as mk; text = open(sys.argv[1], encoding='utf-8').read()\n"
        "best = None\n"
        "for _ in range(3):\n"
        "    t = time.process_time(); m, p = mk.parse(text); spent = time.process_time() - t\n"
        "    best = spent if best is None else min(best, spent)\n"
        "print(len(m), len(p), best)"
    )
    cpu = {}
    for size in (100_000, 400_000):
        doc = tmp_path / f"openers{size}.md"
        doc.write_text("P " + piece * (size // len(piece)) + "\n" + _one_paragraph(3), encoding="utf-8")
        run = subprocess.run([sys.executable, "-c", code, str(doc)], capture_output=True, text=True, timeout=300)
        found, problems, seconds = run.stdout.split()
        assert (found, problems) == ("3", "0"), run.stderr
        cpu[size] = float(seconds)
    assert cpu[400_000] < 8 * max(cpu[100_000], 1e-3), cpu
