"""The document cache (factreg/docs/cache.py): a run with it finds exactly what a run without it finds; it reads
and lints only what changed; it never trusts a file that changed, results of other rules, a cache others can write
or a damaged one."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from factreg.docs import cache as dc
from factreg.docs import lint as ln
from factreg.docs import markers as mk
from factreg.docs import scan as sc
from tests.docs_support import record
from tests.test_docs_scan import key, make_tree, parallel_everywhere


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times the lint and the marker parser ran (in this process)."""
    counts = {"lint": 0, "parse": 0}
    real_lint, real_parse = ln.lint_text, mk.parse

    def lint_text(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["lint"] += 1
        return real_lint(*args, **kwargs)

    def parse(text):  # type: ignore[no-untyped-def]
        counts["parse"] += 1
        return real_parse(text)

    monkeypatch.setattr(ln, "lint_text", lint_text)
    monkeypatch.setattr(mk, "parse", parse)
    return counts


@pytest.fixture
def settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by the test count as settled at once (by default they must be 2 s old)."""
    monkeypatch.setattr(dc, "RACY_NS", 0)


def run(root: Path, folder: Path, **kwargs) -> sc.Scan:  # type: ignore[no-untyped-def]
    cache = dc.DocCache.open(folder)
    try:
        return sc.scan([root], cache=cache, **kwargs)
    finally:
        cache.close()


def readable(root: Path) -> int:
    return sum(1 for p in root.rglob("*.md") if p.name not in ("bin.md", "latin1.md"))


@pytest.mark.parametrize("targets", [False, True])
def test_a_warm_run_finds_what_a_run_without_the_cache_finds(
    tmp_path: Path, settle: None, calls: dict[str, int], targets: bool
) -> None:
    root = make_tree(tmp_path / "docs")
    plain = sc.scan([root], lint=True, targets=targets, jobs=1)
    folder = tmp_path / "cache"
    filled = run(root, folder, lint=True, targets=targets, jobs=1)
    assert filled.from_cache == 0 and filled.cache_problem is None
    calls.update(lint=0, parse=0)
    warm = run(root, folder, lint=True, targets=targets, jobs=1)
    assert key(warm) == key(filled) == key(plain)
    assert len(plain.findings) > 100 and len(plain.docs) > 10
    assert warm.from_cache == readable(root)
    assert calls["lint"] == 0  # every finding came from the cache
    assert calls["parse"] == 0  # and every marker (the files holding markers were read, not parsed)
    # other options are other results: linted again, then kept too
    other = run(root, folder, lint=True, targets=not targets, jobs=1)
    assert calls["lint"] == readable(root) and other.from_cache == 0
    assert other.findings == sc.scan([root], lint=True, targets=not targets, jobs=1).findings


def test_several_processes_fill_and_read_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settle: None
) -> None:
    root = make_tree(tmp_path / "docs")
    plain = sc.scan([root], lint=True, jobs=1)
    runs = parallel_everywhere(monkeypatch)
    folder = tmp_path / "a cache?#%20"  # characters a SQLite URI would read as its own
    filled = run(root, folder, lint=True, jobs=2)
    touched = sorted(root.rglob("doc0*.md"))[:10]
    for path in touched:  # new times, same bytes: read again, findings taken by digest in the workers
        os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    again = run(root, folder, lint=True, jobs=2)
    assert runs == [16, 16]  # both runs read and linted in worker processes
    assert key(filled) == key(again) == key(plain)
    warm = run(root, folder, lint=True, jobs=2)
    assert key(warm) == key(plain) and warm.from_cache == readable(root)
    assert len(runs) == 2  # nothing left to lint: no workers started


def test_an_edited_file_is_read_again_even_with_its_old_size_and_times(
    tmp_path: Path, settle: None, calls: dict[str, int]
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    doc = root / "a.md"
    doc.write_text("Decoding runs at 28 tok/s here.\n", encoding="utf-8")
    (root / "b.md").write_text("Prefill takes 2.5 s here.\n", encoding="utf-8")
    folder = tmp_path / "cache"
    first = run(root, folder, lint=True)
    assert [f.text for f in first.findings] == ["28 tok/s", "2.5 s"]
    st = doc.stat()
    doc.write_text("Decoding runs at 91 tok/s here.\n", encoding="utf-8")  # same size
    os.utime(doc, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old modification time
    calls.update(lint=0)
    second = run(root, folder, lint=True)
    assert [f.text for f in second.findings] == ["91 tok/s", "2.5 s"]
    assert calls["lint"] == 1 and second.from_cache == 1  # the change time moved: only a.md was linted


def test_a_file_not_settled_when_read_is_never_taken_on_its_signature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system whose clock ticks coarsely, a file changed right after being read keeps its signature.
    Such a clock is imitated here by a signature that never changes: only the racy rule keeps the edit from being
    missed, and without it (RACY_NS = 0) the old findings would be shown."""
    root = tmp_path / "docs"
    root.mkdir()
    doc = root / "a.md"
    doc.write_text("Decoding runs at 28 tok/s here.\n", encoding="utf-8")
    monkeypatch.setattr(dc, "signature", lambda st: "same tick")
    folder = tmp_path / "cache"
    run(root, folder, lint=True)  # just written: not settled
    doc.write_text("Decoding runs at 91 tok/s here.\n", encoding="utf-8")
    assert [f.text for f in run(root, folder, lint=True).findings] == ["91 tok/s"]
    monkeypatch.setattr(dc, "RACY_NS", 0)  # without the rule, the same situation goes wrong
    run(root, folder, lint=True)
    doc.write_text("Decoding runs at 55 tok/s here.\n", encoding="utf-8")
    assert [f.text for f in run(root, folder, lint=True).findings] == ["91 tok/s"]


def test_results_of_other_rules_are_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settle: None, calls: dict[str, int]
) -> None:
    root = make_tree(tmp_path / "docs", 20)
    folder = tmp_path / "cache"
    run(root, folder, lint=True)
    monkeypatch.setattr(dc, "_FINGERPRINT", ["rules of another version"])
    calls.update(lint=0, parse=0)
    again = run(root, folder, lint=True)
    assert again.from_cache == 0 and calls["lint"] == readable(root)


