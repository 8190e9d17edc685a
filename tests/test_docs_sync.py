"""`docs sync`: rewrites marker text in place (following superseded facts), only changed files, atomically."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from factreg.docs import sync as sy
from factreg.registry import facts
from tests.conftest import ago
from tests.docs_support import record, verify

FRONT = "---\nname: gamebox-llm\ndescription: >\n  Local LLM on gamebox: 28 tok/s decode, see below.\nmetadata: {a: 1}\n---\n"
MEASURED = ago(60)  # aging (warn_after 30d), not yet stale (error_after 90d), whatever the tests' now
SKILL = FRONT + (
    "# Gamebox\r\n\r\nDecoding runs at <!-- fact: gamebox/a3b/tg32 -->28.0 tok/s<!-- /fact --> here;\r\n"
    'median <!-- fact: gamebox/a3b/tg32 format="{value:.0f} {unit}" asof -->28 tok/s '
    f"(as of {MEASURED[:10]})<!-- /fact -->.\r\n"
)


def test_case_study_refuted_then_corrected(registry, cli, tmp_path: Path) -> None:
    """The acceptance scenario: 28 tok/s cited, refuted at 11.9 ± 7.2, corrected, synced, clean."""
    record(registry, "gamebox/a3b/tg32", 28.0, measured_at=MEASURED, machine="gamebox")
    skill = tmp_path / "skills" / "gamebox" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_bytes(SKILL.encode("utf-8"))
    first = cli("docs", "check", str(tmp_path / "skills"))
    assert first.exit_code == 0, first.stdout  # (aging is not a docs problem)

    verify(registry, "gamebox/a3b/tg32", "refuted", 11.9, 7.2, "tg32 11.9 ± 7.2 tok/s, n=5")
    refuted = cli("docs", "check", str(tmp_path / "skills"))
    assert refuted.exit_code == 1
    assert f"{skill}:9:18: gamebox/a3b/tg32: refuted" in refuted.stdout
    assert f"{skill}:10:8: gamebox/a3b/tg32: refuted" in refuted.stdout

    record(registry, "gamebox/a3b/tg32-b6012", 11.9, 7.2, machine="gamebox")
    facts.supersede(registry, "gamebox/a3b/tg32", "gamebox/a3b/tg32-b6012", "refuted by llama-bench tg32")
    superseded = cli("docs", "check", str(tmp_path / "skills"))
    assert superseded.exit_code == 1
    assert "superseded by gamebox/a3b/tg32-b6012" in superseded.stdout

    synced = cli("docs", "sync", str(tmp_path / "skills"))
    assert synced.exit_code == 0, synced.stderr
    assert synced.stdout == f"{skill}\n"
    data = skill.read_bytes().decode("utf-8")
    assert data.startswith(FRONT)  # front matter byte-identical
    today = facts.get(registry, "gamebox/a3b/tg32-b6012")["measured_at"][:10]
    assert data[len(FRONT) :] == (
        "# Gamebox\r\n\r\nDecoding runs at <!-- fact: gamebox/a3b/tg32-b6012 -->11.9 ± 7.2 tok/s<!-- /fact --> here;\r\n"
        f'median <!-- fact: gamebox/a3b/tg32-b6012 format="{{value:.0f}} {{unit}}" asof -->12 tok/s (as of {today})'
        "<!-- /fact -->.\r\n"
    )
    clean = cli("docs", "check", str(tmp_path / "skills"))
    assert clean.exit_code == 0, clean.stdout
    again = cli("docs", "sync", str(tmp_path / "skills"))
    assert again.exit_code == 0 and again.stdout == ""


def test_only_changed_files_are_written(registry, tmp_path: Path) -> None:
    record(registry, "a/b", 11.9, 7.2)
    good = tmp_path / "good.md"
    bad = tmp_path / "bad.md"
    plain = tmp_path / "plain.md"
    good.write_text("<!-- fact: a/b -->11.9 ± 7.2 tok/s<!-- /fact -->\n", encoding="utf-8")
    bad.write_text("<!-- fact: a/b -->28 tok/s<!-- /fact -->\n", encoding="utf-8")
    plain.write_text("nothing\n", encoding="utf-8")
    for p in (good, bad, plain):
        os.utime(p, ns=(1_000_000_000, 1_000_000_000))
    inode = good.stat().st_ino
    changed = sy.sync(registry, [tmp_path], {})
    assert changed == [bad]
    assert bad.read_text(encoding="utf-8") == "<!-- fact: a/b -->11.9 ± 7.2 tok/s<!-- /fact -->\n"
    assert good.stat().st_mtime_ns == 1_000_000_000 and good.stat().st_ino == inode
    assert plain.stat().st_mtime_ns == 1_000_000_000


def test_dry_run_writes_nothing_and_unfixable_markers_exit_1(registry, cli, tmp_path: Path) -> None:
    record(registry, "a/b", 1.0)
    doc = tmp_path / "a.md"
    text = "<!-- fact: a/b -->9<!-- /fact --> <!-- fact: zz -->?<!-- /fact -->\n"
    doc.write_text(text, encoding="utf-8")
    run = cli("docs", "sync", "--dry-run", "--json", str(doc))
    assert run.exit_code == 1
    assert run.json()["changed"] == [str(doc)] and run.json()["dry_run"] is True
    assert [p["kind"] for p in run.json()["problems"]] == ["unknown_fact"]
    assert doc.read_text(encoding="utf-8") == text
    run = cli("docs", "sync", str(doc))
    assert run.exit_code == 1  # the unknown fact is still there
    assert (
        doc.read_text(encoding="utf-8")
        == "<!-- fact: a/b -->1.00 tok/s<!-- /fact --> <!-- fact: zz -->?<!-- /fact -->\n"
    )


def test_chain_of_successors_and_loop(registry, tmp_path: Path) -> None:
    for fid, v in (("c/one", 1.0), ("c/two", 2.0), ("c/three", 3.0)):
        record(registry, fid, v)
    facts.supersede(registry, "c/one", "c/two")
    facts.supersede(registry, "c/two", "c/three")
    doc = tmp_path / "a.md"
    doc.write_text("<!-- fact: c/one -->1<!-- /fact -->\n", encoding="utf-8")
    assert sy.sync(registry, [doc], {}) == [doc]
    assert doc.read_text(encoding="utf-8") == "<!-- fact: c/three -->3.00 tok/s<!-- /fact -->\n"


def test_supersede_guards(registry) -> None:
    import pytest

    from factreg.errors import NotFound, UsageError

    record(registry, "s/a", 1.0)
    record(registry, "s/b", 2.0)
    with pytest.raises(UsageError, match="itself"):
        facts.supersede(registry, "s/a", "s/a")
    with pytest.raises(NotFound):
        facts.supersede(registry, "s/a", "s/none")
    old = facts.supersede(registry, "s/a", "s/b", "re-measured")
    assert old["superseded_by"] == "s/b" and old["status"] == "superseded"
    facts.supersede(registry, "s/a", "s/b")  # the same link again: no change
    with pytest.raises(UsageError, match="loop"):
        facts.supersede(registry, "s/b", "s/a")
    record(registry, "s/c", 3.0)
    with pytest.raises(UsageError, match="already superseded by s/b"):
        facts.supersede(registry, "s/a", "s/c")


def test_sigkill_mid_sync_leaves_every_file_old_or_new(registry, db_url: str, tmp_path: Path) -> None:
    record(registry, "k/fact", 11.9, 7.2)
    root = tmp_path / "tree"
    filler = "Lorem ipsum dolor sit amet, decoding 여러 번 measured.\n" * 400  # ~20 KB
    old, new = {}, {}
    for i in range(2000):
        path = root / f"d{i % 20:02d}" / f"doc{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = f"# Doc {i}\n\n{filler}Speed: <!-- fact: k/fact -->28 tok/s<!-- /fact -->.\n{filler}"
        path.write_text(body, encoding="utf-8")
        old[path] = body
        new[path] = body.replace("28 tok/s", "11.9 ± 7.2 tok/s")
    first = sorted(old)[0]
    env = {**os.environ, "FACTREG_DB": db_url}
    proc = subprocess.Popen(
        [sys.executable, "-m", "factreg", "docs", "sync", str(root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if first.read_text(encoding="utf-8") == new[first]:
            break
        time.sleep(0.001)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    states = {"old": 0, "new": 0}
    for path in old:
        text = path.read_text(encoding="utf-8")
        assert text in (old[path], new[path]), f"{path} is half-written"
        states["old" if text == old[path] else "new"] += 1
    assert states["new"] >= 1 and states["old"] >= 1, states  # killed mid-run
    leftovers = [p for p in root.rglob("*") if p.is_file() and p not in old]
    assert all(p.name.startswith(".") and p.name.endswith(".tmp") for p in leftovers)
    # A second run finishes the job.
    still_old = sorted(p for p in old if p.read_text(encoding="utf-8") == old[p])
    assert sorted(sy.sync(registry, [root], {})) == still_old
    assert all(p.read_text(encoding="utf-8") == new[p] for p in old)


def test_hostile_units_formats_and_notes_cannot_inject_markers(registry, tmp_path: Path) -> None:
    """Units, notes and a format's own text holding marker syntax, backticks and line breaks: the first sync
    rewrites each marker once; the document then checks clean and a second and third sync change no byte."""
    from factreg.docs import check as chk
    from factreg.docs import markers as mk

    units = [
        "tok<!-- /fact -->",
        "<!-- fact: h/u0 -->",
        "x -->",
        "<!-->",
        "`",
        "ms\n\n```\n",
        "s\\",
    ]
    lines = []
    for i, unit in enumerate(units):
        facts.record(
            registry,
            facts.NewFact(
                id=f"h/u{i}",
                metric="custom_rate",
                unit=unit,
                value=1.5 + i,
                n=3,
                identity={"machine": "gamebox"},
                note=f"note <!-- /fact --> `{i}` <!-- fact: h/u0 -->",
            ),
        )
        lines.append(f"Unit {i}: <!-- fact: h/u{i} -->old<!-- /fact --> and `code {i}` after.\n\n")
    formats = ["{value} -->", "{value}`", "{value}\\", "-->{value}<!-"]
    for j, fmt_text in enumerate(formats):
        lines.append(f'Format {j}: <!-- fact: h/u0 format="{fmt_text}" -->old<!-- /fact --> and `tick`.\n\n')
    doc = tmp_path / "hostile.md"
    doc.write_text("".join(lines), encoding="utf-8")
    n_markers = len(units) + len(formats)

    assert sy.sync(registry, [doc], {}) == [doc]
    first = doc.read_bytes()
    markers, problems = mk.parse(first.decode("utf-8"))
    assert problems == [] and len(markers) == n_markers
    assert chk.check(registry, [doc], {}) == []
    assert sy.sync(registry, [doc], {}) == []
    assert doc.read_bytes() == first  # byte-identical after the second run
    assert sy.sync(registry, [doc], {}) == [] and doc.read_bytes() == first
    body = first.decode("utf-8")
    assert body.count("<!-- /fact -->") == n_markers and body.count("<!-- fact:") == n_markers
    assert "tok&lt;!-- /fact --&gt;" in body  # shown as written on GitHub, inert in the source

    # A format that itself holds `<!--` is no marker at all: its parts are reported, nothing is rewritten.
    bad = tmp_path / "bad-format.md"
    text = 'x <!-- fact: h/u0 format="{value} <!-- /fact -->" -->old<!-- /fact -->\n'
    bad.write_text(text, encoding="utf-8")
    assert sy.sync(registry, [bad], {}) == [] and bad.read_text(encoding="utf-8") == text
    assert [p.kind for p in chk.check(registry, [bad], {})] == ["bad_marker", "bad_marker"]


def test_tampered_successor_id_is_never_written_into_a_marker(tmp_path: Path) -> None:
    """A registry edited by hand to supersede a fact by an id holding `-->`: a problem, the document untouched."""
    from factreg.docs import check as chk

    bad = "x --><!-- /fact -->"
    index = {
        "a/b": {"id": "a/b", "value": 1.0, "unit": "s", "superseded_by": bad},
        bad: {"id": bad, "value": 2.0, "unit": "s"},
    }
    doc = tmp_path / "a.md"
    doc.write_text("<!-- fact: a/b -->1.00 s<!-- /fact -->\n", encoding="utf-8")
    result = sy.sync_scanned(chk.scan([doc]), index)  # type: ignore[arg-type]
    assert result.changed == []
    assert [p.kind for p in result.problems] == ["supersede_chain"]
    assert doc.read_text(encoding="utf-8") == "<!-- fact: a/b -->1.00 s<!-- /fact -->\n"


OUTDATED = "Speed: <!-- fact: a/b -->28 tok/s<!-- /fact -->.\n"
CURRENT = "Speed: <!-- fact: a/b -->11.9 ± 7.2 tok/s<!-- /fact -->.\n"


def test_edit_saved_while_sync_reads_the_registry_is_kept(registry, tmp_path: Path, monkeypatch) -> None:
    """sync reads the documents, then the registry, then writes: an edit saved in between survives (the file is
    planned again from what it holds now), and sync says so."""
    from factreg.docs import check as chk

    record(registry, "a/b", 11.9, 7.2)
    doc = tmp_path / "a.md"
    doc.write_text("# Notes\n\n" + OUTDATED, encoding="utf-8")
    load_index = chk.load_index

    def user_saves_meanwhile(reg, config=None):  # type: ignore[no-untyped-def]
        doc.write_text("# Notes, edited\n\n" + OUTDATED + "A paragraph the user just wrote.\n", encoding="utf-8")
        return load_index(reg, config)

    monkeypatch.setattr(chk, "load_index", user_saves_meanwhile)
    result = sy.sync_report(registry, [tmp_path], {})
    assert doc.read_text(encoding="utf-8") == "# Notes, edited\n\n" + CURRENT + "A paragraph the user just wrote.\n"
    assert result.changed == [doc] and result.problems == []
    assert result.notes == [f"{doc}: changed while docs sync ran; synced again from its new content"]


def test_edit_saved_by_another_thread_while_sync_writes_is_kept(registry, tmp_path: Path, monkeypatch) -> None:
    """Another thread saves the document while sync is writing its new version (sync slowed at its fsync):
    the rename does not overwrite that edit; the file is planned again and written with the edit in it."""
    import threading

    record(registry, "a/b", 11.9, 7.2)
    doc = tmp_path / "a.md"
    doc.write_text(OUTDATED, encoding="utf-8")
    edited = "Edited while sync ran.\n" + OUTDATED
    start, done = threading.Event(), threading.Event()

    def editor() -> None:
        start.wait(30)
        doc.write_text(edited, encoding="utf-8")
        done.set()

    thread = threading.Thread(target=editor)
    thread.start()
    real_fsync = os.fsync
    calls = []

    def slow_fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:  # the first write: let the editor save, and wait for it
            start.set()
            assert done.wait(30)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    try:
        changed = sy.sync(registry, [doc], {})
    finally:
        start.set()
        thread.join(30)
    assert doc.read_text(encoding="utf-8") == "Edited while sync ran.\n" + CURRENT
    assert changed == [doc] and len(calls) == 2
    assert not list(tmp_path.glob(".*.tmp"))  # no temp file left


def test_file_that_keeps_changing_is_left_alone(registry, tmp_path: Path, monkeypatch) -> None:
    record(registry, "a/b", 11.9, 7.2)
    doc = tmp_path / "a.md"
    doc.write_text(OUTDATED, encoding="utf-8")
    real_fsync = os.fsync
    saves = []

    def busy_editor(fd: int) -> None:  # someone saves the file at every write sync makes
        saves.append(fd)
        doc.write_text(f"Save {len(saves)}.\n" + OUTDATED, encoding="utf-8")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", busy_editor)
    result = sy.sync_report(registry, [doc], {})
    assert result.changed == [] and [p.kind for p in result.problems] == ["changed_during_sync"]
    assert doc.read_text(encoding="utf-8") == f"Save {sy.ATTEMPTS}.\n" + OUTDATED  # the last save is kept
    assert not list(tmp_path.glob(".*.tmp"))


def test_symlinks_are_written_through_inside_the_root_and_never_outside(registry, cli, tmp_path: Path) -> None:
    record(registry, "a/b", 11.9, 7.2)
    root = tmp_path / "docs"
    (root / "real").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    inside_target = root / "real" / "target.md"
    inside_target.write_text(OUTDATED, encoding="utf-8")
    (root / "link.md").symlink_to(inside_target)
    (outside / "o.md").write_text(OUTDATED, encoding="utf-8")
    (root / "out.md").symlink_to(outside / "o.md")
    (outside / "sub").mkdir()
    (outside / "sub" / "e.md").write_text("E " + OUTDATED, encoding="utf-8")
    (root / "ext").symlink_to(outside / "sub", target_is_directory=True)

    run = cli("docs", "sync", "--json", str(root))
    assert run.exit_code == 1, run.stderr
    assert inside_target.read_text(encoding="utf-8") == CURRENT
    assert (root / "link.md").is_symlink() and os.readlink(root / "link.md") == str(inside_target)
    assert (root / "out.md").is_symlink() and (root / "ext").is_symlink()
    assert (outside / "o.md").read_text(encoding="utf-8") == OUTDATED  # never written
    assert (outside / "sub" / "e.md").read_text(encoding="utf-8") == "E " + OUTDATED
    problems = {Path(p["path"]).relative_to(root).as_posix(): p for p in run.json()["problems"]}
    assert {k: p["kind"] for k, p in problems.items()} == {"out.md": "outside_root", "ext/e.md": "outside_root"}
    assert f"is a symbolic link to {outside / 'o.md'}, outside the docs root {root}" in problems["out.md"]["message"]
    assert "through a symbolic link to a folder" in problems["ext/e.md"]["message"]
    assert sorted(os.listdir(outside)) == ["o.md", "sub"]  # no temp file either

    # A link given by name: its root is its folder; the target there is written through, the link kept.
    inside_target.write_text(OUTDATED, encoding="utf-8")
    run = cli("docs", "sync", str(root / "link.md"))
    assert run.exit_code == 0, run.stderr
    assert (root / "link.md").is_symlink() and inside_target.read_text(encoding="utf-8") == CURRENT
    run = cli("docs", "sync", str(root / "out.md"))
    assert run.exit_code == 1 and "outside_root" in run.stderr
    assert (root / "out.md").is_symlink() and (outside / "o.md").read_text(encoding="utf-8") == OUTDATED


def test_utf16_documents_are_read_and_written_back_as_utf16(registry, cli, tmp_path: Path) -> None:
    record(registry, "a/b", 11.9, 7.2)
    body = "\ufeff# Café 속도\r\n\r\n" + OUTDATED.replace("\n", "\r\n")
    for enc in ("utf-16-le", "utf-16-be"):
        (tmp_path / f"{enc}.md").write_bytes(body.encode(enc))
    (tmp_path / "utf-32.md").write_bytes(body.encode("utf-32-le"))
    check = cli("docs", "check", "--json", str(tmp_path))
    kinds = sorted((Path(p["path"]).name, p["kind"]) for p in check.json()["problems"])
    assert kinds == [("utf-16-be.md", "text_differs"), ("utf-16-le.md", "text_differs"), ("utf-32.md", "encoding")]
    assert "UTF-32 is not supported" in " ".join(p["message"] for p in check.json()["problems"])
    run = cli("docs", "sync", str(tmp_path))
    assert run.exit_code == 1  # the UTF-32 file is left as it is
    for enc in ("utf-16-le", "utf-16-be"):
        data = (tmp_path / f"{enc}.md").read_bytes()
        assert data == body.replace("28 tok/s", "11.9 ± 7.2 tok/s").encode(enc)  # BOM, CRLF, encoding kept
    assert cli("docs", "sync", str(tmp_path / "utf-16-le.md")).stdout == ""  # nothing left to change
    assert [c.fact_id for c in sy.find_citations([tmp_path])] == ["a/b", "a/b"]