def test_the_cache_keeps_markers_not_verdicts(registry, cli, tmp_path: Path, settle: None) -> None:
    """A cited fact that changes in the registry shows in the next check, although the document is cached."""
    record(registry, "m1/model/tg32", 12.3, 0.4, machine="m1")
    doc = tmp_path / "a.md"
    doc.write_text("Measured: <!-- fact: m1/model/tg32 -->12.3 ± 0.4 tok/s<!-- /fact --> here.\n", encoding="utf-8")
    assert cli("docs", "check", "--lint", str(doc)).exit_code == 0
    assert cli("docs", "check", "--lint", str(doc)).exit_code == 0
    record(registry, "m1/model/tg32", 20.1, 0.5, machine="m1")
    after = cli("docs", "check", "--lint", str(doc))
    assert after.exit_code == 1 and "text_differs" in after.stdout and "20.1" in after.stdout
    assert after.stdout == cli("docs", "check", "--lint", "--no-cache", str(doc)).stdout


def test_the_cli_output_is_the_same_with_and_without_the_cache(
    registry, cli, tmp_path: Path, settle: None
) -> None:
    record(registry, "m1/model/tg32", 12.3, 0.4, machine="m1")
    root = make_tree(tmp_path / "docs")
    cache_file = tmp_path / "cache" / dc.FILE_NAME
    for args in (["docs", "check", "--lint", "--json"], ["docs", "lint"], ["docs", "check"], ["docs", "lint", "--targets"]):
        plain = cli(*args, "--no-cache", str(root))
        filled = cli(*args, str(root))
        warm = cli(*args, str(root))
        assert plain.exit_code == filled.exit_code == warm.exit_code == 1
        assert plain.stdout == filled.stdout == warm.stdout and plain.stderr == warm.stderr
    assert cache_file.exists()
    plain, warm = cli("docs", "coverage", "--json", "--no-cache", str(root)), cli("docs", "coverage", "--json", str(root))
    assert plain.exit_code == warm.exit_code == 0 and plain.stdout == warm.stdout and '"cited": 1' in warm.stdout


def test_no_cache_and_an_empty_cache_dir_write_nothing(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.md").write_text("It runs at 28 tok/s.\n", encoding="utf-8")
    run_ = cli("docs", "lint", "--no-cache", str(tmp_path / "a.md"))
    assert run_.exit_code == 1 and not (tmp_path / "cache").exists()
    assert cli("docs", "coverage", "--no-cache", str(tmp_path)).exit_code == 0 and not (tmp_path / "cache").exists()
    monkeypatch.setenv("FACTREG_CACHE_DIR", "")
    run_ = cli("docs", "lint", str(tmp_path / "a.md"))
    assert run_.exit_code == 1 and "cache" not in run_.stderr and not (tmp_path / "cache").exists()


def test_a_cache_others_can_write_is_not_used(cli, tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("It runs at 28 tok/s.\n", encoding="utf-8")
    folder = tmp_path / "cache"
    cli("docs", "lint", str(doc))
    folder.chmod(0o777)
    with pytest.raises(dc.CacheError, match="writable by others"):
        dc.DocCache.open(folder)
    shown = cli("docs", "lint", str(doc))
    assert shown.exit_code == 1 and shown.stdout == f"{doc}:1:12: FR111 28 tok/s (28 tok/s)\n"
    assert "warning: document cache not used: the cache folder" in shown.stderr and "writable by others" in shown.stderr
    folder.chmod(0o700)
    (folder / dc.FILE_NAME).chmod(0o664)
    with pytest.raises(dc.CacheError, match="writable by others"):
        dc.DocCache.open(folder)
    (folder / dc.FILE_NAME).chmod(0o600)
    dc.DocCache.open(folder).close()
    if os.geteuid() == 0:  # as root (CI), a file of another user can be made
        os.chown(folder / dc.FILE_NAME, 65534, 65534)
        with pytest.raises(dc.CacheError, match="belongs to another user"):
            dc.DocCache.open(folder)


def test_a_damaged_cache_is_not_used_and_damaged_results_are_linted_again(
    cli, tmp_path: Path, settle: None, calls: dict[str, int]
) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("It runs at 28 tok/s.\n", encoding="utf-8")
    folder = tmp_path / "cache"
    cli("docs", "lint", str(doc))
    with sqlite3.connect(folder / dc.FILE_NAME) as conn:
        conn.execute("UPDATE lints SET rows = '[[1, 2'")
    calls.update(lint=0)
    again = cli("docs", "lint", str(doc))
    assert again.stdout == f"{doc}:1:12: FR111 28 tok/s (28 tok/s)\n" and calls["lint"] == 1
    (folder / dc.FILE_NAME).write_bytes(b"this is not a database" * 100)
    for name in ("docs.sqlite-wal", "docs.sqlite-shm"):
        (folder / name).unlink(missing_ok=True)
    broken = cli("docs", "lint", str(doc))
    assert broken.exit_code == 1 and broken.stdout == f"{doc}:1:12: FR111 28 tok/s (28 tok/s)\n"
    assert broken.stderr.count("warning: document cache not used") == 1 and "Traceback" not in broken.stderr


def test_paths_not_seen_for_a_month_are_forgotten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settle: None) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for root, text in ((old, "It runs at 28 tok/s.\n"), (new, "It runs at 31 tok/s.\n")):
        root.mkdir()
        (root / "a.md").write_text(text, encoding="utf-8")
    folder = tmp_path / "cache"
    monkeypatch.setenv("FACTREG_NOW", "2026-11-30T12:00:00Z")
    run(old, folder, lint=True)
    run(new, folder, lint=True)
    monkeypatch.setenv("FACTREG_NOW", "2026-12-20T12:00:00Z")
    assert run(new, folder, lint=True).from_cache == 1  # seen again: kept
    monkeypatch.setenv("FACTREG_NOW", "2027-01-15T12:00:00Z")
    run(new, folder, lint=True)
    with sqlite3.connect(folder / dc.FILE_NAME) as conn:
        paths = [p for (p,) in conn.execute("SELECT path FROM files")]
        n_lints = conn.execute("SELECT count(*) FROM lints").fetchone()[0]
    assert paths == [str(new / "a.md")] and n_lints == 1


def test_a_file_changed_between_the_walk_and_the_read_is_linted_as_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settle: None
) -> None:
    """A cached file holding markers is read again for them; if its bytes changed since the walk, the findings the
    cache knew are dropped and the bytes read are linted."""
    root = tmp_path / "docs"
    root.mkdir()
    doc = root / "a.md"
    doc.write_text("Measured: <!-- fact: m1/model/tg32 -->12 tok/s<!-- /fact -->, then 28 tok/s.\n", encoding="utf-8")
    folder = tmp_path / "cache"
    assert [f.text for f in run(root, folder, lint=True).findings] == ["28 tok/s"]
    real = dc.DocCache.lookup

    def edit_after_the_walk(self, files, lint_variant):  # type: ignore[no-untyped-def]
        known = real(self, files, lint_variant)
        doc.write_text("Measured: <!-- fact: m1/model/tg32 -->12 tok/s<!-- /fact -->, then 91 tok/s.\n", "utf-8")
        return known

    monkeypatch.setattr(dc.DocCache, "lookup", edit_after_the_walk)
    changed = run(root, folder, lint=True)
    assert changed.from_cache == 1 and [f.text for f in changed.findings] == ["91 tok/s"]
    monkeypatch.setattr(dc.DocCache, "lookup", real)
    doc.write_text("Measured: <!-- fact: m1/model/tg32 -->12 tok/s<!-- /fact -->.\n", "utf-8")
    emptied = run(root, folder, lint=True)  # the new bytes hold no claim: nothing of the old findings is left
    assert emptied.findings == [] and [m.text for m in emptied.docs[0].markers] == ["12 tok/s"]


def test_docs_coverage_is_one_pass_with_processes_and_the_cache(
    tmp_path: Path, settle: None, calls: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from factreg.docs import coverage as cov
    from factreg.docs import walk

    root = make_tree(tmp_path / "docs")
    (root / "d3" / "generated.md").write_text("<!-- generated by factreg -->\nIt runs at 9 tok/s.\n", encoding="utf-8")
    index = {"m1/model/tg32": {"status": "fresh"}}
    # the reading before coverage was built on the shared pass: every document read, parsed and linted here
    expected: list[tuple[str, int, int, int]] = []
    for path, text in walk.documents([root]):
        if isinstance(text, walk.Problem) or "generated by factreg" in text[:1024]:
            continue
        found = mk.parse(text)[0]
        unsourced = sum(1 for f in ln.lint_text(text, str(path)) if f.kind == "claim")
        if found or unsourced:
            expected.append((str(path), len(found) + unsourced, len(found), unsourced))
    assert len(expected) > 50 and any(cited for _, _, cited, _ in expected)
    heads: list[str] = []

    def skip(path: Path, head: str) -> bool:
        heads.append(head)
        return "generated by factreg" in head

    def rows(result: cov.Coverage) -> list[tuple[str, int, int, int]]:
        assert all(f.current == f.cited for f in result.files)  # the one fact cited is fresh
        return [(f.path, f.claims, f.cited, f.unsourced) for f in result.files]

    one = cov.measure([root], lambda: index, skip=skip, jobs=1)
    assert rows(one) == expected and sorted(one.unreadable) == sorted(str(p) for p in root.rglob("*.md")
                                                                        if p.name in ("bin.md", "latin1.md"))
    assert len(heads) == len(expected) + 1 and all(len(h) <= cov.HEAD_CHARS for h in heads)
    runs = parallel_everywhere(monkeypatch)
    assert rows(cov.measure([root], lambda: index, skip=skip, jobs=2)) == expected and runs
    folder = tmp_path / "cache"
    assert rows(cov.tally(run(root, folder, check=True, lint=True, jobs=1), lambda: index, skip)) == expected
    calls.update(lint=0, parse=0)
    warm = run(root, folder, check=True, lint=True, jobs=1)
    assert warm.from_cache == readable(root) and calls["lint"] == 0
    assert rows(cov.tally(warm, lambda: index, skip)) == expected
